// bench/run's orchestration: which cases run, floor and jp-actors interleaved round
// by round (each in a fresh process, so peak RSS is the workload's own), and the
// table (and JSON) of min/median per side, ratio, goal and whether it is met.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "messages/result.hpp"

namespace jp::bench {

struct Case {
  std::string label;    // "W4 2GiB"
  std::string workload; // "W4"
  long n = 0;           // 0: the workload's default
  long long bytes = 0;
};

/// Runs argv (no shell), returns its stdout; stderr passes through.
Result<std::string> run_capture(const std::vector<std::string>& argv);

/// A worker's or the floor's result line: {"workload":..,"figures":{name: value}}.
Result<std::map<std::string, double>> parse_figures(const std::string& line);

/// The cases for the selected workloads (all when empty); --quick shrinks counts.
Result<std::vector<Case>> select_cases(const std::vector<std::string>& selected, bool quick);

struct Row {
  std::string label, figure, unit;
  double floor_min = 0, floor_median = 0, jp_min = 0, jp_median = 0, ratio = 0;
  std::string goal;  // "≤ 1.15× floor", "" when none
  std::string met;   // "met" | "NOT met" | "" (no goal) | "failed: why"
};

struct Binaries {
  std::string floor; // jp-floor
  std::string jp;    // jp-bench (its `worker` subcommand)
  std::string node;  // jp-actors (W9's node)
};

/// Runs each case `rounds` times, floor then jp-actors, and makes its rows.
/// Progress goes to stderr.
std::vector<Row> run_cases(const std::vector<Case>& cases, int rounds, const Binaries& bin);

std::string format_table(const std::vector<Row>& rows);
std::string rows_json(const std::vector<Row>& rows);

} // namespace jp::bench
