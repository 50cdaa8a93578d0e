// A handle as turn-end events and progress displays list it.
#pragma once

#include <cstdint>
#include <string>

#include "child_spec.hpp"
#include "tool_state.hpp"

namespace jp {

/// What a running handle reports of itself (peek), for a live view of it: the
/// figures of its kind. The views are the display's (the CLI's runtime/cli/
/// tool_views); a handle only reports. -1 / "": not of that kind, or none yet.
struct HandleProgress {
  std::string last_line; // its output's last line (a terminal's: its screen's)
  std::string node;      // a remote handle: the node it runs on
  int64_t done = -1;     // foreach: elements done, running, in all
  int64_t running = -1;
  int64_t total = -1;
  int64_t rounds = -1;   // agent: its responses and tool calls so far
  int64_t calls = -1;
  std::string message;   // a function handle (an MCP call): its last progress message
  friend bool operator==(const HandleProgress&, const HandleProgress&) = default;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, HandleProgress& x) {
  return f(x.last_line, x.node, x.done, x.running, x.total, x.rounds, x.calls, x.message);
}

struct HandleSummary {
  std::string id;
  std::string tool;
  ToolState state;
  turn_end_policy policy = turn_end_policy::abort; // its child spec's
  double elapsed_secs = 0; // since the spawn
  HandleProgress progress; // what it reports of itself (list only; last_line "" = none yet)
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
  return f(x.id, x.tool, x.state, x.policy, x.elapsed_secs, x.progress, x.outcome);
}

} // namespace jp
