// What a workspace's .jp/config.toml (someone's repository) set that the user should
// know of before its tools run: the tools it defines and how they run, the tools whose
// words to the model it changed, the model, prompt and token limit it chose, and the
// tools' resource limits it set (a tool failing for one is traced to the file). A
// run says so when that file is new or changed since jp-actors last ran there
// (runtime/cli/workspace_config_note).
#pragma once

#include <string>
#include <vector>

#include "config.hpp"

namespace jp {

/// What the workspace layer set and no later layer (the user's --config, --cfg) set
/// over: `before` is the config without it, `after` with it, `final` with every layer.
/// A phrase each ("tool `lint` (runs `make`, unattended)", "assistant.model = \"o3\"");
/// none for what else it only lowered or left alone. A tool's mode is its calls' least
/// asking (a spawn may run unattended under `run = "ask"`).
std::vector<std::string> what_workspace_sets(const Config& before, const Config& after, const Config& final);

/// What a local tool runs, as a person asked about it should see it: "runs `sh -c
/// make test` setting LD_PRELOAD (chooses code it runs)" (its command line squeezed,
/// a long one's head and tail; the variables its `env` sets).
std::string what_tool_runs(const ToolConfig& tool);

/// What a person asked to let `name` run should know of it when the workspace's
/// .jp/config.toml defines or changes it ("a tool this workspace's .jp/config.toml
/// defines or changes; it runs `...`"); "" for any other tool.
std::string workspace_tool_note(const Config& config, const std::string& name);

} // namespace jp
