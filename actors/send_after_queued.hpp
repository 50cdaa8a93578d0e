// A message an actor sends itself, delivered once the actors already queued to run on
// its worker thread have run. An actor that sends from its handler wakes the receiver ahead of
// them (CAF's worker runs what the running actor woke next); this goes to the back of
// the queue instead, on the same thread, without a hop through CAF's clock thread.
// The order is exact with one worker thread; with several it is best effort (another
// worker may steal the job from the back, and what the io thread wakes is dealt to
// all workers), so it is for latency only: nothing may depend on it to be correct.
#pragma once

#include <caf/fwd.hpp>

namespace jp {

/// Sends `msg` (anonymously) to `self` after what its worker already has queued.
/// Outside a worker (no execution unit), it goes through the scheduler's queue.
void send_after_queued(caf::scheduled_actor* self, caf::message msg);

} // namespace jp
