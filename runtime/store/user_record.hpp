// Lines jp-actors keeps in the user's own state ($XDG_STATE_HOME/jp-actors/NAME),
// where a workspace (someone's repository) cannot write: which conversations are
// the user's own (own_conversations), which workspace configs the user was told of
// (workspace_config_note). Each a file of lines, appended to, never through a link.
#pragma once

#include <string>
#include <string_view>

#include "../../messages/result.hpp"

namespace jp {

/// Whether the record `name` holds the line `line` (no line break in it). False when
/// it cannot be read.
bool in_user_record(std::string_view name, const std::string& line);

/// Adds `line` to the record `name` (once).
Status add_to_user_record(std::string_view name, const std::string& line);

} // namespace jp
