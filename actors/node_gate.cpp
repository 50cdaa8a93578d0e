#include "actors/node_gate.hpp"

#include <caf/all.hpp>

#include "actors/node_session.hpp"
#include "messages/atoms.hpp"
#include "messages/error_category.hpp"
#include "runtime/node/node_token.hpp"

namespace jp {

node_gate_actor spawn_node_gate(caf::actor_system& sys, std::shared_ptr<const Config> config, IoThread& io,
                                std::string token) {
  return sys.spawn([config, io = &io, token](node_gate_actor::pointer self) -> node_gate_actor::behavior_type {
    return {
      [self, config, io, token](open_atom, const std::string& shown, caf::actor client) -> caf::result<caf::actor> {
        if (!token.empty() && !same_token(shown, token))
          return make_error(error_code::bad_arguments,
                            "the node refused the session: the token does not match the node's (a client on the "
                            "node's machine, as the node's user, reads it from the node-token file in "
                            "$XDG_STATE_HOME/jp-actors)");
        if (!client)
          return make_error(error_code::bad_arguments, "the node refused the session: no client to watch");
        return caf::actor_cast<caf::actor>(spawn_node_session(self->system(), config, *io, std::move(client)));
      },
    };
  });
}

} // namespace jp
