// The stateful tool protocol as plain data (RFD 009 / RFD 037). No CAF, no JSON here:
// `inspect` overloads are templates so these types cross actors and nodes once
// registered (see type_registration.hpp), and json_codec.hpp reads and writes them.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tool_image.hpp"

namespace jp {

/// What kind of answer a Question expects.
enum class answer_kind : uint8_t { boolean, select, text };

struct AnswerType {
  answer_kind kind = answer_kind::text;
  std::vector<std::string> options; // only for select
  friend bool operator==(const AnswerType&, const AnswerType&) = default;
};

/// What a failure that gave no words of its own says (an empty error result tells
/// the model nothing, and Anthropic refuses one).
inline constexpr const char* failed_saying_nothing = "the tool failed and said nothing";

/// The id of the question a tool is taken to ask when found reading its stdin with
/// no question of its own asked (InputWatch::question): answered as a JSON line.
inline constexpr std::string_view read_question_id = "input";

/// A structured question a tool asks (JP's inquiry). `default_json` is the default
/// answer as JSON text ("" when there is none).
struct Question {
  std::string id;
  std::string text;
  std::string pre_amble; // "" when absent
  AnswerType answer_type;
  std::string default_json; // "" when absent
  friend bool operator==(const Question&, const Question&) = default;
};

struct ToolError {
  std::string message;
  std::vector<std::string> trace;
  bool transient = false;
  friend bool operator==(const ToolError&, const ToolError&) = default;
};

enum class state_kind : uint8_t { running, waiting, stopped };

/// Running{content} / Waiting{content, question} / Stopped{ok result | error}.
/// Plain struct with a discriminator rather than std::variant: CAF 0.17 cannot inspect
/// std::variant, and a flat struct reads the same on both sides of a node.
struct ToolState {
  state_kind kind = state_kind::running;
  std::string content;  // Running/Waiting: output since the last look; Stopped ok: result
  Question question;    // Waiting; on a failure, what a handle exited asking (a node's to its client)
  bool ok = true;       // Stopped only
  ToolError error;      // Stopped && !ok
  std::vector<ToolImage> images; // Stopped ok: images that go with the result

