// Looks (fetch, or apply with wait_ms) that wait at a handle for news -- output, a
// question, its stop -- or until their time is up. Kept by the handle kinds whose
// news come as messages (sub-agents, function tools); a process handle settles its
// looks on output quiet instead (handle_actor.cpp).
#pragma once

#include <caf/typed_response_promise.hpp>
#include <cstdint>
#include <optional>
#include <vector>

#include "../messages/tool_state.hpp"

namespace jp {

class WaitingLooks {
public:
  using promise = caf::typed_response_promise<HandleReport>;
  /// A look that waits; its id comes back with the timer that ends its wait.
  uint64_t add(promise rp) {
    looks_.push_back(Look{++next_, std::move(rp)});
    return next_;
  }
  /// Look `id`, whose time is up (none: news answered it already).
  std::optional<promise> take(uint64_t id) {
    for (auto it = looks_.begin(); it != looks_.end(); ++it)
      if (it->id == id) {
        auto rp = std::move(it->rp);
        looks_.erase(it);
        return rp;
      }
    return std::nullopt;
  }
  bool empty() const { return looks_.empty(); }
  /// Every waiting look: news came for them all.
  std::vector<promise> take_all() {
    std::vector<promise> out;
    for (auto& l : looks_)
      out.push_back(std::move(l.rp));
    looks_.clear();
    return out;
  }

private:
  struct Look {
    uint64_t id = 0;
    promise rp;
  };
  std::vector<Look> looks_;
  uint64_t next_ = 0;
};

} // namespace jp
