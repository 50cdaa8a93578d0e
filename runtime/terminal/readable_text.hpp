// A pipe's output as the model reads it: each line as a terminal would show it. A
// progress bar's redraws (CR, erase-line, cursor left; cursor up over several lines)
// leave their last frame, colours and other escape sequences are dropped, backspace
// erases; plain text stays as it is.
// Applied to what a look hands over (at most the output cap), not to the spill file,
// which keeps the bytes as written.
#pragma once

#include <string>
#include <string_view>

namespace jp {

/// The line the text of earlier bytes ended inside of: its text as shown, and the
/// cursor's column on it.
struct OpenLine {
  std::string text;
  size_t column = 0;
};

/// `held`: where a sequence the bytes end inside of is kept, for the caller to put
/// before the next bytes (else it is dropped as far as it was read).
/// `open`: the line earlier bytes ended inside of, which these go on with (a move
/// back along it, a carriage return or CSI G, reaches its start: a prompt redrawn
/// after what was typed at it); the text shows what they left of it past its shown
/// text, or the whole line when they changed that. Set to the line these bytes end
/// inside of (empty text: none).
std::string readable_text(std::string_view bytes, std::string* held = nullptr, OpenLine* open = nullptr);

} // namespace jp
