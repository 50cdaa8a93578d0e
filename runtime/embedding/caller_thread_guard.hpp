// An embedder's thread that calls into the runtime must not be able to hang its end.
// CAF's spawn (and a scoped actor, and starting an actor system) leaves the calling
// thread holding the actor system's logger (CAF_SET_LOGGER_SYS, a thread-local
// reference), and ~actor_system waits until the logger is gone: a thread of the
// embedder's pool that ever started a session and lives on would hold it forever.
#pragma once

#include <caf/logger.hpp>

namespace jp {

/// For the length of one call of the public API: a thread left holding another
/// logger than it held before lets go of it. A CAF worker of the runtime's own
/// system keeps its own. A worker of the embedder's own system loses its system's
/// logger too (CAF gives no way to put it back), which costs only log lines until
/// its next spawn: a hang of ~Runtime would cost more.
class CallerThreadGuard {
public:
  CallerThreadGuard() : before_(caf::logger::current_logger()) {}
  ~CallerThreadGuard() {
    if (caf::logger::current_logger() != before_)
      caf::logger::set_current_actor_system(nullptr);
  }
  CallerThreadGuard(const CallerThreadGuard&) = delete;
  CallerThreadGuard& operator=(const CallerThreadGuard&) = delete;

private:
  caf::logger* before_;
};

} // namespace jp
