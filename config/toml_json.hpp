// Any TOML value as JSON: tool call arguments in scripts, question answers and
// parameter defaults in config. Dates and times have no JSON type; they become
// their TOML spelling as a string.
#pragma once

#include <toml++/toml.h>

#include "../messages/json.hpp"

namespace jp {

Json toml_to_json(const toml::node& n);

} // namespace jp
