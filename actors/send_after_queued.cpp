#include "actors/send_after_queued.hpp"

#include <caf/actor_cast.hpp>
#include <caf/actor_control_block.hpp>
#include <caf/actor_system.hpp>
#include <caf/execution_unit.hpp>
#include <caf/mailbox_element.hpp>
#include <caf/ref_counted.hpp>
#include <caf/resumable.hpp>
#include <caf/scheduled_actor.hpp>
#include <caf/scheduler/abstract_coordinator.hpp>

namespace jp {

namespace {

/// Runs twice: first it asks its worker to run it again later (the worker appends it
/// to its queue, behind the actors waiting there), then it sends.
class SendJob final : public caf::resumable, public caf::ref_counted {
public:
  SendJob(caf::strong_actor_ptr to, caf::message msg) : to_(std::move(to)), msg_(std::move(msg)) {}

  subtype_t subtype() const override { return function_object; }

  resume_result resume(caf::execution_unit* ctx, size_t) override {
    if (!requeued_) {
      requeued_ = true;
      return resume_later;
    }
    to_->get()->enqueue(caf::make_mailbox_element(nullptr, caf::make_message_id(), {}, std::move(msg_)), ctx);
    to_ = nullptr;
    return done;
  }

  void intrusive_ptr_add_ref_impl() override { ref(); }
  void intrusive_ptr_release_impl() override { deref(); }

private:
  caf::strong_actor_ptr to_;
  caf::message msg_;
  bool requeued_ = false;
};

} // namespace

void send_after_queued(caf::scheduled_actor* self, caf::message msg) {
  // The reference taken here is the scheduler's; it drops it when the job is done.
  auto* job = new SendJob(caf::actor_cast<caf::strong_actor_ptr>(self), std::move(msg));
  if (auto* ctx = self->context())
    ctx->exec_later(job);
  else
    self->home_system().scheduler().enqueue(job);
}

} // namespace jp
