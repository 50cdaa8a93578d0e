// A query's sub-agents: the parent's provider answers them (with the model the
// spawn names, else the parent's), the parent's inquiry backend answers their
// questions, and their events go to the query's log under their path.
#pragma once

#include <memory>

#include "actors/subagent_handle.hpp"
#include "runtime/cli/terminal_hooks.hpp"
#include "runtime/provider/inquiry_backend.hpp"
#include "runtime/provider/provider.hpp"
#include "runtime/store/event_log.hpp"

namespace jp {

class ProviderSubAgents final : public SubAgentHost {
public:
  ProviderSubAgents(std::shared_ptr<Provider> provider, std::shared_ptr<InquiryBackend> inquiry,
                    std::shared_ptr<EventLog> log, EventLogObserver::text_mode text)
    : provider_(std::move(provider)), inquiry_(std::move(inquiry)), log_(std::move(log)), text_(text) {}
  Status prepare(const std::string& path, const AgentSpec& spec, TurnLoopContext& ctx) override;

private:
  std::shared_ptr<Provider> provider_;
  std::shared_ptr<InquiryBackend> inquiry_;
  std::shared_ptr<EventLog> log_;
  EventLogObserver::text_mode text_;
};

} // namespace jp
