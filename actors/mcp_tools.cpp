#include "actors/mcp_tools.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <chrono>
#include <future>
#include <mutex>
#include <set>
#include <tuple>
#include <fmt/format.h>

#include "actors/function_handle.hpp"
#include "messages/terminal_safe.hpp"
#include "runtime/mcp/mcp_input_schema.hpp"
#include "runtime/mcp/mcp_server_directory.hpp"
#include "tools/secret_variables.hpp"
#include "runtime/mcp/mcp_start_stop.hpp"
#include "tools/argument_validation.hpp"
#include "tools/function_tool.hpp"

namespace jp {

namespace {

/// The summary line and the rest of a description.
std::pair<std::string, std::string> split_description(const std::string& d) {
  auto nl = d.find('\n');
  if (nl == std::string::npos)
    return {d, ""};
  return {d.substr(0, nl), d.substr(nl + 1)};
}

/// What a call of `tool`, which `server` offered and offers no longer, is told.
std::string no_longer_offered(const std::string& server, const std::string& tool) {
  return fmt::format("`{}` is no longer offered: MCP server `{}` dropped its tool `{}` when it changed its tools "
                     "(notifications/tools/list_changed); call one of the tools offered now",
                     mcp_tool_name(server, tool), server, tool);
}

/// `args` under the names the server declared (mcp_parameters offers a name the
/// services refuse by one they take).
Json by_server_names(Json args, const std::vector<ParameterConfig>& params) {
  if (args.is_object())
    for (auto& [key, value] : args.as_object()) {
      auto p = std::find_if(params.begin(), params.end(), [&](const ParameterConfig& q) { return q.name == key; });
      if (p != params.end() && !p->declared_name.empty())
        key = p->declared_name;
    }
  return args;
}

/// The function that calls `tool` of `client`, with the input schema the server
/// lists for it now: a call's result, progress and abort. It holds the client
/// weakly: the server goes with its McpTools, whoever still holds an executor.
FunctionTool call_of(std::weak_ptr<McpClient> weak, std::string server, std::string tool) {
  return [weak, server, tool](const Json& args, const Progress& progress) {
    auto client = weak.lock();
    if (!client)
      return Invocation{FunctionResult::ready(ToolState::failure(
                          ToolError{fmt::format("MCP server `{}` was stopped with its runtime", server), {}, false})),
                        {}, {}};
    auto listed = client->tools();
    // The entry offered: one the server listed twice and refused is not it.
    auto it = std::find_if(listed->begin(), listed->end(),
                           [&](const McpTool& t) { return t.name == tool && t.refused.empty(); });
    if (it == listed->end())
      return Invocation{FunctionResult::ready(ToolState::failure(ToolError{no_longer_offered(server, tool), {}, false})),
                        {}, {}};
    FunctionResult result;
    auto params = mcp_parameters(it->input_schema);
    auto n = client->call(tool, by_server_names(arguments_as_declared(args, params), params), progress,
                          [result](ToolState s) { result.set(std::move(s)); });
    Invocation inv;
    inv.result = result;
    inv.abort = [weak, n] {
      if (auto c = weak.lock())
        c->cancel(n, "aborted");
    };
    return inv;
  };
}

/// The tools of the servers that started, as each lists them, added to the config
/// they were started with; made anew when a server's list is not the one it was
/// made from. Any thread.
class McpToolSets {
public:
  McpToolSets(std::shared_ptr<const Config> base, std::function<void(const std::string&)> warn)
    : base_(std::move(base)), warn_(std::move(warn)) {}

  /// Server `name` started as `client` (in the config's order).
  void add(const std::string& name, const std::shared_ptr<McpClient>& client) {
    servers_.push_back({name, client, nullptr});
  }

  /// The set as the servers list their tools now.
  std::shared_ptr<const ToolSet> now() {
    std::lock_guard lock(mtx_);
    bool changed = !now_;
    for (auto& s : servers_)
      if (auto client = s.client.lock(); client && client->tools() != s.listed)
        changed = true;
    if (changed)
      make();
    return now_;
  }

private:
  struct Server {
    std::string name;
    std::weak_ptr<McpClient> client;
    std::shared_ptr<const std::vector<McpTool>> listed; // what the set was made from
  };

