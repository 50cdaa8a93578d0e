// The limits that keep a run bounded (how long an abort waits, how much output is
// kept in memory or on disk, how many sub-agents and responses a turn may take) as
// a workspace's config may change them: only lower. A workspace is someone's
// repository; raising them lets it hang every abort, fill the disk with spill files
// or memory with responses. Your own config (and --config, --cfg) may raise them.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "config.hpp"
#include "../messages/result.hpp"

namespace jp {

/// Whether the workspace's layer (`origin`, applied to `before`, giving `after`)
/// kept each limit at most what the layers before it set, on the runtime and on
/// each tool that was there before it (yours or built in). Errors name the key,
/// the file, the limit it had, and that your own config can raise it.
Status workspace_only_lowered(const Config& before, const Config& after, std::string_view origin);

/// The limits the workspace's layer lowered and no later layer set over ("key =
/// value"): a run that fails for one (every request timed out, output cut to 64
/// bytes) is traced to the file that chose it.
std::vector<std::string> workspace_lowered(const Config& before, const Config& after, const Config& final);

} // namespace jp
