#include "runtime/process/tool_mark.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>
#include <unordered_map>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include "runtime/process/group_record.hpp"

namespace jp {

std::string mark_of(pid_t pid) {
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d/environ", static_cast<int>(pid));
  int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return {};
  std::string env;
  char buf[16384];
  ssize_t n;
  while ((n = ::read(fd, buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR))
    if (n > 0)
      env.append(buf, std::size_t(n));
  ::close(fd);
  const std::string name = std::string(kToolMarkVariable) + "=";
  for (std::size_t at = 0; at < env.size();) {
    auto end = env.find('\0', at);
    if (end == std::string::npos)
      end = env.size();
    if (env.compare(at, name.size(), name) == 0)
      return env.substr(at + name.size(), end - at - name.size());
    at = end + 1;
  }
  return {};
}

namespace {

/// This process's owner mark (computed once: neither pid nor start time changes).
const std::string& own_mark() {
  static const std::string mine = owner_mark(::getpid(), process_start_time(::getpid()));
  return mine;
}


std::atomic<uint64_t> g_marks{0}; // marks handed out
std::atomic<uint64_t> g_swept{0}; // g_marks as kill_escaped_processes began its last sweep

} // namespace

std::string owner_mark(pid_t owner, uint64_t owner_start) {
  return fmt::format("{}.{}.", owner, owner_start);
}

std::string next_tool_mark() {
  return own_mark() + std::to_string(++g_marks);
}

std::string tool_mark_value(const std::string& mark) {
  // The marks we were started with (read once: our environment's, as exec'd).
  static const std::string inherited = [] {
    const char* v = std::getenv(std::string(kToolMarkVariable).c_str());
    std::string kept;
    std::string_view rest = v ? v : "";
    for (int n = 0; n < 7 && !rest.empty(); ++n) { // ours makes 8
      auto end = std::min(rest.find(','), rest.size());
      if (end > 0)
        kept.append(",").append(rest.substr(0, end));
      rest.remove_prefix(std::min(end + 1, rest.size()));
    }
    return kept;
  }();
  return mark + inherited;
}

bool mark_names(std::string_view value, std::string_view mark, bool inherited) {
  if (mark.empty())
    return false;
  for (size_t at = 0; at < value.size();) {
    auto end = std::min(value.find(',', at), value.size());
    auto one = value.substr(at, end - at);
    if (mark.back() == '.' ? one.substr(0, mark.size()) == mark : one == mark)
      return true;
    if (!inherited)
      return false;
    at = end + 1;
  }
  return false;
}

std::vector<MarkedProcess> processes_with_marks(const std::vector<pid_t>& known_tools) {
  std::vector<MarkedProcess> out;
  auto self = ::getpid();
  auto all = all_processes();
  std::unordered_map<pid_t, pid_t> parent;
  parent.reserve(all.size());
  for (auto& st : all)
    parent.emplace(st.pid, st.ppid);
  auto descends = [&](pid_t pid) {
    for (int depth = 0; depth < 4096 && pid > 1; ++depth) { // bounded: /proc is read live
      auto it = parent.find(pid);
      if (it == parent.end())
        return false;
      if (it->second == self)
        return true;
      pid = it->second;
    }
    return false;
  };
  for (auto& st : all) {
    if (st.pid == self || st.state == 'Z')
      continue;
    // A tool still leading its own group (one that left it is read: it escaped), and
    // its session's members in its group. Those in other groups of its session (jobs)
    // are read: one may be another jp-actors' tool (a nested run's), not this tool's.
    bool known = (st.pid == st.pgid && std::binary_search(known_tools.begin(), known_tools.end(), st.pid)) ||
                 (std::binary_search(known_tools.begin(), known_tools.end(), st.sid) && st.pgid == st.sid);
    out.push_back({st, known ? std::string() : mark_of(st.pid), descends(st.pid)});
  }
  return out;
}

std::vector<ProcStat> marked_processes(std::string_view mark) {
  std::vector<ProcStat> found;
  for (auto& p : processes_with_marks())
    if (mark_names(p.mark, mark))
      found.push_back(p.stat);
  return found;
}

std::size_t signal_escaped_processes(int sig, const std::vector<pid_t>& live_leaders) {
  if (g_marks.load() == 0)
    return 0; // never started a tool: nothing of ours can be anywhere
  std::size_t hit = 0;
  auto self = ::getpid();
  for (auto& p : processes_with_marks()) {
    // In a live tool's group (its leader, or a jp-actors run as that tool under a
    // shell): the group's signal reached it.
    if (sig != SIGKILL && std::binary_search(live_leaders.begin(), live_leaders.end(), p.stat.pgid))
      continue;
    if ((p.stat.ppid == self || (p.ours && mark_names(p.mark, own_mark(), sig == SIGKILL || sig == 0))) &&
        signal_if_same(p.stat.pid, p.stat.start, sig))
      ++hit;
  }
  return hit;
}

void kill_escaped_processes() {
  auto marks = g_marks.load();
  // A killed process shows as alive until the kernel is done with it: look again a
  // few times, briefly, rather than once.
  for (int round = 0; round < 200 && signal_escaped_processes(SIGKILL) > 0; ++round)
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  g_swept.store(marks);
}

bool tools_started_since_sweep() {
  return g_marks.load() != g_swept.load();
}

} // namespace jp
