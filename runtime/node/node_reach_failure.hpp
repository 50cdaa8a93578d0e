// What a client says when its connection to a node fails. A node that closes the
// connection during the handshake refused us (TLS certificates or CAs that do not
// match, or TLS on one side only): CAF calls that disconnect_during_handshake, which
// read like a network blip and was offered as worth retrying. It is a
// configuration error, said as one, and not transient. So is a TLS connection the
// node did not take up in TLS. A connection nothing accepted is said so (CAF says
// "ip_connect failed", or "no such host" for an IPv6 address), with what to check.
#pragma once

#include <caf/fwd.hpp>
#include <cstdint>
#include <string>

namespace jp {

struct NodeConfig;

struct ReachFailure {
  std::string how; // "cannot be reached", "closed the connection during the handshake", ...
  std::string why; // what went wrong and what to check
  bool transient;  // worth trying again as it is
  std::string text() const { return how + ": " + why; }
};

/// Why connecting to `node` at `host`:`port` failed with `err` (the middleman's answer).
ReachFailure reach_failure(const NodeConfig& node, const caf::error& err, const std::string& host, uint16_t port);

} // namespace jp
