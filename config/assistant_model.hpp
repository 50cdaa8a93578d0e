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

/// How long a response's stream may be silent before it is retried: `configured`
/// where set (>= 0); else 300 s for OpenAI's reasoning models, which send nothing
/// while they think (a minute and more at high effort), and for Anthropic's, which
/// send nothing while a tool call's long value (a file's body) is made; 60 s for the
/// rest. By the request's model: a sub-agent's may be another than its parent's.
double idle_timeout_for(std::string_view provider, std::string_view model, double configured);
/// The same for a config's own model.
double idle_timeout_for(const AssistantConfig& a);

} // namespace jp
