#include "actors/mcp_tools.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <future>
#include <tuple>
#include <fmt/format.h>

#include "actors/function_handle.hpp"
#include "runtime/mcp/mcp_input_schema.hpp"
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

/// The function that calls `tool` of `client`: a call's result, progress and abort.
/// It holds the client weakly: the server goes with its McpTools, whoever still
/// holds an executor.
FunctionTool call_of(std::weak_ptr<McpClient> weak, std::string server, std::string tool,
                     std::vector<ParameterConfig> params) {
  return [weak, server, tool, params](const Json& args, const Progress& progress) {
    auto client = weak.lock();
    if (!client)
      return Invocation{FunctionResult::ready(ToolState::failure(
                          ToolError{fmt::format("MCP server `{}` was stopped with its runtime", server), {}, false})),
                        {}, {}};
    FunctionResult result;
    auto n = client->call(tool, objects_as_declared(args, params), progress, [result](ToolState s) { result.set(std::move(s)); });
    Invocation inv;
    inv.result = result;
    inv.abort = [weak, n] {
      if (auto c = weak.lock())
        c->cancel(n, "aborted");
    };
    return inv;
  };
}

} // namespace

std::string mcp_tool_name(const std::string& server, const std::string& tool) {
  auto name = server + "__" + tool;
  for (auto& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-')
      c = '_';
  return name.substr(0, 64);
}

McpTools start_mcp_tools(std::shared_ptr<const Config> config, IoThread& io,
                         std::function<void(const std::string&)> warn) {
  if (!warn)
    warn = [](const std::string& text) { std::fprintf(stderr, "jp-actors: %s\n", text.c_str()); };
  McpTools out;
  if (config->mcp_servers.empty()) {
    out.config = std::move(config);
    return out;
  }
  auto with = std::make_shared<Config>(*config);
  // All at once: each start may take a while (npx and uvx fetch the server first),
  // and the tools are added in the config's order whatever order they start in.
  std::vector<std::future<Result<std::shared_ptr<McpClient>>>> starts;
  for (auto& [name, server] : config->mcp_servers)
    starts.push_back(std::async(std::launch::async, [&io, &server, &config] {
      return McpClient::start(io, server, config->workspace);
    }));
  size_t next = 0;
  for (auto& [name, server] : config->mcp_servers) {
    auto client = starts[next++].get();
    if (!client) {
      out.unavailable.push_back(client.error());
      warn(client.error() + "; its tools are not offered");
      continue;
    }
    for (auto& tool : (*client)->tools()) {
      auto params = mcp_parameters(tool.input_schema);
      auto t = function_tool_config(mcp_tool_name(name, tool.name), "", params);
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
      if (auto same = with->tools.find(t.name); same != with->tools.end()) {
        // A repository's tool does not stand in for your server's (and its permission).
        if (same->second.from_workspace) {
          warn(fmt::format("MCP server `{}`: the workspace's config defines a tool named `{}` too; the server's "
                           "is offered",
                           name, t.name));
        } else {
          warn(fmt::format("MCP server `{}`: a tool named `{}` exists already; `{}` is not offered", name, t.name,
                           tool.name));
          continue;
        }
      }
      out.executors[t.name] = function_handle_factory(call_of(*client, name, tool.name, params));
      with->tools[t.name] = std::move(t);
    }
    out.clients.push_back(std::move(*client));
  }
  out.config = std::move(with);
  return out;
}

} // namespace jp
