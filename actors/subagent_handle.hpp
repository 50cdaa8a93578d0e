// A sub-agent handle (DESIGN.md "Sub-agents"): a handle whose actor owns a nested
// turn loop -- an assistant of its own, with its own turn and registry, in the same
// workspace -- instead of a process. It speaks the handle interface like any other,
// so the registry supervises it, `await` covers it beside processes, and aborting it
// ends its turn and every handle it owns (processes and sub-agents, recursively).
//   fetch  -> what it said since the last look, and its progress
//   apply  -> input: its next user message (queued while it works)
//   abort  -> its turn ends now, with everything it started
//   stopped: the result it yielded (yield_to_parent), else its final answer; a
//            failed turn is an error (transient when the provider could not be reached)
#pragma once

#include <memory>
#include <string>

#include "registry_actor.hpp"
#include "turn_loop.hpp"
#include "../messages/agent_spec.hpp"

namespace jp {

/// Where a sub-agent's assistant comes from (the capability the `agent` tool uses,
/// tool-to-promise's ThreadManager): the provider that answers it, the inquiry
/// backend, who watches. The CLI's scripted runs play a script's [[subagents]] entry;
/// a query gives the parent's provider. No tool knows which.
class SubAgentHost {
public:
  virtual ~SubAgentHost() = default;
  /// Fills in `ctx` (its config, io, model, prompts and limits are set already) for
  /// the sub-agent at `path` ("main/worker1") started with `spec`, or says why it
  /// cannot start.
  virtual Status prepare(const std::string& path, const AgentSpec& spec, TurnLoopContext& ctx) = 0;
};

/// Starts sub-agent handles for the agent whose loop context is `parent` (its
/// config, provider settings, path and host).
HandleFactory subagent_factory(const TurnLoopContext& parent);

/// The parent's config narrowed for a sub-agent: only `spec.tools` where narrowed
/// (none for an empty list; await comes with any), else all; yield_to_parent added.
Config subagent_config(const Config& parent, const AgentSpec& spec);

} // namespace jp
