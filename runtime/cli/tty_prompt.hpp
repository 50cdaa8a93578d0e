// Asking the person at the terminal to answer a tool's question.
#pragma once

#include <optional>
#include <string>

#include "actors/turn_hooks.hpp"
#include "messages/json.hpp"
#include "messages/tool_state.hpp"
#include "tools/permission.hpp"

namespace jp {

/// Prompts on /dev/tty; nullopt when there is no terminal, the input ends, or
/// `cancel_fd` (when >= 0) becomes readable: a prompt never outlives its turn.
std::optional<Json> tty_ask(const std::string& tool, const Question& q, int cancel_fd = -1);

/// Asks on /dev/tty whether `tool` may run with `args`: yes / yes for this turn /
/// no / no and tell the assistant why. nullopt when there is no terminal, the
/// input ends, or `cancel_fd` becomes readable. `about`: what the person should know
/// of the tool (a workspace's own: workspace_tool_note), "" none.
std::optional<PermissionReply> tty_ask_permission(const std::string& tool, const Json& args,
                                                  int cancel_fd = -1, const std::string& about = {});

/// The interrupt menu on /dev/tty: stop / continue / reply (then the reply's line).
/// nullopt when there is no terminal, the input ends, or `cancel_fd` becomes readable.
std::optional<InterruptChoice> tty_interrupt_menu(interrupted_while what, int cancel_fd = -1);

} // namespace jp
