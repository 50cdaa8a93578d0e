// The jp-actors side of BENCH.md's workloads W1-W9, and W10 (a look's latency, ours). Every operation is a tool call
// sent to a turn actor, as the agent loop sends it: JSON arguments in, the
// assistant's JSON response out (turn -> registry -> handle actor -> process ->
// state -> response; `await` through the await actor).
#pragma once

#include <string>

#include "bench/measure.hpp"
#include "messages/result.hpp"

namespace jp::bench {

struct WorkloadParams {
  std::string workload;   // "W1" .. "W10"
  long n = 0;             // count (0 = the workload's default)
  long long bytes = 0;    // W4 output size (0 = default)
  std::string floor_path; // the floor binary: its `stamp` and `write` modes are children
  std::string jp_actors_path; // the CLI binary: W9 runs it as a node
  std::string samples_path;   // W3: each exit written there (exit_gaps.hpp)
  std::string cpu_path;       // where the time went, written there (cpu_use.hpp); not W9
};

Result<Figures> run_jp_workload(const WorkloadParams& p);

} // namespace jp::bench
