#include "runtime/node/node_reach_failure.hpp"

#include <caf/atom.hpp>
#include <caf/error.hpp>
#include <caf/sec.hpp>
#include <fmt/format.h>

#include "config/config.hpp"
#include "messages/error_category.hpp"

namespace jp {

ReachFailure reach_failure(const NodeConfig& node, const caf::error& err) {
  if (err.category() != caf::atom("system") || err.code() != static_cast<uint8_t>(caf::sec::disconnect_during_handshake))
    return {fmt::format("cannot be reached: {}", error_text(err)), true};
  if (node.tls.enabled())
    return {fmt::format("closed the connection during the handshake: the TLS handshake failed. Likely the "
                        "certificates and CAs do not match (the node's [node.tls] ca must have signed "
                        "[nodes.{0}.tls] certificate, and [nodes.{0}.tls] ca the node's certificate), or the node "
                        "has no TLS; the node's log says why it refused. Trying again will not help until the "
                        "configuration changes",
                        node.name),
            false};
  return {fmt::format("closed the connection during the handshake: likely the node takes TLS ([node.tls]) and "
                      "[nodes.{0}] has no [nodes.{0}.tls]; the node's log says why it refused. Trying again will "
                      "not help until the configuration changes",
                      node.name),
          false};
}

} // namespace jp
