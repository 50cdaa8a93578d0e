// What a config knows of its assistant's model: its family, and what follows from it
// before any request (how long its stream may be silent).
#pragma once

#include <string_view>

#include "config.hpp"

namespace jp {

/// `model` without a "vendor/" prefix.
std::string_view model_name(std::string_view model);

/// Whether `model` is one of OpenAI's reasoning models (the o1, o3 and o4 series and
/// gpt-5*, also behind a "vendor/" prefix).
bool openai_reasoning_model(std::string_view model);

/// How long a response's stream may be silent before it is retried: the config's
/// `idle_timeout_secs` where set; else 300 s for OpenAI's reasoning models, which
/// send nothing while they think (a minute and more at high effort), 60 s for the rest.
double idle_timeout_for(const AssistantConfig& a);
/// The longest idle_timeout_for gives where the config sets none.
constexpr double kModelIdleTimeoutSecs = 300;

} // namespace jp
