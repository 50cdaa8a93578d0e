#include "messages/conversation_event_codec.hpp"

#include <algorithm>
#include <fmt/format.h>

#include "messages/json_codec.hpp"

namespace jp {

namespace {

Json head(std::string_view kind) {
  return Json::object().set("event", kind);
}

/// `extra` (a provider_extra: a JSON object as text) as it is logged; null when none.
Json extra_json(const std::string& extra) {
  if (extra.empty())
    return Json();
  auto parsed = Json::parse(extra);
  return parsed && parsed->is_object() ? std::move(*parsed) : Json();
}

Json call_json(const ToolCall& c) {
  auto args = Json::parse(c.arguments);
  auto j = Json::object().set("id", c.id).set("name", c.name).set("arguments", args ? *args : Json(c.arguments));
  if (auto extra = extra_json(c.provider_extra); !extra.is_null())
    j.set("provider_extra", std::move(extra));
  return j;
}

Json encode(const TurnStartEvent& e) {
  auto j = head(e.kind).set("prompt", e.prompt).set("model", e.model);
  if (!e.notifications.empty()) {
    auto notes = Json::array();
    for (auto& n : e.notifications)
      notes.push(to_json(n));
    j.set("notifications", std::move(notes));
  }
  return j;
}

Json encode(const ChatRequestEvent& e) {
  return head(e.kind).set("model", e.model).set("messages", e.messages);
}

Json encode(const ChatResponseEvent& e) {
  auto calls = Json::array();
  for (auto& c : e.tool_calls)
    calls.push(call_json(c));
  auto j = head(e.kind).set("text", e.text).set("tool_calls", std::move(calls)).set("finish_reason", e.finish_reason);
  if (e.interrupted)
    j.set("interrupted", true);
  if (!e.error.empty())
    j.set("error", e.error);
  if (auto extra = extra_json(e.provider_extra); !extra.is_null())
    j.set("provider_extra", std::move(extra));
  if (e.tokens_in >= 0)
    j.set("tokens_in", e.tokens_in);
  if (e.tokens_out >= 0)
    j.set("tokens_out", e.tokens_out);
  return j;
}

Json encode(const ToolCallRequestEvent& e) {
  return call_json(e.call).set("event", e.kind);
}

Json encode(const ToolCallResponseEvent& e) {
  auto j = head(e.kind).set("id", e.id).set("name", e.name).set("ok", e.ok).set("content", e.content);
  if (!e.images.empty()) {
    auto images = Json::array();
    for (auto& image : e.images) {
      auto entry = Json::object().set("media_type", image.media_type);
      if (!image.base64.empty()) // else forgotten: none left to keep
        entry.set("data", image.base64);
      images.push(std::move(entry));
    }
    j.set("images", std::move(images));
  }
  return j;
}

Json encode(const InquiryRequestEvent& e) {
  if (e.question)
    return head(e.kind).set("tool", e.tool).set("question", to_json(*e.question));
  auto handles = Json::array();
  for (auto& h : e.handles) // as the inquiry was asked about them
    handles.push(inquiry_handle_json(h));
  return head(e.kind).set("handles", std::move(handles));
}

Json encode(const InquiryResponseEvent& e) {
  if (!e.answers)
    return head(e.kind).set("question_id", e.question_id).set("answer", e.answer);
  auto answers = Json::object();
  for (auto& [id, a] : *e.answers)
    answers.set(id, std::string(to_string(a)));
  return head(e.kind).set("answers", std::move(answers)).set("error", e.error);
}

Json encode(const SystemNotificationEvent& e) {
  auto j = to_json(e.notification).set("event", e.kind);
  if (e.delivered)
    j.set("delivered", true);
  return j;
}

Json encode(const TurnEndEvent& e) {
  auto j = head(e.kind);
  if (!e.handles) // the turn end never got to its handles: it always says why
    return e.interrupted ? j.set("error", e.error).set("interrupted", true) : j.set("error", e.error);
  auto list = Json::array();
  for (auto& h : *e.handles)
    list.push(turn_end_json(h));
  j.set("handles", std::move(list));
  if (e.interrupted)
    j.set("interrupted", true);
  if (!e.error.empty())
    j.set("error", e.error);
  return j;
}

Json encode(const UserReplyEvent& e) {
  return head(e.kind).set("text", e.text);
}

// -- reading: a missing or mistyped field reads as its default ------------------------------

std::string string_at(const Json& j, std::string_view key) {
  auto* v = j.find(key);
  return v && v->is_string() ? v->as_string() : std::string();
}

/// A response's images as encode wrote them. One without its data (the store read
/// only the newest) is kept with none, so a request says it was left out; one with
/// no media type is left out.
std::vector<ToolImage> images_from(const Json& j) {
  std::vector<ToolImage> out;
  if (auto* images = j.find("images"); images && images->is_array())
    for (auto& image : images->as_array())
      if (image.is_object() && !string_at(image, "media_type").empty())
        out.push_back(ToolImage{string_at(image, "media_type"), string_at(image, "data")});
  return out;
}

bool true_at(const Json& j, std::string_view key) {
  auto* v = j.find(key);
  return v && v->is_bool() && v->as_bool();
}

const JsonArray& array_at(const Json& j, std::string_view key) {
  static const JsonArray none;
  auto* v = j.find(key);
  return v && v->is_array() ? v->as_array() : none;
}

/// A logged provider_extra as the message carries it ("" = none).
std::string extra_from(const Json& j) {
  auto* extra = j.find("provider_extra");
  return extra && extra->is_object() ? extra->dump() : std::string();
}

ToolCall call_from(const Json& c) {
  auto* args = c.find("arguments");
  return ToolCall{string_at(c, "id"), string_at(c, "name"),
                  args ? (args->is_string() ? args->as_string() : args->dump()) : "{}", extra_from(c)};
}

bool names_call(const Json& c) {
  auto* id = c.find("id");
  auto* name = c.find("name");
  return id && id->is_string() && name && name->is_string();
}

HandleSummary turn_end_handle_from(const Json& j) {
  HandleSummary h;
  h.id = string_at(j, "id");
  h.tool = string_at(j, "tool");
  h.outcome = turn_end_outcome_from(string_at(j, "policy")).value_or(turn_end_outcome::none);
  h.state.kind = state_kind_from(string_at(j, "state")).value_or(state_kind::running);
  if (j.find("result")) {
    h.state.content = string_at(j, "result");
  } else if (j.find("error")) {
    h.state.ok = false;
    h.state.error.message = string_at(j, "error");
  }
  return h;
}

Result<ConversationEvent> decode(const Json& j, std::string_view kind) {
  if (kind == TurnStartEvent::kind) {
    TurnStartEvent e{string_at(j, "prompt"), string_at(j, "model"), {}};
    for (auto& n : array_at(j, "notifications"))
      if (auto parsed = notification_from_json(n))
        e.notifications.push_back(*parsed);
    return ConversationEvent{std::move(e)};
  }
  if (kind == ChatRequestEvent::kind) {
    auto* n = j.find("messages");
    return ConversationEvent{ChatRequestEvent{string_at(j, "model"), n && n->is_int() ? n->as_int() : 0}};
  }
  if (kind == ChatResponseEvent::kind) {
    ChatResponseEvent e{string_at(j, "text"), {}, string_at(j, "finish_reason"), true_at(j, "interrupted"),
                        string_at(j, "error"), extra_from(j)};
    for (auto [key, into] : {std::pair{"tokens_in", &e.tokens_in}, std::pair{"tokens_out", &e.tokens_out}})
      if (auto* n = j.find(key); n && n->is_int() && n->as_int() >= 0)
        *into = n->as_int();
    for (auto& c : array_at(j, "tool_calls"))
      if (names_call(c))
        e.tool_calls.push_back(call_from(c));
    return ConversationEvent{std::move(e)};
  }
  if (kind == ToolCallRequestEvent::kind)
    return ConversationEvent{ToolCallRequestEvent{call_from(j)}};
  if (kind == ToolCallResponseEvent::kind) {
    auto* ok = j.find("ok");
    return ConversationEvent{ToolCallResponseEvent{string_at(j, "id"), string_at(j, "name"),
                                                   !(ok && ok->is_bool() && !ok->as_bool()), string_at(j, "content"),
                                                   images_from(j)}};
  }
  if (kind == InquiryRequestEvent::kind) {
    InquiryRequestEvent e;
    if (auto* q = j.find("question")) {
      e.tool = string_at(j, "tool");
      if (auto question = question_from_json(*q))
        e.question = *question;
    }
    for (auto& h : array_at(j, "handles")) {
      HandleSummary s;
      s.id = string_at(h, "id");
      s.tool = string_at(h, "tool");
      if (auto* secs = h.find("elapsed_secs"); secs && secs->is_number())
        s.elapsed_secs = secs->as_number();
      if (auto kind = state_kind_from(string_at(h, "state")))
        s.state.kind = *kind;
      s.progress.last_line = string_at(h, "output_preview");
      e.handles.push_back(std::move(s));
    }
    return ConversationEvent{std::move(e)};
  }
  if (kind == InquiryResponseEvent::kind) {
    InquiryResponseEvent e;
    if (auto* answers = j.find("answers"); answers && answers->is_object()) {
      e.answers.emplace();
      for (auto& [id, a] : answers->as_object())
        if (auto answer = a.is_string() ? inquiry_answer_from(a.as_string()) : std::nullopt)
          (*e.answers)[id] = *answer;
    }
    e.error = string_at(j, "error");
    e.question_id = string_at(j, "question_id");
    if (auto* answer = j.find("answer"))
      e.answer = *answer;
    return ConversationEvent{std::move(e)};
  }
  if (kind == SystemNotificationEvent::kind) {
    auto n = notification_from_json(j);
    if (!n)
      return Error{fmt::format("a system_notification event without a readable notification: {}", n.error())};
    // "delivered" counts when present, whatever its value, as replay always read it.
    return ConversationEvent{SystemNotificationEvent{std::move(*n), j.find("delivered") != nullptr}};
  }
  if (kind == UserReplyEvent::kind)
    return ConversationEvent{UserReplyEvent{string_at(j, "text")}};
  TurnEndEvent e{std::nullopt, true_at(j, "interrupted"), string_at(j, "error")};
  if (auto* handles = j.find("handles"); handles && handles->is_array()) {
    e.handles.emplace();
    for (auto& h : handles->as_array())
      e.handles->push_back(turn_end_handle_from(h));
  }
  return ConversationEvent{std::move(e)};
}

} // namespace

Json to_json(const ConversationEvent& e) {
  return std::visit([](auto& x) { return encode(x); }, e);
}

Result<ConversationEvent> conversation_event_from(const Json& j) {
  auto* kind = j.find("event");
  if (!kind || !kind->is_string())
    return Error{fmt::format("a conversation event must be a JSON object with an \"event\" field, not {}",
                             cut_text(j.dump(), 200))};
  auto& k = kind->as_string();
  if (std::find(conversation_event_kinds.begin(), conversation_event_kinds.end(), k) == conversation_event_kinds.end())
    return Error{fmt::format("unknown conversation event {}", json_quote(k))};
  return decode(j, k);
}

} // namespace jp
