#include "runtime/node/loopback_peer_check.hpp"

#include <arpa/inet.h>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <dlfcn.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <string>
#include <string_view>
#include <sys/socket.h>
#include <unistd.h>
#include <utility>
#include <vector>

#include "runtime/node/node_refusal_log.hpp"
#include "runtime/node/sock_diag.hpp"

extern "C" int jp_checked_accept(int fd, sockaddr* addr, socklen_t* len);

namespace jp {

namespace {

std::atomic<bool> g_checking{false};
std::atomic<int> g_refused{0};

using accept_fn = int (*)(int, sockaddr*, socklen_t*);

accept_fn real_accept() {
  static const auto real = reinterpret_cast<accept_fn>(::dlsym(RTLD_NEXT, "accept"));
  return real;
}

/// An address as the kernel's TCP tables write it (ADDRESS:PORT in hex, the address
/// as the host reads its 32-bit words), and whether it is loopback. A v4-mapped v6
/// address is written as the v4 one it maps too (the other end may be a v4 socket),
/// and a v4 one as the v6 one that maps it (the other end may be a v6 socket).
struct TableAddress {
  std::string v4, v6;
  bool loopback = false;
};

TableAddress table_address(const sockaddr_storage& sa) {
  TableAddress out;
  if (sa.ss_family == AF_INET) {
    auto& in = reinterpret_cast<const sockaddr_in&>(sa);
    out.v4 = fmt::format("{:08X}:{:04X}", in.sin_addr.s_addr, ntohs(in.sin_port));
    // The same address as a v6 socket's row writes it (::ffff:a.b.c.d): the other end
    // may be a v6 socket that connected to a v4 one (Java's, by default).
    out.v6 = "0000000000000000FFFF0000" + out.v4;
    out.loopback = (ntohl(in.sin_addr.s_addr) >> 24) == 127;
  } else if (sa.ss_family == AF_INET6) {
    auto& in6 = reinterpret_cast<const sockaddr_in6&>(sa);
    uint32_t w[4];
    std::memcpy(w, &in6.sin6_addr, sizeof w);
    out.v6 = fmt::format("{:08X}{:08X}{:08X}{:08X}:{:04X}", w[0], w[1], w[2], w[3], ntohs(in6.sin6_port));
    if (IN6_IS_ADDR_V4MAPPED(&in6.sin6_addr)) {
      out.v4 = fmt::format("{:08X}:{:04X}", w[3], ntohs(in6.sin6_port));
      out.loopback = in6.sin6_addr.s6_addr[12] == 127;
    } else {
      out.loopback = IN6_IS_ADDR_LOOPBACK(&in6.sin6_addr);
    }
  }
  return out;
}

/// The uid of the table's live socket (it has an inode: a closed one's row shows uid
/// 0) whose local address is `local` and remote `remote`; `read_any`: the table had rows.
std::optional<uid_t> uid_in_table(const char* table, const std::string& local, const std::string& remote,
                                  bool& read_any) {
  std::FILE* f = std::fopen(table, "re");
  if (!f) {
    // Out of file descriptors, nothing is read: that must not let in whoever used
    // them up. (No table at all, as without /proc, is nothing to tell.)
    if (errno == EMFILE || errno == ENFILE || errno == ENOMEM)
      read_any = true;
    return std::nullopt;
  }
  char line[512];
  std::optional<uid_t> found;
  for (bool header = true; !found && std::fgets(line, sizeof line, f);) {
    if (std::exchange(header, false))
      continue;
    read_any = true;
    // "sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode"
    char l[72] = {}, r[72] = {};
    unsigned state = 0;
    unsigned long uid = 0, inode = 0;
    if (std::sscanf(line, "%*s %71s %71s %x %*s %*s %*s %lu %*s %lu", l, r, &state, &uid, &inode) == 5 &&
        inode != 0 && connected_tcp_state(state) && local == l && remote == r)
      found = static_cast<uid_t>(uid);
  }
  std::fclose(f);
  return found;
}

/// Whether connection `fd` may stay (other_users_connection): said on stderr when not.
bool admitted(int fd) {
  auto why = other_users_connection(fd, "a node");
  if (why.empty())
    return true;
  tell_refusal(++g_refused, why, "{} connections of other users refused so far");
  return false;
}

} // namespace

std::optional<uid_t> loopback_peer_uid(int fd, bool* tables) {
  sockaddr_storage peer{}, own{};
  socklen_t pl = sizeof peer, ol = sizeof own;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&own), &ol) != 0)
    return std::nullopt;
  // Accepted on loopback: the other end is on this machine, whatever address it
  // bound (a machine's own eth0 address reaches 127.0.0.1 too).
  auto us = table_address(own);
  if (!us.loopback)
    return std::nullopt;
  // Reset already: no live socket is there (what it sent before may still be read).
  if (::getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &pl) != 0) {
    if (tables)
      *tables = true;
    return std::nullopt;
  }
  auto them = table_address(peer);
  // The other end's socket: its local address is our peer, its remote one us. Asked
  // of the kernel for that one socket, where it can answer; else its whole tables are
  // read (a cost that grows with the machine's connections, a flood's included).
  if (auto asked = peer_uid_by_sock_diag(peer, own); asked.answered) {
    if (tables)
      *tables = true;
    return asked.uid;
  }
  // A table read while other connections come and go is no snapshot: the kernel
  // can skip a row between two reads of it. One not found is looked for again.
  bool read_any = false;
  std::optional<uid_t> uid;
  for (int pass = 0; pass < 2 && !uid; ++pass) {
    if (!them.v4.empty() && !us.v4.empty())
      uid = uid_in_table("/proc/net/tcp", them.v4, us.v4, read_any);
    if (!uid && !them.v6.empty() && !us.v6.empty())
      uid = uid_in_table("/proc/net/tcp6", them.v6, us.v6, read_any);
  }
  if (tables)
    *tables = read_any;
  return uid;
}

