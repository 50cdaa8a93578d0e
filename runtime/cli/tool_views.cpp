#include "runtime/cli/tool_views.hpp"

#include <fmt/format.h>

#include "messages/terminal_safe.hpp"

namespace jp {

namespace {

std::string text_at(const Json& j, std::string_view key) {
  auto* v = j.is_object() ? j.find(key) : nullptr;
  return v && v->is_string() ? v->as_string() : std::string();
}

std::string bytes(size_t n) {
  if (n < 1024)
    return fmt::format("{} B", n);
  if (n < 1024 * 1024)
    return fmt::format("{:.1f} KiB", n / 1024.0);
  return fmt::format("{:.1f} MiB", n / (1024.0 * 1024.0));
}

std::string first_line(const std::string& s) {
  auto nl = s.find('\n');
  return nl == std::string::npos ? s : s.substr(0, nl);
}

std::string label(const std::string& tool, const std::string& id) {
  return id.empty() ? tool : fmt::format("{} `{}`", tool, id);
}

} // namespace

std::string duration_text(double ms) {
  if (ms < 1000)
    return fmt::format("{:.1f} ms", ms);
  if (ms < 60'000)
    return fmt::format("{:.1f} s", ms / 1000);
  auto s = static_cast<int64_t>(ms / 1000);
  return fmt::format("{}m{:02}s", s / 60, s % 60);
}

std::string terminal_line(const std::string& line, size_t width) {
  auto s = terminal_safe(line);
  for (auto& c : s)
    if (c == '\n' || c == '\t')
      c = ' ';
  size_t columns = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if ((static_cast<unsigned char>(s[i]) & 0xC0) == 0x80)
      continue; // inside a character
    if (++columns > width) {
      size_t cut = i;
      // Room for the ellipsis: drop the character before too.
      do
        --cut;
      while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80);
      return s.substr(0, cut) + "…";
    }
  }
  return s;
}


std::string progress_counts(const HandleProgress& p) {
  if (p.total >= 0)
    return fmt::format("{}/{} done, {} running", p.done, p.total, p.running);
  if (p.rounds >= 0)
    return fmt::format("{} response{}, {} tool call{}", p.rounds, p.rounds == 1 ? "" : "s", p.calls,
                       p.calls == 1 ? "" : "s");
  return {};
}

std::string in_flight_line(const HandleSummary& h, const HandleOrigin& origin, size_t width) {
  auto& p = h.progress;
  auto line = "⋯ " + label(h.tool, h.id);
  if (!p.node.empty())
    line += " on " + p.node;
  line += " " + duration_text(h.elapsed_secs * 1000);
  std::string last = p.last_line;
  if (auto counts = progress_counts(p); !counts.empty()) {
    line += " · " + counts;
    if (p.total >= 0)
      last.clear(); // its elements' lines are theirs
  } else if (!p.message.empty()) {
    last = p.message;
  } else if (origin.terminal) {
    return terminal_line(line + (last.empty() ? "" : " ▌ " + last), width);
  } else if (auto command = text_at(origin.arguments, "command"); !command.empty()) {
    line += " $ " + first_line(command);
  }
  if (!last.empty())
    line += " │ " + last;
  return terminal_line(line, width);
}

std::string started_line(const std::string& tool, const Json& arguments, size_t width) {
  auto line = "→ " + label(tool, text_at(arguments, "id"));
  if (auto action = text_at(arguments, "action"); !action.empty())
    line += " " + action;
  if (auto command = text_at(arguments, "command"); !command.empty())
    return terminal_line(line + " $ " + first_line(command), width);
  auto rest = Json::object();
  if (arguments.is_object())
    for (auto& [k, v] : arguments.as_object())
      if (k != "id" && k != "action")
        rest.set(k, v);
  return terminal_line(rest.as_object().empty() ? line : line + " " + rest.dump(), width);
}

std::string completed_line(const std::string& tool, const Json& arguments, bool ok, const std::string& content,
                           double elapsed_ms, size_t width) {
  // A stateful answer is JSON (its state, result or error); a one-shot answer is
  // the output itself, a failed one starting with why ("exit status 3").
  auto parsed = Json::parse(content);
  const Json* answer = parsed && parsed->is_object() ? &*parsed : nullptr;
  std::string how;
  size_t size = content.size();
  if (answer) {
    how = text_at(*answer, "state");
    if (auto* error = answer->find("error"); error && error->is_object())
      how = text_at(*error, "message");
    if (auto* result = answer->find("result"); result && result->is_string())
      size = result->as_string().size();
  }
  if (how.empty())
    how = ok ? "ok" : first_line(content);
  auto id = answer ? text_at(*answer, "id") : text_at(arguments, "id");
  // A call that left its handle running or waiting is not done: marked as a live
  // handle's line is (a check mark read as "it worked" for a spawn that only started).
  bool live = ok && answer && (how == "running" || how == "waiting");
  return terminal_line(fmt::format("{} {} · {} · {} · {}", live ? "⋯" : ok ? "✓" : "✗", label(tool, id), how, bytes(size),
                         duration_text(elapsed_ms)),
             width);
}

} // namespace jp
