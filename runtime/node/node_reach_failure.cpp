#include "runtime/node/node_reach_failure.hpp"

#include <arpa/inet.h>
#include <caf/atom.hpp>
#include <caf/error.hpp>
#include <caf/sec.hpp>
#include <fmt/format.h>

#include "config/config.hpp"
#include "messages/error_category.hpp"
#include "runtime/node/node_address.hpp"
#include "runtime/node/node_certificate_name.hpp"
#include "runtime/node/node_protocol.hpp"
#include "runtime/node/tls_handshake_pace.hpp"

namespace jp {

namespace {

bool is_sec(const caf::error& err, caf::sec code) {
  return err && err.category() == caf::atom("system") && err.code() == static_cast<uint8_t>(code);
}

/// The sentence CAF put first in `err`'s context ("ip_connect failed"), or "".
std::string caf_sentence(const caf::error& err) {
  const auto& ctx = err.context();
  return !ctx.empty() && ctx.match_element<std::string>(0) ? ctx.get_as<std::string>(0) : std::string();
}

std::string tls_mismatch(const NodeConfig& node) {
  return fmt::format("the TLS handshake failed. Likely the node has no TLS (its [node.tls]), or the certificates "
                     "and CAs do not match (the node's [node.tls] ca must have signed [nodes.{0}.tls] certificate, "
                     "and [nodes.{0}.tls] ca the node's certificate); the node's log says why it refused. Trying "
                     "again will not help until the configuration changes",
                     node.name);
}

} // namespace

ReachFailure reach_failure(const NodeConfig& node, const caf::error& err, const std::string& host, uint16_t port) {
  if (node.tls.enabled() && node_certificate_names_not(host, port))
    return {"presented a certificate that does not name it",
            fmt::format("the node's certificate does not name {0}, the address [nodes.{1}] dials: a certificate "
                        "of the same CA made for another machine (or a client's) is no proof of this node. Give "
                        "the node a certificate whose subjectAltName holds {2}:{0}, or dial a name it holds. Trying "
                        "again will not help until the configuration changes",
                        host, node.name, is_ip_literal(host) ? "IP" : "DNS"),
            false};
  if (node.tls.enabled() && node_handshake_timed_out(host, port))
    return {"did not answer the TLS handshake",
            fmt::format("nothing came back within {} s of the TLS handshake: something there that is not a node, "
                        "or a node stopped or overloaded. Check that `jp-actors node --listen` runs at that address",
                        std::chrono::duration_cast<std::chrono::seconds>(tls_handshake_deadline).count()),
            true};
  if (auto why = node.tls.enabled() ? node_certificate_distrusted(host, port) : std::string(); !why.empty())
    return {"presented a certificate this client does not accept",
            fmt::format("the node's certificate was refused here: {}. [nodes.{}.tls] ca must be the CA that signed "
                        "the node's [node.tls] certificate. Trying again will not help until the configuration "
                        "changes",
                        why, node.name),
            false};
  if (is_sec(err, caf::sec::disconnect_during_handshake)) {
    if (node.tls.enabled())
      return {"closed the connection during the handshake", tls_mismatch(node), false};
    return {"closed the connection during the handshake",
            fmt::format("likely the node takes TLS ([node.tls]) and "
                        "[nodes.{0}] has no [nodes.{0}.tls] (the node's log says why it refused), or what listens "
                        "there is not a jp-actors node (check that `jp-actors node --listen` runs at that address). "
                        "Trying again will not help until the configuration changes",
                        node.name),
            false};
  }
  // Bytes that are no CAF handshake at all: another program (an HTTP server) listens there.
  if (is_sec(err, caf::sec::malformed_basp_message))
    return {"speaks another protocol",
            "what answered at that address is not a jp-actors node: its first bytes are no node's handshake "
            "(another program listens there). Check [nodes." + node.name + "] address and that `jp-actors node "
            "--listen` runs at that address. Trying again will not help until one of them changes",
            false};
  if (is_sec(err, caf::sec::incompatible_application_ids) || is_sec(err, caf::sec::incompatible_versions))
    return {"speaks another node protocol",
            fmt::format("what answered at that address is not a jp-actors node whose messages this client reads "
                        "(this client speaks {}): a node of another jp-actors version, or another CAF program. "
                        "Run the same jp-actors version on the node and here. Trying again will not help until "
                        "one of them changes",
                        node_protocol),
            false};
  if (is_sec(err, caf::sec::request_timeout) || is_sec(err, caf::sec::connection_timeout))
    return {"did not answer",
            "no answer in time: a firewall dropping the connection, something there that is not a node, or a "
            "node stopped or overloaded. Check that `jp-actors node --listen` runs at that address",
            true};
  if (!is_sec(err, caf::sec::cannot_connect_to_node))
    return {"cannot be reached", error_text(err), true};
  auto sentence = caf_sentence(err);
  // CAF's TLS connect says nothing more when the connection was made and its TLS
  // session was not: the node answered, not in TLS (or refused our certificate).
  if (sentence.empty() && node.tls.enabled())
    return {"did not complete the TLS handshake", tls_mismatch(node), false};
  // CAF tries an IPv6 address, then the host again as IPv4: an IPv6 address that
  // refused the connection comes back as "no such host".
  if (sentence == "ip_connect failed" || (sentence == "no such host" && is_ip_literal(host)))
    return {"cannot be reached",
            "nothing accepted a connection there (connection refused or no route). Check that `jp-actors node "
            "--listen` runs there on that address and port (a node listening on 127.0.0.1 is not reached as [::1], "
            "nor one on [::1] as 127.0.0.1), and that no firewall is in the way",
            true};
  if (sentence == "no such host")
    return {"cannot be reached",
            fmt::format("no address was found for `{}`, or none of its addresses accepted a "
                        "connection; check the host name in [nodes.{}] address",
                        host, node.name),
            true};
  return {"cannot be reached", error_text(err), true};
}

} // namespace jp
