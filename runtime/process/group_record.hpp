// The crash sweep (DESIGN.md "Processes"): while jp-actors runs, every process group
// it starts is recorded in a file of its own (pgid and the leader's start time);
// the next jp-actors start kills what owners that are gone left behind, but only
// where the group is still theirs: a pid that now names a process started later is
// never touched. The records are the user's own state, outside every workspace
// ($XDG_STATE_HOME/jp-actors/live): nothing a repository holds can make jp-actors
// kill. Records that are links, not the user's, writable by others, or implausible
// (a start window wider than a spawn takes or later than now, our own group or
// session) are not trusted.
//
// Record file: <dir>/<owner pid>-<owner start time>.groups, lines
//   "boot <boot id>"                first: /proc/sys/kernel/random/boot_id when the
//                                   record was opened. A record of an earlier boot
//                                   names processes that ended with it, in pids and
//                                   start times that mean others' now: it is removed
//                                   unread (older records have no such line)
//   "+ <pgid> <earliest> <latest>"  a group started; its leader's start time is in
//                                   [earliest, latest] (read from the clock around
//                                   the spawn: recorded before the spawn returns to
//                                   its caller, without waiting for the child)
//   "- <pgid> <earliest> <latest>"  its leader was reaped and the group is gone; the
//                                   window names which "+" it ends (the line may
//                                   come after a later group's "+" that the kernel
//                                   gave the same pid). "- <pgid>" alone, as older
//                                   records have it, ends whichever is recorded
// Start times are /proc/<pid>/stat's field 22 (clock ticks since boot).
#pragma once

#include <cstdint>
#include <string>
#include <sys/types.h>
#include <vector>

#include "../../messages/result.hpp"
#include "../store/state_location.hpp"

namespace jp {

/// The start time of `pid` (field 22 of /proc/<pid>/stat); 0 when there is none.
uint64_t process_start_time(pid_t pid);
/// Whether the process that started at `start` (process_start_time) still runs:
/// there, not ended (a zombie has).
bool runs_since(pid_t pid, uint64_t start);

/// Where records live: `root` (trusted as it is) / `relative` (created 0700, no
/// link followed, owned by this user and written by nobody else).
using RecordDir = UserStateDir;

/// $XDG_STATE_HOME/jp-actors/live, else $HOME/.local/state/jp-actors/live; an error
/// when neither variable names a directory.
Result<RecordDir> crash_record_dir();

/// Starts recording this process's groups in `dir` (created if missing). Groups
/// started before this call are not recorded.
Status open_group_record(const RecordDir& dir);
inline Status open_group_record(const std::string& dir) { return open_group_record(RecordDir{dir, ""}); }

/// A clean end: every group is gone, so the record goes too. Signal-safe.
void close_group_record() noexcept;

/// This boot's id (/proc/sys/kernel/random/boot_id); "" where it cannot be read.
const std::string& boot_id();

/// Now, in the unit of process start times (clock ticks since boot).
uint64_t boot_ticks_now();

/// The process layer's notes (no-ops while no record is open). A group whose leader
/// was spawned between boot_ticks_now() values `earliest` and `latest`.
void record_group_started(pid_t pgid, uint64_t earliest, uint64_t latest);
void record_group_ended(pid_t pgid, uint64_t earliest, uint64_t latest);

struct SweepReport {
  std::vector<pid_t> owners;  // dead owners whose records were swept
  size_t groups = 0;          // groups found still alive, and killed
  size_t processes = 0;       // processes killed in them
  size_t escaped = 0;         // processes of its tools outside them (found by their mark), killed
  size_t skipped = 0;         // recorded groups whose pid now names another process
  size_t untrusted = 0;       // records or lines not trusted (see above), left alone
  size_t earlier_boots = 0;   // records of an earlier boot, removed without killing
  std::string refused;        // why the directory itself was not swept ("" = it was)
  /// "cleaned up after jp-actors 1234 that ended without cleaning up: killed 3
  /// process groups (5 processes)"; "" when there was nothing to sweep.
  std::string summary() const;
};

/// Kills, for each record in `dir` whose owner is gone, the groups it left alive and
/// every process its tools' mark is on (runtime/process/tool_mark.hpp: one started too late
/// to be recorded, one that left its group); then removes the record. Records of running owners are left alone.
SweepReport sweep_group_records(const RecordDir& dir);
inline SweepReport sweep_group_records(const std::string& dir) { return sweep_group_records(RecordDir{dir, ""}); }

} // namespace jp
