// MCP servers' tools for a CLI command ([mcp.servers.NAME]; DESIGN.md "MCP"): each
// server is started in the workspace, its tools are added to the config as
// NAME__tool (source "mcp.NAME", parameters read from their input schemas, so every
// dialect gets them as it gets any tool's), and each gets a function that calls it.
// A call so runs as a function handle: blocking without `action`, and spawn, fetch
// (the server's progress messages), abort (notifications/cancelled) and await where
// the server's config says stateful. A server that does not start is reported and
// its tools are left out; the others work.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "actors/registry_actor.hpp"
#include "config/config.hpp"
#include "runtime/mcp/mcp_client.hpp"

namespace jp {

class IoThread;

struct McpTools {
  std::shared_ptr<const Config> config;          // with the servers' tools added
  std::map<std::string, HandleFactory> executors; // by tool name: who runs each
  std::vector<std::shared_ptr<McpClient>> clients; // the servers, alive while this is
  std::vector<std::string> unavailable;           // why each server left out is
};

/// Starts `config`'s MCP servers (none: `config` as it is). Warnings (a server that
/// did not start, a tool that could not be offered) are printed to stderr.
McpTools start_mcp_tools(std::shared_ptr<const Config> config, IoThread& io);

/// NAME__tool, made valid for every provider ([A-Za-z0-9_-], at most 64).
std::string mcp_tool_name(const std::string& server, const std::string& tool);

/// A tool's parameters from its MCP input schema (a JSON Schema object); nested
/// schemas keep their type only.
std::vector<ParameterConfig> mcp_parameters(const Json& input_schema);

} // namespace jp
