// The variables a config names as secrets, kept from every child's environment
// (tools, stdio MCP servers) unless a pass_env names them, however plain their
// names and values are.
#pragma once

#include <string>
#include <vector>

namespace jp {

struct Config;

/// The provider's key, whatever it is called, and each ${NAME} an MCP server's
/// credential headers send (Authorization, Proxy-Authorization, Cookie, or a
/// secret-looking name such as X-Api-Key): a token the user gave that server, which
/// no heuristic may catch (a bare token in LINEAR). `X-User: ${USER}` keeps USER.
std::vector<std::string> secret_variables(const Config& config);

/// Each `${NAME}` in a header's value (an empty name too; the scan ends at a `${`
/// without its `}`): what McpClient expands, and so what secret_variables keeps.
struct HeaderVariable {
  size_t at = 0, end = 0; // `${` and one past `}`
  std::string name;
};
std::vector<HeaderVariable> header_variables(const std::string& value);

} // namespace jp
