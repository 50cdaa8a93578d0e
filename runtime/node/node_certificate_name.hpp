// CAF 0.17's TLS client checks a node's certificate against the CA and nothing
// more: with one CA signing nodes and clients (the README's setup), any client's
// certificate would pass for any node's, and its holder could stand in for a node.
// So a client's handshake also checks that the node's certificate names the address
// it dialled: CAF calls SSL_connect, which this file defines ahead of libssl's (as
// the CLI's node_handshake_report.cpp does SSL_get_error), setting OpenSSL's host
// or IP check for the addresses dialled here, and only for those (libcurl's HTTPS is
// left alone). The client resolves the node's name once and dials the address it
// got, so the connection checked is the one made. The definition is weak: a program
// linked so that libssl's own is used (fully static, or its symbols hidden) gets no
// check, and is refused TLS to nodes rather than connected unchecked.
#pragma once

#include <cstdint>
#include <string>

#include "../../messages/result.hpp"

struct ssl_st;

namespace jp {

/// Before a TLS connection to a node at `host`:`port`: the numeric address to dial
/// (the first `host` resolves to), at which the certificate must name `host` (a DNS
/// name, or an IP address, in its subjectAltName; a name may be its CN when it has
/// none); or why it cannot be dialled so.
Result<std::string> dial_node_checking_name(const std::string& host, uint16_t port);

/// After a connection to `host`:`port` failed: whether it was for a certificate that
/// does not name `host`.
bool node_certificate_names_not(const std::string& host, uint16_t port);

/// After a connection to `host`:`port` failed: why this client did not accept the
/// node's certificate (OpenSSL's words: "unable to get local issuer certificate"), or
/// "" when it was not that.
std::string node_certificate_distrusted(const std::string& host, uint16_t port);

/// After a connection to `host`:`port` failed: whether its TLS handshake was closed
/// for taking longer than tls_handshake_deadline (the node did not answer it).
bool node_handshake_timed_out(const std::string& host, uint16_t port);

/// After SSL_get_error said `err` of a connection: a failure of one dialled to a node
/// leaves nothing in the thread's OpenSSL error queue. CAF's TLS reads that queue
/// without emptying it, on the one thread that serves every node's connection: a
/// refused handshake with one node then failed the next read from another, which
/// was dropped as lost.
void forget_failed_node_errors(const ssl_st* ssl, int err);

} // namespace jp
