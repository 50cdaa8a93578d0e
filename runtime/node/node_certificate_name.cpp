#include "runtime/node/node_certificate_name.hpp"

#include <arpa/inet.h>
#include <dlfcn.h>
#include <fmt/format.h>
#include <map>
#include <mutex>
#include <netdb.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509_vfy.h>
#include <openssl/x509v3.h>
#include <set>
#include <sys/socket.h>

#include "runtime/node/node_address.hpp"
#include "runtime/node/tls_handshake_pace.hpp"

// The check itself, under a name of its own: SSL_connect is its weak alias, so that
// whether callers find it (and not libssl's, when that wins the link) can be told.
extern "C" __attribute__((visibility("hidden"))) int jp_node_ssl_connect(SSL* ssl);
extern "C" __attribute__((visibility("hidden"))) int jp_node_ssl_get_error(const SSL* ssl, int ret);

namespace {

std::mutex g_mtx;
std::map<std::string, std::string> g_expected; // "ip port" dialled -> the host it stands for
std::set<std::string> g_refused;               // "host port" whose certificate did not name host
std::map<std::string, std::string> g_distrusted; // "host port" -> why its certificate was not accepted
std::set<std::string> g_silent;                  // "host port" whose handshake was not done in time

/// "ip port" of a socket address.
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

using connect_fn = int (*)(SSL*);

/// The ex_data slot that marks a connection dialled to a node (its value non-null).
int node_mark() {
  static const int index = SSL_get_ex_new_index(0, nullptr, nullptr, nullptr, nullptr);
  return index;
}

/// libssl's SSL_connect, when the one every caller finds is this file's check; else
/// null (the check would be skipped: libssl's own won the link, or is found first).
connect_fn real_connect() {
  static const connect_fn real = [] {
    auto* next = ::dlsym(RTLD_NEXT, "SSL_connect");
    auto* found = ::dlsym(RTLD_DEFAULT, "SSL_connect");
    return next && found == reinterpret_cast<void*>(&jp_node_ssl_connect) ? reinterpret_cast<connect_fn>(next)
                                                                           : nullptr;
  }();
  return real;
}

} // namespace

namespace jp {

Result<std::string> dial_node_checking_name(const std::string& host, uint16_t port) {
  if (!real_connect())
    return Error{"this program is linked so that OpenSSL's own SSL_connect is used (fully static, or with its "
                 "symbols hidden), so the node's certificate cannot be checked to name the address dialled; "
                 "link OpenSSL as a shared library to reach nodes over TLS"};
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  auto service = std::to_string(port);
  if (int rc = ::getaddrinfo(host.c_str(), service.c_str(), &hints, &found); rc != 0 || !found)
    return Error{fmt::format("no address was found for `{}`: {}", host, rc ? ::gai_strerror(rc) : "none")};
  // One address, IPv4 first: a node listens on one, most often IPv4's (localhost
  // resolves to ::1 first, where a node on 127.0.0.1 is not).
  auto* chosen = found;
  for (auto* a = found; a; a = a->ai_next)
    if (a->ai_family == AF_INET) {
      chosen = a;
      break;
    }
  auto key = address_key(chosen->ai_addr);
  ::freeaddrinfo(found);
  auto ip = key.substr(0, key.rfind(' '));
  std::lock_guard lock(g_mtx);
  g_refused.erase(fmt::format("{} {}", host, port));
  g_distrusted.erase(fmt::format("{} {}", host, port));
  g_silent.erase(fmt::format("{} {}", host, port));
  g_expected[key] = host;
  return ip;
}

bool node_certificate_names_not(const std::string& host, uint16_t port) {
  std::lock_guard lock(g_mtx);
  return g_refused.count(fmt::format("{} {}", host, port)) > 0;
}

std::string node_certificate_distrusted(const std::string& host, uint16_t port) {
  std::lock_guard lock(g_mtx);
  auto it = g_distrusted.find(fmt::format("{} {}", host, port));
  return it == g_distrusted.end() ? std::string() : it->second;
}

bool node_handshake_timed_out(const std::string& host, uint16_t port) {
  std::lock_guard lock(g_mtx);
  return g_silent.count(fmt::format("{} {}", host, port)) > 0;
}

void forget_failed_node_errors(const ssl_st* ssl, int err) {
  if ((err == SSL_ERROR_SSL || err == SSL_ERROR_SYSCALL) && node_mark() >= 0 && SSL_get_ex_data(ssl, node_mark()))
    ERR_clear_error();
}

} // namespace jp

// As SSL_connect, found before libssl's own by every library that calls it (CAF's
// openssl module among them), as a definition in the executable is; libssl's is
// called through.
extern "C" int jp_node_ssl_connect(SSL* ssl) {
  auto real = real_connect();
  if (!real) // not reached where libssl's is found first; a dlsym that failed
    real = reinterpret_cast<connect_fn>(::dlsym(RTLD_NEXT, "SSL_connect"));
  std::string host, key;
  if (int fd = SSL_get_fd(ssl); fd >= 0) {
    sockaddr_storage sa{};
    socklen_t len = sizeof sa;
    if (::getpeername(fd, reinterpret_cast<sockaddr*>(&sa), &len) == 0) {
      key = address_key(reinterpret_cast<sockaddr*>(&sa));
      std::lock_guard lock(g_mtx);
      if (auto it = g_expected.find(key); it != g_expected.end())
        host = it->second;
    }
  }
  if (host.empty())
    return real(ssl); // not a node's connection: its caller checks what it checks
  static char marked;
  if (node_mark() >= 0)
    SSL_set_ex_data(ssl, node_mark(), &marked);
  // Set on each call of a handshake that goes on over several: the same, each time.
  auto* param = SSL_get0_param(ssl);
  X509_VERIFY_PARAM_set_hostflags(param, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
  if (jp::is_ip_literal(host))
    X509_VERIFY_PARAM_set1_ip_asc(param, host.c_str());
  else
    X509_VERIFY_PARAM_set1_host(param, host.c_str(), 0);
  int rc = jp::paced_handshake_step(ssl, real);
  if (rc <= 0 && jp::handshake_expired(ssl)) {
    std::lock_guard lock(g_mtx);
    g_silent.insert(fmt::format("{} {}", host, key.substr(key.rfind(' ') + 1)));
  } else if (rc <= 0) {
    auto v = SSL_get_verify_result(ssl);
    auto at = fmt::format("{} {}", host, key.substr(key.rfind(' ') + 1));
    std::lock_guard lock(g_mtx);
    if (v == X509_V_ERR_HOSTNAME_MISMATCH || v == X509_V_ERR_IP_ADDRESS_MISMATCH)
      g_refused.insert(at);
    else if (v != X509_V_OK)
      g_distrusted[at] = X509_verify_cert_error_string(v);
  }
  return rc;
}

extern "C" int SSL_connect(SSL* ssl) __attribute__((weak, alias("jp_node_ssl_connect")));

// As SSL_get_error, found before libssl's as SSL_connect is (a program may define
// its own, as the CLI does, and call forget_failed_node_errors itself).
extern "C" int jp_node_ssl_get_error(const SSL* ssl, int ret) {
  using real_fn = int (*)(const SSL*, int);
  static const auto real = reinterpret_cast<real_fn>(::dlsym(RTLD_NEXT, "SSL_get_error"));
  int err = real(ssl, ret);
  jp::forget_failed_node_errors(ssl, err);
  return err;
}

extern "C" int SSL_get_error(const SSL* ssl, int ret) __attribute__((weak, alias("jp_node_ssl_get_error")));
