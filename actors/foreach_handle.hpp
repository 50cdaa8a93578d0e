// A foreach handle (the `foreach` tool, DESIGN.md "Sub-agents"): one sub-agent per
// element, at most max_concurrent at a time. It is their supervisor as the registry
// is its: each sub-agent reports its stop to it, and it starts the next.
//   fetch  -> each element's state: queued, running (waiting: its question), done
//   abort  -> every running sub-agent is aborted; queued elements never start
//   stopped: a JSON array in element order of {element, result} or {element, error}
#pragma once

#include <functional>
#include <string>

#include "interfaces.hpp"
#include "../messages/agent_spec.hpp"

namespace jp {

/// Starts one sub-agent under `id`, spawned by `spawner`, reporting to `supervisor`;
/// none (an invalid handle) while no more may run at once ([agents] max_live).
using SubAgentStarter = std::function<handle_actor(caf::local_actor* spawner, const std::string& id,
                                                   const AgentSpec& spec, const supervisor_actor& supervisor)>;

/// A question of element `index` (`element`) as the agent above reads it: "[1] b: "
/// before its text, which element asks.
std::string element_question_text(int index, const std::string& element, const std::string& text);

/// Runs `spec.elements` (spec.foreach) through `start`, each with {{element}} in
/// spec.prompt replaced by its element. Its looks and result are held to
/// `output_cap` bytes (0: none): past it, each element's result over its share
/// keeps its tail.
handle_actor spawn_foreach(caf::local_actor* spawner, const std::string& id, const AgentSpec& spec,
                           SubAgentStarter start, const supervisor_actor& supervisor, uint64_t output_cap = 0);

} // namespace jp
