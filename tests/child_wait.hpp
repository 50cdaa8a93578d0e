// Waiting, bounded, for what a test's child processes do: a condition to hold, a
// child to exit. Bounded so a broken run fails the test instead of hanging it.
#pragma once

#include <chrono>
#include <csignal>
#include <functional>
#include <sys/types.h>
#include <sys/wait.h>
#include <thread>

#include "owned_children.hpp"

namespace jp::testing {

/// Whether `ready()` came true within 60 s (a bound against a hang: a slow, loaded
/// machine running a sanitizer build takes its time).
inline bool wait_for(const std::function<bool()>& ready) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!ready()) {
    if (std::chrono::steady_clock::now() > deadline)
      return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

/// Its exit status once `pid` exited (bounded: 60 s); -1 if it did not. `pid`
/// becomes -1 once reaped.
inline int wait_exit(pid_t& pid) {
  int status = 0;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < deadline) {
    if (::waitpid(pid, &status, WNOHANG) == pid) {
      disown_child(pid);
      pid = -1;
      return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return -1;
}

/// Ends a jp-actors CLI the test started, if it still runs: SIGTERM, so that it ends
/// its tools as it does for a user (a SIGKILL would leave them running), then, past
/// 60 s, SIGKILL to it and its group. `pid` becomes -1.
inline void end_cli(pid_t& pid) {
  if (pid <= 0)
    return;
  pid_t was = pid;
  ::kill(was, SIGTERM);
  if (wait_exit(pid) >= 0)
    return;
  ::kill(-was, SIGKILL);
  ::kill(was, SIGKILL);
  reap_child(was);
  pid = -1;
}

} // namespace jp::testing
