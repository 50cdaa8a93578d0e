// A line of jp-actors' own said after a tool's text (what its exit killed, that it
// went on as a handle): on a line of its own, whatever the text ended with.
#pragma once

#include <string>

namespace jp {

/// `text` with `line` as its last line ("" : `text` as it is).
inline std::string with_last_line(std::string text, const std::string& line) {
  if (line.empty())
    return text;
  if (!text.empty() && text.back() != '\n')
    text += '\n';
  return text + line;
}

} // namespace jp
