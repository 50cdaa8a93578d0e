// A node's shutdown as its sessions see it. A node stopped by a signal ends its
// tools (TERM, grace, KILL) before it goes: a client awaiting one of them was told
// "killed by signal 15", not transient, as if the tool had failed. While the node
// stops, its sessions pass such a stop on as the node's (transient, as for a lost
// node), and the node waits, within the grace, until they have passed each on
// before it ends.
#pragma once

#include <condition_variable>
#include <mutex>
#include <string>

#include "../messages/tool_state.hpp"

namespace jp {

class NodeStopping {
public:
  /// The node got a terminate signal: called before its tools get theirs.
  void begin();
  /// Whether begin() was called.
  bool begun() const;
  /// A session watches one more handle for its client (+1), or passed its stop on
  /// or let it go (-1).
  void watching(int delta);
  /// How many watched handles' stops are still to pass on.
  int watched() const;
  /// After begin(): returns once no watched handle's stop is left to pass on.
  void wait_passed_on();
  /// `state` as a client is told of it: while the node stops, a tool killed by a
  /// signal was killed by the node's stop, worth trying again once the node is back.
  /// (One that ends well on its TERM stays a success.)
  ToolState as_told(ToolState state) const;

private:
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  bool begun_ = false;
  int watched_ = 0;
};

} // namespace jp
