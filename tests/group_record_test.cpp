// The crash sweep on real processes: records of dead owners are swept, only where
// the recorded group is still the one that was started.
#define CAF_SUITE group_record
#include <caf/test/unit_test.hpp>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <sys/file.h>
#include <functional>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

#include "runtime/process/group_record.hpp"
#include "runtime/process/proc_stat.hpp"
#include "gone_pid.hpp"
#include "owned_children.hpp"
#include "temp_dir.hpp"

using namespace jp;
using jp::testing::gone_pid;
using jp::testing::own_child;
using jp::testing::reap_child;

namespace {

/// `sh -c script` leading its own process group; killed (group) and reaped at the end
/// whatever the test did.
struct Group {
  pid_t pid = -1;
  explicit Group(const std::string& script) {
    pid = ::fork();
    if (pid == 0) {
      ::setpgid(0, 0);
      ::execl("/bin/sh", "sh", "-c", script.c_str(), nullptr);
      ::_exit(127);
    }
    ::setpgid(pid, pid); // also from here: no race with the sweep's check
    own_child(-pid, SIGKILL);
  }
  ~Group() {
    ::kill(-pid, SIGKILL);
    reap_child(pid);
  }
  /// Alive and not a zombie.
  bool running() const {
    std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
    std::string line;
    if (!std::getline(in, line))
      return false;
    auto close = line.rfind(')');
    return close != std::string::npos && line.at(close + 2) != 'Z';
  }
  /// How many processes are in the group (bounded wait until it is `n`).
  size_t members_when(size_t n) const {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    size_t count = 0;
    do {
      count = 0;
      for (auto& e : std::filesystem::directory_iterator("/proc")) {
        auto name = e.path().filename().string();
        if (name.find_first_not_of("0123456789") != std::string::npos)
          continue;
        if (::getpgid(std::stoi(name)) == pid) {
          std::ifstream in(e.path() / "stat");
          std::string line;
          std::getline(in, line);
          auto close = line.rfind(')');
          count += close != std::string::npos && line.at(close + 2) != 'Z';
        }
      }
      if (count == n)
        return count;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    } while (std::chrono::steady_clock::now() < deadline);
    return count;
  }
};


} // namespace

CAF_TEST(the groups of an owner that is gone are killed with every member) {
  testing::temp_dir dir;
  Group g("sleep 30 & sleep 30 & wait");
  CAF_REQUIRE_EQUAL(g.members_when(3), 3u);
  auto start = process_start_time(g.pid);
  CAF_REQUIRE(start > 0);
  auto record = fmt::format("{}-77.groups", gone_pid());
  dir.write(record, fmt::format("+ {} {}\n", g.pid, start));
  auto report = sweep_group_records(dir.path.string());
  CAF_CHECK_EQUAL(report.owners.size(), 1u);
  CAF_CHECK_EQUAL(report.groups, 1u);
  CAF_CHECK_EQUAL(report.processes, 3u);
  CAF_CHECK_EQUAL(g.members_when(0), 0u);
  CAF_CHECK(report.summary().find("killed 1 process group (3 processes)") != std::string::npos);
  CAF_CHECK(!dir.has(record)); // swept once
  CAF_CHECK_EQUAL(sweep_group_records(dir.path.string()).summary(), "");
}

CAF_TEST(a group recorded with the clock around its spawn is swept) {
  testing::temp_dir dir;
  auto earliest = boot_ticks_now();
  Group g("sleep 30 & wait");
  auto latest = boot_ticks_now();
  CAF_REQUIRE_EQUAL(g.members_when(2), 2u);
  auto start = process_start_time(g.pid);
  CAF_CHECK(start >= earliest && start <= latest); // the window holds the real start
  dir.write(fmt::format("{}-77.groups", gone_pid()), fmt::format("+ {} {} {}\n", g.pid, earliest, latest));
  auto report = sweep_group_records(dir.path.string());
  CAF_CHECK_EQUAL(report.processes, 2u);
  CAF_CHECK_EQUAL(g.members_when(0), 0u);
}

