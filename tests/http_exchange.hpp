// A raw HTTP/1.1 exchange on loopback for the tests of `jp-actors mcp --listen`: one
// request on a new connection, its whole response read (Content-Length or chunked),
// and the messages of an event-stream body. Written on sockets, not with the library
// under test, so what goes over the wire is exactly what the test says.
#pragma once

#include <arpa/inet.h>
#include <cctype>
#include <map>
#include <netinet/in.h>
#include <poll.h>
#include <string>
#include <sys/socket.h>
#include <unistd.h>
#include <vector>

#include "messages/json.hpp"

namespace jp::testing {

struct HttpReply {
  int status = 0; // 0: no answer
  bool complete = false; // read to its end
  std::map<std::string, std::string> headers; // names in lower case
  std::string body;
  /// The `data:` of each event, when the body is an event stream.
  std::vector<Json> events() const {
    std::vector<Json> out;
    size_t at = 0;
    for (auto end = body.find("\n\n"); end != std::string::npos; end = body.find("\n\n", at)) {
      auto event = body.substr(at, end - at);
      at = end + 2;
      for (size_t line = 0; line < event.size();) {
        auto nl = event.find('\n', line);
        auto l = event.substr(line, nl == std::string::npos ? std::string::npos : nl - line);
        if (l.rfind("data: ", 0) == 0)
          if (auto j = Json::parse(l.substr(6)))
            out.push_back(*j);
        line = nl == std::string::npos ? event.size() : nl + 1;
      }
    }
    return out;
  }
  std::string header(const std::string& name) const {
    auto it = headers.find(name);
    return it == headers.end() ? "" : it->second;
  }
};

/// A socket connected to the server on `port` (127.0.0.1), or -1.
inline int http_connect(uint16_t port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

/// Connects to the server on `port` and sends `head` (request line and headers, each
/// ending in \r\n, without the blank line) and `body`, with Content-Length (or
/// `declared`, when given: a body that does not come). The socket, or -1.
inline int http_send(uint16_t port, const std::string& head, const std::string& body = "",
                     long declared = -1) {
  int fd = http_connect(port);
  if (fd < 0)
    return -1;
  auto length = declared >= 0 ? std::to_string(declared) : std::to_string(body.size());
  auto out = head + "Content-Length: " + length + "\r\nConnection: close\r\n\r\n" + body;
  if (::send(fd, out.data(), out.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(out.size())) {
    ::close(fd);
    return -1;
  }
  return fd;
}

/// Reads the answer on `fd` (sent with http_send), a minute at most against a hang;
/// `complete` when it was read to its end (Content-Length, or the chunked body's
/// last chunk). `head_only`: returns once the status and headers are in. Closes `fd`
/// unless `head_only`.
inline HttpReply http_read(int fd, bool head_only = false) {
  HttpReply r;
  if (fd < 0)
    return r;
  std::string in;
  auto read_more = [&] {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 60000) <= 0)
      return false;
    char buf[65536];
    auto n = ::read(fd, buf, sizeof buf);
    if (n <= 0)
      return false;
    in.append(buf, static_cast<size_t>(n));
    return true;
  };
  auto done = [&] {
    if (!head_only)
      ::close(fd);
    return r;
  };
  size_t head_end;
  while ((head_end = in.find("\r\n\r\n")) == std::string::npos)
    if (!read_more())
      return done();
  auto status_line_end = in.find("\r\n");
  r.status = std::atoi(in.substr(in.find(' ') + 1, 3).c_str());
  for (size_t at = status_line_end + 2; at < head_end;) {
    auto end = in.find("\r\n", at);
    auto line = in.substr(at, end - at);
    at = end + 2;
    auto colon = line.find(':');
    auto name = line.substr(0, colon);
    for (auto& c : name)
      c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    auto value = line.substr(colon + 1);
    value.erase(0, value.find_first_not_of(' '));
    r.headers[name] = value;
  }
  if (head_only)
    return r;
  auto rest = in.substr(head_end + 4);
  in = rest;
  if (r.header("transfer-encoding") == "chunked") {
    for (;;) {
      size_t line_end;
      while ((line_end = in.find("\r\n")) == std::string::npos)
        if (!read_more())
          break;
      if (line_end == std::string::npos)
        break;
      auto size = std::stoul(in.substr(0, line_end), nullptr, 16);
      while (in.size() < line_end + 2 + size + 2)
        if (!read_more())
          break;
      if (in.size() < line_end + 2 + size + 2)
        break;
      r.body += in.substr(line_end + 2, size);
      in.erase(0, line_end + 2 + size + 2);
      if (size == 0) {
        r.complete = true;
        break;
      }
    }
  } else if (r.header("content-length").empty()) { // the bytes until the close
    while (read_more()) {
    }
    r.body = in;
    r.complete = true;
  } else {
    auto length = std::stoul(r.header("content-length"));
    while (in.size() < length)
      if (!read_more())
        break;
    r.complete = in.size() >= length;
    r.body = in.substr(0, length);
  }
  return done();
}

/// Waits (a minute at most) until `text` came on `fd` (within the first 64 KiB of
/// the answer), leaving what came unread for http_read: whether it came.
inline bool http_came(int fd, std::string_view text) {
  char buf[65536];
  for (;;) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 60000) <= 0)
      return false;
    auto n = ::recv(fd, buf, sizeof buf, MSG_PEEK);
    if (n <= 0)
      return false;
    if (std::string_view(buf, static_cast<size_t>(n)).find(text) != std::string_view::npos)
      return true;
    if (static_cast<size_t>(n) == sizeof buf)
      return false;
    ::usleep(1000); // more is coming; MSG_PEEK leaves poll ready
  }
}

/// Waits until the answer's status and headers came on `fd` (http_came).
inline bool http_head_came(int fd) {
  return http_came(fd, "\r\n\r\n");
}

/// One request on a new connection and its whole answer.
inline HttpReply http_exchange(uint16_t port, const std::string& head, const std::string& body = "") {
  return http_read(http_send(port, head, body));
}

} // namespace jp::testing
