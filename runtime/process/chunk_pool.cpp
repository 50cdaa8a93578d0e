#include "runtime/process/chunk_pool.hpp"

#include <mutex>
#include <vector>

#include "runtime/process/process.hpp"

namespace jp {

namespace {

// Nothing bigger is kept: a string grown past a pipe's read (a capture, a join)
// would hold memory no chunk needs.
constexpr std::size_t kChunkPoolMaxCapacity = 2 * kOutputChunkMax;

struct Pool {
  std::mutex mtx;
  std::vector<std::string> kept;
};

// Never destroyed: an io thread may hand a chunk over while statics go at exit.
Pool& pool() {
  static Pool* p = new Pool;
  return *p;
}

} // namespace

std::string chunk_copy(std::string_view bytes) {
  std::string s;
  if (bytes.size() >= kChunkPoolMin) {
    auto& p = pool();
    std::lock_guard guard(p.mtx);
    for (auto it = p.kept.begin(); it != p.kept.end(); ++it) {
      // At most twice what it carries: a tail holding such chunks holds no more.
      if (it->capacity() >= bytes.size() && it->capacity() / 2 <= bytes.size()) {
        s = std::move(*it);
        p.kept.erase(it);
        break;
      }
    }
  }
  s.assign(bytes); // within the kept string's capacity: no allocation
  return s;
}

void chunk_done(std::string&& s) {
  std::string gone = std::move(s);
  s.clear();
  if (gone.capacity() < kChunkPoolMin || gone.capacity() > kChunkPoolMaxCapacity)
    return;
  auto& p = pool();
  std::lock_guard guard(p.mtx);
  if (p.kept.size() < kChunkPoolKeep) {
    gone.clear();
    p.kept.push_back(std::move(gone));
  }
}

std::size_t chunk_pool_size() {
  auto& p = pool();
  std::lock_guard guard(p.mtx);
  return p.kept.size();
}

} // namespace jp
