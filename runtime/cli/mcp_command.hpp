// `jp-actors mcp`: this workspace's tools served to MCP clients (DESIGN.md "MCP").
// Over stdio: one JSON-RPC message per line in on stdin, out on stdout; the session
// lasts until stdin ends, then the calls in flight are answered, each handle still
// running gets its turn-end policy (abort unless its tool says otherwise), and
// jp-actors exits. With --listen: Streamable HTTP on a loopback address
// (runtime/mcp/mcp_http_server), one session per client, each ended the same way when
// its client DELETEs it; it runs until a signal. SIGTERM ends every tool at once.
#pragma once

#include <memory>
#include <string>

#include "config/config.hpp"
#include "tools/permission.hpp"

namespace jp {

/// Whether `jp-actors mcp` serves `tool`: not the built-ins that start sub-agents (a
/// client's calls are no agent loop, so each call of them could only fail).
bool mcp_serves(const ToolConfig& tool);

/// Tools whose `run` is "ask" are asked about through a client that offers
/// elicitation, else refused (naming the key to change) unless `permissions.allowed`
/// names them: there is no terminal to ask on. `listen` empty: stdio; else
/// "HOST:PORT" (or "PORT", on 127.0.0.1) to serve Streamable HTTP on.
/// `idle_secs`: over HTTP, a session idle that long ends (0: never).
int run_mcp(std::shared_ptr<const Config> config, PermissionPolicy permissions, const std::string& listen = "",
            double idle_secs = 1800);

} // namespace jp
