// A remote handle (DESIGN.md "Actor topology", handle "far"): the proxy, in the
// client's registry, for a handle on a node. It spawns the tool by name with the
// call's arguments in the node session of its turn's node client (actors/node_client),
// and forwards fetch, apply and abort. The node's registry tells
// it when the handle stops or asks, so await, notifications and turn-end policies work
// as for a local handle. Its reports name the node ("node") and spill files as
// NAME:path.
// When the node is lost (its process died, or the connection went silent past the
// heartbeat timeout) the handle stops with an error saying so, transient. When this
// proxy goes while its handle runs, the node aborts the handle there; when the node
// client goes, the node ends every handle of the session by its turn-end policy.
#pragma once

#include "registry_actor.hpp"
#include "../config/config.hpp"

namespace jp {

/// Handles of the tools whose config says node = `node.name`: every handle made by
/// this factory (and its copies) shares one node client, started with the first.
HandleFactory remote_handle_factory(NodeConfig node);

/// One remote handle, its session opened through `client` (the factory's, or a
/// test's).
handle_actor spawn_remote_handle(caf::local_actor* parent, const std::string& id, const LaunchSpec& spec,
                                 const NodeConfig& node, const node_client_actor& client,
                                 const supervisor_actor& supervisor);

} // namespace jp
