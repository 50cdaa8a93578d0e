#include "runtime/node/loopback_peer_check.hpp"

#include <arpa/inet.h>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <dlfcn.h>
#include <fmt/format.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <net/if.h>
#include <string>
#include <string_view>
#include <sys/socket.h>
#include <unistd.h>
#include <utility>
#include <vector>

#include "runtime/node/node_refusal_log.hpp"

extern "C" int jp_checked_accept(int fd, sockaddr* addr, socklen_t* len);

namespace jp {

namespace {

std::atomic<bool> g_checking{false};
std::atomic<int> g_refused{0};

/// Whether a TCP state (the kernel's numbering) is one of a connected socket's: the
/// other end of a connection just accepted is one. Not a listener (a lookup falls
/// back to one on the same port), nor a socket still connecting (SYN_SENT: another
/// socket on the same addresses, which the connection's packets did not reach).
bool connected_state(unsigned state) {
  return state == TCP_ESTABLISHED || state == TCP_FIN_WAIT1 || state == TCP_FIN_WAIT2 || state == TCP_CLOSING;
}

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
  if (!f)
    return std::nullopt;
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
        inode != 0 && connected_state(state) && local == l && remote == r)
      found = static_cast<uid_t>(uid);
  }
  std::fclose(f);
  return found;
}

/// `sa` as a v4 address and port (network order), when it is one or maps one.
bool as_v4(const sockaddr_storage& sa, uint32_t& addr, uint16_t& port) {
  if (sa.ss_family == AF_INET) {
    auto& in = reinterpret_cast<const sockaddr_in&>(sa);
    addr = in.sin_addr.s_addr;
    port = in.sin_port;
    return true;
  }
  auto& in6 = reinterpret_cast<const sockaddr_in6&>(sa);
  if (sa.ss_family != AF_INET6 || !IN6_IS_ADDR_V4MAPPED(&in6.sin6_addr))
    return false;
  std::memcpy(&addr, &in6.sin6_addr.s6_addr[12], sizeof addr);
  port = in6.sin6_port;
  return true;
}

/// The kernel's one request for the TCP socket whose local end is `local` and remote
/// end `remote` (an exact lookup, not a dump). A v4 request also finds a v6 socket
/// connected to a v4 address: both are in the same table of connections. Looked up
/// as a packet arriving on loopback is, so a socket bound to `lo` is found too.
std::optional<inet_diag_req_v2> diag_request(const sockaddr_storage& local, const sockaddr_storage& remote) {
  static const unsigned loopback_index = ::if_nametoindex("lo");
  inet_diag_req_v2 req{};
  req.sdiag_protocol = IPPROTO_TCP;
  req.idiag_states = ~0u;
  req.id.idiag_if = loopback_index;
  req.id.idiag_cookie[0] = req.id.idiag_cookie[1] = INET_DIAG_NOCOOKIE;
  uint32_t l4 = 0, r4 = 0;
  if (as_v4(local, l4, req.id.idiag_sport) && as_v4(remote, r4, req.id.idiag_dport)) {
    req.sdiag_family = AF_INET;
    req.id.idiag_src[0] = l4;
    req.id.idiag_dst[0] = r4;
    return req;
  }
  if (local.ss_family != AF_INET6 || remote.ss_family != AF_INET6)
    return std::nullopt;
  auto& l6 = reinterpret_cast<const sockaddr_in6&>(local);
  auto& r6 = reinterpret_cast<const sockaddr_in6&>(remote);
  req.sdiag_family = AF_INET6;
  req.id.idiag_sport = l6.sin6_port;
  req.id.idiag_dport = r6.sin6_port;
  std::memcpy(req.id.idiag_src, &l6.sin6_addr, sizeof req.id.idiag_src);
  std::memcpy(req.id.idiag_dst, &r6.sin6_addr, sizeof req.id.idiag_dst);
  return req;
}

/// Whether connection `fd` may stay (other_users_connection): said on stderr when not.
bool admitted(int fd) {
  auto why = other_users_connection(fd, "a node");
  if (why.empty())
    return true;
  tell_refusal(++g_refused, why, "{} connections of other users refused so far");
  return false;
}

