#include "runtime/process/io_thread.hpp"

#include <csignal>
#include <cstdio>
#include <exception>
#include <mutex>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <thread>

#include <boost/asio.hpp>

#include "runtime/process/process.hpp"

namespace jp {

namespace asio = boost::asio;

namespace {

// Process-wide settings the process layer relies on, made once.
void init_process_settings() {
  static std::once_flag once;
  std::call_once(once, [] {
    // Orphaned grandchildren of our children are reparented to us, so we can reap
    // them and know when a process group is really gone.
    ::prctl(PR_SET_CHILD_SUBREAPER, 1);
    // A child that closes its stdin must give us EPIPE, not kill us. (Children get
    // SIGPIPE back to default through POSIX_SPAWN_SETSIGDEF.)
    ::signal(SIGPIPE, SIG_IGN);
    // Each live child holds 3-4 of our fds: allow as many as the system lets us
    // (the soft limit is often 1024, the hard one much higher).
    rlimit fds{};
    if (::getrlimit(RLIMIT_NOFILE, &fds) == 0 && fds.rlim_cur < fds.rlim_max) {
      fds.rlim_cur = fds.rlim_max;
      ::setrlimit(RLIMIT_NOFILE, &fds);
    }
  });
}

} // namespace

struct IoThread::Impl {
  asio::io_context ctx{1};
  asio::executor_work_guard<asio::io_context::executor_type> guard{ctx.get_executor()};
  std::thread thread;
};

IoThread::IoThread() : impl_(std::make_unique<Impl>()) {
  init_process_settings();
  impl_->thread = std::thread([ctx = &impl_->ctx] {
    // A throwing callback must not take the io thread (and every child's I/O) down.
    for (;;) {
      try {
        ctx->run();
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

bool IoThread::on_this_thread() const {
  return impl_->ctx.get_executor().running_in_this_thread();
}

} // namespace jp
