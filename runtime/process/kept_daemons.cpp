#include "runtime/process/kept_daemons.hpp"

#include <algorithm>
#include <chrono>
#include <thread>
#include <unordered_map>

#include "runtime/process/proc_stat.hpp"

namespace jp {

namespace {

// How much of a command line is read for its arguments: a JVM's, its class path
// first, runs to kilobytes.
constexpr std::size_t kDaemonCommandMax = 64 * 1024;

/// `pid`'s arguments; a process in the middle of execve has none for a moment (its
/// new memory's are set after it took it): read again, for up to about 5 ms, before
/// it is taken for one with none (a daemon its tool started just as it exited was
/// killed with it so). A zombie has none for good.
std::vector<std::string> args_of(const MarkedProcess& p) {
  auto args = read_proc_args(p.stat.pid, kDaemonCommandMax);
  for (int tries = 0; args.empty() && tries < 50; ++tries) {
    auto now = read_proc_stat(p.stat.pid);
    if (!now || now->state == 'Z' || now->start != p.stat.start) // gone, or another's by now
      break;
    std::this_thread::sleep_for(std::chrono::microseconds(100));
    args = read_proc_args(p.stat.pid, kDaemonCommandMax);
  }
  return args;
}

} // namespace

bool names_daemon(const std::vector<std::string>& names, const std::vector<std::string>& args) {
  return std::any_of(args.begin(), args.end(), [&](const std::string& arg) {
    return std::any_of(names.begin(), names.end(), [&](const std::string& name) {
      return arg == name || (arg.size() > name.size() && arg.ends_with(name) && arg[arg.size() - name.size() - 1] == '/');
    });
  });
}

std::unordered_set<pid_t> kept_daemons(const std::vector<std::string>& names, const std::vector<MarkedProcess>& all,
                                       const std::function<bool(const MarkedProcess&)>& candidate) {
  std::unordered_set<pid_t> kept;
  if (names.empty())
    return kept;
  std::unordered_map<pid_t, pid_t> parent; // of the candidates
  for (auto& p : all) {
    if (!candidate(p))
      continue;
    parent.emplace(p.stat.pid, p.stat.ppid);
    if (names_daemon(names, args_of(p)))
      kept.insert(p.stat.pid);
  }
  if (kept.empty())
    return kept;
  auto daemons = kept;
  for (auto& [pid, ppid] : parent) {
    auto up = ppid;
    for (int depth = 0; depth < 4096; ++depth) { // bounded: /proc was read live
      if (daemons.count(up)) {
        kept.insert(pid);
        break;
      }
      auto it = parent.find(up);
      if (it == parent.end())
        break;
      up = it->second;
    }
  }
  return kept;
}

} // namespace jp
