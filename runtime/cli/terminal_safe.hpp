// Text from a model or a tool, made safe to print on a terminal: control characters
// (C0 but newline and tab, DEL, and C1 as UTF-8) become U+FFFD, so the text cannot
// move the cursor, retitle the window or start an escape sequence.
#pragma once

#include <string>
#include <string_view>

namespace jp {

inline std::string terminal_safe(std::string_view text) {
  constexpr std::string_view replacement = "\xEF\xBF\xBD";
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    auto c = static_cast<unsigned char>(text[i]);
    if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f) {
      out += replacement;
    } else if (c == 0xC2 && i + 1 < text.size() && static_cast<unsigned char>(text[i + 1]) >= 0x80 &&
               static_cast<unsigned char>(text[i + 1]) <= 0x9f) {
      out += replacement; // U+0080..U+009F: the C1 controls, CSI among them
      ++i;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

} // namespace jp
