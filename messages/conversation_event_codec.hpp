// Conversation events <-> the JSON lines of events.jsonl. Writing keeps each kind's
// keys in the order the file has always had them; "time" is left to the store.
#pragma once

#include "conversation_event.hpp"
#include "json.hpp"
#include "result.hpp"

namespace jp {

/// {"event":"<kind>", ...the kind's fields}. A tool call is {"id","name","arguments"}
/// (the arguments as JSON when they parse, else as the string); tool_call_request is
/// that call with "event" after it, system_notification the notification's JSON
/// (json_codec) with "event" (and "delivered": true) after it.
Json to_json(const ConversationEvent& e);

/// Reads an event as replay always has: the kind must be one of
/// conversation_event_kinds; a field that is missing or of another type reads as its
/// default (a tool call without a string id and name is left out), except that a
/// system_notification must hold a readable notification. Unknown fields are ignored.
Result<ConversationEvent> conversation_event_from(const Json& j);

} // namespace jp
