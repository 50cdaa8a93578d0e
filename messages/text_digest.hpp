// A stable digest of a text (FNV-1a, 64 bits): the same on every machine and run, for
// names (a workspace's state directory). Not for security: anyone can make two texts
// of one digest.
#pragma once

#include <cstdint>
#include <string_view>

namespace jp {

inline uint64_t text_digest(std::string_view text) {
  uint64_t h = 14695981039346656037ull;
  for (unsigned char c : text)
    h = (h ^ c) * 1099511628211ull;
  return h;
}

} // namespace jp
