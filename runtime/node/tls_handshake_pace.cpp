#include "runtime/node/tls_handshake_pace.hpp"

#include <dlfcn.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <sys/socket.h>

namespace jp {

namespace {

struct Pace {
  std::chrono::steady_clock::time_point started, last;
  bool expired = false;
};

void free_pace(void*, void* ptr, CRYPTO_EX_DATA*, int, long, void*) {
  delete static_cast<Pace*>(ptr);
}

/// The ex_data slot of a handshake's Pace (freed with its SSL).
int pace_slot() {
  static const int index = SSL_get_ex_new_index(0, nullptr, nullptr, nullptr, free_pace);
  return index;
}

/// libssl's SSL_get_error, not a program's own (which may act on what it says).
int real_ssl_error(const SSL* ssl, int rc) {
  using fn = int (*)(const SSL*, int);
  static const auto real = reinterpret_cast<fn>(::dlsym(RTLD_NEXT, "SSL_get_error"));
  return real(ssl, rc);
}

} // namespace

int paced_handshake_step(ssl_st* ssl, int (*real)(ssl_st*)) {
  int rc = real(ssl);
  if (rc == 1 || pace_slot() < 0)
    return rc;
  int why = real_ssl_error(ssl, rc);
  if (why != SSL_ERROR_WANT_READ && why != SSL_ERROR_WANT_WRITE)
    return rc;
  auto now = std::chrono::steady_clock::now();
  auto* pace = static_cast<Pace*>(SSL_get_ex_data(ssl, pace_slot()));
  if (!pace) {
    pace = new Pace{now, now};
    if (SSL_set_ex_data(ssl, pace_slot(), pace) != 1) {
      delete pace;
      return rc;
    }
    return rc;
  }
  int fd = SSL_get_fd(ssl);
  if (now - pace->started >= tls_handshake_deadline) {
    // Its next step reads the end of the connection, and fails: CAF closes it.
    pace->expired = true;
    ::shutdown(fd, SHUT_RDWR);
    return rc;
  }
  // Called again within a millisecond, still waiting for the peer: CAF's loop, not
  // the peer's bytes, called it. They end the wait as they come.
  bool again = now - pace->last < std::chrono::milliseconds(1);
  pace->last = now;
  // At most one such wait a millisecond on this thread, however many handshakes
  // wait: the thread serves every established connection too.
  thread_local std::chrono::steady_clock::time_point last_wait;
  if (again && why == SSL_ERROR_WANT_READ && fd >= 0 && now - last_wait >= std::chrono::milliseconds(1)) {
    last_wait = now;
    pollfd p{fd, POLLIN, 0};
    ::poll(&p, 1, 1);
  }
  return rc;
}

bool handshake_expired(const ssl_st* ssl) {
  if (pace_slot() < 0)
    return false;
  auto* pace = static_cast<const Pace*>(SSL_get_ex_data(ssl, pace_slot()));
  return pace && pace->expired;
}

} // namespace jp

// As SSL_accept, found before libssl's own as SSL_connect's check is
// (node_certificate_name.cpp): a node's handshakes are paced. A process's only TLS
// server is a node's (libcurl is a client).
extern "C" __attribute__((visibility("hidden"))) int jp_paced_ssl_accept(SSL* ssl);

extern "C" int jp_paced_ssl_accept(SSL* ssl) {
  using fn = int (*)(SSL*);
  static const auto real = reinterpret_cast<fn>(::dlsym(RTLD_NEXT, "SSL_accept"));
  return jp::paced_handshake_step(ssl, real);
}

extern "C" int SSL_accept(SSL* ssl) __attribute__((weak, alias("jp_paced_ssl_accept")));
