// The `tools` member both providers' requests carry, from the tool definitions the
// request was built with (already in the provider's dialect, as JSON text).
#pragma once

#include <optional>
#include <string>

#include "../../messages/json.hpp"

namespace jp {

/// The `tools` to send: none for no tools (an empty array is refused by OpenAI, and
/// says nothing to Anthropic).
std::optional<Json> request_tools(const std::string& tools_json);

} // namespace jp
