#include "runtime/cli/signal_shutdown.hpp"

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <exception>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <fcntl.h>
#include <mutex>
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
std::atomic<int> g_signal{0}; // the signal whose shutdown is under way

// The program's own stop (StopOnSignal), and whether the shutdown asked for it.
std::mutex g_stop_mutex;
std::function<void()> g_stop;
bool g_stop_waited_for = true; // the shutdown waits for the program once it ran g_stop
bool g_stop_asked = false;
// The program was stopped: the shutdown waits for it to reach await_signal_shutdown().
std::atomic<bool> g_program_stops{false};
std::atomic<bool> g_program_ended{false};

void on_signal(int sig) {
  g_underway = true; // lock-free: safe here
  if (sig == SIGQUIT) // known at once: the program writes no report from now on
    g_signal = SIGQUIT;
  auto saved = errno;
  char c = static_cast<char>(sig);
  (void)!::write(g_pipe[1], &c, 1);
  errno = saved;
}

/// Has the program stop its own work, if it set a stop (StopOnSignal).
void stop_program() {
  std::lock_guard lock(g_stop_mutex);
  g_stop_asked = true;
  if (!g_stop)
    return;
  g_program_stops = g_stop_waited_for;
  g_stop();
}

/// The tools' groups are reaped and a program that stops itself wrote what it writes.
bool all_ended() {
  return !any_process_group_alive() && (!g_program_stops || g_program_ended);
}

/// Waits up to `ms` for a byte on the pipe (another signal); the signal if one came,
/// else 0.
int another_signal(int ms) {
  pollfd p{g_pipe[0], POLLIN, 0};
  if (::poll(&p, 1, ms) <= 0)
    return 0;
  char c = 0;
  (void)!::read(g_pipe[0], &c, 1);
  return static_cast<unsigned char>(c);
}

/// Dies of `sig` as its default action would have it (SIGQUIT: with a core dump, where
/// the user's limits allow one), nothing of ours left behind.
[[noreturn]] void die_of(int sig) {
  close_group_record(); // nothing of ours is left for the next start to sweep
  std::signal(sig, SIG_DFL);
  ::kill(::getpid(), sig);
  std::this_thread::sleep_for(std::chrono::seconds(1)); // should the signal not end us
  std::_Exit(128 + sig);
}

/// Ctrl-\ asks to quit now, whenever it comes: no grace and no writing, but no tool
/// outlives us either (by its default action jp-actors died and left them to the
/// next start's sweep).
[[noreturn]] void quit_now() {
  g_signal = SIGQUIT;
  // The program runs on while its tools die: what it writes then (a script's next
  // step, its end, a --report; shutdown_signal() tells it not to) goes nowhere.
  if (int null = ::open("/dev/null", O_WRONLY | O_CLOEXEC); null >= 0) {
    ::dup2(null, STDOUT_FILENO);
    ::dup2(null, STDERR_FILENO);
    ::close(null);
  }
  refuse_new_processes();
  kill_all_process_groups();
  kill_escaped_processes();
  die_of(SIGQUIT);
}

