// The turn loops of this process, by agent path ("main", "main/w1"): the top-level
// agents' and each sub-agent's, added as spawn_turn_loop makes them. What `handles
// ls` and `handles abort` ask (runtime/cli/control_endpoint), so a handle a
// sub-agent holds is seen and aborted as a top-level agent's is. Weak references: an
// ended loop is passed over and dropped.
#pragma once

#include <caf/actor.hpp>
#include <caf/weak_intrusive_ptr.hpp>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace jp {

class LiveLoops {
public:
  void add(std::string path, const caf::actor& loop);
  /// The loops still alive, in the order they came.
  std::vector<std::pair<std::string, caf::actor>> alive();

private:
  std::mutex mtx_;
  std::vector<std::pair<std::string, caf::weak_actor_ptr>> loops_;
};

} // namespace jp
