#include "config/placeholder.hpp"

#include <fmt/format.h>

namespace jp {

namespace {

std::string_view trim_blanks(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t'))
    s.remove_suffix(1);
  return s;
}

// Whether the text after a "{{" makes it a placeholder: `tool.`, blanks aside.
bool opens_placeholder(std::string_view after) {
  auto start = after.find_first_not_of(" \t");
  return start != std::string_view::npos && after.substr(start).starts_with("tool.");
}

} // namespace

Result<std::vector<Placeholder>> find_placeholders(std::string_view text) {
  std::vector<Placeholder> out;
  for (auto open = text.find("{{"); open != std::string_view::npos;) {
    // Literal: the next "{{" may start one inside it, as in "{{{tool.arguments.x}}}".
    if (!opens_placeholder(text.substr(open + 2))) {
      open = text.find("{{", open + 1);
      continue;
    }
    auto close = text.find("}}", open + 2);
    if (close == std::string_view::npos)
      return Error{fmt::format("unterminated `{{{{` in template `{}`", text)};
    out.push_back({open, close + 2 - open, trim_blanks(text.substr(open + 2, close - open - 2))});
    open = text.find("{{", close + 2);
  }
  return out;
}

} // namespace jp
