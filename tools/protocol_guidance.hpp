// What the system prompt tells the model about the stateful tool protocol, when
// stateful tools are offered: without it models call them one-shot and poll.
#pragma once

#include <string>

#include "../config/config.hpp"

namespace jp {

/// A short paragraph on spawn/await/fetch/abort; "" when no configured tool is stateful.
std::string protocol_guidance(const Config& config);

/// `assistant.system_prompt` with the guidance appended (when there is any).
std::string system_prompt_with_guidance(const Config& config);

} // namespace jp
