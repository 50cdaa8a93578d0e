// Loads and validates configuration. Errors name the file, the key and what was
// expected, e.g. "config.toml: conversation.tools.x.run: expected one of ask,
// unattended, skip, got \"sometimes\"".
#pragma once

#include <string>
#include <vector>

#include "config.hpp"
#include "../messages/result.hpp"

namespace jp {

struct ConfigSources {
  std::string workspace;                 // "" = current directory
  std::vector<std::string> config_files; // --config, in order
  std::vector<std::string> overrides;    // --cfg key=value, in order
  bool use_user_config = true;           // $XDG_CONFIG_HOME/jp-actors/config.toml
};

/// `defaults` (tools/builtin_tools.hpp's default_config()), then user, workspace,
/// files, overrides (later wins, tables merge). A tool may say source = "builtin"
/// only where `defaults` has a built-in of that name.
Result<Config> load_config(const ConfigSources& sources, Config defaults);

/// Whether `tool`'s parameters make a schema every provider takes: names, types,
/// enum/items/default against the type, none twice, none of the stateful protocol's
/// own names, one_of_required naming declared ones. Errors start with `prefix`
/// (the tool's key, "conversation.tools.NAME").
Status check_tool_parameters(const ToolConfig& tool, std::string_view prefix);

/// Parses one TOML document's text into a Config on top of `base` (for tests and
/// scripts that embed config). `origin` names the text in errors.
Result<Config> apply_config_text(Config base, std::string_view toml_text,
                                 std::string_view origin);

} // namespace jp
