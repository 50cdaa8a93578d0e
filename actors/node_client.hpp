// A turn's way to one configured node (DESIGN.md "Nodes"): the connection through
// CAF's middleman (or its openssl module), the node token, and one session at the
// node's gate, shared by every remote handle of the turn on that node. It connects
// on first use; a node that is lost drops the session, and the next use connects
// again. The node's session watches this actor: when it goes (with its owner, the
// turn's registry, or with this process), the node ends the session's handles by
// their turn-end policy.
//   (open_atom) -> caf::actor   the node session (node_session_actor), or an error:
//        node_unreachable when the node could not be reached (worth trying again),
//        bad_arguments when it refused (token, TLS) or the config cannot work
#pragma once

#include "interfaces.hpp"
#include "../config/config.hpp"

namespace jp {

/// A node client that quits when `owner` does.
node_client_actor spawn_node_client(caf::local_actor* owner, NodeConfig node);

} // namespace jp
