// `jp-actors mcp`: this workspace's tools served to an MCP client over stdio
// (DESIGN.md "MCP"): one JSON-RPC message per line in on stdin, out on stdout. The
// session lasts until stdin ends; then the calls in flight are answered, each handle
// still running gets its turn-end policy (abort unless its tool says otherwise), and
// jp-actors exits. A client that does not wait sends SIGTERM, which ends the tools.
#pragma once

#include <memory>

#include "config/config.hpp"
#include "tools/permission.hpp"

namespace jp {

/// Tools whose `run` is "ask" are refused (naming the key to change) unless
/// `permissions.allowed` names them: there is no terminal to ask on.
int run_mcp(std::shared_ptr<const Config> config, PermissionPolicy permissions);

} // namespace jp
