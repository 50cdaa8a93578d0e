// A node's gate (DESIGN.md "Nodes"): the one actor `jp-actors node` publishes. It
// hands a session (actors/node_session.hpp) to a client that shows the node token,
// and nothing to anyone else. With mutual TLS the handshake authenticates the client
// and no token is asked for (`token` empty).
//   (open_atom, token, client, heartbeat_secs, timeout_secs) -> (caf::actor, key)
//        the client's session, its key; refused when the client's heartbeat and
//        timeout and the node's would lose each other when quiet
//   (list_atom, token) -> vector<HandleSummary>  what runs here, for `nodes ls`
#pragma once

#include <memory>
#include <string>

#include "interfaces.hpp"
#include "../config/config.hpp"

namespace jp {

class IoThread;
class NodeStopping;

/// `stopping`: the node's shutdown, which its sessions tell their clients of.
node_gate_actor spawn_node_gate(caf::actor_system& sys, std::shared_ptr<const Config> config, IoThread& io,
                                std::shared_ptr<NodeStopping> stopping, std::string token);

} // namespace jp
