#include "actors/provider_subagents.hpp"

#include <fmt/format.h>

#include "actors/scripted_subagents.hpp"
#include "messages/thrown_text.hpp"

namespace jp {

std::shared_ptr<SubAgentHost> subagent_host(std::shared_ptr<Provider> provider,
                                            std::shared_ptr<InquiryBackend> inquiry,
                                            std::shared_ptr<const Script> script, ProviderSubAgents::Observe observe) {
  if (script)
    return std::make_shared<ScriptedSubAgents>(std::move(script), std::move(observe));
  return std::make_shared<ProviderSubAgents>(std::move(provider), std::move(inquiry), std::move(observe));
}

Status ProviderSubAgents::prepare(const std::string& path, const AgentSpec& spec, TurnLoopContext& ctx) {
  if (!spec.script.empty())
    return Error{"`script` names a scripted sub-agent, which only a scripted run (jp-actors run) plays; leave it "
                 "out here"};
  ctx.provider = provider_;
  ctx.inquiry = inquiry_;
  // The program's own function, run on the registry: one that throws refuses this
  // sub-agent, with the reason, instead of ending the registry and its handles.
  if (observe_)
    try {
      ctx.observer = observe_(path);
    } catch (...) {
      return Error{fmt::format("the program's observer for sub-agent {} could not be made: {}", path, thrown_text())};
    }
  return Status::success();
}

} // namespace jp
