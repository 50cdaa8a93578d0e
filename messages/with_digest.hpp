// A name made to fit what a service takes (a call id, a parameter's name), marked with
// a digest of the name it was made from: two names that became alike stay apart, and
// the same name becomes the same in every request of a conversation.
#pragma once

#include <string>
#include <string_view>

#include "text_digest.hpp"

namespace jp {

/// `made` cut to leave room within `max` bytes for `_` and 8 hex digits of the digest
/// of `original`, which are added.
inline std::string with_digest(std::string_view made, std::string_view original,
                               size_t max = std::string_view::npos) {
  auto digest = text_digest(original);
  std::string suffix = "_";
  for (int shift = 28; shift >= 0; shift -= 4)
    suffix += "0123456789abcdef"[(digest >> shift) & 0xf];
  std::string out(made.substr(0, max < suffix.size() ? 0 : max - suffix.size()));
  return out + suffix;
}

} // namespace jp
