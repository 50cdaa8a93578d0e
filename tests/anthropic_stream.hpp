// Anthropic Messages streams, as a fake provider (fake_provider_server.hpp) answers
// with them: a tool call (tests/providers/anthropic_text.sse has text).
#pragma once

#include <string>

#include "messages/json.hpp"

namespace jp::testing {

/// One event of an Anthropic stream.
inline std::string anthropic_event(const Json& data) {
  return "event: " + std::string(data.string_at("type")) + "\ndata: " + data.dump() + "\n\n";
}

/// An Anthropic stream making one tool call, its input in one delta.
inline std::string anthropic_call(const std::string& id, const std::string& name, const Json& input) {
  auto message = Json::object()
                   .set("id", "msg_test")
                   .set("type", "message")
                   .set("role", "assistant")
                   .set("model", "test-model")
                   .set("content", Json::array())
                   .set("usage", Json::object().set("input_tokens", 10).set("output_tokens", 1));
  auto use = Json::object().set("type", "tool_use").set("id", id).set("name", name).set("input", Json::object());
  return anthropic_event(Json::object().set("type", "message_start").set("message", message)) +
         anthropic_event(Json::object().set("type", "content_block_start").set("index", 0).set("content_block", use)) +
         anthropic_event(Json::object().set("type", "content_block_delta").set("index", 0).set(
           "delta", Json::object().set("type", "input_json_delta").set("partial_json", input.dump()))) +
         anthropic_event(Json::object().set("type", "content_block_stop").set("index", 0)) +
         anthropic_event(Json::object()
                           .set("type", "message_delta")
                           .set("delta", Json::object().set("stop_reason", "tool_use"))
                           .set("usage", Json::object().set("output_tokens", 5))) +
         anthropic_event(Json::object().set("type", "message_stop"));
}

} // namespace jp::testing
