// The actor system's scheduler: CAF's work stealing with three changes. CAF wakes a
// sleeping worker by signalling its condition variable while it still holds the
// lock the worker sleeps under; the worker then wakes only to wait for that lock,
// and is woken a second time when the sender lets go (strace of W1 and W9: a
// worker's futex wait on that lock after a wake-up). Here the sender lets go
// first. Every message from outside the workers comes this way: the io thread's,
// the clock's timers, the middleman's (a node's requests and answers), an
// embedder's calls. Its clock is told of an actor's end only when that actor
// has set a timeout (timeout_clock.hpp), and its workers' loop does no logger's
// bookkeeping. Included only where the scheduler is chosen or looked into.
#pragma once

#include <caf/policy/work_stealing.hpp>
#include <caf/resumable.hpp>
#include <caf/detail/set_thread_name.hpp>
#include <caf/scheduler/coordinator.hpp>
#include <cstdint>
#include <mutex>
#include <thread>

#include "timeout_clock.hpp"

namespace jp {

struct wake_after_unlock : caf::policy::work_stealing {
  /// CAF's, and how often the worker was woken for a job (under waitdata.lock): a
  /// test tells a worker that slept throughout from one woken and asleep again.
  /// Counted under the lock taken here anyway: an add, nothing more.
  struct worker_data : caf::policy::work_stealing::worker_data {
    using caf::policy::work_stealing::worker_data::worker_data;
    uint64_t wakeups = 0;
  };

  /// Not lost: the worker looks at its queue under the lock before it sleeps, and
  /// the job is queued before the lock is taken here.
  template <class Worker>
  void external_enqueue(Worker* self, caf::resumable* job) {
    auto& d = self->data();
    d.queue.append(job);
    bool asleep;
    {
      std::lock_guard guard(d.waitdata.lock);
      asleep = d.waitdata.sleeping;
      d.wakeups += asleep;
    }
    if (asleep)
      d.waitdata.cv.notify_one();
  }
};

} // namespace jp

namespace caf::scheduler {

/// A worker's loop as CAF's, less its logger's bookkeeping: CAF 0.17 finds each
/// job's actor id for its log lines with a `dynamic_cast` across the actor's bases
/// and sets it twice as a thread-local, a job at a time, even with nothing logged
/// (callgrind of W7's awaits: ≈ 1,500 instructions a job, three jobs an await).
/// Declared here, before anything instantiates the worker (the alias above does
/// not); defined in actor_scheduler.cpp.
template <>
void worker<jp::wake_after_unlock>::run();

} // namespace caf::scheduler

namespace jp {

/// CAF's coordinator with our clock, run on a thread of ours. CAF's own clock is
/// never given an event (every caller asks `clock()`), so its thread, which the
/// coordinator starts regardless, sleeps until the end.
class actor_scheduler : public caf::scheduler::coordinator<wake_after_unlock> {
public:
  using super = caf::scheduler::coordinator<wake_after_unlock>;

  using super::super;

  static caf::actor_system::module* make(caf::actor_system& sys, caf::detail::type_list<>) {
    return new actor_scheduler(sys);
  }

  timeout_clock& clock() noexcept override {
    return clock_;
  }

protected:
  void start() override {
    timer_ = std::thread{[this] {
      caf::detail::set_thread_name("jp.clock");
      system().thread_started();
      clock_.run_dispatch_loop();
      system().thread_terminates();
    }};
    super::start();
  }

  void stop() override {
    super::stop(); // the workers first: their actors' last timeouts still reach the clock
    clock_.cancel_dispatch_loop();
    timer_.join();
  }

private:
  timeout_clock clock_;
  std::thread timer_;
};

} // namespace jp
