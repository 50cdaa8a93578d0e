// The last bytes of a stream, kept in a string that grows to twice what is kept
// before it is trimmed (so most appends move nothing), and that a chunk at least as
// long as what is kept replaces: a big chunk is copied only for the part kept.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace jp {

/// Appends `more` to `tail`, which then holds at least the stream's last `keep` bytes
/// (fewer only if the stream is shorter) and at most twice that.
inline void keep_tail(std::string& tail, std::string_view more, std::size_t keep) {
  if (more.size() >= keep) {
    tail.assign(more.substr(more.size() - keep));
    return;
  }
  tail.append(more);
  if (tail.size() > 2 * keep)
    tail.erase(0, tail.size() - keep);
}

} // namespace jp
