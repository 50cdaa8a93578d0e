#include "actors/node_stopping.hpp"

#include <fmt/format.h>

namespace jp {

void NodeStopping::begin() {
  std::lock_guard lock(mutex_);
  begun_ = true;
  changed_.notify_all();
}

bool NodeStopping::begun() const {
  std::lock_guard lock(mutex_);
  return begun_;
}

int NodeStopping::watched() const {
  std::lock_guard lock(mutex_);
  return watched_;
}

void NodeStopping::watching(int delta) {
  std::lock_guard lock(mutex_);
  watched_ += delta;
  changed_.notify_all();
}

void NodeStopping::wait_passed_on() {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [this] { return begun_ && watched_ <= 0; });
}

namespace {

/// Whether a tool's failure is what the stop's signals (HUP, TERM, then KILL) make:
/// killed by one, or exited as a shell or a JVM does on one (128 + it).
bool ended_by_stop(std::string_view failure) {
  // The shutdown's signals reach the tools before their handles' aborts: said so
  // (a client's own abort that ends meanwhile says only "aborted (...)").
  if (failure.starts_with("aborted (") && failure.ends_with(") as jp-actors ended on a signal"))
    failure.remove_prefix(std::string_view("aborted (").size());
  for (int sig : {1, 9, 15})
    if (failure.starts_with(fmt::format("killed by signal {} ", sig)) ||
        failure.starts_with(fmt::format("exit status {}", 128 + sig)))
      return true;
  return false;
}

} // namespace

ToolState NodeStopping::as_told(ToolState state) const {
  {
    std::lock_guard lock(mutex_);
    if (!begun_ || !state.stopped() || state.ok)
      return state;
  }
  // Refused as the node ends: its own words would read as the client's ending.
  if (state.error.message.starts_with("not started: jp-actors is ending")) { // spawn_process's refusal
    state.error.message = "not started: the node is shutting down (it got a terminate signal); use it again once it "
                          "is back";
    state.error.transient = true;
    return state;
  }
  // A failure of its own (an exit status, a SIGSEGV) is told as it is.
  if (!ended_by_stop(state.error.message))
    return state;
  state.error.message = fmt::format("the node stopped (it got a terminate signal) and ended its tools as it shut "
                                    "down: {}; use it again once it is back",
                                    state.error.message);
  state.error.transient = true;
  return state;
}

} // namespace jp
