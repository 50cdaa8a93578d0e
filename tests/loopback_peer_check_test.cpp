// Whose the other end of a loopback connection is, as the kernel tells it: asked for
// that one socket (sock_diag), or read from its TCP tables. The refusal of another
// user's connection is node_test's and mcp_server_test's (it needs a second user).
#define CAF_SUITE loopback_peer_check
#include <caf/test/unit_test.hpp>

#include <arpa/inet.h>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>
#include <utility>

#include "runtime/node/loopback_peer_check.hpp"
#include "runtime/node/sock_diag.hpp"

using namespace jp;

namespace {

/// A listener on 127.0.0.1, a client of `family` connected to it (a v6 one through
/// ::ffff:127.0.0.1), and the listener's end of that connection; closed at the end.
struct LoopbackConnection {
  int listener = -1, client = -1, accepted = -1;
  sockaddr_storage accepted_own{}, accepted_peer{};

  explicit LoopbackConnection(int family) {
    listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in at{};
    at.sin_family = AF_INET;
    at.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof at;
    CAF_REQUIRE(::bind(listener, reinterpret_cast<sockaddr*>(&at), sizeof at) == 0);
    CAF_REQUIRE(::listen(listener, 4) == 0);
    CAF_REQUIRE(::getsockname(listener, reinterpret_cast<sockaddr*>(&at), &len) == 0);
    client = ::socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (client < 0)
      return;
    if (family == AF_INET) {
      CAF_REQUIRE(::connect(client, reinterpret_cast<sockaddr*>(&at), sizeof at) == 0);
    } else {
      sockaddr_in6 mapped{};
      mapped.sin6_family = AF_INET6;
      mapped.sin6_port = at.sin_port;
      CAF_REQUIRE(::inet_pton(AF_INET6, "::ffff:127.0.0.1", &mapped.sin6_addr) == 1);
      CAF_REQUIRE(::connect(client, reinterpret_cast<sockaddr*>(&mapped), sizeof mapped) == 0);
    }
    accepted = ::accept(listener, nullptr, nullptr);
    CAF_REQUIRE(accepted >= 0);
    socklen_t ol = sizeof accepted_own, pl = sizeof accepted_peer;
    CAF_REQUIRE(::getsockname(accepted, reinterpret_cast<sockaddr*>(&accepted_own), &ol) == 0);
    CAF_REQUIRE(::getpeername(accepted, reinterpret_cast<sockaddr*>(&accepted_peer), &pl) == 0);
  }

  ~LoopbackConnection() {
    for (int fd : {listener, client, accepted})
      if (fd >= 0)
        ::close(fd);
  }

  /// What the kernel says of the client's socket: its local end is the accepted
  /// one's peer, its remote end the accepted one's own address.
  PeerAnswer asked() const {
    return peer_uid_by_sock_diag(accepted_peer, accepted_own);
  }
};

} // namespace

CAF_TEST(the other end of a loopback connection is this user s while it lives and nobody s once closed) {
  LoopbackConnection c(AF_INET);
  auto answer = c.asked();
  if (answer.answered) {
    CAF_REQUIRE(answer.uid);
    CAF_CHECK_EQUAL(*answer.uid, ::getuid());
  } else {
    CAF_MESSAGE("this kernel cannot be asked by sock_diag: the TCP tables are read");
  }
  auto uid = loopback_peer_uid(c.accepted);
  CAF_REQUIRE(uid);
  CAF_CHECK_EQUAL(*uid, ::getuid());
  // Closed: no live socket is there any more (a closed one's uid would read 0, root's).
  ::close(std::exchange(c.client, -1));
  answer = c.asked();
  if (answer.answered)
    CAF_CHECK(!answer.uid);
  CAF_CHECK(!loopback_peer_uid(c.accepted));
}

CAF_TEST(a v6 socket connected to the v4 loopback address is found as this user s) {
  // As Java's sockets connect by default; a kernel without IPv6 has no such socket.
  LoopbackConnection c(AF_INET6);
  if (c.client < 0) {
    CAF_MESSAGE("no IPv6 sockets on this kernel (" << std::strerror(errno) << "): nothing to test");
    return;
  }
  auto answer = c.asked();
  if (answer.answered) {
    CAF_REQUIRE(answer.uid);
    CAF_CHECK_EQUAL(*answer.uid, ::getuid());
  }
  auto uid = loopback_peer_uid(c.accepted);
  CAF_REQUIRE(uid);
  CAF_CHECK_EQUAL(*uid, ::getuid());
}

CAF_TEST(a socket that is not there has no owner) {
  // Ends of no connection: the kernel has no such socket and says so, or cannot be
  // asked; either way no uid comes back.
  sockaddr_storage local{}, remote{};
  auto& l = reinterpret_cast<sockaddr_in&>(local);
  auto& r = reinterpret_cast<sockaddr_in&>(remote);
  l.sin_family = r.sin_family = AF_INET;
  l.sin_addr.s_addr = r.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  l.sin_port = htons(1);
  r.sin_port = htons(2);
  CAF_CHECK(!peer_uid_by_sock_diag(local, remote).uid);
}

CAF_TEST(a listener on the other end s port is not the other end) {
  // A lookup of a connection that is not there falls back to a listener on its
  // port: that socket is nobody's connection, whoever listens.
  LoopbackConnection c(AF_INET);
  sockaddr_storage listening{}, nowhere{};
  socklen_t len = sizeof listening;
  CAF_REQUIRE(::getsockname(c.listener, reinterpret_cast<sockaddr*>(&listening), &len) == 0);
  nowhere = listening;
  reinterpret_cast<sockaddr_in&>(nowhere).sin_port = htons(1);
  auto answer = peer_uid_by_sock_diag(listening, nowhere);
  if (!answer.answered)
    CAF_MESSAGE("this kernel cannot be asked by sock_diag: nothing to test");
  CAF_CHECK(!answer.uid);
}

CAF_TEST(a connection reset before it is looked at is refused as closed) {
  LoopbackConnection c(AF_INET);
  linger reset{1, 0}; // its close sends a reset: the accepted end has no peer any more
  CAF_REQUIRE(::setsockopt(c.client, SOL_SOCKET, SO_LINGER, &reset, sizeof reset) == 0);
  ::close(std::exchange(c.client, -1));
  auto why = other_users_connection(c.accepted, "the test");
  CAF_CHECK(why.find("closed already") != std::string::npos);
}

CAF_TEST(a connection checked when no file descriptor is left is refused) {
  // Whoever used up the process's file descriptors must not get in for it: nothing
  // can be asked or read then.
  LoopbackConnection c(AF_INET);
  CAF_REQUIRE(loopback_peer_uid(c.accepted)); // asked once while it can: sock_diag's try is made
  rlimit before{};
  CAF_REQUIRE(::getrlimit(RLIMIT_NOFILE, &before) == 0);
  int lowest_free = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  CAF_REQUIRE(lowest_free >= 0);
  ::close(lowest_free);
  rlimit none = before;
  none.rlim_cur = static_cast<rlim_t>(lowest_free); // every fd below it is open
  CAF_REQUIRE(::setrlimit(RLIMIT_NOFILE, &none) == 0);
  auto why = other_users_connection(c.accepted, "the test");
  CAF_REQUIRE(::setrlimit(RLIMIT_NOFILE, &before) == 0);
  CAF_CHECK(!why.empty());
}
