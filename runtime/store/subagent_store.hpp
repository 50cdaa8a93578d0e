// A sub-agent's conversation store: its own conversation, kept in memory while it
// lives (an `apply` continues it), and every event it records also appended to its
// parent's conversation with "agent": its path (DESIGN.md "Scripts": sub-agents'
// events go to the parent conversation's store, linked by path). A parent that
// loads its conversation passes over events that carry an "agent".
#pragma once

#include <memory>
#include <string>

#include "conversation_store.hpp"

namespace jp {

class SubAgentStore final : public ConversationStore {
public:
  /// `parent` may be null (a scripted run keeps no conversation): then nothing is
  /// passed up.
  SubAgentStore(std::shared_ptr<ConversationStore> parent, std::string parent_id, std::string path)
    : parent_(std::move(parent)), parent_id_(std::move(parent_id)), path_(std::move(path)) {}

  Result<std::string> create() override { return own_.create(); }
  Result<LoadedConversation> load(const std::string& id) override { return own_.load(id); }
  /// Its own events are kept and passed up with its path; a nested sub-agent's
  /// (which already carry theirs) are only passed up. A failed append upward fails:
  /// what the parent's conversation keeps must not have holes.
  Status append(const std::string& id, const Json& event) override;
  Result<std::vector<ConversationInfo>> list() override { return own_.list(); }
  Result<std::string> active() override { return own_.active(); }
  Status set_active(const std::string& id) override { return own_.set_active(id); }

private:
  MemoryConversationStore own_;
  std::shared_ptr<ConversationStore> parent_;
  std::string parent_id_;
  std::string path_;
};

/// Whether a stored event is a sub-agent's (it names the agent it came from).
bool is_subagent_event(const Json& event);

} // namespace jp
