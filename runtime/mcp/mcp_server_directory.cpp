#include "runtime/mcp/mcp_server_directory.hpp"

#include <fmt/format.h>

#include "config/config.hpp"
#include "runtime/process/private_file.hpp"
#include "runtime/store/state_location.hpp"
#include "tools/working_directory.hpp"

namespace jp {

Result<std::string> mcp_server_directory(const McpServerConfig& server, const std::string& workspace) {
  auto key = fmt::format("mcp.servers.{}.cwd", server.name);
  if (!server.cwd.empty()) {
    bool relative = server.cwd[0] != '/';
    auto dir = working_directory(workspace, server.cwd, relative,
                                 "a relative cwd is in the workspace, and must stay inside it (an absolute one "
                                 "may be anywhere)");
    if (!dir)
      return Error{fmt::format("{}: {}", key, dir.error())};
    return *dir;
  }
  auto own = user_state_dir("mcp/" + server.name);
  auto opened = own ? open_private_dir(own->root, own->relative) : Result<DirFd>(Error{own.error()});
  if (!opened)
    return Error{fmt::format("no directory of its own to start in ({}); set {} (a relative one is in the "
                             "workspace)",
                             opened.error(), key)};
  return own->path();
}

} // namespace jp
