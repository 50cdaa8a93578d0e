// Where a workload's time went, thread by thread (`--cpu FILE` on `jp-floor` and
// `jp-bench worker`): each thread's time on a CPU and waiting for one (the
// kernel's /proc/self/task/*/schedstat), its preemptions, and the CPU of the
// process and of its reaped children (getrusage), per operation. Read side by side,
// the floor's file and ours say whether jp-actors' extra time per call is its own
// CPU, its threads waiting for a CPU, its children's, or none of them (wake-ups
// and idle): what a machine without `perf` can still tell (bench/README.md).
#pragma once

#include <string>
#include <vector>

namespace jp::bench {

/// One thread's counters since it started.
struct ThreadTimes {
  long tid = 0;
  std::string comm;          // its name, spaces as '_'
  double on_cpu_ns = 0;      // schedstat's first field
  double runqueue_ns = 0;    // schedstat's second: runnable, waiting for a CPU
  double slices = 0;         // schedstat's third: times it was run
  double preempted = 0;      // nonvoluntary_ctxt_switches
};

/// The process's counters at one moment.
struct CpuTimes {
  double wall_ns = 0; // CLOCK_MONOTONIC
  std::vector<ThreadTimes> threads;
  double user_us = 0, sys_us = 0;             // RUSAGE_SELF
  double child_user_us = 0, child_sys_us = 0; // RUSAGE_CHILDREN (the reaped ones)
};

CpuTimes read_cpu_times();

/// What happened between `before` and `after`, per operation (`ops` of `workload`),
/// in the format jp-floor writes too:
///   # where the time went: W1, 2000 ops, us per op (wall 700.1)
///   thread COMM TID on_cpu US runqueue US slices N preempted N
///   threads on_cpu US runqueue US
///   process user US sys US
///   children user US sys US
/// A thread that started after `before` counts from zero; one that ended before
/// `after` is left out of the thread lines and their sum (not of `process`).
std::string format_cpu_use(const CpuTimes& before, const CpuTimes& after, const std::string& workload, long ops);

} // namespace jp::bench
