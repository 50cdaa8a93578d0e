#include "runtime/cli/signal_shutdown.hpp"

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <chrono>
#include <csignal>
#include <fcntl.h>
#include <poll.h>
#include <thread>
#include <unistd.h>

#include "runtime/process/group_record.hpp"
#include "runtime/process/process.hpp"
#include "runtime/process/tool_mark.hpp"

namespace jp {

namespace {

int g_pipe[2] = {-1, -1};
std::atomic<int64_t> g_grace_ms{2000};
std::atomic<bool> g_underway{false};

void on_signal(int sig) {
  g_underway = true; // lock-free: safe here
  auto saved = errno;
  char c = static_cast<char>(sig);
  (void)!::write(g_pipe[1], &c, 1);
  errno = saved;
}

/// Waits up to `ms` for a byte on the pipe (another signal); true if one came.
bool another_signal(int ms) {
  pollfd p{g_pipe[0], POLLIN, 0};
  if (::poll(&p, 1, ms) <= 0)
    return false;
  char c;
  (void)!::read(g_pipe[0], &c, 1);
  return true;
}

void watch() {
  char c = 0;
  while (::read(g_pipe[0], &c, 1) != 1) {
  }
  int sig = static_cast<unsigned char>(c);
  g_underway = true;
  refuse_new_processes(); // returns once a spawn under way has recorded its group
  signal_all_process_groups(SIGTERM);
  signal_escaped_processes(SIGTERM); // what left its tool's group or session
  signal_all_process_groups(SIGCONT); // a stopped job acts on TERM only once continued
  signal_escaped_processes(SIGCONT);
  // Each tool's exit is reaped by the io thread, which frees its group's slot.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(g_grace_ms.load());
  while (any_process_group_alive() && std::chrono::steady_clock::now() < deadline)
    if (another_signal(10))
      break;
  kill_all_process_groups();
  kill_escaped_processes();
  close_group_record(); // nothing of ours is left for the next start to sweep
  std::signal(sig, SIG_DFL);
  ::kill(::getpid(), sig);
  std::this_thread::sleep_for(std::chrono::seconds(1)); // should the signal not end us
  std::_Exit(128 + sig);
}

} // namespace

void install_signal_shutdown(double grace_secs) {
  g_grace_ms = static_cast<int64_t>(grace_secs * 1000);
  static bool installed = false;
  if (installed || ::pipe2(g_pipe, O_CLOEXEC) != 0)
    return;
  installed = true;
  std::thread(watch).detach();
  struct sigaction sa{};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  for (int sig : {SIGINT, SIGTERM, SIGHUP})
    ::sigaction(sig, &sa, nullptr);
}

void await_signal_shutdown() {
  while (g_underway)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
}

} // namespace jp
