// jp-actors' errors as CAF errors: category "jp", an error_code, and the sentence a
// user reads as the context. Actors reply with these; error_text gives the sentence.
#pragma once

#include <caf/fwd.hpp>
#include <string>

#include "error_code.hpp"

namespace jp {

/// The error an actor replies with: `text` says what went wrong and what to do.
caf::error make_error(error_code code, std::string text);

/// The code of `err`: its own if it is one of ours, else none.
error_code code_of(const caf::error& err);

/// "Handle `x` not found" etc.: the sentence of one of our errors (or of a CAF
/// runtime_error carrying one); CAF's rendering of any other.
std::string error_text(const caf::error& err);

/// Makes system.render(err) readable: "jp: unknown_handle: Handle `x` not found".
void register_error_category(caf::actor_system_config& cfg);

} // namespace jp
