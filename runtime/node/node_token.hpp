// The node token: what a client on this machine shows a node on loopback (plain
// transport) to be let in. A 0600 file in the user's state directory
// ($XDG_STATE_HOME/jp-actors/node-token), made on the node's first start; only this
// user can read it, so only this user's processes can use the node.
#pragma once

#include <string>

#include "../../messages/result.hpp"

namespace jp {

/// The token, made now when `create` and there is none. Errors say where it is
/// looked for.
Result<std::string> node_token(bool create);

/// The MCP token: what an MCP client shows `jp-actors mcp --listen` (a 0600 file,
/// mcp-token, beside the node token), made on the server's first start.
Result<std::string> mcp_token(bool create);
/// Where the MCP token file is (for messages).
std::string mcp_token_path();

/// Compares in time independent of where they differ.
bool same_token(const std::string& a, const std::string& b);

} // namespace jp
