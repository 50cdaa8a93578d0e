// Text with nothing in it but spaces, tabs and line breaks: a prompt, a reply or a
// result that says nothing (Anthropic refuses such a text block).
#pragma once

#include <string_view>

namespace jp {

inline bool is_blank(std::string_view text) {
  return text.find_first_not_of(" \t\r\n") == std::string_view::npos;
}

} // namespace jp