  void make() {
    auto with = std::make_shared<Config>(*base_);
    auto set = std::make_shared<ToolSet>();
    // A repository's tool named as your servers' are (NAME__tool) is not offered, listed
    // by the server or not: where it did not start, or offers no such tool, the
    // repository's would take the name, and what --allow grants it.
    std::erase_if(with->tools, [this](auto& entry) {
      auto& [tool, config] = entry;
      if (!config.from_workspace)
        return false;
      for (auto& [server, ignored] : base_->mcp_servers) // a name may end in `_`: gh_ offers gh___x
        if (tool.starts_with(server + "__")) {
          if (told_shadowing_.insert(tool).second)
            warn_(fmt::format("MCP server `{}`: the workspace's config defines a tool named `{}`, a name of this "
                              "server's tools; the workspace's is not offered",
                              server, tool));
          return true;
        }
      return false;
    });
    for (auto& s : servers_) {
      auto client = s.client.lock();
      auto listed = client ? client->tools() : s.listed;
      if (!listed)
        continue;
      for (auto& tool : *listed) {
        bool known = s.listed && std::find(s.listed->begin(), s.listed->end(), tool) != s.listed->end();
        add_tool(*with, s, tool, known ? std::function<void(const std::string&)>([](const std::string&) {}) : warn_);
      }
      s.listed = std::move(listed);
    }
    // A tool a server offered before and not now is told so when called (the
    // workspace's tool of that name is gone above).
    for (auto& [name, from] : origin_) {
      auto t = with->tools.find(name);
      if (t != with->tools.end() && t->second.source == "mcp." + from.first)
        continue;
      if (!with->tools.count(name))
        set->withdrawn[name] = no_longer_offered(from.first, from.second);
    }
    // OpenAI's API refuses a request with more tools (and Azure's): said once, with
    // what to do, rather than as every turn's HTTP 400.
    if (with->assistant.provider == "openai" && with->tools.size() > kOpenAiMaxTools && !told_too_many_) {
      told_too_many_ = true;
      warn_(fmt::format("{} tools are offered, your MCP servers' among them: more than the {} OpenAI's API takes "
                        "in a request (it refuses the request; a compatible server may take more); leave some out "
                        "with [mcp.servers.NAME.tools.TOOL] enabled = false",
                        with->tools.size(), kOpenAiMaxTools));
    }
    set->config = std::move(with);
    set->executors = executors_;
    now_ = std::move(set);
  }

  /// `tool` of server `s` offered in `with` as NAME__tool, or `warn` told why not.
  void add_tool(Config& with, const Server& s, const McpTool& tool,
                const std::function<void(const std::string&)>& warn) {
    auto& name = s.name;
    auto& server = base_->mcp_servers.at(name);
    if (server.tools_off.count(tool.name))
      return; // enabled = false: yours to leave out (a model takes so many tools)
    if (!tool.refused.empty())
      return warn(fmt::format("MCP server `{}`: {}; it is not offered", name, tool.refused));
    auto params = mcp_parameters(tool.input_schema);
    auto t = function_tool_config(mcp_tool_name(name, tool.name), "", params);
    t.extra_keys = mcp_extra_keys(tool.input_schema);
    std::tie(t.summary, t.description) = split_description(tool.description);
    if (t.summary.empty())
      t.summary = fmt::format("{} (MCP server {})", tool.name, name);
    t.source = "mcp." + name;
    t.run = server.run;
    auto stateful = server.tool_stateful.find(tool.name);
    t.stateful = stateful != server.tool_stateful.end() ? stateful->second : server.stateful;
    // The protocol's own parameter names cannot be a stateful tool's.
    for (auto& p : params)
      if (t.stateful && (p.name == "action" || p.name == "id" || p.name == "input" || p.name == "wait_ms")) {
        warn(fmt::format("MCP server `{}`: tool `{}` has a parameter `{}`, which the stateful protocol uses; "
                         "it is offered without spawn/fetch/abort",
                         name, tool.name, p.name));
        t.stateful = false;
      }
    if (auto same = with.tools.find(t.name); same != with.tools.end()) {
      auto first = origin_.find(t.name);
      if (same->second.source == t.source && first != origin_.end() && first->second.second == tool.name)
        warn(fmt::format("MCP server `{}`: it lists the tool `{}` twice; the second is not offered", name,
                         tool.name));
      else if (same->second.source == t.source && first != origin_.end())
        warn(fmt::format("MCP server `{}`: its tools `{}` and `{}` are both named `{}` here; the second is not "
                         "offered",
                         name, first->second.second, tool.name, t.name));
      else
        warn(fmt::format("MCP server `{}`: a tool named `{}` exists already; the server's `{}` is not offered",
                         name, t.name, tool.name));
      return;
    }
    // Every tool ever offered keeps its executor: one no longer offered says so.
    if (auto at = origin_.find(t.name); at == origin_.end() || at->second != std::pair(name, tool.name)) {
      executors_[t.name] = function_handle_factory(call_of(s.client, name, tool.name));
      origin_[t.name] = {name, tool.name};
    }
    with.tools[t.name] = std::move(t);
  }

