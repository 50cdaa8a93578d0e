#include "runtime/store/subagent_store.hpp"

namespace jp {

bool is_subagent_event(const Json& event) {
  return event.find("agent") != nullptr;
}

Status SubAgentStore::append(const std::string& id, const Json& event) {
  if (is_subagent_event(event)) // a nested sub-agent's, on its way up
    return parent_ ? parent_->append(parent_id_, event) : Status::success();
  if (auto kept = own_.append(id, event); !kept)
    return kept;
  if (!parent_)
    return Status::success();
  // "agent" right after "event" (and "time", added by the store): where readers look.
  Json up = Json::object();
  for (auto& [key, value] : event.as_object()) {
    up.set(key, value);
    if (key == "event")
      up.set("agent", path_);
  }
  return parent_->append(parent_id_, up);
}

} // namespace jp
