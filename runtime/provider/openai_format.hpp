// The OpenAI Chat Completions wire format (api.openai.com and the servers that copy
// it: Ollama, vLLM, llama.cpp, OpenRouter...): the streaming request body, and the
// decoding of its `chat.completion.chunk` events into ChatEvents.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "messages/chat.hpp"
#include "messages/result.hpp"
#include "runtime/provider/sse.hpp"

namespace jp {

class Json;

/// The JSON body of a streaming POST /v1/chat/completions.
/// `max_tokens` is sent when request.max_tokens > 0: every compatible server reads
/// it, but api.openai.com rejects it for its reasoning models (o-series, gpt-5),
/// which want `max_completion_tokens` instead; set max_tokens = 0 for those.
/// request.tools_json is our own output and trusted to be JSON; if it is not, it is
/// sent as a string, so the provider names the problem ("tools" must be an array).
std::string openai_request_body(const ChatRequest& request);

/// Decodes one streamed response: text as it comes, each tool call once its
/// arguments are complete, then `done` (exactly once).
class OpenAiStream {
public:
  /// Feeds one SSE event. Errors: "provider error: <message>" for an `error` object
  /// in the stream, "malformed stream from the provider: ..." for data that is not
  /// a JSON object. Events after `done` are ignored.
  Status on_event(const SseEvent& event, const std::function<void(ChatEvent)>& emit);

  /// `done` was emitted. A stream that ends before is incomplete.
  bool finished() const { return finished_; }

private:
  struct PartialCall {
    int64_t index = 0;
    std::string id;
    std::string name;
    std::string arguments;
  };

  void add_tool_call_delta(const Json& delta);
  void finish(std::string reason, const std::function<void(ChatEvent)>& emit);

  std::vector<PartialCall> calls_; // in order of first appearance
  bool finished_ = false;
};

} // namespace jp
