// The named keys an assistant may type into a terminal ({"keys": [...]} in `apply`):
// part of the protocol, described in tool schemas and encoded by the terminal
// (runtime/terminal/terminal_screen.hpp).
#pragma once

#include <string>

namespace jp {

/// One sentence naming the keys and modifiers a terminal accepts.
std::string key_help();

} // namespace jp
