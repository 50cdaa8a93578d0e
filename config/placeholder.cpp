#include "config/placeholder.hpp"

#include <algorithm>
#include <cctype>
#include <fmt/format.h>
#include <string>

namespace jp {

std::string_view trim_blanks(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t'))
    s.remove_suffix(1);
  return s;
}

namespace {

// Whether the text after a "{{" makes it a placeholder: `tool.`, blanks aside.
bool opens_placeholder(std::string_view after) {
  auto start = after.find_first_not_of(" \t");
  return start != std::string_view::npos && after.substr(start).starts_with("tool.");
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

} // namespace

std::string_view mistyped_placeholder(std::string_view text, const std::vector<std::string>& declared) {
  for (auto open = text.find("{{"); open != std::string_view::npos; open = text.find("{{", open + 1)) {
    auto after = text.substr(open + 2);
    if (opens_placeholder(after))
      continue; // a placeholder, judged as one
    auto inside = after.substr(0, std::min(after.find("}}"), after.size()));
    // {{end}}, {{else}}: a Go or Handlebars template's keyword, even where a parameter
    // has that name.
    auto keyword = [](std::string_view w) {
      return w == "end" || w == "else" || w == "break" || w == "continue" || w == "nil";
    };
    if (after.find("}}") != std::string_view::npos && !keyword(trim_blanks(inside)) &&
        std::find(declared.begin(), declared.end(), trim_blanks(inside)) != declared.end())
      return inside;
    auto start = after.find_first_not_of(" \t\r\n");
    if (start == std::string_view::npos)
      break;
    auto head = lower(after.substr(start, 16));
    // tool., tools., tool_; arguments., args., arg.; answers., answer.
    for (std::string_view near : {"tool", "arg", "answer"})
      if (head.starts_with(near) && head.find('.') != std::string::npos &&
          head.find('.') < head.find_first_of(" \t}") &&
          std::all_of(head.begin(), head.begin() + static_cast<std::ptrdiff_t>(head.find('.')),
                      [](char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }))
        return inside;
  }
  return {};
}

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
