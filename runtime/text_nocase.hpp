// ASCII text compared without regard to case: HTTP's header values (media types,
// auth schemes) and environment variables' names. The second argument is already
// lower case; letters only are folded, ASCII's way (std::tolower would ask the
// locale at every character). Inline: a spawn looks at every name of the
// environment with these.
#pragma once

#include <algorithm>
#include <string_view>

namespace jp {

/// `a` and `lower` are the same letter (or the same other character). A lambda, so
/// that the algorithms below inline it (a function pointer they call each time).
inline constexpr auto same_nocase = [](char a, char lower) {
  return (a >= 'A' && a <= 'Z' ? static_cast<char>(a - 'A' + 'a') : a) == lower;
};

/// Whether `s` is `lower`, letters compared without case.
inline bool equals_nocase(std::string_view s, std::string_view lower) {
  return s.size() == lower.size() && std::equal(s.begin(), s.end(), lower.begin(), same_nocase);
}

/// Whether `s` holds `lower`, letters compared without case.
inline bool contains_nocase(std::string_view s, std::string_view lower) {
  return std::search(s.begin(), s.end(), lower.begin(), lower.end(), same_nocase) != s.end();
}

} // namespace jp
