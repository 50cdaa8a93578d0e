#include "runtime/cli/handles_command.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <unistd.h>
#include <vector>

#include "messages/json_codec.hpp"
#include "messages/terminal_safe.hpp"
#include "runtime/cli/command_failure.hpp"
#include "runtime/cli/tool_views.hpp"
#include "runtime/control_socket.hpp"

namespace jp {

namespace {

std::string text_at(const Json& j, std::string_view key) {
  auto* v = j.find(key);
  return v && v->is_string() ? v->as_string() : std::string();
}

int64_t int_at(const Json& j, std::string_view key) {
  auto* v = j.find(key);
  return v && v->is_int() ? v->as_int() : 0;
}

/// The running processes' `ls` answers, of this workspace unless `all`; a socket
/// that could not be asked is named on stderr and counted in `unanswered`.
Result<std::vector<Json>> holders(const Config& config, bool all, int& unanswered) {
  auto answers = ask_every_control_socket(Json::object().set("op", "ls"));
  if (!answers)
    return Error{answers.error()};
  std::vector<Json> out;
  unanswered = 0;
  for (auto& a : *answers) {
    if (!a.answer) {
      std::fprintf(stderr, "jp-actors: note: %s\n", a.answer.error().c_str());
      ++unanswered;
      continue;
    }
    if (all || text_at(*a.answer, "workspace") == config.workspace)
      out.push_back(a.answer->set("socket", a.socket.string()));
  }
  return out;
}

/// What a list lacks when `unanswered` processes did not answer: said, and exit 1.
int some_unanswered(int unanswered) {
  if (unanswered == 0)
    return 0;
  return command_failed(fmt::format("{} running jp-actors did not answer (above): any handles {} hold{} here are not "
                                    "listed",
                                    unanswered, unanswered == 1 ? "it" : "they", unanswered == 1 ? "s" : ""));
}

} // namespace

int list_live_handles(const Config& config, bool all, bool json) {
  int unanswered = 0;
  auto found = holders(config, all, unanswered);
  if (!found)
    return command_failed(found.error());
  auto rows = Json::array();
  for (auto& h : *found)
    if (auto* handles = h.find("handles"); handles && handles->is_array())
      for (auto& handle : handles->as_array()) {
        auto row = handle;
        row.set("pid", int_at(h, "pid")).set("command", text_at(h, "command")).set("holder", text_at(h, "holder"));
        if (all)
          row.set("workspace", text_at(h, "workspace"));
        rows.push(std::move(row));
      }
  if (json) {
    std::printf("%s\n", rows.dump().c_str());
    return some_unanswered(unanswered);
  }
  if (rows.as_array().empty()) {
    if (unanswered > 0) // not "nobody": somebody did not say
      return some_unanswered(unanswered);
    // The path as it came to a pipe; a terminal's cannot be driven by a directory's name.
    std::printf("no running jp-actors holds handles %s\n",
                shown_on(STDOUT_FILENO, all ? std::string("in any workspace")
                                            : fmt::format("in {} (--all: in every workspace)", config.workspace))
                  .c_str());
    return 0;
  }
  // The agent and the holder whole: they are what --agent and --continue take.
  std::printf("%-16s %-14s %-8s %-8s %-16s %-48s %s\n", "ID", "TOOL", "STATE", "ELAPSED", "AGENT", "HELD BY",
              "LAST LINE");
  for (auto& r : rows.as_array()) {
    auto* secs = r.find("elapsed_secs");
    auto held = fmt::format("pid {} {} {}", int_at(r, "pid"), text_at(r, "command"), text_at(r, "holder"));
    // Its last line, else what it reports of itself (a foreach's counts; an MCP
    // call's progress message).
    auto shown = text_at(r, "last_line");
    if (shown.empty())
      shown = text_at(r, "progress");
    // What other processes said: on a terminal it cannot drive it.
    auto safe = [&r](const char* key) { return shown_on(STDOUT_FILENO, text_at(r, key)); };
    std::printf("%-16s %-14s %-8s %-8s %-16s %-48s %s\n", safe("id").c_str(), safe("tool").c_str(),
                safe("state").c_str(), duration_text(secs && secs->is_number() ? secs->as_number() * 1000 : 0).c_str(),
                terminal_line(text_at(r, "agent"), 64).c_str(), terminal_line(held, 80).c_str(),
                terminal_line(shown, 60).c_str());
    if (all)
      std::printf("%-16s in %s\n", "", safe("workspace").c_str());
  }
  return some_unanswered(unanswered);
}

int abort_live_handle(const Config& config, const std::string& id, int64_t pid, const std::string& agent) {
  int unanswered = 0;
  auto found = holders(config, false, unanswered);
  if (!found)
    return command_failed(found.error());
  std::vector<const Json*> holding;
  for (auto& h : *found) {
    if (pid != 0 && int_at(h, "pid") != pid)
      continue;
    if (auto* handles = h.find("handles"); handles && handles->is_array())
      for (auto& handle : handles->as_array())
        if (text_at(handle, "id") == id && (agent.empty() || text_at(handle, "agent") == agent)) {
          holding.push_back(&h);
          break; // a process once, whichever of its agents hold it
        }
  }
  if (holding.empty())
    return command_failed(fmt::format("no running handle `{}` in {}{}{}{}", id, config.workspace,
                                      pid ? fmt::format(" held by pid {}", pid) : std::string(),
                                      agent.empty() ? std::string()
                                      : pid         ? fmt::format(" for agent {}", agent)
                                                    : fmt::format(" held by agent {}", agent),
                                      unanswered > 0
                                        ? fmt::format(" among those that answered; {} did not (above)", unanswered)
                                        : std::string(": `jp-actors handles ls` lists them (another workspace's: "
                                                      "`handles ls --all`, then --workspace)")));
  if (holding.size() > 1) {
    std::string pids;
    for (auto* h : holding)
      pids += fmt::format("{}{}", pids.empty() ? "" : ", ", int_at(*h, "pid"));
    return command_failed(fmt::format("handle `{}` is held by several processes (pids {}): say which with --pid", id, pids));
  }
  // An abort waits for the handle's end: the holder's grace and then some, as it
  // says (its config's, not this one's), else this config's.
  auto* holder_secs = holding.front()->find("abort_secs");
  double secs = holder_secs && holder_secs->is_number() ? holder_secs->as_number() + 5
                                                        : config.runtime.abort_grace_secs + 25;
  int timeout_ms = static_cast<int>(std::min(secs, 86400.0) * 1000);
  auto request = Json::object().set("op", "abort").set("id", id);
  if (!agent.empty())
    request.set("agent", agent);
  auto answer = ask_control_socket(text_at(*holding.front(), "socket"), request, timeout_ms);
  if (!answer)
    return command_failed(answer.error());
  if (auto* ok = answer->find("ok"); !ok || !ok->is_bool() || !ok->as_bool())
    return command_failed(fmt::format("handle `{}` was not aborted: {}", id, text_at(*answer, "error")));
  // As the assistant sees a handle's end (the control protocol carries its state).
  auto* state = answer->find("state");
  std::string shown = state ? state->dump() : "{}";
  if (state)
    if (auto read = tool_state_from_json(*state))
      shown = response_content(HandleReport{id, std::move(*read)});
  std::printf("aborted `%s` (pid %lld): %s\n", id.c_str(), static_cast<long long>(int_at(*holding.front(), "pid")),
              shown_on(STDOUT_FILENO, shown).c_str());
  return 0;
}

} // namespace jp
