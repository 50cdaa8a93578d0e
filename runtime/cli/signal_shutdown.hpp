// SIGTERM/SIGINT/SIGHUP to jp-actors: its tools get what an abort gives them --
// SIGTERM, the grace period (runtime.abort_grace_secs), then SIGKILL -- and then
// jp-actors dies of the signal. A second signal cuts the grace short. The handler only
// writes to a pipe (async-signal-safe); a thread of its own does the rest.
#pragma once

#include <functional>

namespace jp {

/// Installs the handlers (once; a later call only updates the grace).
void install_signal_shutdown(double grace_secs);

/// On std::terminate (a crash: an exception nothing caught), before the abort: every
/// tool's group killed, and what left its group (setsid, a double fork), and only
/// then the crash record closed, so that nothing is left that no sweep would find.
/// Chains to the handler before it (an IoThread's). Once.
void install_crash_cleanup();

/// The signal whose shutdown is under way (0: none): what ended a call's tool, to
/// say so rather than only the SIGTERM the tool got.
int shutdown_signal();

/// Called where jp-actors would exit normally: while a signal's shutdown is under
/// way, waits for it to end the process (bounded by the grace), so the exit status
/// is the signal's.
void await_signal_shutdown();

/// While it lives, a signal's shutdown first has the program stop its own work
/// with `stop` (a script's turns end: none of their later steps is attempted),
/// before the tools get their TERM, and then waits, within the grace, for the
/// program to reach await_signal_shutdown(), so that what it writes as it stops is
/// written. `stop` runs on the shutdown's thread, at most once, and must not block;
/// a shutdown under way already runs it at once. One at a time.
/// `waited_for` false: the shutdown runs `stop` and goes on, not waiting for the
/// program (`mcp`, whose stdin loop does not end on a signal, stops only the MCP
/// server starts under way, so that their TERM is not taken for their failure).
class StopOnSignal {
public:
  explicit StopOnSignal(std::function<void()> stop, bool waited_for = true);
  ~StopOnSignal();
  StopOnSignal(const StopOnSignal&) = delete;
  StopOnSignal& operator=(const StopOnSignal&) = delete;
};

} // namespace jp
