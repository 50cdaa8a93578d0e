#include "runtime/timeout_clock.hpp"

namespace jp {

void timeout_clock::timed(caf::abstract_actor* self) {
  std::lock_guard guard(lock_);
  timed_.insert(self);
}

void timeout_clock::set_ordinary_timeout(time_point t, caf::abstract_actor* self,
                                         caf::atom_value type, uint64_t id) {
  timed(self);
  super::set_ordinary_timeout(t, self, type, id);
}

void timeout_clock::set_request_timeout(time_point t, caf::abstract_actor* self,
                                        caf::message_id id) {
  timed(self);
  super::set_request_timeout(t, self, id);
}

void timeout_clock::set_multi_timeout(time_point t, caf::abstract_actor* self,
                                      caf::atom_value type, uint64_t id) {
  timed(self);
  super::set_multi_timeout(t, self, type, id);
}

void timeout_clock::cancel_timeouts(caf::abstract_actor* self) {
  {
    std::lock_guard guard(lock_);
    if (timed_.erase(self) == 0)
      return;
  }
  super::cancel_timeouts(self);
}

size_t timeout_clock::timed_actors() const {
  std::lock_guard guard(lock_);
  return timed_.size();
}

} // namespace jp
