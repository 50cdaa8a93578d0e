#include "runtime/cli/node_handshake_report.hpp"
#include "runtime/node/node_certificate_name.hpp"
#include "runtime/node/tls_handshake_pace.hpp"
#include "runtime/node/node_refusal_log.hpp"

#include <arpa/inet.h>
#include <atomic>
#include <cstdio>
#include <dlfcn.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <string>
#include <sys/socket.h>

namespace {

std::atomic<bool> g_report{false};
std::atomic<int> g_refusals{0}; // connections that ended at the handshake

/// "127.0.0.1:4242", or "an unknown peer".
std::string peer_of(const SSL* ssl) {
  sockaddr_storage sa{};
  socklen_t len = sizeof sa;
  if (::getpeername(SSL_get_fd(ssl), reinterpret_cast<sockaddr*>(&sa), &len) != 0)
    return "an unknown peer";
  char host[INET6_ADDRSTRLEN] = {};
  if (sa.ss_family == AF_INET) {
    auto* in = reinterpret_cast<sockaddr_in*>(&sa);
    ::inet_ntop(AF_INET, &in->sin_addr, host, sizeof host);
    return fmt::format("{}:{}", host, ntohs(in->sin_port));
  }
  auto* in6 = reinterpret_cast<sockaddr_in6*>(&sa);
  ::inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof host);
  return fmt::format("[{}]:{}", host, ntohs(in6->sin6_port));
}

/// OpenSSL's reasons for the failure (the error queue, emptied), and why the peer's
/// certificate was not accepted, if it was not. `by_client`: set when the client
/// sent an alert (it refused this node's certificate, as a rule).
std::string reasons_of(const SSL* ssl, bool& by_client) {
  std::string why;
  while (auto e = ERR_get_error()) {
    by_client = by_client || ERR_GET_REASON(e) >= SSL_AD_REASON_OFFSET; // an alert the peer sent
    const char* r = ERR_reason_error_string(e);
    if (!why.empty())
      why += "; ";
    why += r ? r : fmt::format("error {:#x}", e);
  }
  if (auto v = SSL_get_verify_result(ssl); v != X509_V_OK) {
    auto cert = fmt::format("the client's certificate: {}", X509_verify_cert_error_string(v));
    why = why.empty() ? cert : fmt::format("{} ({})", why, cert);
  }
  return why.empty() ? "the client closed the connection (it may not trust this node's certificate)" : why;
}

/// The ex_data slot marking a connection whose failure was told.
int told_slot() {
  static const int index = SSL_get_ex_new_index(0, nullptr, nullptr, nullptr, nullptr);
  return index;
}

/// Whether the client's Finished message came: the handshake was done, and a failure
/// now is the connection's end (a served client's EOF), not a refusal. Not
/// SSL_is_init_finished: any fatal error, that EOF included, puts OpenSSL's state
/// machine back "in init".
bool handshake_done(const SSL* ssl) {
  unsigned char finished[EVP_MAX_MD_SIZE];
  return SSL_get_peer_finished(ssl, finished, sizeof finished) > 0;
}

} // namespace

namespace jp {

void report_refused_handshakes() {
  g_report.store(true);
}

} // namespace jp

// Found before libssl's own by every library that calls it (CAF's openssl module
// among them), as a definition in the executable is; libssl's is called through.
extern "C" int SSL_get_error(const SSL* ssl, int ret) {
  using real_fn = int (*)(const SSL*, int);
  static const auto real = reinterpret_cast<real_fn>(::dlsym(RTLD_NEXT, "SSL_get_error"));
  int err = real(ssl, ret);
  if ((err == SSL_ERROR_SSL || err == SSL_ERROR_SYSCALL) && g_report.load(std::memory_order_relaxed) &&
      SSL_is_server(ssl)) {
    // Served, and now ended: nothing to report, but the queue is emptied all the same.
    if (handshake_done(ssl)) {
      ERR_clear_error();
      return err;
    }
    // CAF asks again about a failure it was told: one line a connection.
    if (told_slot() < 0 || SSL_get_ex_data(ssl, told_slot())) {
      ERR_clear_error();
      return err;
    }
    static char told_mark;
    SSL_set_ex_data(const_cast<SSL*>(ssl), told_slot(), &told_mark);
    bool by_client = false;
    auto why = reasons_of(ssl, by_client);
    auto peer = peer_of(ssl);
    auto told = jp::handshake_expired(ssl)
                  ? fmt::format("closed a connection from {}: no TLS handshake within {} s (what connected sent "
                                "nothing, or too little)",
                                peer, std::chrono::duration_cast<std::chrono::seconds>(jp::tls_handshake_deadline).count())
                : by_client ? fmt::format("the client at {} refused this node at the TLS handshake: {}; a client takes "
                                        "the node's certificate only if its [nodes.NAME.tls] ca signed it and it "
                                        "names the address the client dials",
                                        peer, why)
                          : fmt::format("refused a connection from {} at the TLS handshake: {}; a client needs a "
                                        "certificate signed by the CA of [node.tls] ca, and its own [nodes.NAME.tls]",
                                        peer, why);
    // A port scan (each a bare connection that ends at once) is many.
    jp::tell_refusal(++g_refusals, told, "{} connections ended at the TLS handshake");
  }
  jp::forget_failed_node_errors(ssl, err); // this definition stands for the library's
  return err;
}
