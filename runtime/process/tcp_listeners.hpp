// The listening TCP sockets a /proc net table lists (IPv4 and IPv6): who holds a
// port (node tokens go only to this user's), and whether a process is a server (a
// control tool's input probe).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <sys/types.h>
#include <vector>

namespace jp {

struct TcpListener {
  uint16_t port = 0;
  uid_t uid = 0;
  unsigned long inode = 0;
};

/// The listening sockets of `net_dir`'s tcp and tcp6 tables ("/proc/net" for this
/// network namespace, "/proc/PID/net" for a process's); nullopt when the tables
/// cannot be read or list no socket at all (WSL1, a filtered /proc), which tells
/// nothing.
std::optional<std::vector<TcpListener>> tcp_listeners(const std::string& net_dir);

} // namespace jp
