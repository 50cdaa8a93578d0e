#include "actors/io_thread_send.hpp"

#include <caf/actor_system.hpp>
#include <caf/execution_unit.hpp>
#include <mutex>
#include <typeinfo>

#include "runtime/actor_scheduler.hpp"

namespace jp {

namespace {

/// Asleep on its condition variable with nothing queued: a job given to it runs as
/// soon as it wakes, behind nothing (a worker running a job has taken it off its
/// queue, so an empty queue alone does not say the worker is free).
bool asleep_and_idle(actor_scheduler::worker_type& w) {
  auto& d = w.data();
  std::lock_guard guard(d.waitdata.lock);
  return d.waitdata.sleeping && d.queue.empty();
}

class IoThreadUnit final : public caf::execution_unit {
public:
  void use(caf::actor_system& sys) { system_ = &sys; }

  void exec_later(caf::resumable* job) override {
    auto& sch = system_->scheduler();
    if (typeid(sch) != typeid(actor_scheduler))
      return sch.enqueue(job); // another scheduler (the test DSL's, an embedder's): its own way
    auto& ws = static_cast<actor_scheduler&>(sch);
    auto n = ws.num_workers();
    auto* first = ws.worker_by_id(0);
    if (n == 1 || asleep_and_idle(*first))
      first->external_enqueue(job);
    else // it is busy (or about to be): the others in turn, none waits on it
      ws.worker_by_id(1 + next_++ % (n - 1))->external_enqueue(job);
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
