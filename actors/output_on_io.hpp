// When a tool's output may run on the io thread (io_thread_run_output), kept apart
// from io_thread_send.hpp so that the benchmark sets it without CAF's headers.
#pragma once

namespace jp {

/// Besides that tool being the only one live: with the first worker asleep and
/// idle (session 35's rule), with every worker so (the default since the quiet
/// machine's pairs of 2026-12-04: W5's polled p99 halved, nothing worse), or never
/// (a worker runs it, as before session 35). Process-wide; the benchmark compares
/// them (`jp-bench run --output-on-io`, bench/README.md).
enum class output_on_io { first_idle, all_idle, never };
inline constexpr output_on_io default_output_on_io = output_on_io::all_idle;
void use_output_on_io(output_on_io rule);

} // namespace jp
