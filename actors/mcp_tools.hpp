// MCP servers' tools for a runtime (a CLI command, an embedded jp::Runtime)
// ([mcp.servers.NAME]; DESIGN.md "MCP"): each server is started in the workspace, its tools are added to the config as
// NAME__tool (source "mcp.NAME", parameters read from their input schemas, so every
// dialect gets them as it gets any tool's), and each gets a function that calls it.
// A call so runs as a function handle: blocking without `action`, and spawn, fetch
// (the server's progress messages), abort (notifications/cancelled) and await where
// the server's config says stateful. A server that does not start is reported and
// its tools are left out; the others work. A server that changes its tools
// (notifications/tools/list_changed) has them offered anew (`now`, a ToolSet): new
// ones added, changed ones as they are now, and a call of one it dropped told so.
// Not an actor: the executors it makes are (function handles).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "registry_actor.hpp"
#include "tool_set.hpp"
#include "../config/config.hpp"
#include "../runtime/mcp/mcp_client.hpp"

namespace jp {

class IoThread;

struct McpTools {
  std::shared_ptr<const Config> config;          // with the servers' tools added, as they listed them first
  std::map<std::string, HandleFactory> executors; // by tool name: who runs each
  std::vector<std::shared_ptr<McpClient>> clients; // the servers, alive while this is
  std::vector<std::string> unavailable;           // why each server left out is
  // The tools as the servers list them now: `config` and `executors` until one
  // changes its tools, then made anew from `config` as it was given (what one could
  // not be offered is said through `warn` then too). Empty: no server started.
  ToolsNow now;
};

/// Starts `config`'s MCP servers (none: `config` as it is). `warn` is told what
/// could not be offered (a server that did not start, a tool left out), a sentence
/// each (none given: printed to stderr as "jp-actors: ..."); a server that did not
/// start is in `unavailable` too. Later, `now` tells it on the thread that asks.
/// `stop` (optional): once stopped, the starts still waiting end at once, unsaid.
McpTools start_mcp_tools(std::shared_ptr<const Config> config, IoThread& io,
                         std::function<void(const std::string&)> warn = {}, McpStartStop* stop = nullptr);

/// NAME__tool, made valid for every provider ([A-Za-z0-9_-], at most 64).
std::string mcp_tool_name(const std::string& server, const std::string& tool);

} // namespace jp
