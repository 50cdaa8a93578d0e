// An `await`'s arguments read straight from their JSON text. W3's assistant
// re-issues an await naming every pending handle after each stop; building a Json
// tree of ≈ 170 ids, checking it for twice-given keys, validating it against the
// schema and copying the ids out of it was ≈ 30k instructions of each cycle.
#pragma once

#include <optional>
#include <string_view>

#include "tool_state.hpp"

namespace jp {

/// The request, when `args_json` is exactly as the await tool's schema has it: an
/// object whose keys are among `any` and `all` (arrays of strings) and
/// `timeout_secs` (a duration in seconds), each given once, null counting as
/// absent, naming at least one id. nullopt for anything else, well-formed or not:
/// the caller takes the usual path (Json::parse, await_request_from_json,
/// validate_arguments), which accepts the same requests and says what is wrong
/// with the others.
std::optional<AwaitRequest> plain_await_request(std::string_view args_json);

} // namespace jp
