#include "runtime/process/io_thread.hpp"

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <fcntl.h>
#include <cstdio>
#include <exception>
#include <mutex>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <thread>
#include <unistd.h>

#include <boost/asio.hpp>

#include "runtime/process/process.hpp"
#include "runtime/process/resource_limit.hpp"
#include "runtime/process/tool_mark.hpp"

namespace jp {

namespace asio = boost::asio;

namespace {

// The fd table is grown once, now, to hold this many descriptors (256 KiB of kernel
// memory): the kernel grows a table shared by several threads only after an RCU
// grace period (`expand_fdtable`), 15-25 ms each time it doubles, and spawning
// stalled for that at 256, 512, 1,024 ... open fds (bench/README.md "The fd table").
// Before the io and actor threads start there is no grace period to wait for; a
// process that already has threads (an embedder's) waits for one, once.
constexpr int kReservedFds = 32768;

void reserve_fd_table() {
  rlimit fds{};
  if (::getrlimit(RLIMIT_NOFILE, &fds) != 0 || fds.rlim_cur < 2)
    return;
  int highest = static_cast<int>(std::min<rlim_t>(fds.rlim_cur, kReservedFds) - 1);
  int any = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (any < 0)
    return;
  // The lowest free fd from `highest` up: the table grows to cover it.
  if (int high = ::fcntl(any, F_DUPFD_CLOEXEC, highest); high >= 0)
    ::close(high);
  ::close(any);
}

// At the program's end: what its runtimes still run, and what left their groups.
void kill_all_tools_and_escapees() {
  // All ended, and swept since the last tool started (the CLI's usual end): no
  // /proc scan again. Else a tool's leftover may live: one without its mark at its
  // exit (an environment cleared), a daemon runtime.daemons keeps, or what an
  // embedder's program started.
  if (!any_process_group_alive() && !tools_started_since_sweep())
    return;
  kill_all_process_groups();
  kill_escaped_processes();
}

// Process-wide settings the process layer relies on, made once.
void init_process_settings() {
  static std::once_flag once;
  std::call_once(once, [] {
    // Orphaned grandchildren of our children are reparented to us, so we can reap
    // them and know when a process group is really gone.
    ::prctl(PR_SET_CHILD_SUBREAPER, 1);
    // A child that closes its stdin must give us EPIPE, not kill us. (Children get
    // SIGPIPE back at its default from every launcher: vfork_exec.hpp.)
    ::signal(SIGPIPE, SIG_IGN);
    // Nor may a spill file past a file size limit (ulimit -f) kill us, leaving every
    // tool running: its write fails (EFBIG) and the answer says the file is
    // incomplete, as on a full disk. (Children get SIGXFSZ back at its default too.)
    ::signal(SIGXFSZ, SIG_IGN);
    // Each live child holds 3-4 of our fds: allow as many as the system lets us
    // (the soft limit is often 1024, the hard one much higher). The tools get the
    // soft one back (resource_limit.hpp).
    rlimit fds{};
    if (::getrlimit(RLIMIT_NOFILE, &fds) == 0 && fds.rlim_cur < fds.rlim_max) {
      auto soft = fds.rlim_cur;
      fds.rlim_cur = fds.rlim_max;
      if (::setrlimit(RLIMIT_NOFILE, &fds) == 0)
        give_children_open_files(soft, fds.rlim_max);
    }
    reserve_fd_table();
    // A program that ends without ending its runtimes (std::exit, a runtime never
    // destroyed, an uncaught exception) would leave their tools running: its end
    // kills them. Not a child it forks: those inherit the hooks, not the tools.
    static const pid_t owner = ::getpid();
    std::atexit([] {
      if (::getpid() == owner)
        kill_all_tools_and_escapees();
    });
    static const std::terminate_handler previous = std::set_terminate([] {
      if (::getpid() == owner)
        kill_all_tools_and_escapees();
      (previous ? previous : std::abort)();
    });
  });
}

/// Runs the loop until it is stopped; after an event, polls for up to `poll` before
/// it blocks in epoll_wait again.
void run_loop(asio::io_context& ctx, std::chrono::microseconds poll) {
  if (poll.count() <= 0)
    return static_cast<void>(ctx.run());
  while (!ctx.stopped()) {
    auto until = std::chrono::steady_clock::now() + poll;
    bool ran = false;
    while (!ran && !ctx.stopped() && std::chrono::steady_clock::now() < until)
      ran = ctx.poll() > 0;
    if (!ran)
      ctx.run_one();
  }
}

thread_local IoThread* t_current = nullptr;

} // namespace

struct IoThread::Impl {
  asio::io_context ctx{1};
  asio::executor_work_guard<asio::io_context::executor_type> guard{ctx.get_executor()};
  std::thread thread;
};

IoThread::IoThread(std::chrono::microseconds poll) : impl_(std::make_unique<Impl>()) {
  init_process_settings();
  impl_->thread = std::thread([this, ctx = &impl_->ctx, poll] {
    t_current = this;
    // Named for traces and `--cpu` (bench/): otherwise it has its parent's name.
    ::prctl(PR_SET_NAME, "jp.io");
    // A throwing callback must not take the io thread (and every child's I/O) down.
    for (;;) {
      try {
        run_loop(*ctx, poll);
        return;
      } catch (const std::exception& e) {
        std::fprintf(stderr, "jp-actors: io thread: uncaught exception: %s\n", e.what());
      } catch (...) {
        std::fprintf(stderr, "jp-actors: io thread: uncaught exception\n");
      }
    }
  });
}

IoThread::~IoThread() {
  // Kill and reap our children while the loop still runs (their exits are handled
  // there), then stop.
  detail::kill_watched_processes(*this);
  impl_->guard.reset();
  impl_->ctx.stop();
  impl_->thread.join();
  // Anything not reaped in time must drop its asio objects before the context dies.
  detail::forget_watched_processes(*this);
}

asio::io_context& IoThread::context() {
  return impl_->ctx;
}

void IoThread::post(std::function<void()> f) {
  asio::post(impl_->ctx, std::move(f));
}

IoThread* IoThread::current() {
  return t_current;
}

bool IoThread::on_this_thread() const {
  return impl_->ctx.get_executor().running_in_this_thread();
}

} // namespace jp
