// Children a test starts, killed if the test runner aborts. CAF_REQUIRE and
// CAF_FAIL end a failing test with abort(), so no destructor runs: without this
// the processes of a failed test were left running (a node, a CLI and its tools).
#pragma once

#include <atomic>
#include <cerrno>
#include <csignal>
#include <sys/types.h>
#include <sys/wait.h>

namespace jp {
void kill_all_process_groups() noexcept; // runtime/process/process.hpp
} // namespace jp

namespace jp::testing {

namespace owned_detail {
// Signal-safe: fixed slots of atomics, no allocation, no lock.
struct Slot {
  std::atomic<pid_t> target{0};
  std::atomic<int> sig{0};
};
inline Slot slots[256];

inline void on_abort(int) {
  for (auto& s : slots)
    if (pid_t t = s.target.load(); t != 0)
      ::kill(t, s.sig.load());
  kill_all_process_groups();
  // Returning lets abort() go on to end the runner (the handler was reset).
}
} // namespace owned_detail

/// `target` (a pid, or -pgid for a whole group) gets `sig` if the runner aborts:
/// SIGKILL for a plain process or group, SIGTERM for a jp-actors CLI, which then
/// ends its own tools.
inline void own_child(pid_t target, int sig) {
  for (auto& s : owned_detail::slots) {
    pid_t free = 0;
    if (s.target.compare_exchange_strong(free, target)) {
      s.sig.store(sig); // an abort in between sends signal 0: nothing
      return;
    }
  }
}

/// `pid` (or its group) reaped or killed by the test itself: the abort has
/// nothing to do for it.
inline void disown_child(pid_t pid) {
  for (auto& s : owned_detail::slots) {
    pid_t expected = pid;
    if (s.target.compare_exchange_strong(expected, 0))
      return;
    expected = -pid;
    if (s.target.compare_exchange_strong(expected, 0))
      return;
  }
}

/// waitpid(pid, status, 0) for an owned child, disowned first.
inline pid_t reap_child(pid_t pid, int* status = nullptr) {
  disown_child(pid);
  pid_t r;
  while ((r = ::waitpid(pid, status, 0)) < 0 && errno == EINTR) {
  }
  return r;
}

/// Installs the abort handler (test_main.cpp): every owned child gets its signal,
/// and every process group this runner's own runtime started is killed.
inline void kill_children_at_abort() {
  struct sigaction sa{};
  sa.sa_handler = owned_detail::on_abort;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESETHAND;
  ::sigaction(SIGABRT, &sa, nullptr);
}

} // namespace jp::testing
