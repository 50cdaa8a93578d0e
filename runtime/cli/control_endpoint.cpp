#include "runtime/cli/control_endpoint.hpp"

#include <caf/all.hpp>
#include <chrono>
#include <fmt/format.h>
#include <unistd.h>

#include "messages/atoms.hpp"
#include "messages/handle_summary.hpp"
#include "messages/json_codec.hpp"
#include "messages/tool_state.hpp"
#include "messages/error_category.hpp"
#include "actors/live_loops.hpp"
#include "runtime/cli/tool_views.hpp"

namespace jp {

namespace {

// A loop busy for longer than this answers nothing: `handles ls` must not hang.
constexpr auto ask_timeout = std::chrono::seconds(3);

Json handle_json(const HandleSummary& h, const std::string& agent) {
  return Json::object()
    .set("id", h.id)
    .set("tool", h.tool)
    .set("state", std::string(to_string(h.state.kind)))
    .set("elapsed_secs", h.elapsed_secs)
    .set("last_line", h.progress.last_line)
    // What it reports of itself: an MCP call's progress message, a foreach's or a
    // sub-agent's counts ("" for a process).
    .set("progress", !h.progress.message.empty() ? h.progress.message : progress_counts(h.progress))
    .set("agent", agent);
}

} // namespace

std::unique_ptr<ControlServer> start_control_endpoint(caf::actor_system& sys, std::shared_ptr<LiveLoops> loops,
                                                      ControlHolder holder, double abort_secs) {
  auto abort_timeout = std::chrono::milliseconds(static_cast<int64_t>(abort_secs * 1000));
  auto handler = [&sys, loops, holder, abort_timeout](const Json& request) -> Json {
    auto* op = request.find("op");
    std::string what = op && op->is_string() ? op->as_string() : "";
    caf::scoped_actor self{sys};
    // Each live loop's handles, by its agent; a loop that ended holds nothing.
    auto listed = [&](auto&& each) {
      for (auto& [agent, loop] : loops->alive())
        self->request(loop, ask_timeout, list_atom::value)
          .receive([&, &agent = agent, &loop = loop](std::vector<HandleSummary>& running) { each(agent, loop, running); },
                   [](caf::error&) {});
    };
    if (what == "ls") {
      auto handles = Json::array();
      listed([&](const std::string& agent, const caf::actor&, std::vector<HandleSummary>& running) {
        for (auto& h : running)
          handles.push(handle_json(h, agent));
      });
      return Json::object()
        .set("ok", true)
        .set("pid", static_cast<int64_t>(::getpid()))
        .set("command", holder.command)
        .set("workspace", holder.workspace)
        .set("holder", holder.holder)
        // How long an abort here may take (its tools' grace, and then some): the
        // client waits as long.
        .set("abort_secs", std::chrono::duration<double>(abort_timeout).count())
        .set("handles", std::move(handles));
    }
    if (what == "abort") {
      auto* id = request.find("id");
      if (!id || !id->is_string() || id->as_string().empty())
        return Json::object().set("ok", false).set("error", "abort needs the handle's \"id\"");
      // The agent whose turn holds it answers (a sub-agent's too); the others do not
      // know the id. Ids are an agent's own: two may hold the same one.
      auto* only = request.find("agent");
      std::string agent_wanted = only && only->is_string() ? only->as_string() : "";
      std::vector<std::pair<std::string, caf::actor>> holding;
      listed([&](const std::string& agent, const caf::actor& loop, std::vector<HandleSummary>& running) {
        if (!agent_wanted.empty() && agent != agent_wanted)
          return;
        for (auto& h : running)
          if (h.id == id->as_string())
            holding.emplace_back(agent, loop);
      });
      if (holding.empty())
        return Json::object().set("ok", false).set(
          "error", fmt::format("no running handle `{}` here{}", id->as_string(),
                               agent_wanted.empty() ? "" : fmt::format(" held by agent {}", agent_wanted)));
      if (holding.size() > 1) {
        std::string agents;
        for (auto& [agent, _] : holding)
          agents += (agents.empty() ? "" : ", ") + agent;
        return Json::object().set("ok", false).set(
          "error", fmt::format("several agents hold a handle `{}` ({}): say which with --agent", id->as_string(), agents));
      }
      Json answer;
      self->request(holding.front().second, abort_timeout, user_abort_atom::value, id->as_string())
        .receive([&](HandleReport& report) { answer = Json::object().set("ok", true).set("state", to_json(report.state)); },
                 [&](caf::error& err) { answer = Json::object().set("ok", false).set("error", error_text(err)); });
      return answer;
    }
    return Json::object().set("ok", false).set("error",
                                               fmt::format("unknown op {}: ls or abort", json_quote(what)));
  };
  std::string error;
  auto server = ControlServer::start(std::move(handler), error);
  if (!server)
    std::fprintf(stderr, "jp-actors: note: %s: `jp-actors handles` will not see this %s\n", error.c_str(),
                 holder.command.c_str());
  return server;
}

} // namespace jp
