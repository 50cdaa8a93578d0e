// CAF 0.17's TLS calls SSL_accept / SSL_connect again each time the socket can be
// written while the handshake waits for the peer (its own first message waits
// behind the handshake). A peer that stayed silent kept the network thread at a
// whole core, and its connection never ended: a client's exit waited for it for
// good, and anyone who could reach a node's port could hold a core per connection.
// So a step that waits for the peer, called again at once, waits for its bytes a
// moment (1 ms, ended by their arrival), and a handshake not done within
// tls_handshake_deadline is closed.
#pragma once

#include <chrono>

struct ssl_st;

namespace jp {

constexpr auto tls_handshake_deadline = std::chrono::seconds(10);

/// One step of a TLS handshake by `real` (libssl's SSL_accept or SSL_connect), paced
/// as above; what `real` returned.
int paced_handshake_step(ssl_st* ssl, int (*real)(ssl_st*));

/// Whether `ssl`'s handshake was closed for its deadline.
bool handshake_expired(const ssl_st* ssl);

} // namespace jp
