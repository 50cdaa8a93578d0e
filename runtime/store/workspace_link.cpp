#include "runtime/store/workspace_link.hpp"

#include <sys/stat.h>

namespace jp {

std::string first_link_below(const std::string& root, const std::string& path) {
  if (root.empty() || !path.starts_with(root + "/"))
    return "";
  for (auto at = path.find('/', root.size() + 1);; at = path.find('/', at + 1)) {
    auto dir = path.substr(0, at);
    struct stat st {};
    if (::lstat(dir.c_str(), &st) == 0 && S_ISLNK(st.st_mode))
      return dir;
    if (at == std::string::npos)
      return "";
  }
}

} // namespace jp
