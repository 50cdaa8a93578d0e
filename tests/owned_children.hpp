// Children a test starts, killed if the test runner aborts. CAF_REQUIRE and
// CAF_FAIL end a failing test with abort(), so no destructor runs: without this
// the processes of a failed test were left running (a node, a CLI and its tools).
#pragma once

#include <sys/types.h>

namespace jp::testing {

/// `target` (a pid, or -pgid for a whole group) gets `sig` if the runner aborts:
/// SIGKILL for a plain process or group, SIGTERM for a jp-actors CLI, which then
/// ends its own tools.
void own_child(pid_t target, int sig);

/// `pid` (or its group) reaped or killed by the test itself: the abort has
/// nothing to do for it.
void disown_child(pid_t pid);

/// waitpid(pid, status, 0) for an owned child, disowned first.
pid_t reap_child(pid_t pid, int* status = nullptr);

/// Installs the abort handler (test_main.cpp): every owned child gets its signal,
/// and every process group this runner's own runtime started is killed.
void kill_children_at_abort();

} // namespace jp::testing
