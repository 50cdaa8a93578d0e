#include "runtime/process/controlling_terminal.hpp"

#include <atomic>
#include <cerrno>
#include <fcntl.h>
#include <unistd.h>

namespace jp {

namespace {

/// A session we found ourselves in without a terminal while we did not lead it:
/// only a session's leader can gain one, so while we are in it, not leading it, we
/// still have none (the next spawn then asks two cheap calls, not the path). Only
/// a session id we can see: getsid says 0 for a session led from outside our pid
/// namespace, which names no session in particular.
std::atomic<pid_t> g_none_in{-1};

} // namespace

bool has_controlling_terminal() {
  pid_t sid = ::getsid(0);
  bool leader = sid == ::getpid();
  if (!leader && sid > 0 && sid == g_none_in.load())
    return false;
  // O_NOCTTY: never made ours by this; O_NONBLOCK: a terminal's open does not wait.
  int fd = ::open("/dev/tty", O_RDONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
  if (fd >= 0) {
    ::close(fd);
    return true;
  }
  if (errno != ENXIO)
    return true; // ENXIO is the kernel's answer for a process without one
  if (!leader && sid > 0)
    g_none_in.store(sid);
  return false;
}

} // namespace jp
