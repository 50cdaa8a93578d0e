// A node on loopback lets in whoever connects before any token is shown, and CAF
// delivers its own messages (an exit that kills the gate or a session) from any
// connected peer. Another user of the machine must not get that far: a connection
// from loopback is closed at its accept unless its other end is this user's (or
// root's, who can read the token anyway). Off loopback, mutual TLS decides.
// `jp-actors mcp --listen` closes such connections too (other_users_connection).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <sys/types.h>

#include "../../messages/result.hpp"

namespace jp {

/// From now on, this process closes each TCP connection it accepts from loopback
/// whose other end is another user's (said on stderr, the first ones). Fails when
/// this program is linked so that the C library's accept is called instead of the
/// check (fully static).
Status admit_only_this_users_loopback_peers();

/// Why connection `fd` is closed at once, "" when it may stay: it was not accepted
/// on loopback, its other end is this user's or root's, or nothing can be told (no
/// TCP tables to read). `server` names who refuses ("a node") in the reason.
std::string other_users_connection(int fd, std::string_view server);

/// The uid owning the other end of connection `fd`, accepted on a loopback address:
/// asked of the kernel for that socket (sock_diag.hpp), or else found in its
/// TCP tables (a live socket's row: a closed one's shows uid 0); none when `fd` was
/// not accepted on loopback or there is no live socket there. `tables`: whether the
/// kernel could tell (none: nothing can be told).
std::optional<uid_t> loopback_peer_uid(int fd, bool* tables = nullptr);

} // namespace jp
