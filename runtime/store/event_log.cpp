#include "runtime/store/event_log.hpp"

#include <cmath>
#include <sys/ioctl.h>
#include <unistd.h>
#include <fmt/format.h>

#include "messages/json_codec.hpp"
#include "messages/terminal_safe.hpp"
#include "runtime/store/conversation_store.hpp"

namespace jp {

namespace {

std::string trim_end(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' '))
    s.pop_back();
  return s;
}

double round_ms(double ms) {
  return std::round(ms * 10) / 10;
}

// Transcript lines stay readable: long content is shortened (the JSON log is whole).
std::string shorten(const std::string& s, size_t max = 400) {
  if (s.size() <= max)
    return s;
  while (max > 0 && (static_cast<unsigned char>(s[max]) & 0xC0) == 0x80)
    --max; // not inside a character
  return s.substr(0, max) + fmt::format("… ({} bytes)", s.size());
}

std::string indent(const std::string& s, const std::string& pad) {
  std::string out;
  for (char c : s) {
    out += c;
    if (c == '\n')
      out += pad;
  }
  while (!out.empty() && (out.back() == ' ' || out.back() == '\n'))
    out.pop_back();
  return out;
}

} // namespace

std::string transcript_result(const std::string& content) {
  return indent(shorten(content), "    ");
}

EventLog::EventLog(std::FILE* out, bool json, bool live, Clock now)
  : out_(out), json_(json), live_(live && !json), now_(now ? std::move(now) : Clock(now_rfc3339)) {}

Json EventLog::event(const char* kind) const {
  Json e = Json::object();
  e.set("event", kind).set("time", now_());
  return e;
}

void EventLog::write(const std::string& raw) {
  // On a terminal, what a tool printed or a model wrote cannot drive it; a pipe
  // gets the bytes as they came.
  auto line = live_ ? terminal_safe(raw) : raw;
  std::lock_guard<std::mutex> guard(mutex_);
  if (progress_held_ > 0) { // a dialog is open: written once it closes, not over it
    held_lines_ += line + '\n';
    return;
  }
  clear_progress(); // the progress lines give way
  std::fwrite(line.data(), 1, line.size(), out_);
  std::fputc('\n', out_);
  std::fflush(out_);
}

namespace {

/// `line` in fewer than `columns` characters (0: as it is), the last column left
/// free so that the terminal never wraps it; a cut line ends in "…".
std::string within_columns(std::string line, size_t columns) {
  auto lead = [&](size_t i) { return (static_cast<unsigned char>(line[i]) & 0xC0) != 0x80; };
  size_t chars = 0;
  for (size_t i = 0; i < line.size(); ++i)
    chars += lead(i);
  if (columns < 2 || chars < columns)
    return line;
  // columns - 2 characters and the "…".
  size_t kept = 0;
  for (size_t i = 0; i < line.size(); ++i)
    if (lead(i) && kept++ == columns - 2) {
      line.resize(i);
      break;
    }
  return line + "…";
}

} // namespace

void EventLog::progress(const std::vector<std::string>& lines) {
  if (!live_)
    return;
  std::lock_guard<std::mutex> guard(mutex_);
  clear_progress();
  if (progress_held_ > 0) {
    std::fflush(out_);
    return;
  }
  size_t columns = columns_ ? *columns_ : 0;
  if (winsize ws{}; !columns_ && ::ioctl(::fileno(out_), TIOCGWINSZ, &ws) == 0)
    columns = ws.ws_col;
  for (size_t i = 0; i < lines.size(); ++i)
    std::fprintf(out_, "%s%s", i ? "\n" : "", within_columns(sanitize_utf8(lines[i]), columns).c_str());
  std::fflush(out_);
  progress_lines_ = lines.size();
}

void EventLog::hold_progress(bool held) {
  if (!live_)
    return;
  std::lock_guard<std::mutex> guard(mutex_);
  progress_held_ += held ? 1 : -1;
  if (held)
    clear_progress();
  else if (progress_held_ == 0 && !held_lines_.empty()) {
    std::fwrite(held_lines_.data(), 1, held_lines_.size(), out_);
    held_lines_.clear();
  }
  std::fflush(out_);
}

void EventLog::line(const std::string& text) {
  if (!json_)
    write(text);
}

/// Erases the progress lines (mutex held): the cursor is at the end of the last.
void EventLog::clear_progress() {
  for (size_t i = 0; i < progress_lines_; ++i)
    std::fputs(i ? "\x1b[1A\r\x1b[K" : "\r\x1b[K", out_);
  progress_lines_ = 0;
}

void EventLog::emit(const Json& e) {
  std::lock_guard<std::mutex> guard(mutex_);
  if (sink_)
    sink_(e);
  if (!json_)
    return;
  clear_progress();
  auto line = e.dump();
  std::fwrite(line.data(), 1, line.size(), out_);
  std::fputc('\n', out_);
  std::fflush(out_);
}

void EventLog::turn_start(const std::string& agent) {
  Json e = event("turn_start");
  e.set("agent", agent);
  emit(e);
}

