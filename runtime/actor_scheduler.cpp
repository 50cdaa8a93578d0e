#include "runtime/actor_scheduler.hpp"

namespace caf::scheduler {

template <>
void worker<jp::wake_after_unlock>::run() {
  CAF_SET_LOGGER_SYS(&system());
  for (;;) {
    auto job = policy_.dequeue(this);
    policy_.before_resume(this, job);
    auto res = job->resume(this, max_throughput_);
    policy_.after_resume(this, job);
    switch (res) {
      case resumable::resume_later:
        policy_.resume_job_later(this, job); // it stays in the loop: its reference kept
        break;
      case resumable::done:
        policy_.after_completion(this, job);
        intrusive_ptr_release(job);
        break;
      case resumable::awaiting_message:
        intrusive_ptr_release(job); // queued again by its next message
        break;
      case resumable::shutdown_execution_unit:
        policy_.after_completion(this, job);
        policy_.before_shutdown(this);
        return;
    }
  }
}

} // namespace caf::scheduler
