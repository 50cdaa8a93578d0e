// Whether an answer fits the question it answers: a tool that declared a boolean or
// a choice of options reads what it declared, whoever answers (the assistant's
// `apply` above all), and a wrong one is refused naming what the question takes.
#pragma once

#include "json.hpp"
#include "result.hpp"
#include "tool_state.hpp"

namespace jp {

/// ok when `answer` is what `q`'s answer_type takes: a JSON boolean, one of the
/// options as a string, or a string for text.
Status answer_fits(const Question& q, const Json& answer);

} // namespace jp
