// When a tool's output may run on the io thread (io_thread_run_output), kept apart
// from io_thread_send.hpp so that the benchmark sets it without CAF's headers.
#pragma once

namespace jp {

/// Besides that tool being the only one live: with the first worker asleep and
/// idle (the default, session 35), with every worker so, or never (a worker runs
/// it, as before session 35). Process-wide; the benchmark compares them
/// (`jp-bench run --output-on-io`, bench/README.md session 55).
enum class output_on_io { first_idle, all_idle, never };
void use_output_on_io(output_on_io rule);

} // namespace jp
