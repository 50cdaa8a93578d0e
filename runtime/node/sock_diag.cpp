#include "runtime/node/sock_diag.hpp"

#include <arpa/inet.h>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <unistd.h>

namespace jp {

namespace {

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

/// Whether the kernel answers sock_diag for TCP here, tried on a connection of our
/// own: where it cannot (no netlink, or no module for TCP, which also answers "no
/// such socket", and which each request would have the kernel try to load), the TCP
/// tables are read instead. Its answer is kept once there is one: a try that could
/// not make its connection (no file descriptor left, say) is made again next time.
bool sock_diag_usable() {
  static std::atomic<int> usable{-1}; // -1: not known yet
  if (int known = usable.load(std::memory_order_relaxed); known >= 0)
    return known == 1;
  int listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int client = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_storage at{}, from{};
  auto& in = reinterpret_cast<sockaddr_in&>(at);
  in.sin_family = AF_INET;
  in.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t al = sizeof in, fl = sizeof from;
  bool connected = listener >= 0 && client >= 0 &&
                   ::bind(listener, reinterpret_cast<sockaddr*>(&at), sizeof in) == 0 && ::listen(listener, 1) == 0 &&
                   ::getsockname(listener, reinterpret_cast<sockaddr*>(&at), &al) == 0 &&
                   ::connect(client, reinterpret_cast<sockaddr*>(&at), sizeof in) == 0 &&
                   ::getsockname(client, reinterpret_cast<sockaddr*>(&from), &fl) == 0;
  bool answers = false;
  if (connected) {
    auto req = diag_request(from, at);
    auto reply = req ? ask_sock_diag(*req) : DiagReply{};
    answers = reply.error == 0 && reply.inode != 0 && reply.uid == ::geteuid();
  }
  for (int fd : {listener, client})
    if (fd >= 0)
      ::close(fd);
  if (connected)
    usable.store(answers ? 1 : 0, std::memory_order_relaxed);
  return answers;
}

} // namespace

bool connected_tcp_state(unsigned state) {
  return state == TCP_ESTABLISHED || state == TCP_FIN_WAIT1 || state == TCP_FIN_WAIT2 || state == TCP_CLOSING;
}

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
  if (reply.inode == 0 || !connected_tcp_state(reply.state))
    return {true, std::nullopt};
  return {true, reply.uid};
}

} // namespace jp
