// Our own vfork launcher's core: a clone(CLONE_VM | CLONE_VFORK) child that makes
// system calls only. It gives the child what posix_spawnp gives it (child_launch.cpp
// launch_posix_spawn) with one difference glibc's file actions cannot express: the
// child marks our fds close-on-exec instead of closing them one by one, so execve
// closes them after it has released the spawning thread (bench/README.md, "the
// spawn path"). Where the kernel has clone3 (5.5+, x86-64 here) the kernel resets
// the child's signal handlers as it makes it (CLONE_CLEAR_SIGHAND) and hands us its
// pidfd (CLONE_PIDFD): the child then resets only the standard signals (which a
// handler-free process may still ignore), not all 64 one by one while the spawning
// thread waits. Built without sanitizers (CMakeLists.txt): the child shares our
// memory and the spawning thread's sanitizer state.
#pragma once

#include <cstdint>
#include <sys/types.h>

#include "resource_limit.hpp"

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
  bool want_pidfd = false;         // ask the kernel for the child's pidfd (CLONE_PIDFD)
  const ResourceLimit* limits = nullptr; // set in the child last, once its fds are in place
  size_t limit_count = 0;
  volatile int error = 0;          // set by a child that could not exec
  int pidfd = -1;                  // the child's pidfd, ours to close, when asked and given
  // Set by vfork_exec for the child: the signals (bit s-1) it resets to their
  // default; all of them unless the kernel has reset the handled ones (clone3).
  uint64_t reset = 0;
};

/// Starts the child in its own session (or process group), every signal at its
/// default and none blocked, only 0-2 (and 3) open once it has exec'd. Its pid, or
/// -1 with plan.error set (the failed child already reaped). "Every signal" but
/// for one case: a real-time signal first ignored here after the first spawn stays
/// ignored in the child through clone3, as it would across fork and exec.
pid_t vfork_exec(VforkPlan& plan) noexcept;

/// Whether this system lets vfork_exec's child keep our fds from the program it
/// runs: close_range (5.9+) is there and not refused. Asked once.
bool vfork_exec_usable() noexcept;

/// The signals (bit s-1) the child resets itself after clone3 (the kernel resets
/// the handled ones): every standard signal but SIGKILL and SIGSTOP, and the
/// real-time ones ignored at the first spawn.
uint64_t ignored_signals_reset() noexcept;

/// Whether vfork_exec tries clone3 (the default; it falls back to clone by itself
/// where clone3 is missing or refused). Off: the clone path, for its tests.
void use_clone3(bool on) noexcept;
/// Whether the next spawn goes through clone3 (false once it was refused).
bool clone3_in_use() noexcept;
/// The errno clone3 was refused with (ENOSYS, EINVAL, EPERM), or 0.
int clone3_refusal() noexcept;

} // namespace jp
