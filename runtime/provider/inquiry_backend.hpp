// The assistant answering structured questions (RFD 026's InquiryBackend), one of
// the agent loop's hooks (actors/turn_hooks.hpp). Here, beside the providers that
// implement it, so the providers need nothing from the actors.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "messages/chat.hpp"
#include "messages/child_spec.hpp"
#include "messages/handle_summary.hpp"
#include "messages/json.hpp"
#include "messages/result.hpp"
#include "messages/tool_state.hpp"

namespace jp {

/// Structured answers from the assistant itself (RFD 026's InquiryBackend): the
/// turn-end inquiry (wait or abort, per handle) and questions whose target is the
/// assistant. May block; called off the actor threads.
class InquiryBackend {
public:
  virtual ~InquiryBackend() = default;
  /// `recent`: the conversation's last messages, so the answer knows why each
  /// handle was spawned.
  virtual Result<InquiryAnswers> turn_end(const std::vector<HandleSummary>& outstanding,
                                          const std::vector<ChatMessage>& recent) = 0;
  virtual std::optional<Json> answer(const std::string& tool, const Question& q) = 0;
  /// The turn was interrupted: a question being asked ends now (unanswered).
  virtual void cancel() {}
};

} // namespace jp
