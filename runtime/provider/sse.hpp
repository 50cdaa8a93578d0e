// Server-Sent Events (the WHATWG "event stream" rules) read incrementally: provider
// responses arrive in arbitrary chunks, so lines and events may be split anywhere,
// even between the \r and \n of one line ending.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

namespace jp {

/// One dispatched event. `event` is the `event:` field as sent ("" when the stream
/// named none; WHATWG would call it "message"); `data` is the `data:` lines joined
/// with \n.
struct SseEvent {
  std::string event;
  std::string data;
  friend bool operator==(const SseEvent&, const SseEvent&) = default;
};

class SseParser {
public:
  static constexpr size_t default_max_event_bytes = size_t{8} << 20;

  /// An event (its data plus the line being read) larger than `max_event_bytes`
  /// stops the parser: see overflowed().
  explicit SseParser(size_t max_event_bytes = default_max_event_bytes);

  /// Reads the next bytes of the stream, calling on_event for each complete event.
  /// Does nothing once overflowed().
  void feed(std::string_view bytes, const std::function<void(const SseEvent&)>& on_event);

  /// Part of an event is buffered: a stream that ends now was cut mid-event.
  bool pending() const;

  /// An event outgrew the cap; the parser ignores the rest of the stream (the
  /// caller reports the error: a provider does not send such events).
  bool overflowed() const { return overflowed_; }

private:
  void process_line(const std::function<void(const SseEvent&)>& on_event);

  size_t max_event_bytes_;
  std::string line_;         // the current line, without its ending
  bool skip_lf_ = false;     // the last byte was \r: a \n next is the same ending
  bool first_line_ = true;   // a UTF-8 BOM may start the stream
  std::string event_;        // the `event:` field of the event being read
  std::string data_;         // its `data:` lines, each followed by \n
  bool overflowed_ = false;
};

} // namespace jp
