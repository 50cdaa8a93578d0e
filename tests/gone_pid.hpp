// A pid whose process is gone, for records that name a dead owner.
#pragma once

#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

namespace jp::testing {

/// The pid of a child that exited and was reaped.
inline pid_t gone_pid() {
  pid_t pid = ::fork();
  if (pid == 0)
    ::_exit(0);
  ::waitpid(pid, nullptr, 0);
  return pid;
}

} // namespace jp::testing
