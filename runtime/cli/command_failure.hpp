// What a command says on stderr when it fails, and the exit status it then returns.
#pragma once

#include <cstdio>
#include <string>
#include <unistd.h>

#include "messages/terminal_safe.hpp"

namespace jp {

/// "jp-actors: REASON" on stderr (after `command`: "jp-actors: mcp: REASON" for the
/// servers, whose stderr is a log); 1. A reason may quote a tool, a model or a
/// provider: on a terminal it cannot drive it.
inline int command_failed(const std::string& reason, const char* command = nullptr) {
  std::fprintf(stderr, "jp-actors: %s%s%s\n", command ? command : "", command ? ": " : "",
               shown_on(STDERR_FILENO, reason).c_str());
  return 1;
}

} // namespace jp
