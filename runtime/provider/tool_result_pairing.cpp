#include "runtime/provider/tool_result_pairing.hpp"

#include <algorithm>
#include <fmt/format.h>

namespace jp {

namespace {

/// A tool result with no call to answer, as text the model can still read.
ChatMessage as_user_text(const ChatMessage& result) {
  auto name = result.tool_name.empty() ? std::string() : fmt::format(" ({})", result.tool_name);
  return ChatMessage{chat_role::user,
                     fmt::format("Result of the earlier tool call `{}`{}{}: {}", result.tool_call_id, name,
                                 result.tool_error ? ", failed" : "", result.text)};
}

} // namespace

std::vector<ChatMessage> pair_tool_results(const std::vector<ChatMessage>& messages) {
  std::vector<ChatMessage> out;
  size_t i = 0;
  while (i < messages.size()) {
    const auto& m = messages[i++];
    if (m.role == chat_role::tool) { // no assistant call right before it
      out.push_back(as_user_text(m));
      continue;
    }
    out.push_back(m);
    if (m.role != chat_role::assistant || m.tool_calls.empty())
      continue;
    // Everything up to the next assistant message: this call batch's answers.
    std::vector<const ChatMessage*> answers(m.tool_calls.size(), nullptr);
    std::vector<ChatMessage> after;
    for (; i < messages.size() && messages[i].role != chat_role::assistant; ++i) {
      const auto& next = messages[i];
      auto call = std::find_if(m.tool_calls.begin(), m.tool_calls.end(),
                               [&](const ToolCall& c) { return c.id == next.tool_call_id; });
      size_t k = static_cast<size_t>(call - m.tool_calls.begin());
      if (next.role == chat_role::tool && call != m.tool_calls.end() && !answers[k])
        answers[k] = &next;
      else
        after.push_back(next.role == chat_role::tool ? as_user_text(next) : next);
    }
    for (size_t k = 0; k < answers.size(); ++k) {
      const auto& c = m.tool_calls[k];
      out.push_back(answers[k] ? *answers[k]
                               : ChatMessage{chat_role::tool, "no result was recorded for this call", {}, c.id,
                                             c.name, true});
    }
    out.insert(out.end(), after.begin(), after.end());
  }
  return out;
}

} // namespace jp
