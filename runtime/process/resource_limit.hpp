// The kernel resource limits a tool's child gets before it execs
// (messages/tool_limits.hpp says which): worked out in the parent, set by the
// launcher in the child, so that the program and all it starts inherit them.
#pragma once

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "../../messages/tool_limits.hpp"

namespace jp {

struct ResourceLimit {
  uint64_t soft = 0, hard = 0; // struct rlimit64's layout: the child passes its address as it is
  int resource = 0;
};

/// The limits to set for `limits`, none for what is not set (but the soft limit on
/// open files given back, give_children_open_files). Soft and hard alike, so
/// the tool cannot raise them; the CPU time's hard one a second later, so that the
/// tool hears SIGXCPU first. None above the hard limit we run under (which only
/// root could raise). With any set, no core files either (RLIMIT_CORE 0).
std::vector<ResourceLimit> resource_limits(const ToolLimits& limits);

/// One of them: `value` (0: none) with its hard limit `grace` past it, neither
/// above `ceiling` (the soft one kept below it by `grace` too, so that the warning
/// signal still comes first).
std::optional<ResourceLimit> resource_limit(int resource, uint64_t value, uint64_t ceiling, uint64_t grace = 0);

/// The soft limit on open files jp-actors started with, before it raised its own
/// to the hard one (io_thread.cpp), with that hard one: every child gets it back
/// where its limits set no open_files (a program that loops over every possible fd
/// or sizes a table by the limit would pay for ours). Both 0: none given back.
/// Returns what was set before.
std::pair<uint64_t, uint64_t> give_children_open_files(uint64_t soft, uint64_t hard) noexcept;

/// In the child (the boost and fork paths; our vfork child makes the system call
/// itself): sets them all. 0, or the errno of the first that failed.
int set_resource_limits(const std::vector<ResourceLimit>& limits) noexcept;

} // namespace jp
