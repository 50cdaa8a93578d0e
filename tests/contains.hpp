#pragma once
// Whether a test's text holds a part: the one check nearly every runner makes.

#include <string_view>

namespace jp::testing {

inline bool contains(std::string_view text, std::string_view part) {
  return text.find(part) != std::string_view::npos;
}

} // namespace jp::testing
