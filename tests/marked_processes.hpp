// Processes a test started, found wherever they went: the test runs `sleep` through
// a link whose name holds a token unique to the test, so the token is in argv[0]
// (/proc/<pid>/cmdline) of every such sleep, whatever session, group
// or parent it ended up with. The destructor SIGKILLs whatever is still found, so
// nothing outlives the test even when its checks failed.
#pragma once

#include <chrono>
#include <cstdlib>
#include <dirent.h>
#include <fcntl.h>
#include <filesystem>
#include <fmt/format.h>
#include <signal.h>
#include <string>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

#include "owned_children.hpp"

namespace jp::testing {

struct marked_sleep {
  std::string token;
  std::filesystem::path program; // a link to sleep; run it as `<program> SECONDS`

  explicit marked_sleep(const std::filesystem::path& dir) {
    static int n = 0;
    token = fmt::format("jpmark{}x{}x{}", ::getpid(), ++n, std::rand());
    program = dir / ("sleep-" + token);
    std::filesystem::create_symlink("/bin/sleep", program);
  }
  ~marked_sleep() { kill_all(); }
  marked_sleep(const marked_sleep&) = delete;
  marked_sleep& operator=(const marked_sleep&) = delete;

  /// The first element of `pid`'s command line; "" when it is gone. Plain read(2):
  /// a process that ends while being read gives an error, not an exception.
  static std::string argv0(pid_t pid) {
    int fd = ::open(fmt::format("/proc/{}/cmdline", pid).c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
      return {};
    char buf[4096];
    auto n = ::read(fd, buf, sizeof buf - 1);
    ::close(fd);
    if (n <= 0)
      return {};
    buf[n] = '\0';
    return buf; // up to the first NUL
  }

  /// Live sleeps of ours: processes whose argv[0] holds the token (a zombie's
  /// command line is empty; a shell whose script names the program is not counted).
  std::vector<pid_t> alive() const {
    std::vector<pid_t> found;
    DIR* proc = ::opendir("/proc");
    if (!proc)
      return found;
    while (auto* e = ::readdir(proc)) {
      char* end = nullptr;
      long pid = std::strtol(e->d_name, &end, 10);
      if (pid <= 0 || *end != '\0' || pid == ::getpid())
        continue;
      if (argv0(static_cast<pid_t>(pid)).find(token) != std::string::npos)
        found.push_back(static_cast<pid_t>(pid));
    }
    ::closedir(proc);
    return found;
  }

  /// Waits (bounded) until at least `n` are alive; how many were.
  size_t wait_alive(size_t n, std::chrono::seconds limit = std::chrono::seconds(60)) const {
    auto deadline = std::chrono::steady_clock::now() + limit;
    auto count = alive().size();
    while (count < n && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
      count = alive().size();
    }
    return count;
  }

  /// Waits (bounded) until none is alive; how many still were.
  size_t wait_none(std::chrono::seconds limit = std::chrono::seconds(30)) const {
    auto deadline = std::chrono::steady_clock::now() + limit;
    auto count = alive().size();
    while (count > 0 && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
      count = alive().size();
    }
    return count;
  }

  void kill_all() const {
    for (auto pid : alive()) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, WNOHANG); // ours when we are their subreaper
    }
  }
};

/// In a forked child: runs `argv` (argv[0] a path) with its user's state under
/// `state_home`; exits 127 if it cannot.
[[noreturn]] inline void exec_child(const std::vector<std::string>& argv, const std::string& state_home) {
  ::setenv("XDG_STATE_HOME", state_home.c_str(), 1);
  std::vector<char*> args;
  for (auto& a : argv)
    args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  ::execv(args[0], args.data());
  ::_exit(127);
}

/// jp-actors with `args`, stdin/stdout on /dev/null, its crash records under
/// `state_home` (as cli_in's runs in the same workspace).
inline pid_t start_cli(const std::string& state_home, const std::vector<std::string>& args) {
  pid_t pid = ::fork();
  if (pid == 0) {
    ::setpgid(0, 0); // its own group: no signal meant for the runner's reaches it
    int devnull = ::open("/dev/null", O_RDWR);
    ::dup2(devnull, 0);
    ::dup2(devnull, 1);
    ::setenv("XDG_STATE_HOME", state_home.c_str(), 1);
    std::vector<std::string> all = {JP_CLI_BINARY};
    all.insert(all.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& a : all)
      argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(JP_CLI_BINARY, argv.data());
    ::_exit(127);
  }
  if (pid > 0)
    own_child(pid, SIGTERM); // it ends its tools
  return pid;
}

} // namespace jp::testing
