// Which processes came from this jp-actors' tools, wherever they went (DESIGN.md
// "Processes"): every tool starts with JP_ACTORS_TOOL=<owner pid>.<owner start time>.<n>
// in its environment, and its descendants inherit it -- also those that left the
// tool's session and group (setsid, a double fork, `set -m` job control). Abort,
// exit and the crash sweep find such escapes by the mark (and by the tool's session,
// when it leads one).
// What still escapes: a process that leaves the tool's group (and its session,
// when the tool leads one) and also drops or rewrites its environment (`env -i`, a
// daemon that clears it), or whose environment can no longer be read: one made
// non-dumpable (ssh-agent, gpg-agent; a setuid program), whose /proc/<pid>/environ
// only a reader with CAP_SYS_PTRACE may read, or one that wrote its title over it
// (setproctitle: nginx, postgres, sshd). Each is still ended with jp-actors when it
// was reparented to us.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <sys/types.h>
#include <vector>

#include "proc_stat.hpp"

namespace jp {

inline constexpr std::string_view kToolMarkVariable = "JP_ACTORS_TOOL";

/// "<pid>.<start>.": what every mark handed out by that jp-actors process starts with.
std::string owner_mark(pid_t owner, uint64_t owner_start);

/// A new mark for a tool this process starts ("<pid>.<start>.<n>").
std::string next_tool_mark();

/// What a tool given `mark` gets in its environment: the mark, then the marks this
/// process was started with when it runs as a tool of another jp-actors
/// ("<mark>,<its tool's mark>,...", at most 8). The other's abort of that tool then
/// finds our tools too: its grace may end before ours does, and kill us first.
std::string tool_mark_value(const std::string& mark);

/// Whether the mark variable's value `value` names `mark`: one of its marks is
/// `mark`, or, when `mark` ends in '.', starts with it (every tool of one owner).
/// With `inherited` false its own mark alone (the first): a TERM goes to a nested
/// jp-actors' tools from it, not from us too (a second TERM cuts their grace short);
/// a KILL at our grace's end reaches them by the marks they inherited.
bool mark_names(std::string_view value, std::string_view mark, bool inherited = true);

/// The value of the mark variable in `pid`'s environment as it was exec'd
/// (/proc/<pid>/environ); "" when it has none or we may not read it.
std::string mark_of(pid_t pid);

/// Processes other than us whose environment holds a mark equal to `mark`, or, when
/// `mark` ends in '.', one that starts with it (every tool of one owner).
std::vector<ProcStat> marked_processes(std::string_view mark);

struct MarkedProcess {
  ProcStat stat;
  std::string mark; // "" when it has none (or we may not read its environment)
  // Whether it descends from this process. Every descendant of our tools does,
  // orphans too (we are a child subreaper); a mark copied elsewhere (a tool setting
  // it in a service manager's or a terminal multiplexer's environment) does not
  // make a process ours to signal.
  bool ours = false;
};

/// Every live process but us, with its mark: one pass over /proc that serves many
/// look-ups. Reading environments is what costs: a process that is one of
/// `known_tools` (the pids of live tools, sorted) still leading its own group, or
/// in a session one of them leads, is listed without its mark (a tool's mark is its
/// own: nothing to learn).
std::vector<MarkedProcess> processes_with_marks(const std::vector<pid_t>& known_tools = {});

/// jp-actors is ending: sends `sig` to every process of its own marked by one of its
/// tools and to every child of its own (a tool, or an orphan of one reparented to
/// us, the subreaper). Returns how many it signalled (`sig` 0: how many live). Not
/// signal-safe (reads /proc).
/// `live_leaders` (sorted): tools leading their own group still, whose group's
/// signal reached its members (kill_all_process_groups and the like): they are not
/// sent `sig` again but for SIGKILL (a second TERM is a second signal).
std::size_t signal_escaped_processes(int sig, const std::vector<pid_t>& live_leaders = {});

/// SIGKILL as signal_escaped_processes, again until it finds nothing left (bounded):
/// a killed process's children are handed to us, and ours to kill too.
void kill_escaped_processes();

/// Whether a tool was started since kill_escaped_processes last swept (or ever):
/// something of it may have left its group, and lives on past its exit.
bool tools_started_since_sweep();

} // namespace jp
