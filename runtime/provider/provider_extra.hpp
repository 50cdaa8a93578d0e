// What a provider wants back on a response's message in later requests (a
// ChatMessage's or ToolCall's provider_extra: DeepSeek's reasoning, Gemini's
// thought signatures, thinking blocks), kept as a JSON object with the model that
// asked: only that model gets it back (another may refuse the fields).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "../../messages/json.hpp"

namespace jp {

/// The member of a provider_extra naming the model that asked for it (not sent).
inline constexpr std::string_view kExtraModel = "jp_model";

/// The fields of `extra` (a JSON object as text) when `model` asked for them, without
/// kExtraModel; nullopt for "", anything that is no object, or another model's.
std::optional<Json> provider_extra_for(const std::string& extra, std::string_view model);

} // namespace jp
