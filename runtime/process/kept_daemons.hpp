// The build servers a tool starts on purpose to outlive it (runtime.daemons;
// Gradle's daemon, Bazel's server): they leave the tool's session, and killed at
// each exit, every build would start its server again. A process outside the tool's
// group is kept running at its exit and abort when one of its arguments is a
// configured name (or ends in "/" and it), and so is what descends from one (the
// server's own workers); jp-actors' end still ends them. The arguments are the
// process's own: a workspace's process can take such a name too, and so live on
// until jp-actors ends (README "Security model", Not covered).
#pragma once

#include <functional>
#include <string>
#include <sys/types.h>
#include <unordered_set>
#include <vector>

#include "tool_mark.hpp"

namespace jp {

/// Whether `args` (a command line, argv[0] first) holds one of `names`: an argument
/// that is the name, or ends in '/' and the name.
bool names_daemon(const std::vector<std::string>& names, const std::vector<std::string>& args);

/// The pids of the processes of `all` for which `candidate` holds (what left a tool's
/// group) that are a daemon `names` names or descend from one through candidates.
/// Reads the command lines of the candidates only, and none when `names` is empty.
std::unordered_set<pid_t> kept_daemons(const std::vector<std::string>& names, const std::vector<MarkedProcess>& all,
                                       const std::function<bool(const MarkedProcess&)>& candidate);

} // namespace jp
