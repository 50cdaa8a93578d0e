// A scripted run's sub-agents: a sub-agent spawned with script = NAME plays the
// script's [[subagents]] entry NAME, with {{prompt}} replaced by its prompt. Who
// watches each is the caller's (the CLI's event log, under the sub-agent's path
// "main/worker1"; nobody in the benchmark).
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "subagent_handle.hpp"
#include "../runtime/store/script.hpp"

namespace jp {

class ScriptedSubAgents final : public SubAgentHost {
public:
  /// The observer of the sub-agent at `path` (none: nobody watches).
  using Observe = std::function<std::shared_ptr<TurnObserver>(const std::string& path)>;
  ScriptedSubAgents(std::shared_ptr<const Script> script, Observe observe = {})
    : script_(std::move(script)), observe_(std::move(observe)) {}
  Status prepare(const std::string& path, const AgentSpec& spec, TurnLoopContext& ctx) override;

  /// The first script error a sub-agent met ("" none): an on_turn_end answer its
  /// entry lacks. It fails the run as an agent's own would.
  std::string script_error() const {
    std::lock_guard lock(errors_->mutex);
    return errors_->first;
  }

private:
  std::shared_ptr<const Script> script_;
  Observe observe_;
  struct Errors {
    std::mutex mutex;
    std::string first;
  };
  std::shared_ptr<Errors> errors_ = std::make_shared<Errors>(); // the sub-agents' inquiries write it
};

} // namespace jp
