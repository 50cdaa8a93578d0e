// Sub-agents of a provider's turn (a query, an embedder's turn): the parent's
// provider answers them (with the model the spawn names, else the parent's), the
// parent's inquiry backend answers their questions, and `observe` says who watches
// each (the query's log under its path).
#pragma once

#include <functional>
#include <memory>

#include "subagent_handle.hpp"
#include "../runtime/provider/inquiry_backend.hpp"
#include "../runtime/provider/provider.hpp"

namespace jp {

class ProviderSubAgents final : public SubAgentHost {
public:
  /// The observer of the sub-agent at `path` (none: nobody watches).
  using Observe = std::function<std::shared_ptr<TurnObserver>(const std::string& path)>;
  ProviderSubAgents(std::shared_ptr<Provider> provider, std::shared_ptr<InquiryBackend> inquiry, Observe observe = {})
    : provider_(std::move(provider)), inquiry_(std::move(inquiry)), observe_(std::move(observe)) {}
  Status prepare(const std::string& path, const AgentSpec& spec, TurnLoopContext& ctx) override;

private:
  std::shared_ptr<Provider> provider_;
  std::shared_ptr<InquiryBackend> inquiry_;
  Observe observe_;
};

struct Script;

/// Who plays the sub-agents of a turn: a scripted assistant's `script` ([[subagents]],
/// as in `run`: its provider plays its first agent's steps alone), else `provider`.
std::shared_ptr<SubAgentHost> subagent_host(std::shared_ptr<Provider> provider,
                                            std::shared_ptr<InquiryBackend> inquiry,
                                            std::shared_ptr<const Script> script, ProviderSubAgents::Observe observe);

} // namespace jp