void EventLog::model_round(const std::string& agent, int step, const ModelRound& r) {
  Json e = event("model_round");
  e.set("agent", agent).set("step", step).set("elapsed_ms", round_ms(r.elapsed_ms));
  if (r.tokens_in >= 0)
    e.set("tokens_in", r.tokens_in);
  if (r.tokens_out >= 0)
    e.set("tokens_out", r.tokens_out);
  emit(e);
}

void EventLog::step(const std::string& agent, int step, const std::string& text) {
  if (json_ || text.empty())
    return;
  write(fmt::format("[{}] step {}: {}", agent, step, shorten(text, 2000)));
}

void EventLog::response(const std::string& agent, int step, const std::string& text) {
  if (!json_ || text.empty()) // a response of calls alone says nothing
    return;
  Json e = event("response");
  e.set("agent", agent).set("step", step).set("text", text);
  emit(e);
}

void EventLog::tool_call(const std::string& agent, int step, int index, const std::string& tool,
                         const Json& arguments) {
  Json e = event("tool_call");
  e.set("agent", agent).set("step", step).set("index", index);
  e.set("tool", tool).set("arguments", arguments);
  emit(e);
  if (!json_ && call_lines_)
    // Cut, as results are: a model's 200-KB argument (a file's text) was a 200-KB line.
    write(fmt::format("[{}] → {} {}", agent, tool, shorten(arguments.dump(), 2000)));
}

void EventLog::tool_result(const std::string& agent, int step, int index, const std::string& tool,
                           bool ok, const std::string& content, double elapsed_ms) {
  Json e = event("tool_result");
  e.set("agent", agent).set("step", step).set("index", index);
  e.set("tool", tool).set("ok", ok).set("content", content).set("elapsed_ms", round_ms(elapsed_ms));
  emit(e);
  if (!json_ && call_lines_)
    write(fmt::format("[{}] ← {}{} ({:.1f} ms): {}", agent, tool, ok ? "" : " ERROR", elapsed_ms,
                      transcript_result(content)));
}

void EventLog::notification(const std::string& agent, const Notification& n) {
  Json e = event("notification");
  e.set("agent", agent);
  auto body = to_json(n);
  for (auto& [k, v] : body.as_object())
    e.set(k, v);
  emit(e);
  if (!json_)
    write(fmt::format("[{}] ! {} {}: {}", agent, n.level, n.name, n.message));
}

void EventLog::turn_end(const std::string& agent, const std::vector<HandleSummary>& handles,
                        const std::vector<Notification>& undelivered, const std::string& error,
                        bool interrupted, const std::optional<HandleCounts>& counts) {
  Json list = Json::array();
  for (auto& h : handles)
    list.push(turn_end_json(h));
  Json e = event("turn_end");
  // Always there (DESIGN's shape), an empty list when every notification was carried.
  Json notes = Json::array();
  for (auto& n : undelivered)
    notes.push(to_json(n));
  e.set("agent", agent).set("handles", std::move(list)).set("undelivered", std::move(notes));
  if (interrupted) // as the conversation's turn_end says it
    e.set("interrupted", true);
  if (!error.empty())
    e.set("error", error);
  if (counts)
    e.set("handles_spawned", counts->spawned).set("peak_handles", counts->peak_live);
  emit(e);
  if (json_)
    return;
  if (interrupted && !error.starts_with("interrupted")) // else the error says it
    write(fmt::format("[{}] turn end: interrupted", agent));
  if (!error.empty())
    write(fmt::format("[{}] turn end: {}", agent, error));
  if (handles.empty())
    write(fmt::format("[{}] turn end: no handle left running", agent));
  for (auto& h : handles) {
    // What a waited handle ended with; an empty result is said so, not left after the arrow.
    auto ended = h.state.ok ? shorten(trim_end(h.state.content)) : h.state.error.message;
    write(fmt::format("[{}] turn end: `{}` ({}) was still running: {}{}", agent, h.id, h.tool,
                      h.outcome == turn_end_outcome::aborted ? "aborted" : to_string(h.outcome),
                      !waited(h.outcome) || !h.state.stopped() ? std::string{}
                      : ended.empty()                           ? std::string(" -> (no output)")
                                                                : " -> " + ended));
  }
  for (auto& n : undelivered)
    write(fmt::format("[{}] turn end: undelivered {} {}: {}", agent, n.level, n.name, n.message));
}

void EventLog::run_end(size_t agents, double elapsed_ms, size_t handles_left) {
  Json e = event("run_end");
  e.set("agents", static_cast<int64_t>(agents));
  e.set("elapsed_ms", round_ms(elapsed_ms)).set("handles_left", static_cast<int64_t>(handles_left));
  emit(e);
  if (!json_)
    write(fmt::format("done: {} agent{} in {:.1f} ms, {} handle{} left", agents, agents == 1 ? "" : "s",
                      elapsed_ms, handles_left, handles_left == 1 ? "" : "s"));
}

} // namespace jp
