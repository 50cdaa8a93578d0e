// Whether a child this process starts may raise a hard resource limit: it has
// CAP_SYS_RESOURCE after its exec (root gets its bounding set's, which lacks it in
// some containers; another user only what is ambient). Only then can a tool undo
// runtime.tool_limits.
#pragma once

#include <fstream>
#include <string>
#include <unistd.h>

namespace jp::testing {

inline bool may_raise_hard_limits() {
  constexpr int cap_sys_resource = 24; // <linux/capability.h>
  std::string field = ::getuid() == 0 ? "CapBnd:" : "CapAmb:";
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);)
    if (line.starts_with(field))
      return (std::stoull(line.substr(field.size()), nullptr, 16) >> cap_sys_resource) & 1;
  return false;
}

} // namespace jp::testing
