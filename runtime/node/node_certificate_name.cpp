#include "runtime/node/node_certificate_name.hpp"

#include <arpa/inet.h>
#include <dlfcn.h>
#include <fmt/format.h>
#include <map>
#include <mutex>
#include <set>
#include <netdb.h>
#include <netinet/in.h>
#include <openssl/ssl.h>
#include <openssl/x509_vfy.h>
#include <openssl/x509v3.h>
#include <sys/socket.h>

namespace {

std::mutex g_mtx;
std::map<std::string, std::string> g_expected; // "ip port" -> the host dialled
std::set<std::string> g_refused;               // hosts whose certificate did not name them

/// "ip port" of a socket address, as both sides of the map spell it.
std::string address_key(const sockaddr* sa) {
  char ip[INET6_ADDRSTRLEN] = {};
  if (sa->sa_family == AF_INET) {
    auto* in = reinterpret_cast<const sockaddr_in*>(sa);
    ::inet_ntop(AF_INET, &in->sin_addr, ip, sizeof ip);
    return fmt::format("{} {}", ip, ntohs(in->sin_port));
  }
  if (sa->sa_family == AF_INET6) {
    auto* in6 = reinterpret_cast<const sockaddr_in6*>(sa);
    // An IPv4 peer reached over an IPv6 socket: the IPv4 address.
    if (IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr)) {
      ::inet_ntop(AF_INET, &in6->sin6_addr.s6_addr[12], ip, sizeof ip);
      return fmt::format("{} {}", ip, ntohs(in6->sin6_port));
    }
    ::inet_ntop(AF_INET6, &in6->sin6_addr, ip, sizeof ip);
    return fmt::format("{} {}", ip, ntohs(in6->sin6_port));
  }
  return {};
}

bool is_ip_literal(const std::string& host) {
  unsigned char buf[16];
  return ::inet_pton(AF_INET, host.c_str(), buf) == 1 || ::inet_pton(AF_INET6, host.c_str(), buf) == 1;
}

} // namespace

namespace jp {

void expect_node_certificate_name(const std::string& host, uint16_t port) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  auto service = std::to_string(port);
  if (::getaddrinfo(host.c_str(), service.c_str(), &hints, &found) != 0)
    return; // the connect fails as well, and says why
  std::lock_guard lock(g_mtx);
  g_refused.erase(host);
  for (auto* a = found; a; a = a->ai_next)
    if (auto key = address_key(a->ai_addr); !key.empty())
      g_expected[key] = host;
  ::freeaddrinfo(found);
}

bool node_certificate_names_not(const std::string& host) {
  std::lock_guard lock(g_mtx);
  return g_refused.count(host) > 0;
}

} // namespace jp

// Found before libssl's own by every library that calls it (CAF's openssl module
// among them), as a definition in the executable is; libssl's is called through.
extern "C" int SSL_connect(SSL* ssl) {
  using real_fn = int (*)(SSL*);
  static const auto real = reinterpret_cast<real_fn>(::dlsym(RTLD_NEXT, "SSL_connect"));
  sockaddr_storage sa{};
  socklen_t len = sizeof sa;
  std::string host;
  if (::getpeername(SSL_get_fd(ssl), reinterpret_cast<sockaddr*>(&sa), &len) == 0) {
    std::lock_guard lock(g_mtx);
    if (auto it = g_expected.find(address_key(reinterpret_cast<sockaddr*>(&sa))); it != g_expected.end())
      host = it->second;
  }
  if (host.empty())
    return real(ssl); // not a node's connection: its caller checks what it checks
  // Set on each call of a handshake that goes on over several: the same, each time.
  auto* param = SSL_get0_param(ssl);
  X509_VERIFY_PARAM_set_hostflags(param, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
  if (is_ip_literal(host))
    X509_VERIFY_PARAM_set1_ip_asc(param, host.c_str());
  else
    X509_VERIFY_PARAM_set1_host(param, host.c_str(), 0);
  int rc = real(ssl);
  if (rc <= 0) {
    auto v = SSL_get_verify_result(ssl);
    if (v == X509_V_ERR_HOSTNAME_MISMATCH || v == X509_V_ERR_IP_ADDRESS_MISMATCH) {
      std::lock_guard lock(g_mtx);
      g_refused.insert(host);
    }
  }
  return rc;
}
