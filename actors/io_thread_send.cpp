#include "actors/io_thread_send.hpp"

#include <caf/actor_system.hpp>
#include <caf/execution_unit.hpp>
#include <caf/policy/work_stealing.hpp>
#include <caf/scheduler/coordinator.hpp>
#include <typeinfo>

namespace jp {

namespace {

using stealing_scheduler = caf::scheduler::coordinator<caf::policy::work_stealing>;

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
    // The first worker while it has nothing queued; when it is behind (a burst of
    // exits, a long job), the others in turn, so that none waits on it.
    if (n == 1 || first->data().queue.empty())
      first->external_enqueue(job);
    else
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
