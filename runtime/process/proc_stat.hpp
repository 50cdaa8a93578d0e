// What /proc says about a process: its ids and start time (proc(5), /proc/<pid>/stat).
// The crash sweep, session clean-up of terminal handles and the input-wait probe all
// read it; plain read(2), no allocation but the result.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <sys/types.h>
#include <vector>

namespace jp {

struct ProcStat {
  pid_t pid = 0;
  char state = '?';   // R, S, D, Z, T, ...
  pid_t ppid = 0;
  pid_t pgid = 0;
  pid_t sid = 0;      // session
  pid_t tpgid = -1;   // foreground process group of its controlling terminal (-1: none)
  uint64_t start = 0; // clock ticks since boot (field 22)
};

std::optional<ProcStat> read_proc_stat(pid_t pid);

/// How often `pid` was put on a CPU (/proc/<pid>/schedstat's third field): it grows
/// each time the process wakes, so a reader that was asleep and is again has run
/// between. 0 when gone or not told (a kernel without schedstats).
uint64_t run_count(pid_t pid);

/// Every process /proc lists now.
std::vector<ProcStat> all_processes();

/// Sends `sig` to `pid` only while it names the process that started at `start`:
/// a pidfd holds the process between that check and the signal, so a pid the kernel
/// has given another process since (after a /proc scan) is never signalled. Whether
/// it was sent.
bool signal_if_same(pid_t pid, uint64_t start, int sig);

/// The command line of `pid` as /proc shows it: its arguments joined by spaces, at
/// most `max_bytes` of it (more means it was longer); "" when it has none (a zombie,
/// a kernel thread) or is gone.
std::string read_proc_cmdline(pid_t pid, std::size_t max_bytes);

/// The arguments of `pid` (argv[0] first) in at most `max_bytes` of its command line
/// (the last one cut where it was longer); none when it has none or is gone.
std::vector<std::string> read_proc_args(pid_t pid, std::size_t max_bytes);

/// Its name (/proc/<pid>/comm, at most 15 bytes); "" when gone.
std::string read_proc_comm(pid_t pid);

/// The processes of session `sid` (a terminal handle's session: its leader's pid).
std::vector<ProcStat> session_members(pid_t sid);

} // namespace jp
