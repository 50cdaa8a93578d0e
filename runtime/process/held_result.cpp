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

} // namespace jp
