// What a tool's processes may use at most ([runtime.tool_limits], a tool's own
// [conversation.tools.NAME.limits] within them): kernel resource
// limits set in the child before it execs, so the tool and all it starts inherit
// them and none can raise them. Plain data; 0 = not set.
#pragma once

#include <cstdint>

namespace jp {

struct ToolLimits {
  uint64_t memory_mb = 0;    // RLIMIT_DATA: private writable memory, per process
  uint64_t processes = 0;    // RLIMIT_NPROC: tasks (processes, threads) of our user, all counted
  uint64_t cpu_secs = 0;     // RLIMIT_CPU: CPU time, per process (SIGXCPU, then SIGKILL 1 s on)
  uint64_t file_size_mb = 0; // RLIMIT_FSIZE: the largest file it may write (SIGXFSZ past it)
  uint64_t open_files = 0;   // RLIMIT_NOFILE: open file descriptors, per process
  bool any() const { return memory_mb || processes || cpu_secs || file_size_mb || open_files; }
  friend bool operator==(const ToolLimits&, const ToolLimits&) = default;
};

/// Each limit the lower of the two, where either sets it: a tool's own limits
/// within the runtime's.
inline ToolLimits tightest(const ToolLimits& a, const ToolLimits& b) {
  auto low = [](uint64_t x, uint64_t y) { return x == 0 ? y : y == 0 ? x : x < y ? x : y; };
  return {low(a.memory_mb, b.memory_mb), low(a.processes, b.processes), low(a.cpu_secs, b.cpu_secs),
          low(a.file_size_mb, b.file_size_mb), low(a.open_files, b.open_files)};
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, ToolLimits& x) {
  return f(x.memory_mb, x.processes, x.cpu_secs, x.file_size_mb, x.open_files);
}

} // namespace jp
