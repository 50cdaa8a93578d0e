// A handle as turn-end events and progress displays list it.
#pragma once

#include <string>

#include "messages/tool_state.hpp"

namespace jp {

struct HandleSummary {
  std::string id;
  std::string tool;
  ToolState state;
  std::string policy; // what the supervisor applied at turn end ("abort", ...)
  double elapsed_secs = 0; // since the spawn
  std::string last_line;   // its output's last line, for a live display ("" = none yet)
  friend bool operator==(const HandleSummary&, const HandleSummary&) = default;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, HandleSummary& x) {
  return f(x.id, x.tool, x.state, x.policy, x.elapsed_secs, x.last_line);
}

} // namespace jp
