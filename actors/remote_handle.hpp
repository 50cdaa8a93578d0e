// A remote handle (DESIGN.md "Actor topology", handle "far"): the proxy, in the
// client's registry, for a handle on a node. It reaches the node's gate through CAF's
// middleman, opens a session with the node token, spawns the tool there by name with
// the call's arguments, and forwards fetch, apply and abort. The node's registry tells
// it when the handle stops or asks, so await, notifications and turn-end policies work
// as for a local handle. Its reports name the node ("node") and spill files as
// NAME:path.
// When the node is lost (its process died, or the connection went silent past the
// heartbeat timeout) the handle stops with an error saying so, transient. When this
// proxy goes, the node's session ends the handle there by its turn-end policy.
#pragma once

#include "actors/registry_actor.hpp"
#include "config/config.hpp"

namespace jp {

/// Handles of a tool whose config says node = `node.name`.
HandleFactory remote_handle_factory(NodeConfig node);

} // namespace jp
