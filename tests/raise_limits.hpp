// Whether this process, and so a child it starts, may raise a hard resource limit:
// it has CAP_SYS_RESOURCE (root has it on most machines, not in every container).
// Only then can a tool undo runtime.tool_limits.
#pragma once

#include <fstream>
#include <string>

namespace jp::testing {

inline bool may_raise_hard_limits() {
  constexpr int cap_sys_resource = 24; // <linux/capability.h>
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);)
    if (line.starts_with("CapEff:"))
      return (std::stoull(line.substr(7), nullptr, 16) >> cap_sys_resource) & 1;
  return false;
}

} // namespace jp::testing
