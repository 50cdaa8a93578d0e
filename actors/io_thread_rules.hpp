// When what the io thread sends (a tool's output, its exit) may run on the io
// thread itself (io_thread_run, io_thread_run_output), kept apart from
// io_thread_send.hpp so that the benchmark sets the rules without CAF's headers.
#pragma once

namespace jp {

/// A live tool's output, besides that tool being the only one live: with the first
/// worker asleep and idle (session 35's rule), with every worker so (the default
/// since the quiet machine's pairs of 2026-12-04: W5's polled p99 halved, nothing
/// worse), or never (a worker runs it, as before session 35). Process-wide; the
/// benchmark compares them (`jp-bench run --output-on-io`, bench/README.md).
enum class output_on_io { first_idle, all_idle, never };
inline constexpr output_on_io default_output_on_io = output_on_io::all_idle;
void use_output_on_io(output_on_io rule);

/// With other tools' processes live: what the io thread sends runs on the io thread
/// as it would with none live when every worker is asleep and idle (the default
/// since 2026-12-04: W3's stop wakes no worker, its p50 a fifth shorter on the
/// 2-core VM), or goes to a worker, the io thread kept free for their events (as
/// before). Process-wide; the benchmark compares them (`jp-bench run
/// --others-live-on-io`, bench/README.md).
enum class others_live_on_io { worker, all_idle };
inline constexpr others_live_on_io default_others_live_on_io = others_live_on_io::all_idle;
void use_others_live_on_io(others_live_on_io rule);

} // namespace jp
