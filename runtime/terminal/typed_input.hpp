// Text an assistant types into a terminal, with backslash escapes for the bytes a
// JSON string cannot show plainly (ESC, Ctrl characters): \n \r \t \e \a \b \0,
// \\, \xHH and \uXXXX. Anything else after a backslash is kept as written.
#pragma once

#include <string>
#include <string_view>

namespace jp {

std::string unescape_typed_text(std::string_view text);

} // namespace jp
