// What a tool's processes may use at most ([runtime.tool_limits], a tool's own
// [conversation.tools.NAME.limits] within them): kernel resource
// limits set in the child before it execs, so the tool and all it starts inherit
// them and none can raise them. Plain data; 0 = not set.
#pragma once

#include <cstdint>
#include <iterator>
#include <string_view>
#include <sys/resource.h>

namespace jp {

struct ToolLimits {
  uint64_t memory_mb = 0;    // RLIMIT_DATA: private writable memory, per process
  uint64_t processes = 0;    // RLIMIT_NPROC: tasks (processes, threads) of our user, all counted
  uint64_t cpu_secs = 0;     // RLIMIT_CPU: CPU time, per process (SIGXCPU, then SIGKILL 1 s on)
  uint64_t file_size_mb = 0; // RLIMIT_FSIZE: the largest file it may write (SIGXFSZ past it)
  uint64_t open_files = 0;   // RLIMIT_NOFILE: open file descriptors, per process
  bool any() const;
  friend bool operator==(const ToolLimits&, const ToolLimits&) = default;
};

/// One limit, all that is said of it in one place: its key in a config, its
/// field, the range a config may set (config_loader.cpp), and how the kernel takes
/// it (resource_limit.cpp): which limit, in what unit, with the hard one `grace`
/// past the soft one so that the warning signal comes first. The loader, a
/// workspace's checks and notes, and the launcher all read this table.
struct ToolLimitKey {
  std::string_view key;
  uint64_t ToolLimits::*field;
  int64_t min, max;
  int resource;
  uint64_t unit = 1;
  uint64_t grace = 0;
};

inline constexpr ToolLimitKey kToolLimitKeys[] = {
  {"memory_mb", &ToolLimits::memory_mb, 16, int64_t{1} << 24, RLIMIT_DATA, 1ull << 20},
  {"processes", &ToolLimits::processes, 1, int64_t{1} << 22, RLIMIT_NPROC},
  {"cpu_secs", &ToolLimits::cpu_secs, 1, 366 * 86400, RLIMIT_CPU, 1, 1},
  {"file_size_mb", &ToolLimits::file_size_mb, 1, int64_t{1} << 24, RLIMIT_FSIZE, 1ull << 20},
  {"open_files", &ToolLimits::open_files, 8, int64_t{1} << 20, RLIMIT_NOFILE},
};

// Every field is in the table: a limit added to ToolLimits and not there would be
// read, combined and set by none of them.
static_assert(sizeof(ToolLimits) == std::size(kToolLimitKeys) * sizeof(uint64_t));

inline bool ToolLimits::any() const {
  for (auto& k : kToolLimitKeys)
    if (this->*k.field != 0)
      return true;
  return false;
}

/// Each limit the lower of the two, where either sets it: a tool's own limits
/// within the runtime's.
inline ToolLimits tightest(const ToolLimits& a, const ToolLimits& b) {
  ToolLimits out;
  for (auto& k : kToolLimitKeys) {
    uint64_t x = a.*k.field, y = b.*k.field;
    out.*k.field = x == 0 ? y : y == 0 ? x : x < y ? x : y;
  }
  return out;
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, ToolLimits& x) {
  return f(x.memory_mb, x.processes, x.cpu_secs, x.file_size_mb, x.open_files);
}

} // namespace jp
