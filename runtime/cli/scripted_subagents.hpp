// A scripted run's sub-agents: a sub-agent spawned with script = NAME plays the
// script's [[subagents]] entry NAME, with {{prompt}} replaced by its prompt; its
// events go to the run's log under its path ("main/worker1").
#pragma once

#include <memory>

#include "actors/subagent_handle.hpp"
#include "runtime/cli/terminal_hooks.hpp"
#include "runtime/store/event_log.hpp"
#include "runtime/store/script.hpp"

namespace jp {

class ScriptedSubAgents final : public SubAgentHost {
public:
  ScriptedSubAgents(std::shared_ptr<const Script> script, std::shared_ptr<EventLog> log,
                    EventLogObserver::text_mode text)
    : script_(std::move(script)), log_(std::move(log)), text_(text) {}
  Status prepare(const std::string& path, const AgentSpec& spec, TurnLoopContext& ctx) override;

private:
  std::shared_ptr<const Script> script_;
  std::shared_ptr<EventLog> log_;
  EventLogObserver::text_mode text_;
};

} // namespace jp
