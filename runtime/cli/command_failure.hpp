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
  // Written whole: a NUL the caller's text carried (a pipe gets the bytes) ended a %s.
  auto shown = shown_on(STDERR_FILENO, reason);
  std::fprintf(stderr, "jp-actors: %s%s", command ? command : "", command ? ": " : "");
  std::fwrite(shown.data(), 1, shown.size(), stderr);
  std::fputc('\n', stderr);
  return 1;
}

} // namespace jp
