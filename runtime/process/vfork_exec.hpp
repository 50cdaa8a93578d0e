// Our own vfork launcher's core: a clone(CLONE_VM | CLONE_VFORK) child that makes
// system calls only. It gives the child what posix_spawnp gives it (child_launch.cpp
// launch_posix_spawn) with one difference glibc's file actions cannot express: the
// child marks our fds close-on-exec instead of closing them one by one, so execve
// closes them after it has released the spawning thread (bench/README.md, "the
// spawn path"). Built without sanitizers (CMakeLists.txt): the child shares our
// memory and the spawning thread's sanitizer state.
#pragma once

#include <sys/types.h>

namespace jp {

/// Everything the child needs, prepared by the parent: the child reads it and
/// allocates nothing. fds are the parent's; -1 = not used.
struct VforkPlan {
  const char* file = nullptr;     // argv[0]: searched in `path` unless it has a '/'
  const char* path = nullptr;     // the PATH to search (the parent's, as posix_spawnp)
  char* const* argv = nullptr;
  char* const* envp = nullptr;
  const char* cwd = nullptr;      // nullptr = ours
  const char* terminal = nullptr; // a pty's slave side as 0-2 and controlling terminal
  int in = -1, out = -1, err = -1; // become 0, 1, 2 (in = -1: /dev/null)
  int control = -1;                // becomes 3
  bool session = true;             // its own session, else its own process group
  volatile int error = 0;          // set by a child that could not exec
};

/// Starts the child in its own session (or process group), every signal at its default and none
/// blocked, only 0-2 (and 3) open once it has exec'd. Its pid, or -1 with
/// plan.error set (the failed child already reaped).
pid_t vfork_exec(VforkPlan& plan) noexcept;

} // namespace jp
