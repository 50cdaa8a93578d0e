// A look's `screen`, `rows` and `cols` are a terminal's: a handle that has none
// refuses them, saying so, rather than answering as if they were not there.
#pragma once

#include <fmt/format.h>
#include <string>
#include <string_view>

#include "../messages/tool_state.hpp"

namespace jp {

/// Why handle `id` (`what` it is: its tool, "a sub-agent") refuses look `o`: "" when
/// it asks for no screen and no size. `hint`: how its tool would have a terminal.
inline std::string no_terminal(const LookOptions& o, std::string_view id, std::string_view what,
                               std::string_view hint = {}) {
  if (!o.screen && o.rows <= 0)
    return {};
  return fmt::format("Handle `{}` ({}) has no terminal: `screen`, `rows` and `cols` are for tools with io = "
                     "\"pty\"{}",
                     id, what, hint);
}

} // namespace jp
