#include "runtime/process/proc_stat.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace jp {

std::optional<ProcStat> read_proc_stat(pid_t pid) {
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d/stat", static_cast<int>(pid));
  int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return std::nullopt;
  char buf[1024];
  auto n = ::read(fd, buf, sizeof buf - 1);
  ::close(fd);
  if (n <= 0)
    return std::nullopt;
  buf[n] = '\0';
  // The command name is in parentheses and may contain anything: fields count from
  // the last ')'. After it: state(3) ppid(4) pgrp(5) session(6) tty_nr(7) tpgid(8)
  // ... starttime(22).
  const char* p = std::strrchr(buf, ')');
  if (!p)
    return std::nullopt;
  ProcStat st;
  st.pid = pid;
  int field = 2;
  for (++p; *p && field < 22;) {
    while (*p == ' ')
      ++p;
    ++field;
    char* end = nullptr;
    switch (field) {
      case 3: st.state = *p; break;
      case 4: st.ppid = static_cast<pid_t>(std::strtol(p, &end, 10)); break;
      case 5: st.pgid = static_cast<pid_t>(std::strtol(p, &end, 10)); break;
      case 6: st.sid = static_cast<pid_t>(std::strtol(p, &end, 10)); break;
      case 8: st.tpgid = static_cast<pid_t>(std::strtol(p, &end, 10)); break;
      case 22: st.start = std::strtoull(p, &end, 10); break;
      default: break;
    }
    while (*p && *p != ' ')
      ++p;
  }
  if (field < 22)
    return std::nullopt;
  return st;
}

std::vector<ProcStat> all_processes() {
  std::vector<ProcStat> out;
  DIR* dir = ::opendir("/proc");
  if (!dir)
    return out;
  while (auto* e = ::readdir(dir)) {
    char* end = nullptr;
    long pid = std::strtol(e->d_name, &end, 10);
    if (pid <= 0 || *end != '\0')
      continue;
    if (auto st = read_proc_stat(static_cast<pid_t>(pid)))
      out.push_back(*st);
  }
  ::closedir(dir);
  return out;
}

uint64_t run_count(pid_t pid) {
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d/schedstat", static_cast<int>(pid));
  int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return 0;
  char buf[128];
  auto n = ::read(fd, buf, sizeof buf - 1);
  ::close(fd);
  if (n <= 0)
    return 0;
  buf[n] = '\0';
  unsigned long long on_cpu = 0, waited = 0, runs = 0; // "ns ns count"
  return std::sscanf(buf, "%llu %llu %llu", &on_cpu, &waited, &runs) == 3 ? runs : 0;
}

bool signal_if_same(pid_t pid, uint64_t start, int sig) {
  int fd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  if (fd < 0)
    return false; // gone
  auto now = read_proc_stat(pid); // read after the pidfd: it is still the pidfd's process
  bool sent = now && now->start == start && ::syscall(SYS_pidfd_send_signal, fd, sig, nullptr, 0) == 0;
  ::close(fd);
  return sent;
}

namespace {
/// Up to `max_bytes` of /proc/<pid>/<what>.
std::string read_proc_file(pid_t pid, const char* what, std::size_t max_bytes) {
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d/%s", static_cast<int>(pid), what);
  int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return {};
  std::string out(max_bytes, '\0');
  std::size_t got = 0;
  while (got < max_bytes) {
    auto n = ::read(fd, out.data() + got, max_bytes - got);
    if (n <= 0)
      break;
    got += static_cast<std::size_t>(n);
  }
  ::close(fd);
  out.resize(got);
  return out;
}
} // namespace

std::string read_proc_cmdline(pid_t pid, std::size_t max_bytes) {
  auto text = read_proc_file(pid, "cmdline", max_bytes);
  while (!text.empty() && text.back() == '\0')
    text.pop_back(); // the last argument's end
  for (auto& c : text)
    if (c == '\0')
      c = ' ';
  return text;
}

std::vector<std::string> read_proc_args(pid_t pid, std::size_t max_bytes) {
  auto text = read_proc_file(pid, "cmdline", max_bytes);
  std::vector<std::string> args;
  for (std::size_t at = 0; at < text.size();) {
    auto end = text.find('\0', at);
    if (end == std::string::npos)
      end = text.size();
    args.push_back(text.substr(at, end - at));
    at = end + 1;
  }
  return args;
}

std::string read_proc_comm(pid_t pid) {
  auto text = read_proc_file(pid, "comm", 64);
  if (!text.empty() && text.back() == '\n')
    text.pop_back();
  return text;
}

std::vector<ProcStat> session_members(pid_t sid) {
  std::vector<ProcStat> out;
  for (auto& st : all_processes())
    if (st.sid == sid)
      out.push_back(st);
  return out;
}

} // namespace jp
