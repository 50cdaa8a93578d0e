// An embedder's thread that calls into the runtime must not be able to hang its end.
// CAF's spawn (and a scoped actor, and starting an actor system) leaves the calling
// thread holding the actor system's logger (CAF_SET_LOGGER_SYS, a thread-local
// reference), and ~actor_system waits until the logger is gone: a thread of the
// embedder's pool that ever started a session and lives on would hold it forever.
// CAF's own threads and a thread that held a logger before keep theirs.
#pragma once

#include <caf/logger.hpp>

namespace jp {

/// For the length of one call of the public API: lets go of the logger reference the
/// call left with a thread that held none before.
class CallerThreadGuard {
public:
  CallerThreadGuard() : held_before_(caf::logger::current_logger() != nullptr) {}
  ~CallerThreadGuard() {
    if (!held_before_)
      caf::logger::set_current_actor_system(nullptr);
  }
  CallerThreadGuard(const CallerThreadGuard&) = delete;
  CallerThreadGuard& operator=(const CallerThreadGuard&) = delete;

private:
  bool held_before_;
};

} // namespace jp
