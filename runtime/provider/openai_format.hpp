// The OpenAI Chat Completions wire format (api.openai.com and the servers that copy
// it: Ollama, vLLM, llama.cpp, OpenRouter...): the streaming request body, and the
// decoding of its `chat.completion.chunk` events into ChatEvents.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "../../messages/chat.hpp"
#include "../../messages/json.hpp"
#include "../../messages/result.hpp"
#include "sse.hpp"

namespace jp {

/// The name of the token limit `model` takes: "max_completion_tokens" for OpenAI's
/// reasoning models (openai_reasoning_model), which refuse `max_tokens`, and for every
/// model where `completion_tokens` (a server that takes that name alone: api.openai.com,
/// where `max_tokens` is deprecated and a new reasoning model's name may not be known
/// here, or one that refused `max_tokens` asking for it); "max_tokens" for the rest
/// (compatible servers read it).
std::string_view max_tokens_parameter(std::string_view model, bool completion_tokens = false);

/// Whether `url` is OpenAI's own service (https://api.openai.com/...).
bool is_openai_service(std::string_view url);

/// Whether `model` (also behind a "vendor/" prefix) is one of Mistral's, whose API
/// refuses a user message right after tool messages.
bool takes_no_user_after_tool(std::string_view model);

/// The JSON body of a streaming POST /v1/chat/completions. The token limit is sent
/// when request.max_tokens > 0, named as max_tokens_parameter says. Every tool call
/// is followed by its `tool` messages (pair_tool_results). A call id longer than
/// api.openai.com takes (40) is sent cut, with its digest, alike in its result.
/// request.tools_json is our own output and trusted to be JSON; if it is not, it is
/// sent as a string, so the provider names the problem ("tools" must be an array).
/// `ask_usage`: stream_options.include_usage, which some servers refuse (Mistral:
/// HTTP 422 "extra_forbidden"). To Mistral's models (takes_no_user_after_tool), a
/// user message right after tool results goes in the last result's content.
/// `completion_tokens`: as max_tokens_parameter takes it.
std::string openai_request_body(const ChatRequest& request, bool ask_usage = true, bool completion_tokens = false);

/// OpenRouter's `reasoning_details` as they stream: each delta carries pieces of the
/// response's array. A piece with the `index` and `type` of an entry already there
/// continues the latest such entry (its `text` and `summary` appended, any other
/// field it has not null taking that field: the signature comes last); any other
/// piece is an entry of its own, in the order they came. What is not an object is
/// dropped.
class ReasoningDetails {
public:
  /// Adds one streamed `reasoning_details` array.
  void add(const Json& pieces);
  const Json& merged() const { return merged_; }

private:
  Json merged_ = Json::array();
  // (index, type) -> the latest entry of that index and type: found at once, so a
  // stream of many entries costs no search through them.
  std::map<std::pair<int64_t, std::string>, size_t> latest_;
};

/// Decodes one streamed response: text as it comes (a `refusal` as text too), each
/// tool call once its arguments are complete, then `done` (exactly once), and `usage`
/// where the server reports it, each time it does (the last stands: some servers count
/// in every chunk): OpenAI sends it in a chunk of its own after the finish_reason, so
/// it may come after `done`. What the server wants back is kept as provider_extra:
/// a call's `extra_content` (Gemini's thought signature) on its call, and on `done`
/// of a response with calls the reasoning streamed as `reasoning_content` (DeepSeek's
/// thinking mode) and OpenRouter's `reasoning_details` (its fragments merged:
/// ReasoningDetails); openai_request_body sends them back.
class OpenAiStream {
public:
  OpenAiStream() = default;
  /// `model`: the model asked, named in what it wants back (sent back to it alone).
  explicit OpenAiStream(std::string model) : model_(std::move(model)) {}

  /// Feeds one SSE event. Errors: "provider error: <message>" for an `error` object
  /// in the stream, "malformed stream from the provider: ..." for data that is not
  /// a JSON object. Events after `done` are ignored, but for its usage.
  Status on_event(const SseEvent& event, const std::function<void(ChatEvent)>& emit);

  /// `done` was emitted. A stream that ends before is incomplete.
  bool finished() const { return finished_; }
  /// Nothing more is to come: [DONE], or the usage after `done`.
  bool ended() const { return ended_ || (finished_ && usage_seen_); }
  /// The stream's `error` is the server's own (type or code `server_error`, or a
  /// code that is an HTTP status retried as one: 408, 429, 5xx): a new request may
  /// not meet it.
  bool error_transient() const { return error_transient_; }

private:
  struct PartialCall {
    int64_t index = 0;
    std::string id;
    std::string name;
    std::string arguments;
    std::string extra; // ToolCall::provider_extra
  };

  void add_tool_call_delta(const Json& delta);
  /// Emits the chunk's `usage`, if it has one (then true).
  bool emit_usage(const Json& chunk, const std::function<void(ChatEvent)>& emit);
  void finish(std::string reason, const std::function<void(ChatEvent)>& emit);

  std::vector<PartialCall> calls_; // in order of first appearance
  std::string reasoning_content_;  // streamed as reasoning_content (DeepSeek, vLLM)
  ReasoningDetails reasoning_details_; // OpenRouter's
  std::string model_;
  bool finished_ = false;
  bool usage_seen_ = false; // counted at or after `done`
  bool ended_ = false; // [DONE] came
  bool error_transient_ = false;
};

} // namespace jp
