#include "actors/live_loops.hpp"

#include <caf/actor_cast.hpp>
#include <caf/actor_control_block.hpp>

namespace jp {

void LiveLoops::add(std::string path, const caf::actor& loop) {
  std::lock_guard lock(mtx_);
  // Ended ones go as new ones come: a foreach of 1,000 sub-agents holds no more.
  std::erase_if(loops_, [](auto& l) { return !l.second.lock(); });
  loops_.emplace_back(std::move(path), caf::actor_cast<caf::weak_actor_ptr>(loop));
}

std::vector<std::pair<std::string, caf::actor>> LiveLoops::alive() {
  std::lock_guard lock(mtx_);
  std::vector<std::pair<std::string, caf::actor>> out;
  for (auto& [path, weak] : loops_)
    if (auto strong = weak.lock())
      out.emplace_back(path, caf::actor_cast<caf::actor>(std::move(strong)));
  return out;
}

} // namespace jp
