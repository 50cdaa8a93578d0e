#include "actors/io_thread_send.hpp"

#include <caf/actor_system.hpp>
#include <caf/execution_unit.hpp>
#include <caf/policy/work_stealing.hpp>
#include <caf/scheduler/coordinator.hpp>
#include <mutex>
#include <typeinfo>

namespace jp {

namespace {

using stealing_scheduler = caf::scheduler::coordinator<caf::policy::work_stealing>;

/// Asleep on its condition variable with nothing queued: a job given to it runs as
/// soon as it wakes, behind nothing (a worker running a job has taken it off its
/// queue, so an empty queue alone does not say the worker is free).
bool asleep_and_idle(stealing_scheduler::worker_type& w) {
  auto& d = w.data();
  std::lock_guard guard(d.waitdata.lock);
  return d.waitdata.sleeping && d.queue.empty();
}

/// CAF's external_enqueue, but a sleeping worker is woken after its lock is let go:
/// woken under the lock (as CAF does), it wakes only to wait for that lock, a second
/// sleep and wake-up on the way of every message from the io thread (strace of W1:
/// a worker's futex wait on the lock after each wake-up). Not lost: the worker
/// checks its queue under the lock before it sleeps, and the job is queued first.
void enqueue(stealing_scheduler::worker_type& w, caf::resumable* job) {
  auto& d = w.data();
  d.queue.append(job);
  bool asleep;
  {
    std::lock_guard guard(d.waitdata.lock);
    asleep = d.waitdata.sleeping;
  }
  if (asleep)
    d.waitdata.cv.notify_one();
}

class IoThreadUnit final : public caf::execution_unit {
public:
  void use(caf::actor_system& sys) { system_ = &sys; }

  void exec_later(caf::resumable* job) override {
    auto& sch = system_->scheduler();
    if (typeid(sch) != typeid(stealing_scheduler))
      return sch.enqueue(job); // another scheduler (the test DSL's): its own way
    auto& ws = static_cast<stealing_scheduler&>(sch);
    auto n = ws.num_workers();
    auto* first = ws.worker_by_id(0);
    if (n == 1 || asleep_and_idle(*first))
      enqueue(*first, job);
    else // it is busy (or about to be): the others in turn, none waits on it
      enqueue(*ws.worker_by_id(1 + next_++ % (n - 1)), job);
  }

private:
  size_t next_ = 0;
};

} // namespace

caf::execution_unit* io_thread_unit(caf::actor_system& sys) {
  thread_local IoThreadUnit unit;
  unit.use(sys);
  return &unit;
}

} // namespace jp
