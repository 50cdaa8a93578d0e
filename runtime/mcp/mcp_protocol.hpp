// MCP's messages as `jp-actors mcp` speaks them (DESIGN.md "MCP"): JSON-RPC 2.0
// envelopes, the protocol version handshake, and the tool list and call results.
// Plain functions over Json; the server actor (actors/mcp_server) decides when.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "../../config/config.hpp"
#include "../../messages/call_result.hpp"
#include "../../messages/json.hpp"
#include "../../messages/permission_reply.hpp"
#include "../../messages/result.hpp"

namespace jp::mcp {

/// The versions this server speaks, newest first.
inline constexpr std::string_view versions[] = {"2025-06-18", "2025-03-26", "2024-11-05"};

/// The one version with JSON-RPC batches (a receiver MUST take them; 2025-06-18 dropped them).
inline constexpr std::string_view batch_version = "2025-03-26";
/// The first version with elicitation (Client Features, Elicitation): a session that
/// agreed on an older one is asked nothing through it.
inline constexpr std::string_view elicitation_version = "2025-06-18";

/// The first version with the Streamable HTTP transport: an older one's HTTP
/// transport was HTTP+SSE, which `mcp --listen` does not serve.
inline constexpr std::string_view streamable_http_version = "2025-03-26";

/// The version to answer an `initialize` asking for `requested` with: that one when
/// this server speaks it (over Streamable HTTP, `over_http`: and that transport is
/// one of its), else the newest (MCP: the client then stays or leaves).
std::string_view negotiate_version(std::string_view requested, bool over_http = false);

/// The version an `initialize` with `params` asks for, or why it asks for none: MCP
/// requires `protocolVersion`, a string (answered with invalid_params).
Result<std::string> requested_version(const Json* params);

/// The most one JSON-RPC message may have, on either transport: a larger one is
/// refused before it is parsed (a parse takes several times its size).
inline constexpr size_t message_max = 4u << 20;

// JSON-RPC 2.0 error codes.
inline constexpr int parse_error = -32700;
inline constexpr int invalid_request = -32600;
inline constexpr int method_not_found = -32601;
inline constexpr int invalid_params = -32602;

/// A client's message parsed, or why not: `code` is parse_error for what is no JSON,
/// invalid_request for an object holding a key twice (parsers disagree on which copy
/// counts: an id or method the server reads could differ from what a proxy logged).
struct ParsedMessage {
  Json json;
  int code = 0; // 0: parsed
  std::string error;
  Json error_id; // the refused request's id, when it holds one once (its client waits on it)
};
ParsedMessage parse_message(std::string_view text);

/// Why a message with neither `method` nor `result` nor `error` is refused.
inline constexpr std::string_view no_kind =
  "a message needs `method` (a request or a notification), or `result` or `error` (a response)";

/// Why `msg` (an object) is no JSON-RPC 2.0 message, by its `jsonrpc` or by being a
/// request and a response at once, or nullopt.
std::optional<std::string> wrong_jsonrpc(const Json& msg);

/// A request's id as MCP allows it: a string or an integer; an integral number written
/// otherwise (1e2, 100.0) is that integer, as the codec keeps no number's text. None
/// for null, a fraction, a boolean, an array or an object.
std::optional<Json> request_id(const Json& id);

/// The error for a request whose id request_id refuses.
std::string bad_id_message(const Json& id);

Json response(const Json& id, Json result);
Json error_response(const Json& id, int code, std::string message);
Json notification(std::string_view method, Json params);
Json request(int64_t id, std::string_view method, Json params);

/// `initialize`'s result: the version, the tools capability, who we are, and how the
/// stateful protocol is used.
Json initialize_result(std::string_view requested_version, bool list_changes = false);

/// `tools/list`'s result: every configured tool in the flat (mcp) dialect, `await`
/// among them when a tool is stateful.
Json tools_list_result(const Config& config);

/// `tools/call`'s result for what the assistant would see: its text, then its images,
/// `isError` when the call itself failed.
Json call_tool_result(const CallResult& r);

/// elicitation/create's params asking the person whether `tool` may run with `args`
/// (asked only of a client that declared the elicitation capability).
/// `about`: what the person should know of the tool ("" none), such as that a
/// workspace's config defines it and what it runs.
Json permission_elicitation(const std::string& tool, const Json& args, const std::string& about = {});

/// The person's answer in the client's response to it: accept with allow "yes",
/// "yes, for this session" (the session is the turn) or "no" (with a reason, if
/// given); decline, cancel and anything else are a no.
PermissionReply permission_from_elicitation(const Json& response);

} // namespace jp::mcp
