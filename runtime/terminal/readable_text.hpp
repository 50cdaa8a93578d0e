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

/// `held`: where a sequence the bytes end inside of is kept, for the caller to put
/// before the next bytes (else it is dropped as far as it was read).
std::string readable_text(std::string_view bytes, std::string* held = nullptr);

} // namespace jp
