// CAF's clock for timeouts and delayed messages, told of an actor's end only when
// that actor has set a timeout. CAF 0.17 tells the clock to drop an actor's
// timeouts at every actor's end, whether it set any or not, and each such event
// wakes the clock's thread: one sleep and wake-up of a third thread per handle,
// though no handle sets a timeout (strace of W1: `caf.clock`'s futex about once a
// call). Included only where the scheduler is made.
#pragma once

#include <caf/detail/thread_safe_actor_clock.hpp>
#include <mutex>
#include <unordered_set>

namespace jp {

class timeout_clock : public caf::detail::thread_safe_actor_clock {
public:
  using super = caf::detail::thread_safe_actor_clock;

  void set_ordinary_timeout(time_point t, caf::abstract_actor* self, caf::atom_value type,
                            uint64_t id) override;
  void set_request_timeout(time_point t, caf::abstract_actor* self, caf::message_id id) override;
  void set_multi_timeout(time_point t, caf::abstract_actor* self, caf::atom_value type,
                         uint64_t id) override;
  /// Passed on only for an actor that has set a timeout since it started (one
  /// whose timeouts have all fired or been cancelled is passed on too: harmless).
  void cancel_timeouts(caf::abstract_actor* self) override;

  /// How many actors have set a timeout and not yet ended (a test's view).
  size_t timed_actors() const;

private:
  void timed(caf::abstract_actor* self);

  mutable std::mutex lock_;
  // Only compared, never followed: an actor is taken out at its end (its
  // cancel_timeouts), before its address can be another actor's.
  std::unordered_set<const caf::abstract_actor*> timed_;
};

} // namespace jp
