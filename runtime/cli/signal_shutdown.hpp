// SIGTERM/SIGINT/SIGHUP to jp-actors: its tools get what an abort gives them --
// SIGTERM, the grace period (runtime.abort_grace_secs), then SIGKILL -- and then
// jp-actors dies of the signal. A second signal cuts the grace short. The handler only
// writes to a pipe (async-signal-safe); a thread of its own does the rest.
#pragma once

namespace jp {

/// Installs the handlers (once; a later call only updates the grace).
void install_signal_shutdown(double grace_secs);

/// Called where jp-actors would exit normally: while a signal's shutdown is under
/// way, waits for it to end the process (bounded by the grace), so the exit status
/// is the signal's.
void await_signal_shutdown();

} // namespace jp
