#include "owned_children.hpp"

#include <atomic>
#include <cerrno>
#include <csignal>
#include <sys/wait.h>

#include "runtime/process/process.hpp"

namespace jp::testing {

namespace {

// Signal-safe: fixed slots of atomics, no allocation, no lock.
struct Slot {
  std::atomic<pid_t> target{0};
  std::atomic<int> sig{0};
};
Slot g_slots[256];

void on_abort(int) {
  for (auto& s : g_slots)
    if (pid_t t = s.target.load(); t != 0)
      ::kill(t, s.sig.load());
  kill_all_process_groups();
  // Returning lets abort() go on to end the runner (the handler was reset).
}

} // namespace

void own_child(pid_t target, int sig) {
  for (auto& s : g_slots) {
    pid_t free = 0;
    if (s.target.compare_exchange_strong(free, target)) {
      s.sig.store(sig); // an abort in between sends signal 0: nothing
      return;
    }
  }
}

void disown_child(pid_t pid) {
  for (auto& s : g_slots) {
    pid_t expected = pid;
    if (s.target.compare_exchange_strong(expected, 0))
      return;
    expected = -pid;
    if (s.target.compare_exchange_strong(expected, 0))
      return;
  }
}

pid_t reap_child(pid_t pid, int* status) {
  disown_child(pid);
  pid_t r;
  while ((r = ::waitpid(pid, status, 0)) < 0 && errno == EINTR) {
  }
  return r;
}

void kill_children_at_abort() {
  struct sigaction sa{};
  sa.sa_handler = on_abort;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESETHAND;
  ::sigaction(SIGABRT, &sa, nullptr);
}

} // namespace jp::testing
