// BENCH.md's goals as data: for each workload, the figures it reports and the goal
// of each (if any). The report applies them in one place (goal_met).
#pragma once

#include <string>
#include <vector>

namespace jp::bench {

enum class goal_kind {
  none,      // reported only
  ratio_max, // jp-actors / floor <= value
  ratio_min, // jp-actors / floor >= value
  abs_max,   // jp-actors <= value
  abs_min,   // jp-actors >= value
};

struct FigureSpec {
  std::string name;
  std::string unit;
  goal_kind goal = goal_kind::none;
  double value = 0;
  bool worst_round = false; // judged on the worst round, not the median (e.g. "0 left")
};

struct WorkloadSpec {
  std::string id;
  std::vector<FigureSpec> figures;
  bool floor = true; // the floor runs it too (W8's goals are absolute, and it has none)
};

inline const std::vector<WorkloadSpec>& workload_specs() {
  using enum goal_kind;
  static const std::vector<WorkloadSpec> specs = {
    // session_mean_us: the floor's children in their own session, as ours (the floor only).
    {"W1", {{"mean_us", "µs", ratio_max, 1.10}, {"p50_us", "µs"}, {"p99_us", "µs"}, {"session_mean_us", "µs"}}},
    {"W2", {{"wall_ms", "ms", ratio_max, 1.10}, {"rss_growth_mb", "MB", abs_max, 20}}},
    {"W3",
     {{"p50_us", "µs", ratio_max, 1.5}, {"p99_us", "µs", abs_max, 500}, {"p50_all_us", "µs"},
      {"p99_all_us", "µs", ratio_max, 2}}},
    {"W4", {{"mb_per_s", "MB/s", ratio_min, 0.9}, {"rss_growth_mb", "MB", abs_max, 16}}},
    // Fetches poll for the echo; waited: the apply waits for it (settle_ms = 0).
    {"W5",
     {{"p50_us", "µs", ratio_max, 2}, {"p99_us", "µs", abs_max, 500}, {"p50_waited_us", "µs"}, {"p99_waited_us", "µs"}}},
    {"W6",
     {{"spawn_rate_per_s", "/s", ratio_min, 0.9},
      {"rss_per_handle_kib", "KiB", abs_max, 32},
      {"abort_ms", "ms"},
      {"left", "", abs_max, 0, true}}},
    {"W7", {{"awaits_per_s", "/s", abs_min, 200000}, {"p50_us", "µs", ratio_max, 2}, {"p99_us", "µs", abs_max, 2000}}},
    {"W8",
     {{"subagents_per_s", "/s", abs_min, 1000},
      {"rss_per_idle_subagent_kib", "KiB", abs_max, 64},
      {"left", "", abs_max, 0, true}},
     false},
    // Remote against local in the same round, so its goals are on those ratios. The
    // floor's W9 is the OS's part of a remote fetch: a request and its answer between
    // two processes over loopback TCP (its remote_fetch_p50_us), shown for reference.
    {"W9",
     {{"fetch_p50_ratio", "×", abs_max, 3},
      {"local_fetch_p50_us", "µs"},
      {"remote_fetch_p50_us", "µs"},
      {"spawn_rate_ratio", "×", abs_min, 0.5},
      {"local_spawns_per_s", "/s"},
      {"remote_spawns_per_s", "/s"}}},
    // Not BENCH.md's: how late a look answers, after its wait_ms (20) on a silent tool,
    // and from a prompt's spawn to its answer (waiting; settle_ms 100 included).
    {"W10", {{"late_p50_us", "µs", abs_max, 1000}, {"late_p99_us", "µs"}, {"prompt_p50_us", "µs", ratio_max, 1.10}, {"prompt_p99_us", "µs"}}},
  };
  return specs;
}

} // namespace jp::bench
