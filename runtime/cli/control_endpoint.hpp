// What a running `query` or `run` answers on its control socket
// (runtime/control_socket.hpp): the handles its agents' turns hold, and an abort of
// one, asked of the turn loops themselves.
#pragma once

#include <caf/fwd.hpp>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "runtime/control_socket.hpp"

namespace jp {

class LiveLoops;

/// Who holds the handles, for `handles ls`.
struct ControlHolder {
  std::string command;   // "query" or "run"
  std::string workspace; // absolute
  std::string holder;    // e.g. "conversation 3f2a..." or "script examples/x.toml"
};

/// Listens for `handles ls` / `handles abort` on behalf of `loops`: the agents'
/// turn loops, their sub-agents' too. An abort is waited for `abort_secs` at most (a
/// handle's grace, and then some): an answer lost with an ending turn must not hold
/// up the exit. nullptr when it cannot listen: a note says why on stderr, and the run
/// goes on without it.
std::unique_ptr<ControlServer> start_control_endpoint(caf::actor_system& sys, std::shared_ptr<LiveLoops> loops,
                                                      ControlHolder holder, double abort_secs);

} // namespace jp
