// Talking to a jp-actors run on a pseudo-terminal in a test: read what it writes
// until some text appears (bounded), as a person watching the screen would.
#pragma once

#include <chrono>
#include <poll.h>
#include <string>
#include <unistd.h>

namespace jp::testing {

/// Reads from fd until `needle` appeared in what was read or 60 s passed (a bound
/// against a hang: a loaded machine running a sanitizer build takes its time).
inline bool read_until(int fd, std::string& seen, const std::string& needle) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (seen.find(needle) == std::string::npos) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0)
      return false;
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left.count())) <= 0)
      return false;
    char buf[4096];
    auto n = ::read(fd, buf, sizeof buf);
    if (n <= 0)
      return seen.find(needle) != std::string::npos;
    seen.append(buf, static_cast<size_t>(n));
  }
  return true;
}

} // namespace jp::testing
