#include "actors/provider_subagents.hpp"

#include <fmt/format.h>

#include "messages/thrown_text.hpp"

namespace jp {

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
  return Status::ok();
}

} // namespace jp
