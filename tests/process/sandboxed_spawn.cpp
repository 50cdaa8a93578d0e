// A child started by our default launcher inside a sandbox that refuses one system
// call, as a container's seccomp filter does (Docker's default profile answers
// clone3 with ENOSYS; older profiles and kernels before 5.9 lack close_range).
// A process of its own, so the launcher decides afresh what this system allows.
// Usage: sandboxed_spawn clone3|close_range ENOSYS|EPERM [boost]. Prints what the
// child got (tests/process_test.cpp checks it), started by our default launcher or
// by Boost.Process's (the benchmark's); exit status 2 when the filter could not be set.
#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <string>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runtime/process/child_launch.hpp"
#include "runtime/process/vfork_exec.hpp"
#include "tests/pidfd_pid.hpp"
#include "tests/program_assert.hpp"

namespace {

/// From now on `nr` fails with `err` in this process and its children.
bool refuse(long nr, int err) {
  sock_filter filter[] = {
    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch)),
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, static_cast<unsigned>(nr), 0, 1),
    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (static_cast<unsigned>(err) & SECCOMP_RET_DATA)),
    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  sock_fprog prog{static_cast<unsigned short>(sizeof filter / sizeof filter[0]), filter};
  return ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 && ::prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) == 0;
}

} // namespace

int main(int argc, char** argv) {
  if (argc != 3 && !(argc == 4 && std::strcmp(argv[3], "boost") == 0))
    return std::fprintf(stderr, "usage: sandboxed_spawn clone3|close_range ENOSYS|EPERM [boost]\n"), 64;
  auto kind = argc == 4 ? jp::launcher_kind::boost_v2 : jp::launcher_kind::vfork;
  long nr = std::strcmp(argv[1], "clone3") == 0 ? SYS_clone3 : SYS_close_range;
  int err = std::strcmp(argv[2], "EPERM") == 0 ? EPERM : ENOSYS;
  if (!refuse(nr, err))
    return std::printf("no filter: %s\n", std::strerror(errno)), 2;
  // An fd of ours without O_CLOEXEC, as a library might leave one: not the child's.
  int stray = ::fcntl(STDERR_FILENO, F_DUPFD, 20);
  int out[2];
  if (stray < 0 || ::pipe2(out, O_CLOEXEC) != 0)
    return std::printf("setup: %s\n", std::strerror(errno)), 1;
  jp::ChildLaunch l;
  l.argv = {"sh", "-c", "cd /proc/$$/fd && echo *"};
  l.env = jp::spawn_environment({}, {}, {});
  l.out = l.err = out[1];
  l.session = false;
  l.want_pidfd = true;
  auto child = jp::launch_child(l, kind);
  ::close(out[1]);
  if (child.error != 0)
    return std::printf("not started: %s\n", std::strerror(child.error)), 0;
  std::string listing;
  char buf[256];
  for (ssize_t n; (n = ::read(out[0], buf, sizeof buf)) != 0;)
    if (n > 0)
      listing.append(buf, static_cast<size_t>(n));
    else if (errno != EINTR)
      break;
  // Asked before the child is reaped: a reaped child's pidfd names no pid.
  bool childs = child.pidfd >= 0 && jp::testing::pid_of_pidfd(child.pidfd) == std::to_string(child.pid);
  int status = 0;
  ::waitpid(child.pid, &status, 0);
  std::printf("started, exit status %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  std::printf("pidfd: %s\n", childs ? "the child's" : "wrong or none");
  std::printf("vfork usable: %s, clone3 refused with: %d\n", jp::vfork_exec_usable() ? "yes" : "no",
              jp::clone3_refusal());
  // Whatever the launcher, sandboxed or not: the child had its pidfd, and none of
  // our fds but 0-2 (its listing shows its own directory's fd too).
  PROGRAM_ASSERT(childs);
  PROGRAM_ASSERT(listing.find(' ' + std::to_string(stray)) == std::string::npos);
  std::printf("fds: %s", listing.c_str());
  return 0;
}
