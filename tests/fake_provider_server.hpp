// A fake LLM provider on loopback for tests: answers each POST with the next
// scripted response (an SSE stream replayed from tests/providers/, an error status,
// a stream cut mid-event, or one that stalls), and keeps what it was sent.
// Like the real services it first checks the request (provider_request_rules.hpp;
// the path tells which service it imitates: /chat/completions is OpenAI, and Azure
// OpenAI under /openai/deployments/, /messages Anthropic), its key and version
// headers too (but the key where the test runs without one: takes_no_key), and
// answers a request they would refuse with their status (400, 401; Azure's 404) and
// error body, leaving the scripted response for the next request.
// A GET is answered from a script of its own (push_get; nothing scripted: 405, as a
// server without the stream says) and kept apart (gets()); its answer may be an
// event stream held open (FakeEventStream), on which the test sends when it chooses.
#pragma once

#include <arpa/inet.h>
#include <atomic>
#include <condition_variable>
#include <memory>
#include <cerrno>
#include <cstring>
#include <deque>
#include <fcntl.h>
#include <fmt/format.h>
#include <fstream>
#include <functional>
#include <map>
#include <mutex>
#include <netinet/in.h>
#include <poll.h>
#include <string>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>
#include <vector>

#include "provider_request_rules.hpp"

