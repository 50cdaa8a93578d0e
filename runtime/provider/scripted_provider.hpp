// The scripted assistant (DESIGN.md "Scripts") as a provider like the others: each
// request gets the agent's next step as the response -- its text and its calls --
// and after the last step an answer without calls, which ends the turn. Steps
// without calls are narration: their text goes with the next response. Its
// [agents.on_turn_end] and [agents.questions] tables answer as the assistant would.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "inquiry_backend.hpp"
#include "provider.hpp"
#include "../store/script.hpp"

namespace jp {

/// Call ids are "call_<step>_<index>" (1-based step, 0-based index).
std::shared_ptr<Provider> make_scripted_provider(ScriptAgent agent);

/// The script's answers: a missing turn-end answer is an error naming the handle
/// (also told to `missing`, if given: a sub-agent's fails the run, not only its turn).
std::shared_ptr<InquiryBackend> make_scripted_inquiry(ScriptAgent agent, bool subagent = false,
                                                      std::function<void(const std::string&)> missing = {});

} // namespace jp
