// What a real MCP server refuses of a client's message: JSON-RPC 2.0's shape and
// MCP's lifecycle (nothing but initialize or ping before initialize). The fake MCP
// server (fake_mcp_server.cpp) answers such a message with an error and records it,
// and mcp_client_test checks after every test that none was; mcp_message_rules_test
// checks the rules themselves, so that a rule that refuses nothing is noticed.
#pragma once

#include <string>

#include "messages/json.hpp"

namespace jp::testing {

/// Why a message breaks JSON-RPC 2.0 or MCP's lifecycle as a real server checks it
/// ("" = it does not): so the client tests fail when the client sends one.
inline std::string mcp_violation(const jp::Json& msg, bool initialized) {
  if (!msg.is_object())
    return "a message must be a JSON object";
  auto* version = msg.find("jsonrpc");
  if (!version || !version->is_string() || version->as_string() != "2.0")
    return "\"jsonrpc\" must be \"2.0\"";
  auto* method = msg.find("method");
  auto* id = msg.find("id");
  if (id && !id->is_string() && !id->is_int())
    return "an id must be a string or an integer";
  if (!method)
    return id && (msg.find("result") || msg.find("error")) ? "" : "neither a request, a notification nor a response";
  if (!method->is_string())
    return "\"method\" must be a string";
  if (auto* params = msg.find("params"); params && !params->is_object() && !params->is_array())
    return "\"params\" must be an object or an array";
  if (!initialized && method->as_string() != "initialize" && method->as_string() != "ping" && id)
    return "initialize first: no other request comes before it";
  return "";
}

} // namespace jp::testing
