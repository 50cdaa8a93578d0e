// One HTTP request (a POST, or a body-less DELETE or GET) whose response body streams in (libcurl, blocking: run it off the
// actor threads). The caller gets the body chunk by chunk as it arrives, and a
// result that says how the exchange ended, in terms it can act on.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace jp {

struct HttpPost {
  std::string url;
  std::vector<std::string> headers; // "Name: value"
  std::string body;
  std::string method = "POST"; // or "DELETE" or "GET" (no body is sent)
};

struct HttpLimits {
  std::chrono::milliseconds connect_timeout{30000};
  std::chrono::milliseconds idle_timeout{60000}; // no byte for this long: give up
  std::size_t max_body_bytes = 64u << 20;        // a response larger than this is cut
};

enum class http_failure : uint8_t {
  none,      // a response came and ended
  connect,   // no connection (refused, unresolvable, timed out)
  idle,      // the server went quiet for idle_timeout
  too_large, // the body passed max_body_bytes
  cancelled, // the caller stopped it
  transport, // anything else curl reports (reset, TLS, ...)
};

struct HttpResult {
  long status = 0;          // 0 when no response came
  std::string retry_after;  // the wait asked for: Retry-After, or retry-after-ms in seconds
  std::string content_type; // the Content-Type header, if any
  std::vector<std::pair<std::string, std::string>> headers; // every header, names in lower case
  std::string error_body;   // the body of a non-2xx response (first 64 KiB)
  http_failure failure = http_failure::none;
  std::string failure_text; // curl's words for it
  bool refused = false;     // connect: the host answered that nothing listens there (ECONNREFUSED)
  std::size_t body_bytes = 0;

  /// The value of header `lower_name` (its first), "" when there is none.
  std::string_view header(std::string_view lower_name) const {
    for (auto& [name, value] : headers)
      if (name == lower_name)
        return value;
    return {};
  }
};

/// What the reader of a response's body wants after a piece of it.
enum class body_next : uint8_t {
  more, // go on
  stop, // stop now: failure = cancelled
  // It has all it wants (the stream's last event came): the body's own end is read
  // when it follows at once, so the connection can serve the next request; a server
  // that holds the body open past that is let go of (failure = cancelled) within a
  // second.
  done,
};

/// POSTs `post`. A 2xx response's body goes to `on_body` as it arrives; other
/// bodies are kept in error_body. The connection is kept for the next request to
/// the same scheme, host and port (if the server keeps it, for up to 30 s idle).
/// `cancelled` is polled while waiting (at least once a second). `on_head`, if given,
/// sees a 2xx response's status and headers before its first body byte.
HttpResult http_post_stream(const HttpPost& post, const HttpLimits& limits,
                            const std::function<body_next(std::string_view)>& on_body,
                            const std::function<bool()>& cancelled,
                            const std::function<void(const HttpResult&)>& on_head = {});

} // namespace jp
