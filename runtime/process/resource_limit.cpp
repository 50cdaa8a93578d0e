#include "runtime/process/resource_limit.hpp"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace jp {

namespace {

std::atomic<uint64_t> g_files_soft{0}, g_files_hard{0}; // give_children_open_files

} // namespace

std::pair<uint64_t, uint64_t> give_children_open_files(uint64_t soft, uint64_t hard) noexcept {
  return {g_files_soft.exchange(soft), g_files_hard.exchange(hard)};
}

std::optional<ResourceLimit> resource_limit(int resource, uint64_t value, uint64_t ceiling, uint64_t grace) {
  if (value == 0)
    return std::nullopt;
  uint64_t hard = std::min(value + grace, ceiling);
  return ResourceLimit{std::min(value, hard > grace ? hard - grace : hard), hard, resource};
}

std::vector<ResourceLimit> resource_limits(const ToolLimits& limits) {
  std::vector<ResourceLimit> out;
  for (auto& k : kToolLimitKeys) {
    uint64_t value = limits.*k.field * k.unit;
    if (value == 0)
      continue; // not set: no system call on a spawn's path
    rlimit now{};
    uint64_t ceiling = ::getrlimit(k.resource, &now) == 0 && now.rlim_max != RLIM_INFINITY ? now.rlim_max : UINT64_MAX;
    if (auto limit = resource_limit(k.resource, value, ceiling, k.grace))
      out.push_back(*limit);
  }
  if (uint64_t soft = g_files_soft.load(std::memory_order_relaxed); limits.open_files == 0 && soft != 0)
    out.push_back({soft, g_files_hard.load(std::memory_order_relaxed), RLIMIT_NOFILE});
  // SIGXCPU and SIGXFSZ dump core: not into the workspace, where the tool runs.
  if (limits.any())
    out.push_back({0, 0, RLIMIT_CORE});
  return out;
}

int set_resource_limits(const std::vector<ResourceLimit>& limits) noexcept {
  for (auto& l : limits)
    if (::syscall(SYS_prlimit64, 0, l.resource, &l, nullptr) != 0)
      return errno;
  return 0;
}

} // namespace jp
