// Whether a child this process starts may raise a hard resource limit, as
// CAP_SYS_RESOURCE in the initial user namespace allows (root has it on most
// machines, not in every container): only then can a tool undo its limits. Asked
// of the kernel: this process's hard limit on open files lowered by one and put
// back (a child exec'd by root has the capabilities root has here).
#pragma once

#include <sys/resource.h>

namespace jp::testing {

inline bool may_raise_hard_limits() {
  rlimit was{};
  if (::getrlimit(RLIMIT_NOFILE, &was) != 0 || was.rlim_max == RLIM_INFINITY || was.rlim_max < 2)
    return false;
  rlimit lower{was.rlim_cur < was.rlim_max ? was.rlim_cur : was.rlim_max - 1, was.rlim_max - 1};
  if (::setrlimit(RLIMIT_NOFILE, &lower) != 0)
    return false;
  return ::setrlimit(RLIMIT_NOFILE, &was) == 0; // else one fewer, which no test here misses
}

} // namespace jp::testing
