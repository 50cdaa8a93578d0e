// `jp-bench run --compare OLD.json` (and `jp-bench compare OLD.json NEW.json`): each
// figure of a run against the same figure of an earlier run's JSON, so that a
// regression is one line. `jp-bench pairs` does the same over alternating pairs of
// runs (old, new, old, new ...), where one pair is within a noisy machine's spread. A figure is compared by its ratio to the floor where both
// runs have one, else by jp-actors' median; better or worse follows its goal's
// direction (lower is better for times and sizes, higher for rates).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "bench/report.hpp"
#include "messages/result.hpp"

namespace jp::bench {

/// The rows of a JSON run (what --json wrote). Errors say what is wrong with it.
Result<std::vector<Row>> rows_from_json(const std::string& text);

/// A change within this fraction either way is noise, not better or worse.
inline constexpr double compare_noise = 0.05;

/// One line per figure of `now` (old value, new value, change, verdict), then one
/// line that sums it up and names each figure that got worse.
std::string format_comparison(const std::vector<Row>& before, const std::vector<Row>& now,
                              const std::string& before_name);

/// Fewer pairs than this name no figure better or worse (one or two pairs are within a
/// noisy machine's spread).
inline constexpr size_t pairs_named_at = 4;

/// Alternating pairs of runs (each pair: an old binary's run, then the new one's):
/// one line per figure of the new runs with the old and new medians over the pairs,
/// the change, and in how many pairs the new was better and worse; then one line
/// naming the figures better or worse past the noise in three pairs of four (and
/// pairs_named_at pairs at least).
std::string format_pairs(const std::vector<std::pair<std::vector<Row>, std::vector<Row>>>& pairs);

/// Whether the comparison found a figure worse by more than compare_noise.
bool any_worse(const std::vector<Row>& before, const std::vector<Row>& now);

} // namespace jp::bench
