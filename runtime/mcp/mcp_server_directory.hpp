// Where a stdio MCP server's process starts. Not in the workspace unless your config
// says so: npx, uvx and `python -m` read the directory they start in first (its
// node_modules, .npmrc, uv.toml, modules), so a stranger's repository would choose
// the code your server runs, with the secrets your config gives it.
#pragma once

#include <string>

#include "../../messages/result.hpp"

namespace jp {

struct McpServerConfig;

/// `server.cwd` when set: a relative one inside `workspace` (its links resolved, as a
/// cwd the assistant chooses), an absolute one as it is. Else a directory of the
/// server's own, <user state>/mcp/NAME (created 0700, empty at first).
Result<std::string> mcp_server_directory(const McpServerConfig& server, const std::string& workspace);

} // namespace jp
