// `jp-actors handles ls` / `handles abort ID`: the handles that running `query` and
// `run` processes hold, seen and aborted from another terminal through their
// control sockets (runtime/control_socket.hpp).
#pragma once

#include <cstdint>
#include <string>

#include "config/config.hpp"

namespace jp {

/// Lists the live handles of this workspace's running jp-actors (every
/// workspace's with `all`); `json`: one JSON array.
int list_live_handles(const Config& config, bool all, bool json);

/// Aborts handle `id` of this workspace's running jp-actors (of process `pid`
/// when several hold that id; 0 = whichever holds it; of `agent` when several agents
/// of one do, "" = whichever) and prints how it ended.
int abort_live_handle(const Config& config, const std::string& id, int64_t pid, const std::string& agent = {});

} // namespace jp
