// How a stateful handle whose process exited without a final state of its own is
// told: stopped, whatever its last words. A question it printed (needs_input) can no
// longer be answered through `apply`: it is said, with what can answer it.
#pragma once

#include <string>

#include "../messages/tool_state.hpp"

namespace jp {

/// The final state of handle `id` whose process exited with `last` as its state (one
/// not stopped: running, or waiting with a question). `configured`: the handle's
/// config answers that question (questions.<id>.answer), which went at most to its
/// control channel while it ran.
ToolState exited_without_stopping(const std::string& id, const ToolState& last, bool configured);

} // namespace jp
