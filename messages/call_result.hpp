// What the assistant gets back for one tool call: the content it sees, and whether
// the call itself failed (bad arguments, unknown handle, a one-shot tool's error).
#pragma once

#include <string>
#include <vector>

#include "notification.hpp"
#include "tool_image.hpp"

namespace jp {

struct CallResult {
  bool ok = true;
  std::string content;
  bool json = false; // content is a JSON object (stateful and await answers)
  // Notifications this answer carries (already in `content`, listed for the log).
  std::vector<Notification> notifications;
  std::vector<ToolImage> images; // what the tool's result showed (ToolState's)
  friend bool operator==(const CallResult&, const CallResult&) = default;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, CallResult& x) {
  return f(x.ok, x.content, x.json, x.notifications, x.images);
}

} // namespace jp
