// W1 in layers: what each layer of jp-actors adds to a one-shot `/bin/true`, measured
// in one run on one machine (bench/README.md, "W1 in layers"). Round by round, each
// layer after the other, every call's time from its spawn to its exit handled:
//   floor     jp-floor W1 (posix_spawn and an epoll loop on one thread; its own
//             group, and `session_mean_us` with its own session);
//   launcher  our vfork launcher (launch_child) in the same kind of loop, its child
//             in its own group and in its own session: our child's start, against
//             glibc's;
//   process   the process layer: spawn_process on an io thread, each exit starting
//             the next child on that thread (as W1's actors do there): Asio, the
//             pipes' and the pidfd's watch, the crash record, the group's reaping;
//   runtime   W1 itself (`jp-bench worker W1`): the call through the actors.
// The floor and the runtime run as processes of their own (as `run` runs them).
#pragma once

#include <string>

namespace jp::bench {

/// Prints the layers' medians and minimums over `rounds` rounds of `n` calls each,
/// and what each adds to the one below; `self` is this jp-bench (for the runtime's
/// worker). Returns the exit status.
int spawn_layers(const std::string& self, const std::string& floor_path, long n, int rounds);

} // namespace jp::bench
