// An answer to a tool's question as the tool declared it takes: what the
// assistant's `apply` sends, a configured answer on a control channel, and every
// answer a one-shot tool is given (configured, the assistant's or a person's) is
// checked against the question's answer_type, and a wrong one is refused naming
// what the question takes.
#pragma once

#include "json.hpp"
#include "result.hpp"
#include "tool_state.hpp"

namespace jp {

/// `answer` as `q`'s answer_type takes it: a boolean (the strings "true" and "false"
/// too: a dialect whose `input` is a string sends them so), one of the options as a
/// string, or a string for text; else why not.
Result<Json> answer_as_declared(const Question& q, const Json& answer);
/// The same for an answer as JSON text (text that is not JSON is taken as a string).
Result<Json> answer_text_as_declared(const Question& q, const std::string& json_text);

} // namespace jp
