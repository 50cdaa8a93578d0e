// The note a run gives when the workspace's .jp/config.toml (someone's repository) is
// new or changed since jp-actors last told this user of it: which tools it defines and
// how they run, and which model, prompt and token limit it chose
// (config/workspace_sets.hpp). Once per text and workspace, recorded in the user's
// state (workspace-configs-seen), so a config read once is not announced every run.
// Given by run, call and query, whose stderr a person reads.
#pragma once

#include "config/config.hpp"

namespace jp {

/// Says on stderr what the workspace's config sets, when the user was not told yet.
void note_workspace_config(const Config& config);

} // namespace jp
