// One client's session on a node (DESIGN.md "Nodes"): the handles a client's remote
// handle spawned here, in a registry of the session's own. The client sends a tool
// name and its arguments, never argv: the node runs its own configuration's tool of
// that name, under its own permissions (a tool that would ask is refused, naming the
// node's config key), in its own workspace.
//   (spawn_atom, key, id, tool, args_json, answers_json, watcher) -> HandleReport
//        answers_json: the client's answers to its questions ("" none), given for
//        those this node's config does not answer; watcher hears of each change
//        (update_atom, HandleStatus), as an await does
//   (fetch_atom, key, id, LookOptions) / (apply_atom, key, id, input, LookOptions) /
//   (abort_atom, key, id) -> HandleReport
//        a handle's first fetch is its spawn's look (wait_ms), allowed with the spawn
//   (list_atom, key) -> vector<HandleSummary>   its handles still running
// `key` is the session's (the gate hands it to the client that showed the token or
// certificate): CAF delivers a message from any connected peer to any actor of ours
// whose handle ever crossed the wire, by its id, so the session refuses a message
// without it. Its registry (which starts whatever argv it is given) is never seen by
// a peer: the session answers for it and passes its watch updates on.
// When the client goes (its process died, the connection was lost, or it let go of
// the handle), every handle of the session gets its turn-end policy (abort unless the
// tool says otherwise) and the session ends: nothing is left running here.
// While the node stops, a handle's failure is told as the node's (node_stopping.hpp).
#pragma once

#include <memory>

#include "interfaces.hpp"
#include "registry_actor.hpp"
#include "../config/config.hpp"

namespace jp {

class IoThread;
class NodeStopping;

node_session_actor spawn_node_session(caf::actor_system& sys, std::shared_ptr<const Config> config, IoThread& io,
                                      std::shared_ptr<NodeStopping> stopping, caf::actor client, std::string key);

/// The same with handles from `handles` (the tests' scripted ones) instead of
/// processes on an io thread.
node_session_actor spawn_node_session(caf::actor_system& sys, std::shared_ptr<const Config> config,
                                      HandleFactory handles, std::shared_ptr<NodeStopping> stopping,
                                      caf::actor client, std::string key);

} // namespace jp
