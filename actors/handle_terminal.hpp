// The terminal of a handle with io = "pty": the tool's output becomes the plain text
// the assistant reads, the screen is kept for `"screen": true`, and what the assistant
// types (text as written, or named keys) becomes the bytes the terminal sends.
#pragma once

#include <string>
#include <string_view>

#include "../messages/json.hpp"
#include "../messages/result.hpp"
#include "../messages/tool_state.hpp"
#include "../runtime/terminal/terminal_screen.hpp"
#include "../runtime/terminal/terminal_text.hpp"

namespace jp {

class HandleTerminal {
public:
  HandleTerminal(int rows, int cols);

  /// What a chunk of the tool's output makes: its plain text, and what the terminal
  /// answers a program that asks it something (cursor position, ...).
  struct Fed {
    std::string text;
    std::string replies;
  };
  Fed feed(std::string_view chunk);
  /// The text held back at the end of the output (the tool exited).
  std::string flush() { return text_.flush(); }

  Screen render(size_t max_bytes = SIZE_MAX) const { return screen_.render(max_bytes); }
  /// A full-screen program (vi, top) has it: its screen, not its text, tells what it shows.
  bool full_screen() const { return text_.full_screen(); }
  void resize(int rows, int cols) {
    screen_.resize(rows, cols);
    text_.set_cols(cols);
  }

  /// What typing `input` sends: text as written (a JSON string's own escapes are
  /// its bytes), or {"keys": [..]} optionally with "text" typed first.
  Result<std::string> typed_bytes(const Json& input);

private:
  TerminalText text_;
  TerminalScreen screen_;
};

} // namespace jp
