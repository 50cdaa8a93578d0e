#include "runtime/mcp/mcp_event_stream.hpp"

#include <algorithm>
#include <fmt/format.h>

#include "messages/json.hpp"
#include "runtime/text_nocase.hpp"

namespace jp {

EventStreamEnd open_event_stream(HttpPost get, const HttpLimits& limits,
                                 const std::function<void(const SseEvent&)>& on_event,
                                 const std::function<bool()>& stop) {
  get.method = "GET";
  get.body.clear();
  get.headers.push_back("Accept: text/event-stream");
  // A stream lasts as long as its session: its events are bounded, not their sum.
  auto stream_limits = limits;
  stream_limits.max_body_bytes = SIZE_MAX;
  EventStreamEnd end;
  SseParser parser(kMaxEventBytes);
  auto on_head = [&](const HttpResult& head) {
    end.not_stream = !contains_nocase(head.content_type, "text/event-stream");
  };
  auto on_body = [&](std::string_view bytes) {
    if (end.not_stream)
      return body_next::stop; // a page or JSON: nothing of it is a message
    parser.feed(bytes, [&](const SseEvent& e) {
      end.delivered = true;
      on_event(e);
    });
    return parser.overflowed() || stop() ? body_next::stop : body_next::more;
  };
  end.http = http_post_stream(get, stream_limits, on_body, stop, on_head);
  // A 2xx without a body has no head told (that comes with the body's first bytes):
  // one that is no event stream (a 202, an empty JSON answer) is one all the same.
  if (end.http.failure == http_failure::none && end.http.status / 100 == 2 && end.http.body_bytes == 0)
    end.not_stream = !contains_nocase(end.http.content_type, "text/event-stream");
  end.stopped = stop();
  if (end.not_stream)
    end.http.failure = http_failure::none; // told as what it was, not as a cancel
  else if (parser.overflowed())
    end.http.failure_text = fmt::format("an event larger than {} MiB", kMaxEventBytes >> 20);
  return end;
}

std::string describe_end(const EventStreamEnd& end) {
  auto& r = end.http;
  if (end.not_stream)
    return fmt::format("HTTP {} with Content-Type `{}`, not an event stream", r.status,
                       cut_text(r.content_type, 80));
  switch (r.failure) {
  case http_failure::none:
    if (r.status >= 200 && r.status <= 299)
      return "the server ended it";
    return fmt::format("HTTP {}: {}", r.status, r.error_body.empty() ? "(no body)" : cut_text(r.error_body, 300));
  case http_failure::connect: return "cannot be reached: " + r.failure_text;
  case http_failure::idle: return "it went quiet";
  default: return "the connection broke: " + (r.failure_text.empty() ? std::string("(no reason given)") : r.failure_text);
  }
}

std::chrono::milliseconds ReopenBackoff::after(bool worked) {
  if (worked) {
    failures_ = 0;
    return kAfterWorking;
  }
  failures_ = std::min(failures_ + 1, 16);
  return std::min<std::chrono::milliseconds>(kLongest, kFirstFailure * (1 << (failures_ - 1)));
}

} // namespace jp