namespace jp::testing {

/// A file of tests/providers/ (recorded-style streams).
inline std::string provider_fixture(const std::string& name) {
  std::ifstream in(std::string(JP_SOURCE_DIR) + "/tests/providers/" + name, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

/// An event stream a GET is answered with and held open (an MCP server's own
/// messages): the test waits until it is open, sends on it, and ends it.
class FakeEventStream {
public:
  ~FakeEventStream() { end(); }

  /// Waits until a GET is answered with it (its head and body sent).
  void wait_open() {
    std::unique_lock lock(mtx_);
    changed_.wait(lock, [this] { return fd_ >= 0 || ended_; });
  }

  /// Sends `bytes` (whole events) on it; nothing once it ended or the client left.
  void send(const std::string& bytes) {
    std::lock_guard lock(mtx_);
    for (std::size_t off = 0; fd_ >= 0 && off < bytes.size();) {
      auto n = ::send(fd_, bytes.data() + off, bytes.size() - off, MSG_NOSIGNAL);
      if (n <= 0)
        break;
      off += static_cast<std::size_t>(n);
    }
  }

  /// Ends it: the connection is closed, as a server ends a stream.
  void end() {
    std::lock_guard lock(mtx_);
    if (fd_ >= 0) {
      ::shutdown(fd_, SHUT_RDWR);
      ::close(fd_);
    }
    fd_ = -1;
    ended_ = true;
    changed_.notify_all();
  }

  /// Whether the client closed its end (waiting until it is open, and up to `ms`
  /// for that).
  bool client_left(int ms = 30000) {
    wait_open();
    int fd;
    {
      std::lock_guard lock(mtx_);
      fd = fd_;
    }
    if (fd < 0)
      return false;
    pollfd p{fd, POLLIN, 0};
    char c;
    if (::poll(&p, 1, ms) != 1)
      return false;
    // Its end closed (0), or reset: a client that leaves unread what was sent last.
    auto n = ::recv(fd, &c, 1, MSG_PEEK | MSG_DONTWAIT);
    return n == 0 || (n < 0 && errno == ECONNRESET);
  }

  /// The server's: the connection it goes on (its own copy of it).
  void attach(int fd) {
    std::lock_guard lock(mtx_);
    if (ended_)
      return;
    fd_ = ::dup(fd);
    changed_.notify_all();
  }

private:
  std::mutex mtx_;
  std::condition_variable changed_;
  int fd_ = -1;
  bool ended_ = false;
};

struct FakeResponse {
  int status = 200;
  std::string body;
  std::vector<std::string> headers;          // extra "Name: value" lines
  std::string content_type;                  // "": an event stream for 200, else JSON
  std::size_t cut_after = std::string::npos;  // close after this many body bytes
  std::size_t stall_after = std::string::npos; // go quiet after this many, until stopped
  // With stall_after: the rest is sent once this returns (the test lets the stream
  // go on when it chooses) rather than never.
  std::function<void()> resume;
  // Runs once this response's request is recorded, before the response is sent: a
  // test orders what its tools do against the requests (e.g. lets a gated tool end).
  std::function<void()> before;
  // On a kept-alive server: the connection is closed after this response without
  // saying so first, as a server does whose idle timeout has passed.
  bool then_close = false;
  // A GET's: after the head and `body`, the connection is held open for what the
  // test sends on it (status 200: an event stream).
  std::shared_ptr<FakeEventStream> stream;
};

class FakeProviderServer {
public:
  struct Seen {
    std::string path;  // without the query
    std::string query; // after '?', "" when none
    std::map<std::string, std::string> headers; // names in lower case
    std::string body;
  };

  /// keep_alive: responses carry their length and the connection stays open for the
  /// next request, as the real services' do; otherwise each is closed after one.
  explicit FakeProviderServer(bool keep_alive = false) : keep_alive_(keep_alive) {
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK); // loopback only
    addr.sin_port = 0;
    ::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
    ::listen(listen_fd_, 16);
    socklen_t len = sizeof addr;
    ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    ::pipe2(stop_pipe_, O_CLOEXEC);
    thread_ = std::thread([this] { serve(); });
  }

  ~FakeProviderServer() {
    stopping_ = true;
    (void)!::write(stop_pipe_[1], "x", 1);
    thread_.join();
    ::close(listen_fd_);
    ::close(stop_pipe_[0]);
    ::close(stop_pipe_[1]);
  }

  std::string base_url() const { return fmt::format("http://127.0.0.1:{}", port_); }

  void push(FakeResponse r) {
    std::lock_guard lock(mtx_);
    queue_.push_back(std::move(r));
  }

  /// The answer to the next GET.
  void push_get(FakeResponse r) {
    std::lock_guard lock(mtx_);
    get_queue_.push_back(std::move(r));
  }

  /// What was sent but GETs, in order.
  std::vector<Seen> requests() {
    std::lock_guard lock(mtx_);
    return seen_;
  }

  /// The GETs, in order.
  std::vector<Seen> gets() {
    std::lock_guard lock(mtx_);
    return gets_;
  }

  /// Requests without a key are taken, as a local server takes them (a test that
  /// runs without one).
  void takes_no_key() { keyless_ = true; }

  /// The connections accepted so far.
  int connections() const { return connections_; }

  /// The messages of the 400s it answered, in order.
  std::vector<std::string> refused() {
    std::lock_guard lock(mtx_);
    return refused_;
  }

private:
  bool wait_readable(int fd) {
    pollfd fds[2] = {{fd, POLLIN, 0}, {stop_pipe_[0], POLLIN, 0}};
    while (::poll(fds, 2, -1) < 0) {
    }
    return !(fds[1].revents & POLLIN);
  }

  void serve() {
    std::vector<int> kept; // connections open for their next request
    for (;;) {
      std::vector<pollfd> fds{{stop_pipe_[0], POLLIN, 0}, {listen_fd_, POLLIN, 0}};
      for (int fd : kept)
        fds.push_back({fd, POLLIN, 0});
      while (::poll(fds.data(), fds.size(), -1) < 0) {
      }
      if (fds[0].revents & POLLIN)
        break;
      for (std::size_t i = 2; i < fds.size(); ++i)
        if (fds[i].revents && !answer(fds[i].fd)) {
          ::close(fds[i].fd);
          std::erase(kept, fds[i].fd);
        }
      if (!(fds[1].revents & POLLIN))
        continue;
      int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0)
        continue;
      ++connections_;
      if (answer(fd))
        kept.push_back(fd);
      else
        ::close(fd);
    }
    for (int fd : kept)
      ::close(fd);
  }

  /// Reads one request from `fd` and answers it; true when the connection stays
  /// open for another.
  bool answer(int fd) {
    std::string in;
    char buf[65536];
    std::size_t header_end = std::string::npos;
    std::size_t content_length = 0;
    while (true) {
      if (header_end == std::string::npos && (header_end = in.find("\r\n\r\n")) != std::string::npos) {
        auto cl = lower(in.substr(0, header_end)).find("content-length:");
        if (cl != std::string::npos)
          content_length = std::stoul(in.substr(cl + 15));
      }
      if (header_end != std::string::npos && in.size() >= header_end + 4 + content_length)
        break;
      if (!wait_readable(fd))
        return false;
      auto n = ::read(fd, buf, sizeof buf);
      if (n <= 0)
        return false;
      in.append(buf, static_cast<std::size_t>(n));
    }
    Seen seen;
    auto first_line_end = in.find("\r\n");
    auto first = in.substr(0, first_line_end);
    auto sp1 = first.find(' ');
    seen.path = first.substr(sp1 + 1, first.find(' ', sp1 + 1) - sp1 - 1);
    if (auto q = seen.path.find('?'); q != std::string::npos) {
      seen.query = seen.path.substr(q + 1);
      seen.path.resize(q);
    }
    std::size_t pos = first_line_end + 2;
    while (pos < header_end) {
      auto eol = in.find("\r\n", pos);
      auto line = in.substr(pos, eol - pos);
      auto colon = line.find(':');
      if (colon != std::string::npos)
        seen.headers[lower(line.substr(0, colon))] = line.substr(line.find_first_not_of(' ', colon + 1));
      pos = eol + 2;
    }
    seen.body = in.substr(header_end + 4, content_length);
    bool get = first.starts_with("GET ");
    auto refusal = get ? std::nullopt : check(seen, keyless_);
    FakeResponse r;
    {
      std::lock_guard lock(mtx_);
      (get ? gets_ : seen_).push_back(std::move(seen));
      if (get && get_queue_.empty()) {
        r.status = 405; // what a server says that offers no GET stream
      } else if (get) {
        r = std::move(get_queue_.front());
        get_queue_.pop_front();
      } else if (refusal) {
        refused_.push_back(refusal->message);
        r.status = refusal->status;
        r.body = std::move(refusal->body);
      } else if (queue_.empty()) {
        r.status = 500;
        r.body = R"({"error":{"message":"the fake provider has no response scripted"}})";
      } else {
        r = std::move(queue_.front());
        queue_.pop_front();
      }
    }
    if (r.before)
      r.before();
    bool keep = keep_alive_ && r.cut_after == std::string::npos && r.stall_after == std::string::npos && !r.stream;
    std::string head = fmt::format("HTTP/1.1 {} X\r\nContent-Type: {}\r\n", r.status,
                                   !r.content_type.empty() ? r.content_type
                                   : r.status == 200       ? "text/event-stream"
                                                           : "application/json");
    head += keep ? fmt::format("Content-Length: {}\r\n", r.body.size()) : "Connection: close\r\n";
    for (auto& h : r.headers)
      head += h + "\r\n";
    head += "\r\n";
    send_all(fd, head);
    auto limit = std::min({r.body.size(), r.cut_after, r.stall_after});
    send_all(fd, r.body.substr(0, limit));
    if (r.stream) { // held open, the test's to send on and end
      r.stream->attach(fd);
      return false;
    }
    if (r.stall_after != std::string::npos && limit == r.stall_after && r.resume) {
      r.resume();
      send_all(fd, r.body.substr(limit));
    } else if (r.stall_after != std::string::npos && limit == r.stall_after) {
      // Quiet, with the connection open, until the client gives up or we stop.
      while (wait_readable(fd) && ::read(fd, buf, sizeof buf) > 0) {
      }
    }
    return keep && !r.then_close;
  }

  struct Refusal {
    int status = 400;
    std::string body;
    std::string message;
  };

  /// The refusal the real service would answer `seen` with, if any (`keyless`:
  /// whatever its key).
  static std::optional<Refusal> check(const Seen& seen, bool keyless) {
    if (auto v = azure_request_violation(seen.path, seen.query, seen.headers))
      return Refusal{v->status, azure_error_body(*v), v->message};
    bool openai = seen.path.ends_with("/chat/completions");
    bool anthropic = seen.path.ends_with("/messages");
    if (!openai && !anthropic)
      return std::nullopt;
    bool azure = seen.path.starts_with("/openai/deployments/"); // its key was checked above
    auto body = Json::parse(seen.body);
    auto v = anthropic             ? anthropic_header_violation(seen.headers, keyless)
             : !keyless && !azure ? openai_header_violation(seen.headers)
                                  : std::nullopt;
    if (!v)
      v = !body    ? std::optional<Violation>(Violation{"We could not parse the JSON body of your request."})
          : openai ? openai_request_violation(*body)
                   : anthropic_request_violation(*body);
    if (!v)
      return std::nullopt;
    // As a user reads it: OpenRouter's message, then the model's own service's words.
    return Refusal{v->status, openai ? openai_error_body(*v) : anthropic_error_body(*v),
                   v->raw.empty() ? v->message : v->message + ": " + v->raw};
  }

  static void send_all(int fd, const std::string& data) {
    std::size_t off = 0;
    while (off < data.size()) {
      auto n = ::send(fd, data.data() + off, data.size() - off, MSG_NOSIGNAL);
      if (n <= 0)
        return;
      off += static_cast<std::size_t>(n);
    }
  }

  static std::string lower(std::string s) {
    for (auto& c : s)
      c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
  }

  int listen_fd_ = -1;
  int stop_pipe_[2] = {-1, -1};
  int port_ = 0;
  bool keep_alive_ = false;
  std::atomic<bool> keyless_{false};
  std::atomic<int> connections_{0};
  std::atomic<bool> stopping_{false};
  std::thread thread_;
  std::mutex mtx_;
  std::deque<FakeResponse> queue_;
  std::deque<FakeResponse> get_queue_;
  std::vector<Seen> seen_;
  std::vector<Seen> gets_;
  std::vector<std::string> refused_;
};

} // namespace jp::testing
