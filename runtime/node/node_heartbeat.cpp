#include "runtime/node/node_heartbeat.hpp"

#include <fmt/format.h>

namespace jp {

namespace {

/// Whether a side beating every `heartbeat` s is heard by one losing it after `timeout` s.
bool heard_in_time(double heartbeat, double timeout) {
  return timeout <= 0 || (heartbeat > 0 && heartbeat < timeout);
}

std::string sends(double heartbeat) {
  return heartbeat > 0 ? fmt::format("sends heartbeats every {:g} s", heartbeat) : std::string("sends no heartbeats");
}

} // namespace

std::string heartbeat_mismatch(const NodeHeartbeat& node, const NodeHeartbeat& client) {
  if (!heard_in_time(node.heartbeat_secs, client.timeout_secs))
    return fmt::format("the node {} ([node] heartbeat_secs in the node's config), not within the "
                       "client's [node] timeout_secs = {:g}: the client would lose the node whenever it is quiet; "
                       "raise the client's timeout_secs above the node's heartbeat_secs, or lower that",
                       sends(node.heartbeat_secs), client.timeout_secs);
  if (!heard_in_time(client.heartbeat_secs, node.timeout_secs))
    return fmt::format("the client {} ([node] heartbeat_secs in the client's config; an embedder's own actor "
                       "system: its middleman.heartbeat-interval), not within "
                       "the node's [node] timeout_secs = {:g}: the node would lose the client (and end its handles) "
                       "whenever it is quiet; lower the client's heartbeat_secs below the node's timeout_secs, or "
                       "raise that",
                       sends(client.heartbeat_secs), node.timeout_secs);
  return {};
}

} // namespace jp
