#include "runtime/process/held_result.hpp"

namespace jp {

OutputBuffer::Taken held_result(const ResultHold& hold, const std::string& id, std::string text) {
  if (hold.cap == 0 || text.size() <= hold.cap)
    return {std::move(text), 0, {}};
  OutputBuffer out(hold.cap, spill_path_for(hold.spill_dir, id), hold.spill_root, hold.limits);
  out.append(std::move(text));
  out.close();
  return out.take();
}

void hold_state(const ResultHold& hold, const std::string& id, ToolState& state, uint64_t& omitted,
                std::string& file) {
  for (auto* text : {&state.content, &state.error.message}) {
    auto held_here = hold;
    if (!file.empty())
      held_here.spill_dir.clear();
    auto taken = held_result(held_here, id, std::move(*text));
    *text = std::move(taken.content);
    omitted += taken.omitted;
    if (file.empty())
      file = std::move(taken.spill_path);
  }
}

} // namespace jp
