// Who holds a loopback port a client is about to show the node token to. The token
// runs any tool as this user; a plain node is found only by its port, and a port
// is anyone's to take while the node is down (or to relay). So the token goes only
// to a listener of this user's, or root's (who can read the token file anyway).
#pragma once

#include <cstdint>
#include <optional>
#include <sys/types.h>
#include <vector>

#include "../../messages/result.hpp"

namespace jp {

/// The uids of the TCP sockets (IPv4 and IPv6) listening on `port` in this network
/// namespace; nullopt when /proc/net cannot be read or lists nothing.
std::optional<std::vector<uid_t>> port_listeners(uint16_t port);

/// Whether the node token may go to what listens on `port` (the connection to it
/// made): every listener there is this user's or root's, and one is. Where /proc/net
/// cannot be read, nothing can be told and it may.
Status token_may_go_to(uint16_t port);

} // namespace jp
