#include "runtime/process/chunk_tail.hpp"

#include "runtime/process/chunk_pool.hpp"

namespace jp {

void ChunkTail::add(std::string_view more, std::string* owned) {
  if (more.empty())
    return;
  held_ += more.size();
  if (!chunks_.empty() && chunks_.back().size() + more.size() <= kJoinBelow) {
    chunks_.back().append(more);
  } else if (owned && more.size() >= kJoinBelow) {
    // `more` ends `*owned`: drop what comes before it (a chunk split by the file's
    // head, once) and keep the string itself.
    owned->erase(0, owned->size() - more.size());
    chunks_.push_back(std::move(*owned));
  } else {
    chunks_.emplace_back(more);
  }
  trim();
}

void ChunkTail::trim() {
  std::size_t drop = 0;
  while (chunks_.size() - drop > 1 && held_ - chunks_[drop].size() >= keep_) {
    held_ -= chunks_[drop].size();
    chunk_done(std::move(chunks_[drop++])); // for the next chunk read (chunk_pool.hpp)
  }
  chunks_.erase(chunks_.begin(), chunks_.begin() + static_cast<std::ptrdiff_t>(drop));
}

std::string ChunkTail::last(std::size_t n) const {
  std::string out;
  out.reserve(n < held_ ? n : held_);
  each_last(n, [&](std::string_view piece) { out.append(piece); });
  return out;
}

void ChunkTail::clear() {
  for (auto& c : chunks_)
    chunk_done(std::move(c));
  chunks_.clear();
  held_ = 0;
}

} // namespace jp
