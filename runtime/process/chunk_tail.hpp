// The last bytes of a long stream, kept as the chunks they came in: a chunk handed
// over whole is moved in, not copied, and a chunk is dropped whole once the ones
// after it hold enough. A fast writer's output past the spill file's head then costs
// no copy at all (keep_tail copied every byte once and moved it once more).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace jp {

class ChunkTail {
public:
  /// Keeps at least the stream's last `keep` bytes (fewer only if it is shorter), and
  /// at most that plus one chunk.
  explicit ChunkTail(std::size_t keep) : keep_(keep) {}

  /// Appends `more`; when `owned` is given, `more` is its end and the string may be
  /// taken over instead of copied.
  void add(std::string_view more, std::string* owned = nullptr);

  bool empty() const { return held_ == 0; }
  /// Bytes held (at least what is kept once the stream is that long).
  std::size_t held() const { return held_; }
  /// The last min(n, held()) bytes, in one string.
  std::string last(std::size_t n) const;
  /// Calls fn(std::string_view) with the last min(n, held()) bytes, piece by piece
  /// in order, without copying them.
  template <class Fn>
  void each_last(std::size_t n, Fn&& fn) const {
    std::size_t skip = held_ - (n < held_ ? n : held_);
    for (const auto& c : chunks_) {
      if (skip >= c.size()) {
        skip -= c.size();
        continue;
      }
      fn(std::string_view(c).substr(skip));
      skip = 0;
    }
  }
  void clear();

private:
  // Smaller pieces are appended to the last chunk while it is this small, so a
  // chatty tool's many short writes do not become as many strings.
  static constexpr std::size_t kJoinBelow = 64 * 1024;

  void trim();

  std::size_t keep_;
  std::size_t held_ = 0;
  // A vector, not a deque: every handle holds one of these, and an empty deque
  // already allocates ≈ 0.6 KiB (W6 measured it per handle). The chunks are few
  // (any two neighbours hold more than kJoinBelow), so dropping the front moves little.
  std::vector<std::string> chunks_;
};

} // namespace jp