  std::mutex mtx_; // guards what follows
  std::shared_ptr<const Config> base_;
  std::function<void(const std::string&)> warn_;
  bool told_too_many_ = false;
  std::set<std::string> told_shadowing_; // the workspace's tools named as a server's, said once
  static constexpr size_t kOpenAiMaxTools = 128;
  std::vector<Server> servers_;
  std::map<std::string, HandleFactory> executors_;                    // by tool name
  std::map<std::string, std::pair<std::string, std::string>> origin_; // tool name -> server, its name there
  std::shared_ptr<const ToolSet> now_;
};

} // namespace

std::string mcp_tool_name(const std::string& server, const std::string& tool) {
  auto name = server + "__" + tool;
  for (auto& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-')
      c = '_';
  return name.substr(0, 64);
}

McpTools start_mcp_tools(std::shared_ptr<const Config> config, IoThread& io,
                         std::function<void(const std::string&)> warn, McpStartStop* stop) {
  bool on_stderr = !warn; // the CLI's: a slow start is said there too
  if (!warn)
    warn = [](const std::string& text) {
      // A server's words are in it (its stderr, its tools' names, an HTTP body): never
      // a terminal's escapes.
      std::fprintf(stderr, "jp-actors: %s\n", shown_on(STDERR_FILENO, text).c_str());
    };
  McpTools out;
  if (config->mcp_servers.empty()) {
    out.config = std::move(config);
    return out;
  }
  // All at once: each start may take a while (npx and uvx fetch the server first),
  // and the tools are added in the config's order whatever order they start in.
  std::vector<std::future<Result<std::shared_ptr<McpClient>>>> starts;
  for (auto& [name, server] : config->mcp_servers)
    starts.push_back(std::async(std::launch::async, [&io, &server, &config, stop] {
      // Its process within the runtime's limits, as a tool's: the lower of each.
      auto bounded = server;
      bounded.limits = tightest(config->runtime.tool_limits, server.limits);
      auto dir = server.url.empty() ? mcp_server_directory(server, config->workspace) : config->workspace;
      if (!dir)
        return Result<std::shared_ptr<McpClient>>(Error{fmt::format("MCP server `{}`: {}", server.name, dir.error())});
      auto started = McpClient::start(io, bounded, *dir, secret_variables(*config), stop);
      // Servers started in the workspace before: one that finds its files from there
      // fails in its own directory, and is told how to start it there again.
      if (!started && server.url.empty() && server.cwd.empty() && !(stop && stop->ended_by_stop(server.name)))
        return Result<std::shared_ptr<McpClient>>(
          Error{fmt::format("{}; it started in a directory of its own: mcp.servers.{}.cwd = \".\" starts it in "
                            "the workspace", started.error(), server.name)});
      return started;
    }));
  // A server that takes more than a second (one that hangs takes its whole
  // start_timeout_secs, 120 by default) is named, so nobody waits on a silent command.
  if (on_stderr) {
    auto said_at = std::chrono::steady_clock::now() + std::chrono::seconds(1);
    for (auto& start : starts)
      if (start.wait_until(said_at) != std::future_status::ready)
        break;
    std::string slow;
    size_t i = 0;
    for (auto& [name, server] : config->mcp_servers)
      if (starts[i++].wait_for(std::chrono::seconds(0)) != std::future_status::ready)
        slow += fmt::format("{}`{}` ({} s)", slow.empty() ? "" : ", ", name, server.start_timeout_secs);
    if (!slow.empty())
      std::fprintf(stderr, "jp-actors: waiting for MCP server %s to start (its start_timeout_secs; Ctrl-C stops)\n",
                   slow.c_str());
  }
  auto sets = std::make_shared<McpToolSets>(config, warn);
  size_t next = 0;
  for (auto& [name, server] : config->mcp_servers) {
    auto client = starts[next++].get();
    if (!client) {
      out.unavailable.push_back(client.error());
      if (!stop || !stop->ended_by_stop(name)) // its own failure is told even as jp-actors ends
        warn(client.error() + "; its tools are not offered");
      continue;
    }
    sets->add(name, *client);
    out.clients.push_back(std::move(*client));
  }
  auto first = sets->now();
  out.config = first->config;
  out.executors = first->executors;
  out.now = [sets] { return sets->now(); };
  return out;
}

} // namespace jp
