// What a workspace's .jp/config.toml (someone's repository) set that the user should
// know of before its tools run: the tools it defines and how they run, the tools whose
// words to the model it changed, and the model, prompt and token limit it chose. A
// run says so when that file is new or changed since jp-actors last ran there
// (runtime/cli/workspace_config_note).
#pragma once

#include <string>
#include <vector>

#include "config.hpp"

namespace jp {

/// What the workspace layer set: `before` is the config without it, `after` with it.
/// A phrase each ("tool `lint` (runs `make`, unattended)", "assistant.model = \"o3\"");
/// none for what it only lowered or left alone.
std::vector<std::string> what_workspace_sets(const Config& before, const Config& after);

} // namespace jp
