// What the assistant gets back for one tool call: the content it sees, and whether
// the call itself failed (bad arguments, unknown handle, a one-shot tool's error).
#pragma once

#include <string>

namespace jp {

struct CallResult {
  bool ok = true;
  std::string content;
  friend bool operator==(const CallResult&, const CallResult&) = default;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, CallResult& x) {
  return f(x.ok, x.content);
}

} // namespace jp
