#include "actors/scripted_subagents.hpp"

#include <fmt/format.h>

#include "runtime/provider/scripted_provider.hpp"

namespace jp {

Status ScriptedSubAgents::prepare(const std::string& path, const AgentSpec& spec, TurnLoopContext& ctx) {
  if (spec.script.empty()) {
    std::vector<std::string> names;
    for (auto& sub : script_->subagents)
      names.push_back("`" + sub.name + "`");
    return Error{fmt::format("in a scripted run a sub-agent plays one of the script's [[subagents]]: give `script` "
                             "naming one{}",
                             names.empty() ? std::string(" (this script has none)")
                                           : fmt::format(" ({})", fmt::join(names, ", ")))};
  }
  auto agent = scripted_subagent(*script_, spec.script, spec.prompt, spec.element);
  if (!agent)
    return Error{agent.error()};
  ctx.provider = make_scripted_provider(*agent);
  ctx.inquiry = make_scripted_inquiry(*agent, true, [errors = errors_, path](const std::string& text) {
    std::lock_guard lock(errors->mutex);
    if (errors->first.empty())
      errors->first = fmt::format("sub-agent {}: {}", path, text);
  });
  if (observe_)
    ctx.observer = observe_(path);
  return Status::success();
}

} // namespace jp
