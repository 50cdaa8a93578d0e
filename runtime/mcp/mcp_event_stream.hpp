// A GET event stream from an MCP server: Streamable HTTP's stream of the server's own
// messages (requests and notifications outside any answer), and the legacy HTTP+SSE
// transport's one stream, which carries every answer. One GET with
// `Accept: text/event-stream` (libcurl, blocking: on a thread of its own), its
// events handed on as they come. And when to open such a stream again after it ended.
#pragma once

#include <chrono>
#include <functional>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "../provider/http_stream.hpp"
#include "../provider/sse.hpp"

namespace jp {

/// How a stream ended.
struct EventStreamEnd {
  HttpResult http;        // the GET's status and failure
  bool not_stream = false; // a 2xx that was no event stream (its Content-Type in http)
  bool delivered = false;  // at least one event came
  bool stopped = false;    // `stop` said so
};

/// The largest event a stream takes: what one answer may be (a Streamable HTTP POST's).
inline constexpr size_t kMaxEventBytes = size_t{64} << 20;

/// GETs `get.url` with `get.headers` (plus Accept: text/event-stream) and hands each
/// event on as it comes, until the server ends the stream, it breaks, it passes
/// `limits`' timeouts (its body is as long as its session; an event over
/// kMaxEventBytes ends it), or `stop` (polled at least once a second) says so.
EventStreamEnd open_event_stream(HttpPost get, const HttpLimits& limits,
                                 const std::function<void(const SseEvent&)>& on_event,
                                 const std::function<bool()>& stop);

/// What went wrong with a stream that ended, in a user's words ("HTTP 500: ...").
std::string describe_end(const EventStreamEnd& end);

/// When to open a stream again after it ended: soon after one that worked (it stayed
/// open a while), later and later after each that did not, up to kLongest -- a server
/// that drops the stream at once is not asked in a loop, and one down for a while
/// is heard again once it is back.
class ReopenBackoff {
public:
  static constexpr auto kAfterWorking = std::chrono::milliseconds(500);
  static constexpr auto kFirstFailure = std::chrono::milliseconds(1000); // doubled after each
  static constexpr auto kLongest = std::chrono::milliseconds(30000);

  /// How long to wait before opening it again.
  std::chrono::milliseconds after(bool worked);

private:
  int failures_ = 0;
};

} // namespace jp
