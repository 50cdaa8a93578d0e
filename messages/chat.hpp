// A conversation with an LLM as plain data: what a provider is sent, and what its
// stream yields. No JSON and no HTTP here (runtime/provider/ speaks the wire
// formats); `inspect` so the types cross actors.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tool_image.hpp"

namespace jp {

/// One tool call the assistant made: `arguments` is a JSON object as text.
/// `provider_extra`: what the provider wants back with the call in later requests, a
/// JSON object as text of the fields to send with it ("" = none; Gemini's OpenAI
/// endpoint: {"extra_content":{"google":{"thought_signature":...}}}).
struct ToolCall {
  std::string id;
  std::string name;
  std::string arguments = "{}";
  std::string provider_extra;
  friend bool operator==(const ToolCall&, const ToolCall&) = default;
};

enum class chat_role : uint8_t { user, assistant, tool };

/// One message of the conversation as providers see it.
///  - user: `text`
///  - assistant: `text` and/or `tool_calls`; `provider_extra`, what the provider
///    wants back on the message, a JSON object as text of its fields ("" = none;
///    DeepSeek's thinking mode: {"reasoning_content": ...} of a response with calls)
///  - tool: the response to `tool_call_id` (of tool `tool_name`) in `text`;
///    `tool_error` when the call failed; `images` that went with it
struct ChatMessage {
  chat_role role = chat_role::user;
  std::string text;
  std::vector<ToolCall> tool_calls;
  std::string tool_call_id;
  std::string tool_name;
  bool tool_error = false;
  std::string provider_extra;
  std::vector<ToolImage> images;
  friend bool operator==(const ChatMessage&, const ChatMessage&) = default;
};

/// One request: the model, the system prompt, the conversation so far, and the
/// tool declarations in the provider's dialect (a JSON array as text, "" = none).
struct ChatRequest {
  std::string model;
  std::string system;
  std::vector<ChatMessage> messages;
  std::string tools_json;
  int64_t max_tokens = 4096;
  // A JSON schema the answer's text must match (a JSON object as text, "" = free
  // text), named `response_schema_name`: sent where the dialect can enforce it.
  std::string response_schema;
  std::string response_schema_name;
  friend bool operator==(const ChatRequest&, const ChatRequest&) = default;
};

enum class chat_event_kind : uint8_t {
  text,      // a piece of the assistant's text, to render as it comes
  tool_call, // a complete tool call (its arguments assembled from the deltas)
  done,      // the response ended; `finish_reason` says why, `provider_extra` what
             // the provider wants back on the message (ChatMessage's)
  usage,     // the tokens the response took, as the provider counts them
  reasoning, // a piece of the model's reasoning (thinking): shown apart or not at
             // all ([style] reasoning), never part of the answer or the history
};

struct ChatEvent {
  chat_event_kind kind = chat_event_kind::text;
  std::string text;
  ToolCall call;
  std::string finish_reason;
  std::string provider_extra;
  int64_t tokens_in = -1;  // usage: the prompt's tokens (-1: not reported)
  int64_t tokens_out = -1; // usage: the response's tokens (-1: not reported)
  friend bool operator==(const ChatEvent&, const ChatEvent&) = default;
};

/// How a response ended on the provider's side when it did not end as the model
/// chose (a stop, tool calls): at the token limit, with the context window full, as
/// a refusal, or stopped by a content filter. Read from `finish_reason` in either
/// dialect.
enum class cut_off : uint8_t { none, token_limit, context_full, refused, filtered };

inline cut_off cut_off_of(std::string_view finish_reason) {
  if (finish_reason == "length" || finish_reason == "max_tokens") // OpenAI, Anthropic
    return cut_off::token_limit;
  if (finish_reason == "model_context_window_exceeded" || finish_reason == "model_length") // Anthropic, Mistral
    return cut_off::context_full;
  if (finish_reason == "refusal") // Anthropic
    return cut_off::refused;
  if (finish_reason == "content_filter") // OpenAI
    return cut_off::filtered;
  return cut_off::none;
}

/// One assistant response, for the experiment report: how long the model took (from
/// the request to the end of its stream, retries included) and the tokens the
/// provider reported (-1: it did not).
struct ModelRound {
  double elapsed_ms = 0;
  int64_t tokens_in = -1;
  int64_t tokens_out = -1;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, ToolCall& x) {
  return f(x.id, x.name, x.arguments, x.provider_extra);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, ChatMessage& x) {
  return f(x.role, x.text, x.tool_calls, x.tool_call_id, x.tool_name, x.tool_error, x.provider_extra, x.images);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, ChatRequest& x) {
  return f(x.model, x.system, x.messages, x.tools_json, x.max_tokens, x.response_schema,
           x.response_schema_name);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, ChatEvent& x) {
  return f(x.kind, x.text, x.call, x.finish_reason, x.provider_extra, x.tokens_in, x.tokens_out);
}

} // namespace jp
