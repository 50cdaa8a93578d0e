#include "runtime/provider/sse.hpp"

#include <utility>

namespace jp {

SseParser::SseParser(size_t max_event_bytes) : max_event_bytes_(max_event_bytes) {}

void SseParser::feed(std::string_view bytes,
                     const std::function<void(const SseEvent&)>& on_event) {
  while (!bytes.empty() && !overflowed_) {
    if (skip_lf_) {
      skip_lf_ = false;
      if (bytes.front() == '\n') {
        bytes.remove_prefix(1);
        continue;
      }
    }
    auto end = bytes.find_first_of("\r\n");
    auto part = bytes.substr(0, end);
    if (line_.size() + part.size() + data_.size() > max_event_bytes_) {
      overflowed_ = true;
      return;
    }
    line_.append(part);
    if (end == std::string_view::npos)
      return; // the line continues in the next feed
    skip_lf_ = bytes[end] == '\r';
    bytes.remove_prefix(end + 1);
    process_line(on_event);
  }
}

bool SseParser::pending() const {
  return !line_.empty() || !data_.empty() || !event_.empty();
}

void SseParser::process_line(const std::function<void(const SseEvent&)>& on_event) {
  std::string line = std::move(line_);
  line_.clear();
  if (first_line_) {
    first_line_ = false;
    if (line.starts_with("\xEF\xBB\xBF"))
      line.erase(0, 3);
  }
  if (line.empty()) {
    // Dispatch. An event without data lines is dropped (WHATWG).
    if (!data_.empty()) {
      data_.pop_back(); // the \n after the last data line
      SseEvent ev{std::move(event_), std::move(data_)};
      on_event(ev);
    }
    event_.clear();
    data_.clear();
    return;
  }
  if (line.front() == ':')
    return; // a comment (servers send them as keep-alives)
  std::string_view field = line;
  std::string_view value;
  if (auto colon = field.find(':'); colon != std::string_view::npos) {
    value = field.substr(colon + 1);
    field = field.substr(0, colon);
    if (value.starts_with(' '))
      value.remove_prefix(1);
  }
  if (field == "data") {
    data_.append(value);
    data_.push_back('\n');
  } else if (field == "event") {
    event_ = value;
  }
  // `id`, `retry` and unknown fields: nothing a provider stream needs.
}

} // namespace jp
