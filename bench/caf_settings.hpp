// `jp-bench run --caf KEY=VALUE`: CAF's work-stealing settings for the jp-actors
// side, to measure the scheduler's spinning and sleeping on a machine (the quiet
// machine's question: does an idle worker that spins longer, without stealing,
// take a wake-up off W1's and W3's path without W7's loss of session 19?).
// Only CAF's `work-stealing.*` keys: the rest of jp-actors' settings are its config.
#pragma once

#include <string>

#include "messages/result.hpp"

namespace caf {
class actor_system_config;
}

namespace jp::bench {

/// Checks one `KEY=VALUE`: a work-stealing key, a count for the attempts and
/// intervals, a duration (`50us`, `1ms`) for the sleeps.
Status check_caf_setting(const std::string& text);

/// The environment variable `run` hands its `--caf` settings to the workers in
/// (`KEY=VALUE;KEY=VALUE`).
inline constexpr const char* kCafSettingsVariable = "JP_BENCH_CAF";

/// Applies the settings in kCafSettingsVariable, if set, to `cfg`; returns `cfg`.
/// Throws on a setting parse_caf_setting refuses.
caf::actor_system_config& with_bench_caf_settings(caf::actor_system_config& cfg);

/// The work-stealing settings `cfg` holds, one `KEY=VALUE` a line (what a worker
/// says it ran with, on stderr).
std::string work_stealing_settings(const caf::actor_system_config& cfg);

} // namespace jp::bench
