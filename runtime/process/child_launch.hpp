// Starting a child process: how it is started, separate from how it is watched
// (process.cpp: pipes, pidfd, io thread, crash record). Three launchers give the
// child the same start: our own vfork launcher (the default, vfork_exec.hpp),
// posix_spawnp, and Boost.Process v2's default launcher with one small initializer
// per concern (session or group, signals, terminal, fds, directory, environment, exec
// failure). The benchmark chose (bench/README.md): v2 1.81 forks (W1 1.5x slower,
// W6 spawn rate a quarter) and its vfork launcher runs C++ in the vforked child,
// which corrupted our memory; posix_spawnp's child closes every fd we hold before
// it execs, and the spawning thread waits for each close.
#pragma once

#include <string>
#include <sys/types.h>
#include <vector>

#include "resource_limit.hpp"
#include "tool_environment.hpp"

namespace jp {

/// What the child gets. fds are the parent's; -1 = not used.
struct ChildLaunch {
  std::vector<std::string> argv;      // argv[0] is looked up in PATH unless it has a '/'
  SpawnEnvironment env;               // the whole environment
  std::string cwd;                    // "" = ours
  std::string terminal;               // a pty's slave side: its stdin/out/err and
                                      // controlling terminal (the fds below unused)
  int in = -1, out = -1, err = -1;    // become 0, 1, 2 (in = -1: /dev/null)
  int control = -1;                   // becomes 3
  bool session = true;                // its own session, else only its own process
                                      // group in ours (a terminal needs a session)
  bool want_pidfd = false;            // the child's pidfd too: from the kernel with the
                                      // child where the launcher can (vfork), else opened
  std::vector<ResourceLimit> limits;  // set in the child before it execs
  bool limits_required = false;       // the tool's own (posix_spawn, which cannot set
                                      // any, refuses them: ENOTSUP; it leaves out
                                      // the soft limit on open files given back)
};

/// The child: in its own process group (leading its own session with `session`),
/// every signal at its default and none blocked, only fds 0-2 (and 3) open. Its pid,
/// or the errno of what failed. With want_pidfd, its pidfd (the caller's to close),
/// or -1 and why (pidfd_error) when none could be had: the child runs all the same.
struct Launched {
  pid_t pid = -1;
  int error = 0;
  int pidfd = -1;
  int pidfd_error = 0;
};

enum class launcher_kind { boost_v2, posix_spawn, vfork };

Launched launch_child(const ChildLaunch& l, launcher_kind kind);

/// The file a program named without a '/' runs from, searched as launch_child searches
/// (PATH's absolute directories only); "" when there is none.
std::string program_in_path(const std::string& name);

} // namespace jp
