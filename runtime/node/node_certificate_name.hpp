// CAF 0.17's TLS client checks a node's certificate against the CA and nothing
// more: with one CA signing nodes and clients (the README's setup), any client's
// certificate would pass for any node's, and its holder could stand in for a node.
// So a client's handshake also checks that the node's certificate names the address
// it dialled: CAF calls SSL_connect, which this file defines ahead of libssl's (as
// node_handshake_report.cpp does SSL_get_error), setting OpenSSL's host or IP check
// for the peers expected here, and only for those (libcurl's HTTPS is left alone).
#pragma once

#include <cstdint>
#include <string>

namespace jp {

/// Before connecting to a node at `host`:`port` with TLS: the certificate that
/// answers at the addresses `host` resolves to must name `host` (a DNS name, or
/// an IP address, in its subjectAltName; a name may be its CN when it has none).
void expect_node_certificate_name(const std::string& host, uint16_t port);

/// After a connection to `host` failed: whether it was for a certificate that does
/// not name `host`.
bool node_certificate_names_not(const std::string& host);

} // namespace jp
