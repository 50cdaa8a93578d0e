#include "runtime/process/group_record.hpp"
#include "runtime/process/private_file.hpp"
#include "runtime/process/proc_stat.hpp"
#include "runtime/process/tool_mark.hpp"

#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <csignal>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <filesystem>
#include <fmt/format.h>
#include <algorithm>
#include <map>
#include <optional>
#include <sys/stat.h>
#include <sys/file.h>
#include <unistd.h>

namespace jp {

namespace {

std::atomic<int> g_record_fd{-1};
char g_record_path[PATH_MAX]; // for close_group_record in a signal handler

void append(const std::string& line) {
  int fd = g_record_fd.load();
  if (fd < 0)
    return;
  // O_APPEND: a short line lands whole even with the io thread writing too.
  while (::write(fd, line.data(), line.size()) < 0 && errno == EINTR) {
  }
}

/// Every live process by process group: (pid, start time). A terminal handle's
/// group leads a session whose other groups (shell jobs) are listed under it too.
std::map<pid_t, std::vector<std::pair<pid_t, uint64_t>>> processes_by_group() {
  std::map<pid_t, std::vector<std::pair<pid_t, uint64_t>>> out;
  for (auto& st : all_processes()) {
    out[st.pgid].emplace_back(st.pid, st.start);
    if (st.sid != st.pgid)
      out[st.sid].emplace_back(st.pid, st.start);
  }
  return out;
}

struct Record {
  pid_t owner = 0;
  uint64_t owner_start = 0;
};

/// "<pid>-<start>.groups" -> owner; nullopt for other names.
std::optional<Record> parse_record_name(const std::string& name) {
  const std::string suffix = ".groups";
  if (name.size() <= suffix.size() || name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0)
    return std::nullopt;
  unsigned long long pid = 0, start = 0;
  char tail[16] = {};
  if (std::sscanf(name.c_str(), "%llu-%llu%15s", &pid, &start, tail) != 3 || suffix != tail)
    return std::nullopt;
  return Record{static_cast<pid_t>(pid), start};
}

/// When a recorded leader started: between earliest and latest.
struct StartWindow {
  uint64_t earliest = 0;
  uint64_t latest = 0;
  bool holds(uint64_t start) const { return start >= earliest && start <= latest; }
};

/// A spawn is recorded within moments; a window wider than this (or one that ends
/// in the future) was not written by jp-actors, and would match any process.
constexpr uint64_t max_window_secs = 60;

bool plausible(pid_t pgid, const StartWindow& w, uint64_t now) {
  static const uint64_t hz = static_cast<uint64_t>(::sysconf(_SC_CLK_TCK));
  if (pgid <= 1 || pgid == ::getpgrp() || pgid == ::getsid(0))
    return false; // never init, never ourselves, never the session we run in
  return w.earliest > 0 && w.earliest <= w.latest && w.latest <= now &&
         w.latest - w.earliest <= max_window_secs * hz;
}

/// A record file we may believe: a regular file (not a link: opened with
/// O_NOFOLLOW) of this user's that nobody else may write.
bool trusted_record(int fd) {
  struct stat st{};
  return ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == ::geteuid() &&
         (st.st_mode & (S_IWGRP | S_IWOTH)) == 0;
}

/// What a record says: its boot ("" in older records) and the groups still alive,
/// with their leaders' start windows.
struct RecordText {
  std::string boot;
  std::map<pid_t, StartWindow> live;
};

/// Reads a record; takes `fd`.
RecordText read_record(int fd) {
  RecordText text;
  auto& live = text.live;
  FILE* f = ::fdopen(fd, "r");
  if (!f) {
    ::close(fd);
    return text;
  }
  char line[128];
  while (std::fgets(line, sizeof line, f)) {
    if (char id[64] = {}; std::sscanf(line, "boot %63s", id) == 1) {
      text.boot = id;
      continue;
    }
    char op = 0;
    long long pgid = 0;
    unsigned long long earliest = 0, latest = 0;
    int n = std::sscanf(line, "%c %lld %llu %llu", &op, &pgid, &earliest, &latest);
    if (n < 2 || pgid <= 1)
      continue;
    if (op == '+')
      live[static_cast<pid_t>(pgid)] = StartWindow{earliest, n >= 4 ? latest : earliest};
    else if (auto it = live.find(static_cast<pid_t>(pgid)); op == '-' && it != live.end())
      if (n < 4 || (it->second.earliest == earliest && it->second.latest == latest))
        live.erase(it);
  }
  std::fclose(f);
  return text;
}

} // namespace

uint64_t process_start_time(pid_t pid) {
  auto st = read_proc_stat(pid);
  return st ? st->start : 0;
}

bool runs_since(pid_t pid, uint64_t start) {
  auto st = read_proc_stat(pid);
  // A zombie has ended (its parent has not reaped it yet): after a kill -9 it may
  // stay one for a while, and its groups are nobody's.
  return st && st->start == start && st->state != 'Z' && st->state != 'X';
}

const std::string& boot_id() {
  static const std::string id = [] {
    char buf[64] = {};
    int fd = ::open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
      return std::string();
    auto n = ::read(fd, buf, sizeof buf - 1);
    ::close(fd);
    std::string text(buf, n > 0 ? static_cast<size_t>(n) : 0);
    while (!text.empty() && (text.back() == '\n' || text.back() == ' '))
      text.pop_back();
    return text;
  }();
  return id;
}

Result<RecordDir> crash_record_dir() {
  auto dir = user_state_dir("live");
  if (!dir)
    return Error{fmt::format("no place for the record of live process groups: {}", dir.error())};
  return *dir;
}

Status open_group_record(const RecordDir& where) {
  auto dir = open_private_dir(where.root, where.relative);
  if (!dir)
    return Error{fmt::format("the record of live process groups: {}", dir.error())};
  auto name = fmt::format("{}-{}.groups", ::getpid(), process_start_time(::getpid()));
  auto path = where.path() + "/" + name;
  if (path.size() >= sizeof g_record_path)
    return Error{fmt::format("state directory path too long: {}", where.path())};
  int fd = create_private_file(*dir, name, O_APPEND);
  if (fd < 0)
    return Error{fmt::format("cannot create {}: {}", path, std::strerror(errno))};
  // Held while we live (the kernel lets it go when we die, however): a sweeper
  // that cannot lock it leaves it alone, even one in another pid namespace, where
  // our pid names another process or none.
  ::flock(fd, LOCK_EX | LOCK_NB);
  close_group_record(); // one record per process
  std::memcpy(g_record_path, path.c_str(), path.size() + 1);
  g_record_fd = fd;
  if (!boot_id().empty())
    append(fmt::format("boot {}\n", boot_id()));
  return {};
}

void close_group_record() noexcept {
  int fd = g_record_fd.exchange(-1);
  if (fd < 0)
    return;
  ::close(fd);
  ::unlink(g_record_path);
}

uint64_t boot_ticks_now() {
  // How the kernel reports start times: nanoseconds of boot time / (1 s / USER_HZ).
  static const long hz = ::sysconf(_SC_CLK_TCK);
  struct timespec ts{};
  ::clock_gettime(CLOCK_BOOTTIME, &ts);
  return (static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec)) /
         (1000000000ull / static_cast<uint64_t>(hz));
}