std::string other_users_connection(int fd, std::string_view server) {
  bool tables = false;
  auto uid = loopback_peer_uid(fd, &tables);
  if (uid ? *uid == ::getuid() || *uid == 0 : !tables)
    return "";
  sockaddr_storage peer{};
  socklen_t pl = sizeof peer;
  char host[INET6_ADDRSTRLEN] = "?";
  if (::getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &pl) == 0) {
    auto* a = peer.ss_family == AF_INET ? static_cast<const void*>(&reinterpret_cast<sockaddr_in&>(peer).sin_addr)
                                        : static_cast<const void*>(&reinterpret_cast<sockaddr_in6&>(peer).sin6_addr);
    ::inet_ntop(peer.ss_family, a, host, sizeof host);
  }
  return uid ? fmt::format("refused a connection from {} (uid {}): {} on loopback serves this user's clients only",
                           host, *uid, server)
             : fmt::format("refused a connection from {}: its other end is no live socket of this machine (closed "
                           "already), so whose it is cannot be told",
                           host);
}

Status admit_only_this_users_loopback_peers() {
  if (::dlsym(RTLD_DEFAULT, "accept") != reinterpret_cast<void*>(&jp_checked_accept) || !real_accept())
    return Status::fail("this program is linked so that the C library's accept is called, not jp-actors' check "
                        "of who connects (fully static?): a node on loopback cannot keep other users out");
  g_checking = true;
  return Status::success();
}

} // namespace jp

// As accept, found before the C library's by every library that calls it (CAF's
// io module among them), as a definition in the executable is.
extern "C" int jp_checked_accept(int fd, sockaddr* addr, socklen_t* len) {
  auto real = jp::real_accept();
  socklen_t given = len ? *len : 0;
  // A flood of refused connections keeps the caller (CAF's network thread) here for
  // at most this many: then "none now", and it comes back for the rest.
  for (int refused = 0; refused < 64; ++refused) {
    int c = real(fd, addr, len);
    if (c < 0 || !jp::g_checking.load(std::memory_order_relaxed) || jp::admitted(c))
      return c;
    ::close(c);
    if (len) // the next one's address, in the room first given
      *len = given;
  }
  errno = EAGAIN;
  return -1;
}

extern "C" int accept(int fd, sockaddr* addr, socklen_t* len) __attribute__((weak, alias("jp_checked_accept")));
