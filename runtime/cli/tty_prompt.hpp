// Asking the person at the terminal to answer a tool's question.
#pragma once

#include <optional>
#include <string>

#include "messages/json.hpp"
#include "messages/tool_state.hpp"

namespace jp {

/// Prompts on /dev/tty; nullopt when there is no terminal or the input ends.
std::optional<Json> tty_ask(const std::string& tool, const Question& q);

} // namespace jp
