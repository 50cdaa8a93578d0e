// Runtime validation of call arguments against a tool's declared parameters. Every
// dialect relies on it (gemini's flat schema cannot express per-action requirements,
// nor await's "any or all").
#pragma once

#include <optional>

#include "../config/config.hpp"
#include "../messages/json.hpp"
#include "../messages/result.hpp"

namespace jp {

/// One-shot call or the tool's parameters of a spawn (without action/id): must be an
/// object; required parameters present; present parameters of the declared type and
/// enum; unknown keys rejected naming the allowed ones; one_of_required honoured.
/// Messages name the tool and the parameter, e.g.
/// "shell: parameter `command` is required" / "shell: `cwd` must be a string, got integer".
/// `form`: what the refusal of an unknown key lists as allowed (a spawn's own keys
/// too; a one-shot call's, not the spawn-only ones).
enum class call_form { oneshot, spawn };
Status validate_arguments(const ToolConfig& tool, const Json& args, call_form form = call_form::oneshot);

/// A call without `action`: a spawn-only parameter given (set, not false) is refused
/// before anything runs or anyone is asked, saying how to call it (the shell's `tty`).
Status refuse_spawn_only(const ToolConfig& tool, const Json& args);

/// Its first check alone: a key that names none of the tool's parameters is
/// refused, naming the allowed ones (`args` an object).
Status refuse_unknown_keys(const ToolConfig& tool, const Json& args, call_form form = call_form::oneshot);

/// The value of an `object` parameter: the object itself, or a string holding one as
/// JSON (how the gemini dialect declares a free-form object: Gemini refuses an object
/// schema without properties). nullopt for anything else.
std::optional<Json> object_argument(const Json& value);

/// `args` as their parameters declare them: an object parameter given as such a
/// string made the object (what a server's schema or a template's
/// {{tool.arguments.NAME.field}} expects); an integer (or an array of integers'
/// item) given as 3.0 made 3, as the template writes it.
Json arguments_as_declared(const Json& args, const std::vector<ParameterConfig>& params);

/// A stateful call (arguments contain "action"): the tool is stateful and declares the
/// action, or the message says which actions it has.
Status validate_action(const ToolConfig& tool, action_kind action);

} // namespace jp
