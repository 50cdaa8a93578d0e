#include "runtime/process/child_launch.hpp"

#include "runtime/process/kept_file.hpp"
#include "runtime/process/vfork_exec.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/process/v2/environment.hpp>
#include <boost/process/v2/posix/default_launcher.hpp>
#include <boost/process/v2/process.hpp>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

namespace jp {

namespace {

namespace bp = boost::process::v2;
using bp::error_code;

error_code last_error() {
  return error_code(errno, boost::system::system_category());
}

// ---- Boost.Process v2 initializers. on_setup and on_success/on_error run in the
// parent; on_exec_setup in the child between fork and exec, a copy of a
// multithreaded process: there they make system calls only, and allocate nothing.

/// No signal handler of ours may run in the child (ours would kill every tool's
/// group from there): all signals are blocked in this thread across the fork (the
/// child inherits the mask), and the child resets every handler to its default
/// before unblocking them.
struct signals_reset {
  sigset_t saved{};
  error_code on_setup(bp::posix::default_launcher&, const bp::filesystem::path&, const char* const*) {
    sigset_t all;
    sigfillset(&all);
    ::pthread_sigmask(SIG_SETMASK, &all, &saved);
    return {};
  }
  error_code on_exec_setup(bp::posix::default_launcher&, const bp::filesystem::path&, const char* const*) {
    for (int s = 1; s < NSIG; ++s)
      ::signal(s, SIG_DFL); // fails harmlessly for SIGKILL, SIGSTOP and unused numbers
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    return {};
  }
  void on_success(bp::posix::default_launcher&, const bp::filesystem::path&, const char* const*) {
    ::pthread_sigmask(SIG_SETMASK, &saved, nullptr);
  }
  void on_error(bp::posix::default_launcher&, const bp::filesystem::path&, const char* const*, const error_code&) {
    ::pthread_sigmask(SIG_SETMASK, &saved, nullptr);
  }
};

/// Its own session, and so its own process group, without a controlling terminal;
/// or only its own process group.
struct new_session_or_group {
  bool session;
  error_code on_exec_setup(bp::posix::default_launcher&, const bp::filesystem::path&, const char* const*) {
    return (session ? ::setsid() : ::setpgid(0, 0)) < 0 ? last_error() : error_code{};
  }
};

/// A pty's slave side as stdin, stdout and stderr; opened after setsid without
/// O_NOCTTY, it becomes the new session's controlling terminal.
struct controlling_terminal {
  const char* path;
  error_code on_exec_setup(bp::posix::default_launcher&, const bp::filesystem::path&, const char* const*) {
    int fd = ::open(path, O_RDWR);
    if (fd < 0)
      return last_error();
    for (int target = 0; target < 3; ++target)
      if (fd != target && ::dup2(fd, target) < 0)
        return last_error();
    if (fd > 2)
      ::close(fd);
    return {};
  }
};

/// Pipes as 0, 1, 2 (stdin from /dev/null without one) and the control channel as
/// 3; dup2 clears O_CLOEXEC on the copies. The launcher closes every other fd.
struct standard_streams {
  int in, out, err, control;
  error_code on_setup(bp::posix::default_launcher& launcher, const bp::filesystem::path&, const char* const*) {
    if (control >= 0)
      launcher.fd_whitelist.push_back(3);
    return {};
  }
  error_code on_exec_setup(bp::posix::default_launcher&, const bp::filesystem::path&, const char* const*) {
    // Sources out of 0-3 first (ours are there when our own 0 or 1 was closed): a
    // dup2 onto itself would keep O_CLOEXEC, and setting one target could clobber
    // a later source.
    int from[4] = {in, out, err, control};
    for (int& fd : from)
      if (fd >= 0 && fd < 4 && (fd = ::fcntl(fd, F_DUPFD, 4)) < 0)
        return last_error();
    if (from[0] < 0 && (from[0] = ::open("/dev/null", O_RDONLY)) < 0)
      return last_error();
    for (int target = 0; target < 4; ++target)
      if (from[target] >= 0 && from[target] != target && ::dup2(from[target], target) < 0)
        return last_error();
    return {}; // /dev/null's own fd goes with the others (other_fds_closed)
  }
};

/// Every fd but the launcher's whitelist (0-2, 3 for the control channel, its
/// error pipe) closed: 1.81's own close_all reads `next` as whitelist[idx] and so
/// never closes the gaps between whitelisted fds, which let an fd of ours without
/// O_CLOEXEC reach the child. Sorted here on the stack: nothing is allocated.
struct other_fds_closed {
  error_code on_exec_setup(bp::posix::default_launcher& launcher, const bp::filesystem::path&,
                           const char* const*) {
    int keep[16];
    size_t n = 0;
    for (int fd : launcher.fd_whitelist)
      if (n < 16)
        keep[n++] = fd;
    std::sort(keep, keep + n);
    unsigned from = 0;
    for (size_t i = 0; i < n; ++i) {
      // Where close_range is missing (before 5.9) or refused, the child fails
      // rather than start with our fds.
      if (static_cast<unsigned>(keep[i]) > from && ::close_range(from, static_cast<unsigned>(keep[i]) - 1, 0) < 0)
        return last_error();
      from = static_cast<unsigned>(keep[i]) + 1;
    }
    return ::close_range(from, ~0U, 0) < 0 ? last_error() : error_code{};
  }
};

/// The tool's resource limits, once its fds are in place (a low limit on open files
/// must not stop them being set up).
struct limits_set {
  const std::vector<ResourceLimit>* limits;
  error_code on_exec_setup(bp::posix::default_launcher&, const bp::filesystem::path&, const char* const*) {
    int err = set_resource_limits(*limits);
    return err != 0 ? error_code(err, boost::system::system_category()) : error_code{};
  }
};

/// Its working directory ("" = ours).
struct working_directory {
  const char* path;
  error_code on_exec_setup(bp::posix::default_launcher&, const bp::filesystem::path&, const char* const*) {
    return *path && ::chdir(path) < 0 ? last_error() : error_code{};
  }
};

/// The environment, already built (tool_environment.hpp).
struct environment_block {
  char* const* envp;
  error_code on_setup(bp::posix::default_launcher& launcher, const bp::filesystem::path&, const char* const*) {
    launcher.env = envp;
    return {};
  }
};

/// A child that cannot exec ends with _exit: the launcher's own exit() would run
/// our atexit handlers and flush our stdio buffers a second time. The launcher
/// hears its errno through a pipe; the parent reaps it.
struct exec_failure {
  void on_exec_error(bp::posix::default_launcher&, const bp::filesystem::path&, const char* const*,
                     const error_code&) {
    ::_exit(127);
  }
  void on_error(bp::posix::default_launcher& launcher, const bp::filesystem::path&, const char* const*,
                const error_code&) {
    if (launcher.pid > 0)
      while (::waitpid(launcher.pid, nullptr, 0) < 0 && errno == EINTR) {
      }
  }
};

std::vector<char*> c_strings(const std::vector<std::string>& strings) {
  std::vector<char*> out;
  out.reserve(strings.size() + 1);
  for (auto& s : strings)
    out.push_back(const_cast<char*>(s.c_str()));
  out.push_back(nullptr);
  return out;
}

/// The PATH a program's name is looked up in: ours as absolute_search_path makes it
/// (tool_environment.hpp), as the child's own PATH is.
const char* search_path() {
  thread_local std::string raw, kept;
  thread_local bool made = false;
  const char* now = ::getenv("PATH");
  std::string_view path = now ? now : "";
  if (!made || path != raw) {
    made = true;
    raw.assign(path);
    kept = absolute_search_path(path);
  }
  return kept.c_str();
}

/// Where `name` runs from: itself when it holds a '/', else the first executable
/// file of that name in search_path(); "" when there is none, with `*error` as
/// execvp's (EACCES when one was there that may not be run, else ENOENT).
std::string program_file(const std::string& name, int* error) {
  if (name.find('/') != std::string::npos)
    return name;
  std::string_view path = search_path();
  *error = ENOENT;
  for (size_t at = 0; at <= path.size();) {
    auto end = std::min(path.find(':', at), path.size());
    auto file = std::string(path.substr(at, end - at)) + "/" + name;
    struct stat st{};
    if (::stat(file.c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
      if (::access(file.c_str(), X_OK) == 0)
        return file;
      *error = EACCES;
    }
    at = end + 1;
  }
  return {};
}

Launched launch_boost(const ChildLaunch& l) {
  Launched r;
  int missing = 0;
  bp::filesystem::path exe = program_file(l.argv[0], &missing);
  if (exe.empty()) {
    r.error = missing;
    return r;
  }
  auto argv = c_strings(l.argv);
  auto envp = l.env.c_strings();
  // A context of its own, never run: the launcher's fork hooks (notify_fork) must
  // not run on the io thread's context while that thread runs it.
  boost::asio::io_context context;
  bp::posix::default_launcher launcher;
  error_code ec;
  signals_reset signals;
  new_session_or_group session{l.session};
  environment_block environment{envp.data()};
  working_directory dir{l.cwd.c_str()};
  exec_failure failure;
  limits_set limits{&l.limits};
  auto args = const_cast<const char**>(argv.data()); // argv[0] as given, not the resolved path
  auto proc = l.terminal.empty()
                ? launcher(context.get_executor(), ec, exe, args, signals, session, environment,
                           standard_streams{l.in, l.out, l.err, l.control}, other_fds_closed{}, limits, dir,
                           failure)
                : launcher(context.get_executor(), ec, exe, args, signals, session, environment,
                           controlling_terminal{l.terminal.c_str()}, other_fds_closed{}, limits, dir,
                           failure);
  if (ec) {
    r.error = ec.value() ? ec.value() : EINVAL;
    return r;
  }
  // Detached, the launcher's process object neither kills nor reaps it when it goes.
  // Its pidfd is not to be had (1.81's basic_process::native_handle does not
  // compile on Linux): the caller opens its own.
  r.pid = proc.id();
  proc.detach();
  return r;
}

Launched launch_posix_spawn(const ChildLaunch& l) {
  Launched r;
  if (l.limits_required) {
    // No file action or attribute sets one, and set by us after the spawn the
    // program would already run (and fork) without them.
    r.error = ENOTSUP;
    return r;
  }
  posix_spawn_file_actions_t actions;
  ::posix_spawn_file_actions_init(&actions);
  int rc = 0;
  if (!l.terminal.empty()) {
    // Opened after setsid (glibc runs file actions after the attributes), without
    // O_NOCTTY: it becomes the new session's controlling terminal.
    rc |= ::posix_spawn_file_actions_addopen(&actions, 0, l.terminal.c_str(), O_RDWR, 0);
    rc |= ::posix_spawn_file_actions_adddup2(&actions, 0, 1);
    rc |= ::posix_spawn_file_actions_adddup2(&actions, 0, 2);
  } else {
    if (l.in >= 0)
      rc |= ::posix_spawn_file_actions_adddup2(&actions, l.in, 0);
    else
      rc |= ::posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    rc |= ::posix_spawn_file_actions_adddup2(&actions, l.out, 1);
    rc |= ::posix_spawn_file_actions_adddup2(&actions, l.err, 2);
    if (l.control >= 0)
      rc |= ::posix_spawn_file_actions_adddup2(&actions, l.control, 3);
  }
  // Nothing else of ours, even an fd another thread opens without O_CLOEXEC while we
  // spawn (libcurl's sockets do): closed in the child, after the clone, so no race.
  // It costs the spawning thread one close per fd we hold, since posix_spawn holds
  // it until the child execs (bench/README.md, "the spawn path": marking them
  // close-on-exec in the parent instead was twice as fast at 5,000 handles, but an fd
  // opened between that and the clone would reach the child).
  rc |= ::posix_spawn_file_actions_addclosefrom_np(&actions, l.terminal.empty() && l.control >= 0 ? 4 : 3);
  if (!l.cwd.empty())
    rc |= ::posix_spawn_file_actions_addchdir_np(&actions, l.cwd.c_str());
  posix_spawnattr_t attr;
  ::posix_spawnattr_init(&attr);
  rc |= ::posix_spawnattr_setflags(&attr, (l.session ? POSIX_SPAWN_SETSID : POSIX_SPAWN_SETPGROUP) |
                                              POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  rc |= ::posix_spawnattr_setpgroup(&attr, 0); // with SETPGROUP: a group of its own
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  rc |= ::posix_spawnattr_setsigmask(&attr, &none);
  rc |= ::posix_spawnattr_setsigdefault(&attr, &all);
  auto argv = c_strings(l.argv);
  auto envp = l.env.c_strings();
  pid_t pid = 0;
  int missing = 0;
  auto file = program_file(l.argv[0], &missing);
  if (rc == 0 && file.empty())
    rc = missing;
  else if (rc == 0)
    rc = ::posix_spawn(&pid, file.c_str(), &actions, &attr, argv.data(), envp.data());
  else
    rc = ENOMEM; // the only failure the setup calls have
  ::posix_spawn_file_actions_destroy(&actions);
  ::posix_spawnattr_destroy(&attr);
  if (rc != 0)
    r.error = rc;
  else
    r.pid = pid;
  return r;
}

/// One /dev/null of ours, given as stdin to every child without a pipe: the child
/// dups it instead of opening the path while the spawning thread waits (a path
/// lookup on every spawn). -1 if it cannot be opened: the child opens the path.
int dev_null() {
  static KeptFile* kept = new KeptFile("/dev/null"); // leaked: spawns may outlive statics
  return kept->fd();
}

Launched launch_vfork(const ChildLaunch& l) {
  auto argv = c_strings(l.argv);
  auto envp = l.env.c_strings();
  VforkPlan plan;
  plan.file = l.argv[0].c_str();
  plan.path = search_path();
  plan.argv = argv.data();
  plan.envp = envp.data();
  plan.cwd = l.cwd.empty() ? nullptr : l.cwd.c_str();
  plan.terminal = l.terminal.empty() ? nullptr : l.terminal.c_str();
  plan.in = l.in >= 0 || !l.terminal.empty() ? l.in : dev_null();
  plan.out = l.out;
  plan.err = l.err;
  plan.control = l.control;
  plan.session = l.session;
  plan.want_pidfd = l.want_pidfd;
  plan.limits = l.limits.data();
  plan.limit_count = l.limits.size();
  Launched r;
  r.pid = vfork_exec(plan);
  r.error = r.pid >= 0 ? 0 : plan.error != 0 ? plan.error : EINVAL;
  r.pidfd = r.pid >= 0 ? plan.pidfd : -1;
  return r;
}

Launched launched_by(const ChildLaunch& l, launcher_kind kind) {
  switch (kind) {
    case launcher_kind::boost_v2:
      return launch_boost(l);
    case launcher_kind::posix_spawn:
      return launch_posix_spawn(l);
    case launcher_kind::vfork:
      break;
  }
  // Ours marks the fds it must not pass on with close_range (5.9+); where that is
  // missing or refused (an older kernel, a sandbox's filter), glibc's posix_spawn
  // closes them through /proc/self/fd instead. (A sandbox that also refuses clone3
  // with EPERM, not ENOSYS, fails it too: glibc goes back to clone on ENOSYS only.)
  return vfork_exec_usable() ? launch_vfork(l) : launch_posix_spawn(l);
}

} // namespace

Launched launch_child(const ChildLaunch& l, launcher_kind kind) {
  if (!l.terminal.empty() && !l.session)
    return Launched{-1, EINVAL}; // a terminal becomes the controlling one of a new session only
  auto r = launched_by(l, kind);
  // A launcher that did not get the pidfd with the child: it cannot be another
  // process's yet, since the child is not reaped before we watch it.
  if (l.want_pidfd && r.error == 0 && r.pidfd < 0) {
    r.pidfd = static_cast<int>(::syscall(SYS_pidfd_open, r.pid, 0));
    r.pidfd_error = r.pidfd < 0 ? errno : 0;
  }
  return r;
}

std::string program_in_path(const std::string& name) {
  int error = 0;
  return name.find('/') == std::string::npos ? program_file(name, &error) : std::string();
}

} // namespace jp
