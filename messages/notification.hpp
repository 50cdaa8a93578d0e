// A system notification (RFD 011's shape: {kind:{source,name}, level, message}):
// what the runtime tells the assistant without being asked, carried on the next
// tool response (and, in `run --json`, logged as a `notification` event).
#pragma once

#include <string>

namespace jp {

struct Notification {
  std::string source = "tool"; // kind.source
  std::string name;            // kind.name: tool.stopped | tool.output
  std::string level = "info";  // info | warning | error
  std::string message;
  std::string handle;          // the handle it is about (for coalescing); not shown
  friend bool operator==(const Notification&, const Notification&) = default;
};

/// Not shown: the registry's word to the turn that a handle whose tool.waiting it
/// sent asks no more (a question not carried yet is dropped).
inline constexpr const char* waiting_over_notification = "tool.waiting_over";

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, Notification& x) {
  return f(x.source, x.name, x.level, x.message, x.handle);
}

} // namespace jp
