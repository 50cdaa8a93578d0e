// Whether a node and a client can keep a connection (DESIGN.md "Nodes"): each side
// loses the other after [node] timeout_secs of silence, and a quiet connection (a
// remote handle that runs long and says nothing) carries only heartbeats, sent
// every [node] heartbeat_secs of the sender's own config. A config checks its own
// pair; the gate checks the pairs across, at the session's open, since each side's
// is another machine's config: a mismatch lost the node at every quiet moment and
// was told as transient.
#pragma once

#include <string>

namespace jp {

/// One side's [node] heartbeat_secs and timeout_secs (<= 0: none sent / never lost).
struct NodeHeartbeat {
  double heartbeat_secs = 0;
  double timeout_secs = 0;
};

/// Why a node (`node`) and a client (`client`) would lose each other when quiet,
/// naming what to change on which side; "" when both hear each other in time.
std::string heartbeat_mismatch(const NodeHeartbeat& node, const NodeHeartbeat& client);

} // namespace jp
