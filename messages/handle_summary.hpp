// A handle as turn-end events and progress displays list it.
#pragma once

#include <cstdint>
#include <string>

#include "messages/child_spec.hpp"
#include "messages/tool_state.hpp"

namespace jp {

struct HandleSummary {
  std::string id;
  std::string tool;
  ToolState state;
  turn_end_policy policy = turn_end_policy::abort; // its child spec's
  double elapsed_secs = 0; // since the spawn
  std::string last_line;   // its output's last line, for a live display ("" = none yet)
  turn_end_outcome outcome = turn_end_outcome::none; // what the turn end applied
  friend bool operator==(const HandleSummary&, const HandleSummary&) = default;
};

/// How many handles a turn's registry started, and the most that ran at once (the
/// experiment report's figures; one-shot runs are not handles).
struct HandleCounts {
  int64_t spawned = 0;
  int64_t peak_live = 0;
  friend bool operator==(const HandleCounts&, const HandleCounts&) = default;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, HandleCounts& x) {
  return f(x.spawned, x.peak_live);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, HandleSummary& x) {
  return f(x.id, x.tool, x.state, x.policy, x.elapsed_secs, x.last_line, x.outcome);
}

} // namespace jp