  static ToolState running(std::string content = {}) {
    return {state_kind::running, std::move(content), {}, true, {}, {}};
  }
  static ToolState waiting(Question q, std::string content = {}) {
    return {state_kind::waiting, std::move(content), std::move(q), true, {}, {}};
  }
  static ToolState success(std::string result) {
    return {state_kind::stopped, std::move(result), {}, true, {}, {}};
  }
  static ToolState failure(ToolError e, std::string content = {}) {
    return {state_kind::stopped, std::move(content), {}, false, std::move(e), {}};
  }
  bool stopped() const { return kind == state_kind::stopped; }
  friend bool operator==(const ToolState&, const ToolState&) = default;
};

/// JP's legacy one-shot result, still accepted on a tool's stdout.
enum class outcome_kind : uint8_t { success, error, needs_input };

struct Outcome {
  outcome_kind kind = outcome_kind::success;
  std::string content;   // success
  ToolError error;       // error
  Question question;     // needs_input
  friend bool operator==(const Outcome&, const Outcome&) = default;
};

/// RFD 009's mapping Outcome -> ToolState.
inline ToolState to_tool_state(Outcome o) {
  switch (o.kind) {
    case outcome_kind::success:
      return ToolState::success(std::move(o.content));
    case outcome_kind::error:
      return ToolState::failure(std::move(o.error));
    case outcome_kind::needs_input:
      break;
  }
  return ToolState::waiting(std::move(o.question));
}

enum class action_kind : uint8_t { spawn, fetch, apply, abort };

/// How fetch and apply (and the response to spawn) look at a handle. wait_ms < 0:
/// the tool's default; otherwise return once output settled, the handle waits for
/// input or stopped, or after this long. A pty's screen on request, and its new
/// size (rows and cols > 0) before looking.
struct LookOptions {
  int64_t wait_ms = -1;
  bool screen = false;
  int rows = 0;
  int cols = 0;
  // The handle's own agent looks (its news then come through the look); false for
  // another agent's look through a shared registry, which leaves them on.
  bool by_owner = true;
  friend bool operator==(const LookOptions&, const LookOptions&) = default;
};

/// What the runtime dispatches for one stateful call. `args_json` (spawn) is the
/// tool's own parameters as a JSON object; `input_json` (apply) is any JSON value.
struct ToolCommand {
  action_kind action = action_kind::fetch;
  std::string id;
  std::string tool;
  std::string args_json = "{}";
  std::string input_json;
  LookOptions look;        // spawn (its first look), fetch, apply
  friend bool operator==(const ToolCommand&, const ToolCommand&) = default;
};

/// A terminal's screen as text (a pty handle's `fetch` with `screen`): one string per
/// row, trailing blanks trimmed, trailing empty rows dropped; `height` x `width` is
/// the terminal's size, the cursor is 0-based. height == 0: no screen.
struct Screen {
  std::vector<std::string> rows;
  int cursor_row = 0;
  int cursor_col = 0;
  int height = 0;
  int width = 0;
  // The text of rows left out (shown empty) to keep the screen within the handle's
  // output cap: those farthest from the cursor go first.
  uint64_t omitted_bytes = 0;
  friend bool operator==(const Screen&, const Screen&) = default;
};

/// What a handle reports on spawn/fetch/apply/abort: its state plus where the full
/// output lives when the head/tail cap cut the content.
struct HandleReport {
  std::string id;
  ToolState state;
  uint64_t omitted_bytes = 0;
  std::string output_file; // "" unless something was cut
  Screen screen;           // only when asked for (fetch/apply with `screen`)
  std::string node;        // the configured node it runs on ("" = here)
  bool refused = false;    // it could not start (a limit, no executor): no handle ran
  // It ended before any abort reached it (a process that exited of itself, a
  // sub-agent that answered, a call that returned; every handle kind says so): an
  // abort sent as it ended (a turn end's timeout) did not end it. Not a process that
  // ended during a signal's shutdown, which signals every group itself.
  bool own_end = false;
  friend bool operator==(const HandleReport&, const HandleReport&) = default;
};

/// `await` arguments (RFD 037). timeout_secs < 0 means no timeout.
struct AwaitRequest {
  std::vector<std::string> any;
  std::vector<std::string> all;
  double timeout_secs = -1;
  friend bool operator==(const AwaitRequest&, const AwaitRequest&) = default;
};

struct HandleStatus {
  std::string id;
  ToolState state;
  std::string output_file; // a stopped handle's spill file, when its last output was cut
  std::string node;        // the configured node it runs on ("" = here)
  // The registry's count of handle changes when this was so: of two statuses of one
  // handle, the higher is the newer (0: not counted). A watch's answer through a
  // shared view may overtake the registry's own updates; this orders them.
  uint64_t seq = 0;
  bool own_end = false; // stopped: it ended before any abort reached it (HandleReport's)
  friend bool operator==(const HandleStatus&, const HandleStatus&) = default;
};

struct AwaitResult {
  std::vector<HandleStatus> completed;
  std::vector<HandleStatus> pending;
  bool timed_out = false;
  uint64_t omitted_bytes = 0; // left out of the results to fit the response cap
  friend bool operator==(const AwaitResult&, const AwaitResult&) = default;
};

// -- CAF inspection -------------------------------------------------------------------

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, AnswerType& x) {
  return f(x.kind, x.options);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, Question& x) {
  return f(x.id, x.text, x.pre_amble, x.answer_type, x.default_json);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, ToolError& x) {
  return f(x.message, x.trace, x.transient);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, ToolState& x) {
  return f(x.kind, x.content, x.question, x.ok, x.error, x.images);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, Outcome& x) {
  return f(x.kind, x.content, x.error, x.question);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, LookOptions& x) {
  return f(x.wait_ms, x.screen, x.rows, x.cols, x.by_owner);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, ToolCommand& x) {
  return f(x.action, x.id, x.tool, x.args_json, x.input_json, x.look);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, Screen& x) {
  return f(x.rows, x.cursor_row, x.cursor_col, x.height, x.width, x.omitted_bytes);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, HandleReport& x) {
  return f(x.id, x.state, x.omitted_bytes, x.output_file, x.screen, x.node, x.refused, x.own_end);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, AwaitRequest& x) {
  return f(x.any, x.all, x.timeout_secs);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, HandleStatus& x) {
  return f(x.id, x.state, x.output_file, x.node, x.seq, x.own_end);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, AwaitResult& x) {
  return f(x.completed, x.pending, x.timed_out, x.omitted_bytes);
}

} // namespace jp
