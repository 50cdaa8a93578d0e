// Who owns a TCP socket of this machine, asked of the kernel for that one socket
// (netlink sock_diag, an exact lookup of its addresses) rather than read from its
// whole TCP tables: one lookup however many connections the machine has. The
// loopback peer check (loopback_peer_check.hpp) asks it first.
#pragma once

#include <optional>
#include <sys/socket.h>
#include <sys/types.h>

namespace jp {

/// What the kernel says of the TCP socket whose local end is `local` and remote end
/// `remote`: its owner's uid, none when there is no live, connected socket there.
/// `answered` is false where the kernel cannot be asked (no netlink sock_diag or no
/// TCP module for it, as tried on a connection of this process's own).
struct PeerAnswer {
  bool answered = false;
  std::optional<uid_t> uid;
};
PeerAnswer peer_uid_by_sock_diag(const sockaddr_storage& local, const sockaddr_storage& remote);

/// Whether a TCP state (the kernel's numbering) is one of a connected socket's, as
/// the other end of a connection just accepted is: not a listener (a lookup falls
/// back to one on the same port), nor a socket still connecting (SYN_SENT: another
/// socket on the same addresses, which the connection's packets did not reach).
bool connected_tcp_state(unsigned state);

} // namespace jp
