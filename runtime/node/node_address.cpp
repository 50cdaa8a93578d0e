#include "runtime/node/node_address.hpp"

#include <arpa/inet.h>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <fmt/format.h>
#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include "config/config.hpp"
#include "runtime/text_nocase.hpp"

namespace jp {

std::string NodeAddress::text() const {
  return host.find(':') != std::string::npos ? fmt::format("[{}]:{}", host, port) : fmt::format("{}:{}", host, port);
}

Result<NodeAddress> parse_node_address(std::string_view text, std::string_view key) {
  auto bad = [&](std::string_view why) {
    return Error{fmt::format("{}: expected host:port (e.g. 127.0.0.1:4242, [::1]:4242), got \"{}\": {}", key,
                             text.substr(0, 80), why)};
  };
  std::string_view host;
  size_t colon = 0;
  if (!text.empty() && text.front() == '[') { // [v6]:port: the port is what follows the brackets
    auto close = text.find(']');
    if (close == std::string_view::npos || close < 2)
      return bad("an IPv6 address goes in brackets, [::1]");
    if (close + 1 >= text.size() || text[close + 1] != ':')
      return bad("no port after the address");
    host = text.substr(1, close - 1);
    colon = close + 1;
  } else {
    colon = text.rfind(':');
    if (colon == std::string_view::npos)
      return bad("no port");
    if (colon == 0)
      return bad("no host before the port");
    host = text.substr(0, colon);
    // ::1:4242 could be the address ::1:4242 (no port) or ::1 and 4242.
    if (host.find(':') != std::string_view::npos)
      return bad("an IPv6 address goes in brackets, as in [::1]:4242");
    // 127.1 is 127.0.0.1 to some parsers and a host name to others: written out, it
    // is one address to all of them (and is told loopback or not by that).
    in_addr v4{};
    char out[INET_ADDRSTRLEN] = {};
    if (auto name = std::string(host); !is_ip_literal(name) && ::inet_aton(name.c_str(), &v4) == 1 &&
                                       ::inet_ntop(AF_INET, &v4, out, sizeof out))
      return bad(fmt::format("write the IPv4 address out in four parts ({})", out));
  }
  auto port_text = text.substr(colon + 1);
  unsigned port = 0;
  auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (ec != std::errc{} || end != port_text.data() + port_text.size() || port > 65535)
    return bad("the port is not a number from 0 to 65535");
  return NodeAddress{std::string(host), static_cast<uint16_t>(port)};
}

Result<NodeAddress> parse_listen_address(std::string_view text, std::string_view key) {
  if (text.find(':') == std::string_view::npos && !text.empty()) {
    auto addr = parse_node_address(fmt::format("127.0.0.1:{}", text), key);
    if (!addr)
      return Error{fmt::format("{}: expected host:port (e.g. 127.0.0.1:4242, [::1]:4242) or a port (4242, on "
                               "127.0.0.1), got \"{}\": the port is not a number from 0 to 65535",
                               key, text.substr(0, 80))};
    return addr;
  }
  return parse_node_address(text, key);
}

std::string why_cannot_bind(const NodeAddress& addr) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  auto port = std::to_string(addr.port);
  if (int rc = ::getaddrinfo(addr.host.c_str(), port.c_str(), &hints, &found); rc != 0)
    return fmt::format("the host `{}` cannot be resolved: {}", addr.host, ::gai_strerror(rc));
  std::string why;
  for (auto* ai = found; ai; ai = ai->ai_next) {
    int fd = ::socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
    if (fd < 0) {
      why = std::strerror(errno);
      continue;
    }
    int on = 1; // as CAF binds it: a port left in TIME_WAIT is not "in use"
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
    int rc = ::bind(fd, ai->ai_addr, ai->ai_addrlen);
    int err = errno;
    ::close(fd);
    if (rc == 0) {
      why.clear();
      break;
    }
    why = err == EADDRINUSE ? "the address is in use: another program listens there (another jp-actors node?); "
                              "stop it, or pick another port (0: any free one)"
        : err == EADDRNOTAVAIL ? "no interface of this machine has that address"
                               : std::strerror(err);
  }
  ::freeaddrinfo(found);
  return why;
}

bool is_ip_literal(const std::string& host) {
  unsigned char buf[16];
  return ::inet_pton(AF_INET, host.c_str(), buf) == 1 || ::inet_pton(AF_INET6, host.c_str(), buf) == 1;
}

bool is_loopback(const std::string& host) {
  if (equals_nocase(host, "localhost")) // a host name's case is no part of it
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
  if (node.address.empty())
    return Error{fmt::format("{} is not set: give [nodes.{}] address = \"HOST:PORT\", where `jp-actors node` on "
                             "that machine listens (it prints \"listening on HOST:PORT\")",
                             key, node.name)};
  auto addr = parse_node_address(node.address, key);
  if (addr && !node.tls.enabled() && !is_loopback(addr->host))
    return Error{fmt::format("{} = \"{}\" is off loopback, and node `{}` has no [nodes.{}.tls]: a node off "
                             "loopback is reached only with mutual TLS (without it the node token would cross "
                             "the network in the clear)",
                             key, node.address, node.name, node.name)};
  return addr;
}

} // namespace jp
