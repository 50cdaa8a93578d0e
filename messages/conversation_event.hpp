// What a conversation records (events.jsonl, see runtime/store/conversation_store.hpp):
// one plain struct per event kind, written by the turn loop and read back by replay,
// `conversations ls` and `conversations show`. The JSON shape of each lives in
// messages/conversation_event_codec.hpp; "time" is the store's (it stamps each append).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "chat.hpp"
#include "child_spec.hpp"
#include "handle_summary.hpp"
#include "json.hpp"
#include "notification.hpp"
#include "tool_state.hpp"

namespace jp {

/// The user's prompt, with the notifications the previous turn could not deliver.
struct TurnStartEvent {
  static constexpr std::string_view kind = "turn_start";
  std::string prompt;
  std::string model;
  std::vector<Notification> notifications;
};

/// A request to the provider: how many messages it carried.
struct ChatRequestEvent {
  static constexpr std::string_view kind = "chat_request";
  std::string model;
  int64_t messages = 0;
};

/// The assistant's answer as far as it came; a cut one (interrupted, or the stream
/// failed with `error`) keeps its text but no tool calls.
struct ChatResponseEvent {
  static constexpr std::string_view kind = "chat_response";
  std::string text;
  std::vector<ToolCall> tool_calls;
  std::string finish_reason;
  bool interrupted = false;
  std::string error; // "" = none
  std::string provider_extra; // ChatMessage's: what the provider wants back on it ("" = none)
  int64_t tokens_in = -1;      // the usage the provider reported (-1: none)
  int64_t tokens_out = -1;
};

struct ToolCallRequestEvent {
  static constexpr std::string_view kind = "tool_call_request";
  ToolCall call;
};

struct ToolCallResponseEvent {
  static constexpr std::string_view kind = "tool_call_response";
  std::string id;
  std::string name;
  bool ok = true;
  std::string content;
  std::vector<ToolImage> images; // shown to the model with `content`
};

/// The assistant is asked on the user's behalf: at a turn's end, what to do with
/// the handles still running (`handles`: id, tool, elapsed_secs), or a tool's
/// question (`tool`, `question`).
struct InquiryRequestEvent {
  static constexpr std::string_view kind = "inquiry_request";
  std::vector<HandleSummary> handles;
  std::string tool;
  std::optional<Question> question;
};

/// What the inquiry answered: the turn end's `answers` (with `error`, "" when it
/// worked), or the answer to a tool's question (`question_id`, `answer`; null =
/// none).
struct InquiryResponseEvent {
  static constexpr std::string_view kind = "inquiry_response";
  std::optional<InquiryAnswers> answers;
  std::string error;
  std::string question_id;
  Json answer;
};

/// `delivered`: a request of its turn carried it; otherwise the next turn does.
struct SystemNotificationEvent {
  static constexpr std::string_view kind = "system_notification";
  Notification notification;
  bool delivered = false;
};

/// The person's reply, typed at the interrupt menu during a turn: it goes to the
/// assistant with the next request of the turn, after what was said before it.
struct UserReplyEvent {
  static constexpr std::string_view kind = "user_reply";
  std::string text;
};

/// How a turn ended. `handles` is absent when the turn end never got to them (the
/// turn actor failed, or a second interrupt killed it); `error` "" = none.
struct TurnEndEvent {
  static constexpr std::string_view kind = "turn_end";
  std::optional<std::vector<HandleSummary>> handles;
  bool interrupted = false;
  std::string error;
};

using ConversationEvent =
  std::variant<TurnStartEvent, ChatRequestEvent, ChatResponseEvent, ToolCallRequestEvent,
               ToolCallResponseEvent, InquiryRequestEvent, InquiryResponseEvent,
               SystemNotificationEvent, TurnEndEvent, UserReplyEvent>;

/// Every kind's "event" spelling (the store accepts appends of these only).
inline constexpr std::array<std::string_view, 10> conversation_event_kinds = {
  TurnStartEvent::kind,        ChatRequestEvent::kind,        ChatResponseEvent::kind,
  ToolCallRequestEvent::kind,  ToolCallResponseEvent::kind,   InquiryRequestEvent::kind,
  InquiryResponseEvent::kind,  SystemNotificationEvent::kind, TurnEndEvent::kind,
  UserReplyEvent::kind};

} // namespace jp