void record_group_started(pid_t pgid, uint64_t earliest, uint64_t latest) {
  if (g_record_fd.load() < 0)
    return;
  append(fmt::format("+ {} {} {}\n", pgid, earliest, latest));
}

void record_group_ended(pid_t pgid, uint64_t earliest, uint64_t latest) {
  if (g_record_fd.load() < 0)
    return;
  append(fmt::format("- {} {} {}\n", pgid, earliest, latest));
}

SweepReport sweep_group_records(const RecordDir& where) {
  SweepReport report;
  if (::access(where.path().c_str(), F_OK) != 0)
    return report; // nothing was ever recorded here
  auto dir = open_private_dir(where.root, where.relative);
  if (!dir) {
    report.refused = dir.error();
    return report;
  }
  std::error_code ec;
  std::vector<std::pair<std::string, Record>> orphaned; // claimed names
  for (auto& entry : std::filesystem::directory_iterator(where.path(), ec)) {
    auto name = entry.path().filename().string();
    auto rec = parse_record_name(name);
    if (!rec || rec->owner == ::getpid() || rec->owner <= 1)
      continue;
    if (rec->owner_start != 0 && runs_since(rec->owner, rec->owner_start))
      continue; // its owner still runs: its groups are its own business
    if (int probe = ::openat(dir->get(), name.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC); probe >= 0) {
      bool held = ::flock(probe, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK;
      ::close(probe);
      if (held)
        continue; // its owner still runs where its pid means something else (another pid namespace)
    }
    // Claimed by renaming: of two jp-actors starting at once, one sweeps it.
    auto claimed = name + fmt::format(".sweeping-{}", ::getpid());
    if (::renameat(dir->get(), name.c_str(), dir->get(), claimed.c_str()) == 0)
      orphaned.emplace_back(claimed, *rec);
  }
  if (orphaned.empty())
    return report;
  auto by_group = processes_by_group();
  auto now = boot_ticks_now();
  for (auto& [name, rec] : orphaned) {
    int fd = ::openat(dir->get(), name.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0 || !trusted_record(fd)) {
      if (fd >= 0)
        ::close(fd);
      ++report.untrusted; // a link, or not ours alone: believed by nobody, removed
      ::unlinkat(dir->get(), name.c_str(), 0);
      continue;
    }
    auto text = read_record(fd);
    if (!text.boot.empty() && !boot_id().empty() && text.boot != boot_id()) {
      ++report.earlier_boots; // its processes ended with that boot
      ::unlinkat(dir->get(), name.c_str(), 0);
      continue;
    }
    report.owners.push_back(rec.owner);
    std::vector<pid_t> killed_here;
    for (auto& [pgid, window] : text.live) {
      if (window.earliest == 0)
        continue; // never verified: not ours to judge
      if (!plausible(pgid, window, now)) {
        ++report.untrusted;
        continue;
      }
      auto it = by_group.find(pgid);
      if (it == by_group.end())
        continue; // gone
      auto leader_start = process_start_time(pgid);
      if (leader_start == 0 || !window.holds(leader_start)) {
        // The pid is someone else's now, or its leader is gone: then the group id
        // may have been taken since by another group whose leader also ended (a
        // pipeline's, `sh -c 'job & exit'`). Its members that are ours carry the
        // owner's mark: the pass below finds them.
        ++report.skipped;
        continue;
      }
      // Members started before the recorded leader cannot be ours.
      size_t killed = 0;
      for (auto& [pid, pstart] : it->second) {
        if (pstart >= window.earliest && signal_if_same(pid, pstart, SIGKILL)) {
          ++killed;
          killed_here.push_back(pid);
        }
      }
      ::kill(-pgid, SIGKILL); // and whatever joined the group since the scan
      if (killed > 0) {
        ++report.groups;
        report.processes += killed;
      }
    }
    // What the record cannot name: a tool started as its owner was killed (before the
    // record had its line) and what left its group or session. Every tool of that
    // owner carries its mark, which names owner pid and start time: no later process
    // can be mistaken for one, and none started before the owner is considered.
    if (rec.owner_start != 0)
      for (auto& st : marked_processes(owner_mark(rec.owner, rec.owner_start)))
        if (st.start >= rec.owner_start &&
            std::find(killed_here.begin(), killed_here.end(), st.pid) == killed_here.end() &&
            signal_if_same(st.pid, st.start, SIGKILL))
          ++report.escaped;
    ::unlinkat(dir->get(), name.c_str(), 0);
  }
  return report;
}

std::string SweepReport::summary() const {
  if (!refused.empty())
    return fmt::format("not sweeping the record of live process groups: {}", refused);
  std::string untrusted_text =
    untrusted == 0 ? std::string()
                   : fmt::format("ignored {} implausible or untrusted record entr{} (nothing killed for {})",
                                 untrusted, untrusted == 1 ? "y" : "ies", untrusted == 1 ? "it" : "them");
  // An owner that left nothing running (killed before its first tool, or after its
  // last ended) is not news.
  if (owners.empty() || (groups == 0 && escaped == 0 && skipped == 0))
    return untrusted_text;
  std::string who;
  for (size_t i = 0; i < owners.size(); ++i)
    who += fmt::format("{}{}", i ? ", " : "", owners[i]);
  auto text = fmt::format("cleaned up after jp-actors (pid {}) that ended without cleaning up: "
                          "killed {} process group{} ({} process{})",
                          who, groups, groups == 1 ? "" : "s", processes, processes == 1 ? "" : "es");
  if (escaped > 0)
    text += fmt::format(" and {} process{} of its tools outside them", escaped, escaped == 1 ? "" : "es");
  if (skipped > 0)
    text += fmt::format("; left {} recorded group{} alone: its leader is gone or the pid is another process's now",
                        skipped, skipped == 1 ? "" : "s");
  if (!untrusted_text.empty())
    text += "; " + untrusted_text;
  return text;
}

} // namespace jp
