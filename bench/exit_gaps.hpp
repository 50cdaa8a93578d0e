// W3's exits one by one (`--samples FILE` on `jp-floor W3` and `jp-bench worker W3`)
// and `jp-bench gaps`, which sums them up by how long the system was idle before
// each: on an idle machine the tail of W3 is exits that come long after the one
// before, when every thread they wake has been asleep that long (bench/README.md,
// "Issue 18 on this VM (2026-11-28, session 31)").
#pragma once

#include <string>
#include <vector>

#include "messages/result.hpp"

namespace jp::bench {

/// One exit: when its child printed its stamp, in µs after the spawn phase ended
/// (below 0: during it), and the µs from that stamp to the answer.
struct ExitSample {
  double after_spawn_us = 0;
  double latency_us = 0;
};

/// The file's text: a comment line, then "AFTER_SPAWN_US LATENCY_US" per exit.
std::string format_exit_samples(const std::vector<ExitSample>& samples);

/// A file format_exit_samples wrote; errors name the line that is wrong.
Result<std::vector<ExitSample>> read_exit_samples(const std::string& text);

/// The exits after the spawn phase of every round (one file each), by the time
/// since the exit before in the same round: per band of that gap, how many and
/// their latency's p50, p90 and max; then all of them (p50 and p99).
std::string format_exit_gaps(const std::vector<std::vector<ExitSample>>& rounds);

} // namespace jp::bench
