#include "runtime/terminal/typed_input.hpp"

#include <optional>

#include "messages/json.hpp"

namespace jp {

namespace {

// The value of `digits` hex digits at `s[pos]`, if they are all there.
std::optional<unsigned> hex(std::string_view s, std::size_t pos, std::size_t digits) {
  if (pos + digits > s.size())
    return std::nullopt;
  unsigned v = 0;
  for (std::size_t i = pos; i < pos + digits; ++i) {
    char c = s[i];
    int d = c >= '0' && c <= '9'   ? c - '0'
            : c >= 'a' && c <= 'f' ? c - 'a' + 10
            : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                   : -1;
    if (d < 0)
      return std::nullopt;
    v = v * 16 + static_cast<unsigned>(d);
  }
  return v;
}

} // namespace

std::string unescape_typed_text(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '\\' || i + 1 == s.size()) {
      out += s[i];
      continue;
    }
    char e = s[i + 1];
    const char* simple = nullptr;
    switch (e) {
      case 'n': simple = "\n"; break;
      case 'r': simple = "\r"; break;
      case 't': simple = "\t"; break;
      case 'e': simple = "\x1b"; break;
      case 'a': simple = "\a"; break;
      case 'b': simple = "\b"; break;
      case '\\': simple = "\\"; break;
      default: break;
    }
    if (simple) {
      out += simple;
      ++i;
    } else if (e == '0') {
      out += '\0';
      ++i;
    } else if (auto b = e == 'x' ? hex(s, i + 2, 2) : std::nullopt) {
      out += static_cast<char>(*b);
      i += 3;
    } else if (auto u = e == 'u' ? hex(s, i + 2, 4) : std::nullopt) {
      // A UTF-16 surrogate pair (as JSON writes emoji) is one character.
      auto low = hex(s, i + 8, 4);
      bool pair = *u >= 0xD800 && *u < 0xDC00 && s.substr(i + 6, 2) == "\\u" && low &&
                  *low >= 0xDC00 && *low < 0xE000;
      if (pair) {
        append_utf8(out, 0x10000 + ((*u - 0xD800) << 10) + (*low - 0xDC00));
        i += 11;
      } else if (*u >= 0xD800 && *u < 0xE000) {
        out += s[i]; // a lone surrogate is no character: keep it as written
      } else {
        append_utf8(out, *u);
        i += 5;
      }
    } else {
      out += s[i]; // unknown escape: the backslash stays, the next char follows
    }
  }
  return out;
}

} // namespace jp
