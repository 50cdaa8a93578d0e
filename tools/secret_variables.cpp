#include "tools/secret_variables.hpp"

#include <algorithm>

#include "config/config.hpp"
#include "runtime/process/tool_environment.hpp"
#include "runtime/text_nocase.hpp"

namespace jp {

namespace {

bool credential_header(std::string header) {
  for (auto name : {"authorization", "proxy-authorization", "cookie"})
    if (equals_nocase(header, name))
      return true;
  std::replace(header.begin(), header.end(), '-', '_');
  return secret_looking_name(header);
}

} // namespace

std::vector<std::string> secret_variables(const Config& config) {
  auto names = config.assistant.key_variables();
  for (auto& [name, server] : config.mcp_servers)
    for (auto& [header, value] : server.headers) {
      if (!credential_header(header))
        continue;
      for (auto& v : header_variables(value))
        if (!v.name.empty())
          names.push_back(v.name);
    }
  return names;
}

std::vector<HeaderVariable> header_variables(const std::string& value) {
  std::vector<HeaderVariable> out;
  for (size_t at = 0, open; (open = value.find("${", at)) != std::string::npos;) {
    auto close = value.find('}', open + 2);
    if (close == std::string::npos)
      break;
    out.push_back({open, close + 1, value.substr(open + 2, close - open - 2)});
    at = close + 1;
  }
  return out;
}

} // namespace jp
