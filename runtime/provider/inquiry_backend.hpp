// The assistant answering structured questions (RFD 026's InquiryBackend), one of
// the agent loop's hooks (actors/turn_hooks.hpp). Here, beside the providers that
// implement it, so the providers need nothing from the actors.
#pragma once

#include <functional>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "../../messages/chat.hpp"
#include "../../messages/child_spec.hpp"
#include "../../messages/handle_summary.hpp"
#include "../../messages/json.hpp"
#include "../../messages/result.hpp"
#include "../../messages/tool_state.hpp"

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
  /// As above, for one turn: `stopped` says its turn was interrupted (the question
  /// then ends unanswered, or is not asked). One backend serves a turn and all its
  /// sub-agents at once: this is how one of them stops its own questions alone. By
  /// default the plain forms, after a look at `stopped` (cancel() is told too).
  virtual Result<InquiryAnswers> turn_end(const std::vector<HandleSummary>& outstanding,
                                          const std::vector<ChatMessage>& recent,
                                          const std::function<bool()>& stopped) {
    if (stopped && stopped())
      return Error{"cancelled"};
    return turn_end(outstanding, recent);
  }
  virtual std::optional<Json> answer(const std::string& tool, const Question& q,
                                     const std::function<bool()>& stopped) {
    if (stopped && stopped())
      return std::nullopt;
    return answer(tool, q);
  }
  /// A turn was interrupted: a question being asked ends now (unanswered).
  virtual void cancel() {}
};

} // namespace jp
