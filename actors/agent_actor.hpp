// A scripted agent: plays its steps through a turn of its own -- each step's calls
// pre-registered as a batch, then run concurrently -- and ends the turn after the
// last step.  (run_atom) -> size_t (calls that failed), once the turn has ended.
#pragma once

#include <caf/fwd.hpp>
#include <memory>

#include "actors/turn_actor.hpp"
#include "runtime/script.hpp"

namespace jp {

class EventLog;

caf::actor spawn_agent(caf::actor_system& sys, ScriptAgent agent, TurnContext ctx,
                       std::shared_ptr<EventLog> log);

} // namespace jp
