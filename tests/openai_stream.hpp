// OpenAI chat-completion streams, as a fake provider (fake_provider_server.hpp)
// answers with them: text, and a tool call.
#pragma once

#include <string>
#include <vector>

#include "messages/json.hpp"

namespace jp::testing {

/// One event of an OpenAI stream: `delta`, and the finish reason when given.
inline std::string openai_chunk(const Json& delta, const char* finish = nullptr) {
  auto choice = Json::object().set("index", 0).set("delta", delta);
  choice.set("finish_reason", finish ? Json(finish) : Json());
  auto j = Json::object()
             .set("id", "chatcmpl-test")
             .set("object", "chat.completion.chunk")
             .set("model", "test-model")
             .set("choices", Json(JsonArray{choice}));
  return "data: " + j.dump() + "\n\n";
}

/// An OpenAI stream saying `text`, in two deltas.
inline std::string openai_text(const std::string& text) {
  auto half = text.size() / 2;
  return openai_chunk(Json::object().set("role", "assistant").set("content", text.substr(0, half))) +
         openai_chunk(Json::object().set("content", text.substr(half))) + openai_chunk(Json::object(), "stop") +
         "data: [DONE]\n\n";
}

/// An OpenAI stream saying each of `deltas` in turn.
inline std::string openai_deltas(const std::vector<std::string>& deltas) {
  std::string out;
  for (size_t i = 0; i < deltas.size(); ++i) {
    auto delta = Json::object().set("content", deltas[i]);
    if (i == 0)
      delta.set("role", "assistant");
    out += openai_chunk(delta);
  }
  return out + openai_chunk(Json::object(), "stop") + "data: [DONE]\n\n";
}

/// An OpenAI stream making one tool call, its arguments in two deltas.
inline std::string openai_call(const std::string& id, const std::string& name, const Json& args) {
  auto text = args.dump();
  auto half = text.size() / 2;
  auto call = [&](Json fn, bool first) {
    auto c = Json::object().set("index", 0);
    if (first)
      c.set("id", id).set("type", "function");
    c.set("function", std::move(fn));
    return Json(JsonArray{c});
  };
  auto part = [&](std::string arguments) {
    return openai_chunk(Json::object().set("tool_calls", call(Json::object().set("arguments", arguments), false)));
  };
  auto first = call(Json::object().set("name", name).set("arguments", ""), true);
  return openai_chunk(Json::object().set("role", "assistant").set("tool_calls", std::move(first))) +
         part(text.substr(0, half)) + part(text.substr(half)) +
         openai_chunk(Json::object(), "tool_calls") + "data: [DONE]\n\n";
}

} // namespace jp::testing