CAF_TEST(a recorded terminal session is swept with the jobs in its other groups) {
  testing::temp_dir dir;
  // A pty's child leads a session; a shell's jobs there are groups of their own.
  pid_t leader = ::fork();
  if (leader == 0) {
    ::setsid();
    ::execl("/bin/bash", "bash", "-c", "set -m; sleep 30 & sleep 30 & wait", nullptr);
    ::_exit(127);
  }
  own_child(-leader, SIGKILL); // its jobs' groups end with their sleeps
  auto members = [leader] {
    std::vector<pid_t> found;
    for (auto& e : std::filesystem::directory_iterator("/proc")) {
      auto name = e.path().filename().string();
      if (name.find_first_not_of("0123456789") == std::string::npos && ::getsid(std::stoi(name)) == leader) {
        std::ifstream in(e.path() / "stat");
        std::string line;
        std::getline(in, line);
        auto close = line.rfind(')');
        if (close != std::string::npos && line.at(close + 2) != 'Z')
          found.push_back(std::stoi(name));
      }
    }
    return found;
  };
  struct Cleanup {
    std::function<std::vector<pid_t>()> members;
    pid_t leader;
    ~Cleanup() {
      for (pid_t p : members())
        ::kill(p, SIGKILL);
      reap_child(leader);
    }
  } cleanup{members, leader};
  // Until both jobs run in groups of their own (bash moves them there).
  auto other_groups = [&] {
    size_t n = 0;
    for (pid_t p : members())
      n += ::getpgid(p) != leader;
    return n;
  };
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while ((members().size() < 3 || other_groups() < 2) && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  CAF_CHECK_EQUAL(members().size(), 3u);
  CAF_CHECK_EQUAL(other_groups(), 2u);
  dir.write(fmt::format("{}-77.groups", gone_pid()), fmt::format("+ {} {}\n", leader, process_start_time(leader)));
  auto report = sweep_group_records(dir.path.string());
  CAF_CHECK_EQUAL(report.processes, 3u);
  deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!members().empty() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  CAF_CHECK(members().empty());
}

CAF_TEST(a signal by pid reaches only the process that started then) {
  // The sweep and the escape scans signal pids read from /proc a moment before:
  // a pid given to a later process since must not be signalled.
  Group g("sleep 30");
  auto start = process_start_time(g.pid);
  CAF_REQUIRE(start > 0);
  CAF_CHECK(!signal_if_same(g.pid, start - 1, SIGKILL));
  CAF_CHECK(g.running());
  CAF_CHECK(signal_if_same(g.pid, start, SIGKILL)); // the leader alone (sh may have a child)
  siginfo_t info{};
  CAF_CHECK_EQUAL(::waitid(P_PID, g.pid, &info, WEXITED | WNOWAIT), 0); // a zombie now, not reaped
  CAF_CHECK(signal_if_same(g.pid, start, SIGKILL)); // a zombie still is that process
  reap_child(g.pid);
  CAF_CHECK(!signal_if_same(g.pid, start, SIGKILL)); // gone
}

CAF_TEST(a record of an earlier boot is removed and kills nothing) {
  // After a reboot (a power cut leaves records behind) the recorded pids and start
  // times name whatever this boot started there: a boot service started as early
  // in the boot as the tool was in the last one.
  testing::temp_dir dir;
  Group g("sleep 30");
  auto start = process_start_time(g.pid);
  CAF_REQUIRE(start > 0);
  CAF_REQUIRE(!boot_id().empty());
  auto earlier = fmt::format("{}-77.groups", gone_pid());
  dir.write(earlier, fmt::format("boot 00000000-0000-0000-0000-000000000000\n+ {} {}\n", g.pid, start));
  auto report = sweep_group_records(dir.path.string());
  CAF_CHECK_EQUAL(report.earlier_boots, 1u);
  CAF_CHECK_EQUAL(report.groups, 0u);
  CAF_CHECK(report.owners.empty());
  CAF_CHECK(g.running());
  CAF_CHECK(!dir.has(earlier));
  // This boot's record with the same line is swept.
  dir.write(fmt::format("{}-78.groups", gone_pid()), fmt::format("boot {}\n+ {} {}\n", boot_id(), g.pid, start));
  CAF_CHECK_EQUAL(sweep_group_records(dir.path.string()).groups, 1u);
  CAF_CHECK_EQUAL(g.members_when(0), 0u);
}

CAF_TEST(a record its owner still holds is left alone though its pid looks gone) {
  // An owner in another pid namespace: its pid names no process here, but it holds
  // its record's lock while it lives.
  testing::temp_dir dir;
  Group g("sleep 30");
  auto name = fmt::format("{}-77.groups", gone_pid());
  dir.write(name, fmt::format("+ {} {}\n", g.pid, process_start_time(g.pid)));
  int held = ::open((dir.path / name).c_str(), O_RDONLY | O_CLOEXEC);
  CAF_REQUIRE(held >= 0);
  CAF_REQUIRE_EQUAL(::flock(held, LOCK_EX), 0);
  auto report = sweep_group_records(dir.path.string());
  CAF_CHECK_EQUAL(report.processes, 0u);
  CAF_CHECK(g.running());
  CAF_CHECK(std::filesystem::exists(dir.path / name));
  ::close(held); // its owner gone: swept
  CAF_CHECK_GREATER(sweep_group_records(dir.path.string()).processes, 0u);
  CAF_CHECK_EQUAL(g.members_when(0), 0u);
  CAF_CHECK(!std::filesystem::exists(dir.path / name));
}

CAF_TEST(a recorded group whose leader is gone is left alone) {
  // Its id may be another group's since, whose leader also ended (`sh -c 'job &
  // exit'`): its members are not ours to kill (ours carry the owner's mark).
  testing::temp_dir dir;
  auto earliest = boot_ticks_now();
  Group g("sleep 30 & exit");
  auto latest = boot_ticks_now();
  CAF_REQUIRE_EQUAL(g.members_when(1), 1u); // the sleep, the leader a zombie
  reap_child(g.pid);                         // now gone
  own_child(-g.pid, SIGKILL);                // its sleep still ours to end
  dir.write(fmt::format("{}-77.groups", gone_pid()), fmt::format("+ {} {} {}\n", g.pid, earliest, latest));
  auto report = sweep_group_records(dir.path.string());
  CAF_CHECK_EQUAL(report.processes, 0u);
  CAF_CHECK_EQUAL(report.skipped, 1u);
  CAF_CHECK_EQUAL(g.members_when(1), 1u);
}

CAF_TEST(a record with a window no spawn could have is not believed) {
  // A planted record matching "any start time" would let its writer kill any group.
  testing::temp_dir dir;
  Group g("sleep 30");
  auto start = process_start_time(g.pid);
  CAF_REQUIRE(start > 0);
  dir.write(fmt::format("{}-77.groups", gone_pid()),
            fmt::format("+ {} 1 18446744073709551615\n", g.pid));                        // wider than any spawn
  dir.write(fmt::format("{}-78.groups", gone_pid()), fmt::format("+ {} {} {}\n", g.pid, start, start + 1000000)); // ends later than now
  dir.write(fmt::format("{}-79.groups", gone_pid()), fmt::format("+ {} 5 3\n", g.pid));  // ends before it starts
  auto report = sweep_group_records(dir.path.string());
  CAF_CHECK_EQUAL(report.groups, 0u);
  CAF_CHECK_EQUAL(report.untrusted, 3u);
  CAF_CHECK(g.running());
  CAF_CHECK(report.summary().find("ignored 3 implausible or untrusted record entries") != std::string::npos);
}

CAF_TEST(a record that is a link or writable by others is not believed) {
  testing::temp_dir dir;
  testing::temp_dir elsewhere;
  Group g("sleep 30");
  auto line = fmt::format("+ {} {}\n", g.pid, process_start_time(g.pid));
  elsewhere.write("planted", line);
  std::filesystem::create_symlink(elsewhere.path / "planted", dir.path / fmt::format("{}-77.groups", gone_pid()));
  auto open_record = fmt::format("{}-78.groups", gone_pid());
  dir.write(open_record, line);
  std::filesystem::permissions(dir.path / open_record, std::filesystem::perms::others_write,
                               std::filesystem::perm_options::add);
  auto report = sweep_group_records(dir.path.string());
  CAF_CHECK_EQUAL(report.groups, 0u);
  CAF_CHECK_EQUAL(report.untrusted, 2u);
  CAF_CHECK(g.running());
  CAF_CHECK(elsewhere.has("planted")); // the link was removed, not what it pointed to
  // A record directory others may write is not swept at all.
  testing::temp_dir shared;
  shared.write(fmt::format("{}-79.groups", gone_pid()), line);
  std::filesystem::permissions(shared.path, std::filesystem::perms::all);
  auto refused = sweep_group_records(shared.path.string());
  CAF_CHECK(refused.summary().find("may be written by others") != std::string::npos);
  CAF_CHECK(g.running());
}

CAF_TEST(a recorded pid that now names a later process is never touched) {
  testing::temp_dir dir;
  Group g("sleep 30");
  auto start = process_start_time(g.pid);
  CAF_REQUIRE(start > 0);
  // The record says the group started earlier than this process did: the pid was
  // reused, so this is someone else's process.
  dir.write(fmt::format("{}-77.groups", gone_pid()), fmt::format("+ {} {}\n", g.pid, start - 1));
  auto report = sweep_group_records(dir.path.string());
  CAF_CHECK_EQUAL(report.groups, 0u);
  CAF_CHECK_EQUAL(report.skipped, 1u);
  CAF_CHECK(g.running());
  CAF_CHECK(report.summary().find("left 1 recorded group alone") != std::string::npos);
}

CAF_TEST(records of running owners and ended groups are left alone) {
  testing::temp_dir dir;
  Group owner("sleep 30");
  Group g("sleep 30");
  auto g_start = process_start_time(g.pid);
  // A running owner: its groups are its own business.
  auto live_record = fmt::format("{}-{}.groups", owner.pid, process_start_time(owner.pid));
  dir.write(live_record, fmt::format("+ {} {}\n", g.pid, g_start));
  // A dead owner whose record says the group ended: nothing to kill.
  dir.write(fmt::format("{}-77.groups", gone_pid()), fmt::format("+ {} {}\n- {}\n", g.pid, g_start, g.pid));
  auto report = sweep_group_records(dir.path.string());
  CAF_CHECK_EQUAL(report.owners.size(), 1u);
  CAF_CHECK_EQUAL(report.groups, 0u);
  CAF_CHECK_EQUAL(report.summary(), ""); // nothing was killed: nothing to say
  CAF_CHECK(g.running());
  CAF_CHECK(dir.has(live_record));
}

CAF_TEST(the groups of an owner that ended but is not reaped yet are swept) {
  testing::temp_dir dir;
  Group owner("exit 0"); // a zombie until the end of the test: nobody reaps it before
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20); // against a hang only
  while (read_proc_stat(owner.pid) && read_proc_stat(owner.pid)->state != 'Z' &&
         std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  auto zombie = read_proc_stat(owner.pid);
  CAF_REQUIRE(zombie && zombie->state == 'Z');
  Group g("sleep 30");
  dir.write(fmt::format("{}-{}.groups", owner.pid, process_start_time(owner.pid)),
            fmt::format("+ {} {}\n", g.pid, process_start_time(g.pid)));
  auto report = sweep_group_records(dir.path.string());
  CAF_CHECK_EQUAL(report.owners.size(), 1u);
  CAF_CHECK_EQUAL(report.groups, 1u);
  CAF_CHECK_EQUAL(g.members_when(0), 0u);
}

CAF_TEST(a group ended in a record ends only the start it names) {
  // The io thread writes a group's end after its owner's next spawn: a pid the
  // kernel gave that spawn again has its "+" before the old group's "-". The "-"
  // names the start window it ends, so the new group is still swept.
  testing::temp_dir dir;
  auto earliest = boot_ticks_now();
  Group g("sleep 30");
  auto latest = boot_ticks_now();
  CAF_REQUIRE(g.running());
  auto start = process_start_time(g.pid);
  CAF_REQUIRE(start > 1);
  dir.write(fmt::format("{}-77.groups", gone_pid()),
            fmt::format("+ {0} {1} {1}\n+ {0} {2} {3}\n- {0} {1} {1}\n", g.pid, start - 1, earliest, latest));
  auto report = sweep_group_records(dir.path.string());
  CAF_CHECK_EQUAL(report.groups, 1u);
  CAF_CHECK_EQUAL(g.members_when(0), 0u);
  // The old form, "- <pgid>", ends whichever is recorded.
  Group h("sleep 30");
  dir.write(fmt::format("{}-78.groups", gone_pid()), fmt::format("+ {0} {1} {1}\n- {0}\n", h.pid, process_start_time(h.pid)));
  CAF_CHECK_EQUAL(sweep_group_records(dir.path.string()).groups, 0u);
  CAF_CHECK(h.running());
}

CAF_TEST(an open record lists started groups until they end and goes on a clean close) {
  testing::temp_dir dir;
  CAF_REQUIRE(open_group_record(dir.path.string()));
  record_group_started(4242, 10, 11);
  record_group_started(4343, 12, 12);
  record_group_ended(4242, 10, 11);
  auto name = fmt::format("{}-{}.groups", ::getpid(), process_start_time(::getpid()));
  CAF_REQUIRE(dir.has(name));
  std::ifstream in(dir.path / name);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CAF_CHECK_EQUAL(text.substr(0, text.find('\n') + 1), fmt::format("boot {}\n", boot_id()));
  CAF_CHECK(text.find("+ 4242 10 11\n") != std::string::npos);
  CAF_CHECK(text.find("- 4242 10 11\n") != std::string::npos);
  CAF_CHECK(text.find("+ 4343 ") != std::string::npos);
  // Our own record is never swept, even by ourselves.
  CAF_CHECK_EQUAL(sweep_group_records(dir.path.string()).owners.size(), 0u);
  close_group_record();
  CAF_CHECK(!dir.has(name));
}
