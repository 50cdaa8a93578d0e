// The wire formats of DESIGN.md: protocol types <-> JSON. Reading goes through
// Json::parse (simdjson), writing through Json::dump (fmt).
#pragma once

#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "child_spec.hpp"
#include "handle_summary.hpp"
#include "json.hpp"
#include "notification.hpp"
#include "result.hpp"
#include "tool_state.hpp"

namespace jp {

// -- Question / ToolError -------------------------------------------------------------
// Question JSON: {"id","text","pre_amble"?,"answer_type":{"type":"boolean"}|
// {"type":"select","options":[..]}|{"type":"text"},"default"?}. Reading also accepts
// JP's legacy spellings "Boolean" / "Text" / {"Select":{"options":[..]}}.
Json to_json(const Question& q);
Result<Question> question_from_json(const Json& j);
Json to_json(const ToolError& e); // {"message","trace":[..],"transient"}
Result<ToolError> tool_error_from_json(const Json& j);

// -- ToolState / Outcome as a tool writes them on stdout ---------------------------------
// ToolState: {"type":"running","content"?}, {"type":"waiting","content"?,"question"},
// {"type":"stopped","result":".."} | {"type":"stopped","error":{..}}; "spawned" reads as running.
// Outcome:  {"type":"success","content"}, {"type":"error","message","trace"?,"transient"?},
// {"type":"needs_input","question"}.
Json to_json(const ToolState& s);
Result<ToolState> tool_state_from_json(const Json& j);
Json to_json(const Outcome& o);
Result<Outcome> outcome_from_json(const Json& j);

/// How a one-shot/local tool's stdout is read: Outcome JSON or ToolState JSON (after
/// trimming whitespace) become that state; anything else -- including JSON of another
/// shape -- is an error result here and the caller falls back to plain text.
Result<ToolState> parse_tool_output(std::string_view stdout_text);

// -- Stateful calls ---------------------------------------------------------------------
/// Whether `id` can name a handle: 1 to max_handle_id_length characters of
/// [A-Za-z0-9_.:-] (the runtime's own ids, "#1", cannot).
bool valid_handle_id(std::string_view id);
inline constexpr size_t max_handle_id_length = 64;

/// A look's `rows` and `cols`: the terminal sizes a call may ask for (the schema
/// says them too).
inline constexpr int terminal_rows_min = 2, terminal_rows_max = 500;
inline constexpr int terminal_cols_min = 10, terminal_cols_max = 500;

/// Call arguments -> command. `action` must be present (callers check that first:
/// no action = one-shot). Validates: action is one of spawn|fetch|apply|abort, `id` is
/// a non-empty string of [A-Za-z0-9_.:-] (at most 64 chars), apply has `input`.
/// For spawn, args_json is the arguments minus "action" and "id".
Result<ToolCommand> command_from_arguments(std::string_view tool, const Json& args);
/// The inverse (spawn: args merged after action and id).
Json to_arguments(const ToolCommand& c);

/// The string the assistant sees for a stateful call (DESIGN.md "Stateful response
/// content"): {"id","state":"running","content"?}, waiting adds "question",
/// {"id","state":"stopped","result"} or {"id","state":"stopped","error":{..},"content"?};
/// "output_file" and "omitted_bytes" are added when the cap cut the content.
/// Empty content is left out.
std::string response_content(const HandleReport& r);
Result<HandleReport> report_from_response(std::string_view content);

// -- await (RFD 037) --------------------------------------------------------------------
/// {"any":[..],"all":[..],"timeout_secs":N}; errors: "At least one handle ID required"
/// (both missing or empty), wrong types name the field and the expected type,
/// negative timeout is an error.
Result<AwaitRequest> await_request_from_json(const Json& j);
Json to_json(const AwaitRequest& r);
/// {"completed":[{"id","state":"stopped","result"|"error"}],"pending":[{"id","state"}],
///  "timed_out":true (only when it timed out)}
Json to_json(const AwaitResult& r);
/// RFD 011's shape: {"kind":{"source","name"},"level","message"}.
Json to_json(const Notification& n);
Result<Notification> notification_from_json(const Json& j);

/// A handle as a turn's end left it: {"id","tool","policy","state"} ("policy": its
/// outcome), plus "result" or "error" when the turn end waited for it (its result
/// is the assistant's).
Json turn_end_json(const HandleSummary& h);
/// A handle still running as a turn end's inquiry asks about it (and the stored
/// inquiry_request records it): {"id","tool","state","elapsed_secs"}, and
/// "output_preview" (its output's last line) when there is one.
Json inquiry_handle_json(const HandleSummary& h);
/// The await result as the assistant sees it, written directly: an await over
/// hundreds of handles answers without building a tree first (to_json reads it back).
std::string await_result_text(const AwaitResult& r);
/// The same, each status written by `put(out, status, with_result)` (what
/// append_status_json writes of it: a writer that has some of them written already).
std::string await_result_text(const AwaitResult& r,
                              const std::function<void(std::string&, const HandleStatus&, bool)>& put);
/// One status as await_result_text writes it: `with_result` for the completed list
/// (a stopped handle's result or error, its output file).
void append_status_json(std::string& out, const HandleStatus& s, bool with_result);
/// The await result of handles that all stopped, from each one's text as
/// append_status_json writes it (with its result): what await_result_text writes
/// of them.
std::string completed_await_text(std::span<const std::string* const> texts);
Result<AwaitResult> await_result_from_json(const Json& j);

std::string_view to_string(action_kind a); // spawn | fetch | apply | abort: their only spellings
std::optional<action_kind> action_from(std::string_view s);
std::string_view to_string(state_kind k); // running | waiting | stopped
std::optional<state_kind> state_kind_from(std::string_view s); // also RFD 009's "spawned"

// -- Child spec (turn-end policies): their only spellings -----------------------------------
std::string_view to_string(turn_end_policy p); // inquire | await | abort
std::optional<turn_end_policy> turn_end_policy_from(std::string_view s);
std::string_view to_string(inquiry_answer a); // wait | abort
std::optional<inquiry_answer> inquiry_answer_from(std::string_view s);
/// As turn_end events say it ("policy"): abort | await | inquire:wait | inquire:abort.
std::string_view to_string(turn_end_outcome o);
std::optional<turn_end_outcome> turn_end_outcome_from(std::string_view s);

} // namespace jp
