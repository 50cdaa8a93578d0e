// The system call a process sleeps in, by the kernel's own record: how a test sees a
// child blocked (writing to a full pipe, opening a FIFO) without waiting and hoping.
#pragma once

#include <filesystem>
#include <fstream>
#include <sys/syscall.h>
#include <optional>
#include <string>
#include <sys/types.h>

namespace jp::testing {

struct Syscall {
  long nr = -1;   // SYS_write, SYS_openat...
  long arg0 = -1; // its first argument (a write's fd)
};

/// The call `pid` sleeps in (/proc/PID/syscall names it only while it sleeps in one);
/// nullopt when it runs, or is gone.
inline std::optional<Syscall> sleeping_in(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/syscall");
  Syscall s;
  std::string arg0;
  if (!(in >> s.nr >> arg0) || s.nr < 0)
    return std::nullopt;
  s.arg0 = std::stol(arg0, nullptr, 16);
  return s;
}

/// Whether a thread of process `pid` sleeps in a write to its `fd` (a full pipe).
inline bool writes_blocked(pid_t pid, int fd) {
  std::error_code ec;
  for (auto& task : std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/task", ec)) {
    auto s = sleeping_in(static_cast<pid_t>(std::stol(task.path().filename().string())));
    if (s && (s->nr == SYS_write || s->nr == SYS_writev) && s->arg0 == fd)
      return true;
  }
  return false;
}

} // namespace jp::testing
