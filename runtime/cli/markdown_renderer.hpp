// Markdown for a terminal (the CLI's answers): ANSI styles, or the same layout
// without them (NO_COLOR), rendered a block at a time as the answer streams in.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace jp {

/// Renders a streamed markdown answer for a terminal, a block at a time: text is
/// held until the blocks it belongs to are complete, so a half-received table or
/// code fence is never mangled. A group of blocks ends at a blank line outside a
/// code fence that is followed by a line starting in the first column (an indented
/// line after a blank one still belongs to a list item); finish() ends the last.
/// The output does not depend on how the answer was split into pieces.
/// color=false: the same layout without escape sequences (NO_COLOR).
class MarkdownStream {
public:
  explicit MarkdownStream(bool color);
  /// Takes the next piece; returns what is ready to print (possibly "").
  std::string feed(std::string_view chunk);
  /// The end of the answer: renders what is held, returns it.
  std::string finish();
  /// Forgets what is held (the response restarts).
  void reset();

private:
  std::string take_line(std::string_view line);
  std::string flush();

  bool color_;
  std::string partial_;       // the last line, not complete yet
  std::string held_;          // complete lines of blocks not rendered yet
  bool after_blank_ = false;  // held_ ends with a blank line outside a fence
  char fence_char_ = 0;       // inside a fenced code block: its '`' or '~'
  std::size_t fence_len_ = 0; // ... and how many of them opened it
  bool printed_ = false;      // a block was returned: the next is set apart by a blank line
};

/// A whole answer at once: feed(all) + finish().
std::string render_markdown(std::string_view markdown, bool color);

} // namespace jp
