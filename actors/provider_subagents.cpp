#include "actors/provider_subagents.hpp"

namespace jp {

Status ProviderSubAgents::prepare(const std::string& path, const AgentSpec& spec, TurnLoopContext& ctx) {
  if (!spec.script.empty())
    return Error{"`script` names a scripted sub-agent, which only a scripted run (jp-actors run) plays; leave it "
                 "out here"};
  ctx.provider = provider_;
  ctx.inquiry = inquiry_;
  if (observe_)
    ctx.observer = observe_(path);
  return Status::ok();
}

} // namespace jp
