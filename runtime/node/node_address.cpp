#include "runtime/node/node_address.hpp"

#include <arpa/inet.h>
#include <charconv>
#include <fmt/format.h>

#include "config/config.hpp"

namespace jp {

std::string NodeAddress::text() const {
  return host.find(':') != std::string::npos ? fmt::format("[{}]:{}", host, port) : fmt::format("{}:{}", host, port);
}

Result<NodeAddress> parse_node_address(std::string_view text, std::string_view key) {
  auto bad = [&](std::string_view why) {
    return Error{fmt::format("{}: expected host:port (e.g. 127.0.0.1:4242, [::1]:4242), got \"{}\": {}", key,
                             text.substr(0, 80), why)};
  };
  auto colon = text.rfind(':');
  if (colon == std::string_view::npos || colon == 0)
    return bad("no port");
  auto host = text.substr(0, colon);
  if (host.front() == '[') {
    if (host.size() < 3 || host.back() != ']')
      return bad("an IPv6 address goes in brackets");
    host = host.substr(1, host.size() - 2);
  }
  auto port_text = text.substr(colon + 1);
  unsigned port = 0;
  auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (ec != std::errc{} || end != port_text.data() + port_text.size() || port > 65535)
    return bad("the port is not a number from 0 to 65535");
  return NodeAddress{std::string(host), static_cast<uint16_t>(port)};
}

bool is_loopback(const std::string& host) {
  if (host == "localhost")
    return true;
  in_addr v4{};
  if (::inet_pton(AF_INET, host.c_str(), &v4) == 1)
    return (ntohl(v4.s_addr) >> 24) == 127;
  in6_addr v6{};
  if (::inet_pton(AF_INET6, host.c_str(), &v6) == 1)
    return IN6_IS_ADDR_LOOPBACK(&v6);
  return false;
}

Result<NodeAddress> node_address_to_reach(const NodeConfig& node) {
  auto key = fmt::format("nodes.{}.address", node.name);
  auto addr = parse_node_address(node.address, key);
  if (addr && !node.tls.enabled() && !is_loopback(addr->host))
    return Error{fmt::format("{} = \"{}\" is off loopback, and node `{}` has no [nodes.{}.tls]: a node off "
                             "loopback is reached only with mutual TLS (without it the node token would cross "
                             "the network in the clear)",
                             key, node.address, node.name, node.name)};
  return addr;
}

} // namespace jp
