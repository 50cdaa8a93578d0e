// A node's address, "host:port" (IPv6 in brackets: "[::1]:4242"), and whether it is
// on loopback: off loopback a node is served and reached only with mutual TLS.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "../../messages/result.hpp"

namespace jp {

struct NodeAddress {
  std::string host;
  uint16_t port = 0;
  std::string text() const;
};

/// Errors name `key` (the config key or flag it came from) and the form expected.
Result<NodeAddress> parse_node_address(std::string_view text, std::string_view key);

/// An address to listen on: host:port as above, or a bare port, meaning that port
/// of 127.0.0.1 (`node --listen 4242`, `mcp --listen 8808`).
Result<NodeAddress> parse_listen_address(std::string_view text, std::string_view key);

/// Why listening on `addr` fails, found by binding it here as a listener would
/// (CAF's own error says only "tcp socket creation failed"); "" if it can be bound.
std::string why_cannot_bind(const NodeAddress& addr);

/// 127.0.0.0/8, ::1 and "localhost": only this machine can connect or be reached.
bool is_loopback(const std::string& host);

/// `host` is an IP address (v4 or v6), not a name to look up.
bool is_ip_literal(const std::string& host);

struct NodeConfig;

/// Where a client reaches `node` ([nodes.NAME] address): refused off loopback
/// without TLS, where the token would cross a network in the clear.
Result<NodeAddress> node_address_to_reach(const NodeConfig& node);

} // namespace jp
