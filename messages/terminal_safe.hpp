// Text from a model or a tool, made safe to print on a terminal: control characters
// (C0 but newline and tab, DEL, and C1 as UTF-8) become U+FFFD, so the text cannot
// move the cursor, retitle the window or start an escape sequence; so does every
// byte that is no part of valid UTF-8 (a lone 0x9B is CSI to a terminal that reads
// 8-bit controls); so do the bidirectional overrides and isolates (U+202A..U+202E,
// U+2066..U+2069), so it cannot show itself in another order than it is (a command
// asked about included).
#pragma once

#include <string>
#include <string_view>
#include <unistd.h>

#include "json.hpp" // sanitize_utf8

namespace jp {

/// The second and third bytes of U+202A..U+202E or U+2066..U+2069 (after 0xE2).
inline bool is_bidi_control(unsigned char b1, unsigned char b2) {
  return (b1 == 0x80 && b2 >= 0xAA && b2 <= 0xAE) || (b1 == 0x81 && b2 >= 0xA6 && b2 <= 0xA9);
}

inline std::string terminal_safe(std::string_view raw) {
  constexpr std::string_view replacement = "\xEF\xBF\xBD";
  // Valid UTF-8 first: what is left to replace is then whole characters.
  auto text = sanitize_utf8(raw);
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
    } else if (c == 0xE2 && i + 2 < text.size() && is_bidi_control(static_cast<unsigned char>(text[i + 1]),
                                                                    static_cast<unsigned char>(text[i + 2]))) {
      out += replacement;
      i += 2;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

/// `text` as it goes to `fd`: terminal-safe when `fd` is a terminal, as it came
/// otherwise (a pipe or a file gets the bytes).
inline std::string shown_on(int fd, std::string text) {
  return ::isatty(fd) ? terminal_safe(text) : std::move(text);
}

} // namespace jp
