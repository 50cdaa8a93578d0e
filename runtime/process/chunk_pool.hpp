// Big output chunks' strings, kept for the next chunks instead of freed. A fresh
// 1 MiB allocation comes from pages glibc gave back to the kernel when the last big
// chunk was freed (its heap trimmed), so each of its pages faults in again and is
// zeroed on the io thread, before a byte is copied: W4 counted 8,000–28,000 page
// faults for 256 MiB of output (2,500 with glibc's trimming off). A kept string's
// pages stay touched. Used from any thread.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace jp {

/// Chunks this big or bigger go through the pool; smaller ones are plain strings
/// (glibc keeps small blocks at hand itself).
inline constexpr std::size_t kChunkPoolMin = 256u << 10;
/// At most this many strings are kept (each about a pipe's read, up to 1 MiB).
inline constexpr std::size_t kChunkPoolKeep = 4;

/// A string holding `bytes`: a kept one when `bytes` is big and one fits (at most
/// twice its size, so what holds the chunk holds no more than that).
std::string chunk_copy(std::string_view bytes);

/// Done with `s`: kept for chunk_copy when it is big (its capacity) and fewer than
/// kChunkPoolKeep are kept, else freed. `s` is left empty either way.
void chunk_done(std::string&& s);

/// Strings kept now (for tests).
std::size_t chunk_pool_size();

} // namespace jp
