// The Anthropic Messages API wire format: the streaming request body (content
// blocks, alternating roles), and the decoding of its typed stream events
// (message_start, content_block_*, message_delta, message_stop) into ChatEvents.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include "../../messages/chat.hpp"
#include "../../messages/json.hpp"
#include "../../messages/result.hpp"
#include "sse.hpp"

namespace jp {

/// The JSON body of a streaming POST /v1/messages. `max_tokens` is required by the
/// API: request.max_tokens, or 4096 when it is not positive. Every tool call is
/// answered right after its message (pair_tool_results), then messages that map to
/// the same role (tool results, then a user text) are merged into one, so roles
/// alternate and a user turn starts with the tool_result blocks; empty texts are left
/// out (the API rejects empty text blocks), a message left without content is
/// dropped, and a conversation that would start with the assistant gets a user turn
/// "(continued)" first. A failed tool's images are told of in its result's text: the
/// API takes only text in a result with is_error. The system prompt (a text block) and the last message's last
/// block are cache breakpoints (cache_control ephemeral): prompt caching.
/// request.tools_json is trusted to be JSON; if it is not, it is sent as a string,
/// so the provider names the problem.
std::string anthropic_request_body(const ChatRequest& request);

/// Decodes one streamed response: text as it comes, each tool_use block as a
/// tool call when the block stops, then at message_stop `usage` (where the stream
/// reported it) and `done` (exactly once).
class AnthropicStream {
public:
  AnthropicStream() = default;
  /// `model`: the model asked, named in what it wants back (sent back to it alone).
  explicit AnthropicStream(std::string model) : model_(std::move(model)) {}

  /// Feeds one SSE event, dispatched on the `type` member of its JSON data.
  /// Errors: "provider error: <type>: <message>" for an `error` event,
  /// "malformed stream from the provider: ..." for data that is not a JSON object.
  /// Unknown event and block types are ignored (the API adds new ones); events
  /// after `done` are ignored.
  Status on_event(const SseEvent& event, const std::function<void(ChatEvent)>& emit);

  /// `done` was emitted. A stream that ends before is incomplete.
  bool finished() const { return finished_; }
  /// Nothing more is to come (message_stop).
  bool ended() const { return finished_; }
  /// The stream's `error` event is one a new request may not meet (overloaded_error,
  /// api_error, rate_limit_error, timeout_error: the statuses 529, 500, 429 and 504
  /// that a request would have got before its stream began).
  bool error_transient() const { return error_transient_; }

private:
  struct ToolUse {
    std::string id;
    std::string name;
    std::string arguments; // the input_json_delta fragments so far
    std::string given;     // the input its start gave whole ("" when empty: deltas follow)
  };

  static void emit_call(ToolUse& block, const std::function<void(ChatEvent)>& emit);

  std::map<int64_t, ToolUse> tool_uses_; // open tool_use blocks by content index
  // Its thinking blocks by content index, as they came (thinking and signature, or
  // redacted_thinking's data): a server that thinks wants them back unchanged before
  // the calls they led to (DeepSeek's Anthropic API: HTTP 400 without them).
  struct Thinking {
    Json block;                    // as it started
    std::string thinking, signature; // its deltas, appended (set on the block at the end)
  };
  std::map<int64_t, Thinking> thinking_;
  std::string model_;
  std::string stop_reason_;
  int64_t tokens_in_ = -1;  // message_start's usage: input, cache writes and reads
  int64_t tokens_out_ = -1; // the last message_delta's usage (cumulative)
  bool called_ = false; // a tool call was emitted
  bool texted_ = false; // text was emitted: a later text block is a paragraph of its own
  bool finished_ = false;
  bool error_transient_ = false;
};

} // namespace jp
