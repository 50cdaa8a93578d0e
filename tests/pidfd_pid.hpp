// The pid a pidfd of this process refers to, as /proc/self/fdinfo says: "" when it
// names none (a reaped child's) or the fd is no pidfd. Shared by process_test and
// the sandboxed_spawn program it runs.
#pragma once

#include <fstream>
#include <string>

namespace jp::testing {

inline std::string pid_of_pidfd(int fd) {
  std::ifstream info("/proc/self/fdinfo/" + std::to_string(fd));
  for (std::string line; std::getline(info, line);)
    if (line.starts_with("Pid:\t"))
      return line.substr(5);
  return {};
}

} // namespace jp::testing
