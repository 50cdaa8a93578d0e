// `jp-bench timeline FILE`: W1's calls as the kernel's scheduler saw them, from a
// `perf script -F comm,pid,tid,cpu,time,event,trace` of
// `perf record -a -e sched:sched_process_fork,sched:sched_process_exec,sched:sched_process_exit,sched:sched_wakeup,sched:sched_switch`
// over either side's W1 (bench/quiet's TRACE step records both). For each child
// that execs and exits, the thread that forked it (the floor's one thread,
// jp-actors' io thread) is followed from the fork to its next fork: where a call's
// time goes between the spawn, the program, the exit being noticed and the next
// spawn (bench/README.md, "Issue 18 on this VM (2026-11-28, session 30)" did this by hand).
#pragma once

#include <string>

#include "messages/result.hpp"

namespace jp::bench {

/// The summary of a trace's text (one event a line, as above): per call, the
/// least, median and p90 of each step in µs, and the spawner's sched_wakeup events. An error names
/// what the text lacks (no fork of a child that exec'd and exited).
Result<std::string> format_spawn_timeline(const std::string& perf_script_text);

} // namespace jp::bench
