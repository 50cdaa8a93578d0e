#include "config/toml_depth.hpp"

#include <fmt/format.h>

namespace jp {

Status check_toml_depth(std::string_view text, std::string_view origin, size_t max_depth) {
  size_t line = 1;
  size_t header_parts = 0; // of the last [table] header
  size_t header_dots = 0;  // of the header being read
  bool in_header = false;
  bool after_equals = false; // a value follows on this line (outside arrays and tables)
  size_t nest = 0;           // open arrays and inline tables
  size_t run = 0;            // dots since the last delimiter: a dotted key's parts
  auto starts = [&](size_t i, std::string_view s) { return text.substr(i, s.size()) == s; };
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    switch (c) {
      case '\n':
        ++line;
        run = 0;
        if (nest == 0)
          after_equals = false;
        break;
      case '#':
        while (i + 1 < text.size() && text[i + 1] != '\n')
          ++i;
        break;
      case '"':
      case '\'': {
        // A string: its dots are no key's. Multi-line ones may hold newlines.
        bool multi = starts(i, c == '"' ? "\"\"\"" : "'''");
        std::string_view close = multi ? (c == '"' ? "\"\"\"" : "'''") : std::string_view(&text[i], 1);
        i += multi ? 3 : 1;
        for (; i < text.size() && !starts(i, close); ++i) {
          if (text[i] == '\n') {
            ++line;
            if (!multi)
              break;
          } else if (text[i] == '\\' && c == '"') {
            ++i;
            if (i < text.size() && text[i] == '\n')
              ++line;
          }
        }
        if (multi)
          i += 2; // past the closing quotes (the loop's ++i, the third)
        break;
      }
      case '[':
        run = 0;
        if (nest == 0 && !after_equals) {
          if (!in_header)
            header_dots = 0;
          in_header = true; // "[[" too
        } else {
          ++nest;
        }
        break;
      case ']':
        run = 0;
        if (in_header && nest == 0) {
          in_header = false;
          header_parts = header_dots + 1;
        } else if (nest > 0) {
          --nest;
        }
        break;
      case '{':
        run = 0;
        ++nest;
        break;
      case '}':
        run = 0;
        nest -= nest > 0;
        break;
      case '=':
        run = 0;
        if (nest == 0)
          after_equals = true;
        break;
      case ',':
        run = 0;
        break;
      case '.':
        if (in_header)
          ++header_dots;
        else
          ++run;
        break;
      default:
        break;
    }
    size_t depth = (in_header ? header_dots : header_parts + run) + nest + 1;
    if (depth > max_depth)
      return Status::fail(fmt::format("{}:{}: keys, tables and arrays nest more than {} deep here (the parts "
                                      "of a table's header and of a dotted key, and the arrays and inline "
                                      "tables around a value, counted together)",
                                      origin, line, max_depth));
  }
  return Status::success();
}

} // namespace jp