/// What the kernel answers to sock_diag request `req`: the socket's state, uid and
/// inode, or the error it gives (-ENOENT: no such socket, or no module to ask).
struct DiagReply {
  int error = -EPROTO;
  unsigned state = 0, inode = 0;
  uid_t uid = 0;
};

DiagReply ask_sock_diag(const inet_diag_req_v2& req) {
  int s = ::socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
  if (s < 0)
    return {};
  struct {
    nlmsghdr header;
    inet_diag_req_v2 body;
  } msg{};
  msg.header.nlmsg_len = sizeof msg;
  msg.header.nlmsg_type = SOCK_DIAG_BY_FAMILY;
  msg.header.nlmsg_flags = NLM_F_REQUEST;
  msg.body = req;
  sockaddr_nl kernel{};
  kernel.nl_family = AF_NETLINK;
  // The kernel answers within the send: nothing to wait for after it.
  alignas(nlmsghdr) char buf[4096];
  ssize_t n = -1;
  if (::sendto(s, &msg, sizeof msg, 0, reinterpret_cast<sockaddr*>(&kernel), sizeof kernel) == sizeof msg)
    n = ::recv(s, buf, sizeof buf, MSG_DONTWAIT);
  ::close(s);
  DiagReply out;
  int left = static_cast<int>(n);
  for (auto* h = reinterpret_cast<nlmsghdr*>(buf); n > 0 && NLMSG_OK(h, left); h = NLMSG_NEXT(h, left)) {
    if (h->nlmsg_type == NLMSG_ERROR && h->nlmsg_len >= NLMSG_LENGTH(sizeof(nlmsgerr))) {
      out.error = static_cast<nlmsgerr*>(NLMSG_DATA(h))->error;
      break;
    }
    if (h->nlmsg_type == SOCK_DIAG_BY_FAMILY && h->nlmsg_len >= NLMSG_LENGTH(sizeof(inet_diag_msg))) {
      auto* m = static_cast<inet_diag_msg*>(NLMSG_DATA(h));
      out = DiagReply{0, m->idiag_state, m->idiag_inode, static_cast<uid_t>(m->idiag_uid)};
      break;
    }
  }
  return out;
}

/// Whether the kernel answers sock_diag for TCP here, tried once on a connection of
/// our own: where it cannot (no netlink, or no module for TCP, which also answers
/// "no such socket", and which each request would have the kernel try to load), the
/// TCP tables are read instead.
bool sock_diag_usable() {
  static const bool usable = [] {
    int listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int client = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_storage at{}, from{};
    auto& in = reinterpret_cast<sockaddr_in&>(at);
    in.sin_family = AF_INET;
    in.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t al = sizeof in, fl = sizeof from;
    bool ok = listener >= 0 && client >= 0 && ::bind(listener, reinterpret_cast<sockaddr*>(&at), sizeof in) == 0 &&
              ::listen(listener, 1) == 0 && ::getsockname(listener, reinterpret_cast<sockaddr*>(&at), &al) == 0 &&
              ::connect(client, reinterpret_cast<sockaddr*>(&at), sizeof in) == 0 &&
              ::getsockname(client, reinterpret_cast<sockaddr*>(&from), &fl) == 0;
    if (ok) {
      auto req = diag_request(from, at);
      auto reply = req ? ask_sock_diag(*req) : DiagReply{};
      ok = reply.error == 0 && reply.inode != 0 && reply.uid == ::geteuid();
    }
    for (int fd : {listener, client})
      if (fd >= 0)
        ::close(fd);
    return ok;
  }();
  return usable;
}

} // namespace

PeerAnswer peer_uid_by_sock_diag(const sockaddr_storage& local, const sockaddr_storage& remote) {
  auto req = diag_request(local, remote);
  if (!req || !sock_diag_usable())
    return {};
  auto reply = ask_sock_diag(*req);
  if (reply.error == -ENOENT)
    return {true, std::nullopt};
  if (reply.error != 0)
    return {};
  // A socket without an inode is one its owner closed (its uid reads 0, as root's
  // would); one not connected is not the connection's other end.
  if (reply.inode == 0 || !connected_state(reply.state))
    return {true, std::nullopt};
  return {true, reply.uid};
}

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
