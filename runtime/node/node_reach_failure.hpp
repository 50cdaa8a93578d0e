// What a client says when its connection to a node fails. A node that closes the
// connection during the handshake refused us (TLS certificates or CAs that do not
// match, or TLS on one side only): CAF calls that disconnect_during_handshake, which
// read like a network blip and was offered as worth retrying. It is a
// configuration error, said as one, and not transient.
#pragma once

#include <caf/fwd.hpp>
#include <string>

namespace jp {

struct NodeConfig;

struct ReachFailure {
  std::string why; // "cannot be reached: ..." or "closed the connection during the handshake: ..."
  bool transient;  // worth trying again as it is
};

ReachFailure reach_failure(const NodeConfig& node, const caf::error& err);

} // namespace jp
