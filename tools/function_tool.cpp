#include "tools/function_tool.hpp"

#include <mutex>
#include <optional>

namespace jp {

struct FunctionResult::Shared {
  std::mutex mtx;
  std::optional<ToolState> state;
  std::function<void(ToolState)> listener;
};

FunctionResult::FunctionResult() : shared_(std::make_shared<Shared>()) {}

FunctionResult FunctionResult::ready(ToolState final_state) {
  FunctionResult r;
  r.set(std::move(final_state));
  return r;
}

bool FunctionResult::set(ToolState final_state) const {
  // A function that says "done" with a running state still ended.
  final_state.kind = state_kind::stopped;
  std::function<void(ToolState)> listener;
  {
    std::lock_guard lock(shared_->mtx);
    if (shared_->state)
      return false;
    shared_->state = final_state;
    listener = std::move(shared_->listener);
  }
  // Outside the lock: the listener may do anything, also read this result.
  if (listener)
    listener(std::move(final_state));
  return true;
}

bool FunctionResult::is_set() const {
  std::lock_guard lock(shared_->mtx);
  return shared_->state.has_value();
}

void FunctionResult::on_set(std::function<void(ToolState)> k) const {
  std::optional<ToolState> now;
  {
    std::lock_guard lock(shared_->mtx);
    if (!shared_->state) {
      shared_->listener = std::move(k);
      return;
    }
    now = shared_->state;
  }
  k(std::move(*now));
}

ToolConfig function_tool_config(std::string name, std::string summary, std::vector<ParameterConfig> parameters,
                                bool takes_input) {
  ToolConfig t;
  t.name = std::move(name);
  t.source = function_tool_source;
  t.summary = std::move(summary);
  t.parameters = std::move(parameters);
  t.run = run_mode::unattended;
  t.stateful = true;
  t.actions = {action_kind::spawn, action_kind::fetch, action_kind::abort};
  if (takes_input)
    t.actions.insert(t.actions.begin() + 2, action_kind::apply);
  t.lifecycle.on_turn_end = turn_end_policy::abort;
  t.wait_ms = 0;
  return t;
}

} // namespace jp
