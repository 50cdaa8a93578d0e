// Paths of the workloads without their processes, to be counted with
// `valgrind --tool=callgrind` (which cannot run jp-actors' processes: it refuses
// pidfd_open). Instruction counts do not move with a virtual machine's speed, so a
// change of a few percent shows there when a timed run cannot (bench/README.md,
// "counted"). Each path checks what it gets back and fails on a wrong answer.
#pragma once

#include <string>

#include "messages/result.hpp"

namespace jp::bench {

/// The paths `jp-bench count` knows, each with what it stands for.
std::string counted_path_names();

/// Runs path `name` `n` times (0: its default); the result is the microseconds one
/// run of it took on average.
Result<double> run_counted_path(const std::string& name, long n);

} // namespace jp::bench
