// `jp-bench run --compare OLD.json` (and `jp-bench compare OLD.json NEW.json`): each
// figure of a run against the same figure of an earlier run's JSON, so that a
// regression is one line. A figure is compared by its ratio to the floor where both
// runs have one, else by jp-actors' median; better or worse follows its goal's
// direction (lower is better for times and sizes, higher for rates).
#pragma once

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

/// Whether the comparison found a figure worse by more than compare_noise.
bool any_worse(const std::vector<Row>& before, const std::vector<Row>& now);

} // namespace jp::bench