void watch() {
  char c = 0;
  while (::read(g_pipe[0], &c, 1) != 1) {
  }
  int sig = static_cast<unsigned char>(c);
  int none = 0;
  g_signal.compare_exchange_strong(none, sig); // a SIGQUIT told by the handler stands
  g_underway = true;
  if (sig == SIGQUIT)
    quit_now();
  // The program stops its work first: a script's later steps would only meet the
  // refusal of new processes.
  stop_program();
  refuse_new_processes(); // returns once a spawn under way has recorded its group
  terminate_all_process_groups(); // those the program's aborts did not TERM already
  auto leaders = live_tool_pids();  // TERMed with their groups: not again as our children
  signal_escaped_processes(SIGTERM, leaders); // what left its tool's group or session
  signal_all_process_groups(SIGCONT); // a stopped job acts on TERM only once continued
  signal_escaped_processes(SIGCONT);
  // Each tool's exit is reaped by the io thread, which frees its group's slot.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(g_grace_ms.load());
  // What left its tool's group (setsid) has the grace too: a tool that died of the
  // TERM at once (`exec sleep`, a wrapper) left its escapes a KILL within
  // milliseconds, before they cleaned up. Looked for every 50 ms (a pass over /proc).
  auto next_look = std::chrono::steady_clock::now();
  bool escapes = true;
  auto ended = [&] {
    if (!all_ended())
      return false;
    if (auto now = std::chrono::steady_clock::now(); now >= next_look) {
      escapes = signal_escaped_processes(0) > 0;
      next_look = now + std::chrono::milliseconds(50);
    }
    return !escapes;
  };
  bool again = false;
  while (!ended() && std::chrono::steady_clock::now() < deadline)
    if (int next = another_signal(10)) { // a second signal cuts the grace short
      if (next == SIGQUIT)
        quit_now();
      again = true;
      break;
    }
  bool killing = again && any_process_group_alive();
  kill_all_process_groups();
  kill_escaped_processes();
  // Tools killed (at the grace's end, or at once by a second signal): a moment for
  // the program's turns to end with them and write what they write (the transcript's
  // end, a run's --report), which takes milliseconds once its tools are dead. One
  // more signal wants the end now.
  if (killing) { // else there is nothing to say (`timeout` sends its group the signal twice)
    static constexpr char said[] = "jp-actors: tools killed; ending the turns and writing what they write "
                                   "(up to 5 s; a signal again ends jp-actors now)\n";
    (void)!::write(STDERR_FILENO, said, sizeof said - 1);
  }
  deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (!all_ended() && std::chrono::steady_clock::now() < deadline)
    if (int next = another_signal(10)) {
      if (next == SIGQUIT)
        quit_now();
      break;
    }
  die_of(sig);
}

} // namespace

void install_crash_cleanup() {
  static const std::terminate_handler previous = std::set_terminate([] {
    kill_all_process_groups();
    kill_escaped_processes();
    close_group_record();
    (previous ? previous : std::abort)();
  });
}

int shutdown_signal() {
  return g_signal.load();
}

void install_signal_shutdown(double grace_secs) {
  g_grace_ms = static_cast<int64_t>(grace_secs * 1000);
  static bool installed = false;
  if (installed || ::pipe2(g_pipe, O_CLOEXEC) != 0)
    return;
  // The handler's write must never block: a flood of signals fills the pipe, and the
  // handler may run on the thread that reads it. What a full pipe drops is only
  // another signal of the same shutdown.
  ::fcntl(g_pipe[1], F_SETFL, O_NONBLOCK);
  installed = true;
  std::thread(watch).detach();
  struct sigaction sa{};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  for (int sig : {SIGINT, SIGTERM, SIGQUIT})
    ::sigaction(sig, &sa, nullptr);
  // A SIGHUP our parent had us ignore stays ignored: `nohup` ignores it so that a
  // closed terminal does not end the run. (SIGINT and SIGQUIT are ours whatever came:
  // a `kill -INT` must end the run and its tools, not be lost to a script's `&`.)
  struct sigaction inherited{};
  if (::sigaction(SIGHUP, nullptr, &inherited) != 0 || inherited.sa_handler != SIG_IGN)
    ::sigaction(SIGHUP, &sa, nullptr);
  // The other signals whose default action ends a process end it as SIGTERM does:
  // by that action a stray `kill -USR1`, an alarm or a CPU limit (`ulimit -t`) ended
  // jp-actors at once, every tool left running until the next start's sweep. One
  // ignored or handled already (a profiler's SIGPROF) stays so.
  for (int sig : {SIGUSR1, SIGUSR2, SIGALRM, SIGVTALRM, SIGPROF, SIGIO, SIGPWR, SIGXCPU, SIGSTKFLT})
    if (::sigaction(sig, nullptr, &inherited) == 0 && inherited.sa_handler == SIG_DFL)
      ::sigaction(sig, &sa, nullptr);
}

void await_signal_shutdown() {
  if (!g_underway)
    return;
  std::fflush(nullptr); // dying of the signal flushes no stdio
  g_program_ended = true;
  while (g_underway) // until the shutdown's thread ends the process
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
}

StopOnSignal::StopOnSignal(std::function<void()> stop, bool waited_for) {
  std::lock_guard lock(g_stop_mutex);
  g_stop = std::move(stop);
  g_stop_waited_for = waited_for;
  if (!g_stop_asked)
    return;
  g_program_stops = waited_for;
  g_stop();
}

StopOnSignal::~StopOnSignal() {
  std::lock_guard lock(g_stop_mutex); // not while the shutdown runs it
  g_stop = nullptr;
}

} // namespace jp
