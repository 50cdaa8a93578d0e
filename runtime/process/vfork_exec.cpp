#include "runtime/process/vfork_exec.hpp"

#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdint>
#include <csignal>
#include <fcntl.h>
#include <linux/close_range.h>
#include <sched.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <utility>

// The child runs on our memory until it execs, on a stack of its own, with every
// signal blocked. So it only makes raw system calls: no libc function a sanitizer
// intercepts (its bookkeeping is the spawning thread's), nothing that allocates or
// takes a lock another thread may hold, no _exit interceptor running our exit
// hooks. This file is built without sanitizers (CMakeLists.txt) for the same
// reason, and its loops over strings go through volatile pointers so that no
// compiler turns them into calls to strlen or memcpy (which a sanitizer intercepts).

// glibc's clone under its other exported name: sanitizers intercept `clone`, and
// ThreadSanitizer takes even a CLONE_VM one for a fork, whose child then marks our
// shared memory as forked (the next thread we start dies).
extern "C" int __clone(int (*fn)(void*), void* stack, int flags, void* arg, ...);

namespace jp {

namespace {

constexpr size_t kChildStack = 32 * 1024; // the child's frames: a PATH_MAX buffer and calls

/// The kernel's sigaction: all zeros is SIG_DFL, no flags, empty mask, whatever the
/// architecture's layout (so no struct of libc's, whose layout differs).
constexpr uint64_t kDefaultAction[4] = {0, 0, 0, 0};
constexpr uint64_t kAllSignals = ~uint64_t{0};
constexpr uint64_t kNoSignals = 0;
constexpr long kKernelSigsetSize = sizeof(uint64_t);

long sys(long n, long a = 0, long b = 0, long c = 0, long d = 0) {
  long r = ::syscall(n, a, b, c, d);
  return r < 0 ? -errno : r;
}

[[noreturn]] void fail(VforkPlan* p, long negative_errno) {
  p->error = static_cast<int>(-negative_errno);
  for (;;)
    ::syscall(SYS_exit_group, 127);
}

/// dup2 (dup3 without flags: some architectures have no dup2) that clears
/// close-on-exec on the copy; the source is never the target.
void to(VforkPlan* p, int source, int target) {
  if (source != target) {
    long r = sys(SYS_dup3, source, target, 0);
    if (r < 0)
      fail(p, r);
  }
}

/// A source fd out of 0-3, so setting one target cannot clobber a later source.
int out_of_the_way(VforkPlan* p, int fd) {
  if (fd < 0 || fd > 3)
    return fd;
  long r = sys(SYS_fcntl, fd, F_DUPFD, 4);
  if (r < 0)
    fail(p, r);
  return static_cast<int>(r);
}

/// execvp's search: each PATH entry in turn ("" is the current directory); EACCES
/// is kept and the search goes on; ENOENT-like errors go on; anything else ends it.
[[noreturn]] void exec_searching(VforkPlan* p) {
  const volatile char* file = p->file; // volatile: no loop here may become a libc call
  bool has_slash = false;
  size_t flen = 0;
  for (; file[flen]; ++flen)
    has_slash = has_slash || file[flen] == '/';
  if (flen == 0)
    fail(p, -ENOENT);
  if (has_slash)
    fail(p, sys(SYS_execve, reinterpret_cast<long>(p->file), reinterpret_cast<long>(p->argv),
                reinterpret_cast<long>(p->envp)));
  if (flen > NAME_MAX)
    fail(p, -ENAMETOOLONG);
  char buf[PATH_MAX];
  volatile char* out = buf;
  bool denied = false;
  const volatile char* entry = p->path;
  for (;;) {
    const volatile char* end = entry;
    while (*end && *end != ':')
      ++end;
    size_t dlen = static_cast<size_t>(end - entry);
    if (dlen + 1 + flen < sizeof buf) {
      size_t n = 0;
      for (const volatile char* c = entry; c < end; ++c)
        out[n++] = *c;
      if (dlen > 0)
        out[n++] = '/';
      for (size_t i = 0; i <= flen; ++i) // with the terminating zero
        out[n++] = file[i];
      long r = sys(SYS_execve, reinterpret_cast<long>(buf), reinterpret_cast<long>(p->argv),
                   reinterpret_cast<long>(p->envp));
      switch (-r) {
        case EACCES:
          denied = true;
          break;
        case ENOENT:
        case ENOTDIR:
        case ESTALE:
        case ENODEV:
        case ETIMEDOUT:
          break;
        default:
          fail(p, r);
      }
    }
    if (!*end)
      break;
    entry = end + 1;
  }
  fail(p, denied ? -EACCES : -ENOENT);
}

int child_main(void* arg) {
  auto* p = static_cast<VforkPlan*>(arg);
  // No handler of ours may run here (ours would kill every tool's group from our
  // memory): every signal back to its default while all are still blocked. After
  // clone3 the kernel has reset the handled ones: only those that may be ignored
  // are left to reset here (p->reset).
  for (long s = 1; s <= 64; ++s)
    if (p->reset >> (s - 1) & 1)
      sys(SYS_rt_sigaction, s, reinterpret_cast<long>(kDefaultAction), 0, kKernelSigsetSize);
  long r = p->session ? sys(SYS_setsid) : sys(SYS_setpgid, 0, 0);
  if (r < 0)
    fail(p, r);
  if (p->terminal) {
    // Opened after setsid without O_NOCTTY: it becomes the session's controlling terminal.
    r = sys(SYS_openat, AT_FDCWD, reinterpret_cast<long>(p->terminal), O_RDWR);
    if (r < 0)
      fail(p, r);
    for (int target = 0; target < 3; ++target)
      to(p, static_cast<int>(r), target);
  } else {
    int out = out_of_the_way(p, p->out), err = out_of_the_way(p, p->err);
    int control = out_of_the_way(p, p->control), in = out_of_the_way(p, p->in);
    if (in < 0) {
      r = sys(SYS_openat, AT_FDCWD, reinterpret_cast<long>("/dev/null"), O_RDONLY);
      if (r < 0)
        fail(p, r);
      in = static_cast<int>(r);
    }
    to(p, in, 0);
    to(p, out, 1);
    to(p, err, 2);
    if (control >= 0)
      to(p, control, 3);
  }
  if (p->cwd && (r = sys(SYS_chdir, reinterpret_cast<long>(p->cwd))) < 0)
    fail(p, r);
  // Every other fd of ours, even one another thread opened without O_CLOEXEC just
  // before the clone, goes at exec. Marking is one bitmap update; execve closes
  // them after it has released the spawning thread (a kernel before 5.11 closes
  // them here instead).
  unsigned first = p->terminal == nullptr && p->control >= 0 ? 4 : 3;
  if (sys(SYS_close_range, first, ~0U, CLOSE_RANGE_CLOEXEC) < 0 &&
      (r = sys(SYS_close_range, first, ~0U, 0)) < 0)
    fail(p, r);
  // Last: a low limit on open files must not stop the fds above from being set up.
  for (size_t i = 0; i < p->limit_count; ++i)
    if ((r = sys(SYS_prlimit64, 0, p->limits[i].resource, reinterpret_cast<long>(&p->limits[i]), 0)) < 0)
      fail(p, r);
  sys(SYS_rt_sigprocmask, SIG_SETMASK, reinterpret_cast<long>(&kNoSignals), 0, kKernelSigsetSize);
  exec_searching(p);
}

std::atomic<bool> g_clone3{true}; // off once clone3 is found missing or refused
std::atomic<int> g_clone3_refusal{0}; // the errno it was refused with

#if defined(__x86_64__)
constexpr uint64_t kClonePidfd = 0x1000;              // CLONE_PIDFD
constexpr uint64_t kCloneClearSighand = 0x100000000;  // CLONE_CLEAR_SIGHAND

/// The kernel's struct clone_args up to `tls` (CLONE_ARGS_SIZE_VER0): ours, as
/// kDefaultAction is, so no header's version of it matters.
struct CloneArgs {
  uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls;
};

/// clone3, the child starting on a stack of its own with no frame to return to:
/// it calls fn(arg) from here and ends with its result if fn ever returns. The
/// parent gets the pid or -errno.
long clone3_calling(CloneArgs* args, int (*fn)(void*), void* arg) {
  register long rax asm("rax") = SYS_clone3;
  register CloneArgs* rdi asm("rdi") = args;
  register unsigned long rsi asm("rsi") = sizeof(CloneArgs);
  register int (*r12)(void*) asm("r12") = fn; // kept across syscall, in the child too
  register void* r13 asm("r13") = arg;
  asm volatile("syscall\n\t"
               "test %%rax, %%rax\n\t"
               "jnz 1f\n\t"
               "xor %%ebp, %%ebp\n\t"
               "mov %%r13, %%rdi\n\t"
               "call *%%r12\n\t"
               "mov %%eax, %%edi\n\t"
               "mov %[exit_group], %%eax\n\t"
               "syscall\n\t"
               "hlt\n\t"
               "1:"
               : "+r"(rax)
               : "r"(rdi), "r"(rsi), "r"(r12), "r"(r13), [exit_group] "i"(SYS_exit_group)
               : "rcx", "r11", "memory");
  return rax;
}
#endif

} // namespace

uint64_t ignored_signals_reset() noexcept {
  // The standard signals always: a program may ignore one for a while (glibc's
  // system() ignores SIGINT and SIGQUIT while it runs) and a child must not
  // inherit that. SIGKILL and SIGSTOP cannot be ignored. The real-time ones
  // ignored at the first spawn, asked once here in the parent (raw, as the
  // kernel has them: a handler field of SIG_IGN whatever the flags, glibc's own
  // signals too).
  static const uint64_t reset = [] {
    uint64_t bits = ((uint64_t{1} << 31) - 1) & ~(uint64_t{1} << (SIGKILL - 1)) & ~(uint64_t{1} << (SIGSTOP - 1));
    for (long s = 32; s <= 64; ++s) {
      uint64_t old[4] = {0, 0, 0, 0};
      if (::syscall(SYS_rt_sigaction, s, nullptr, old, kKernelSigsetSize) == 0 &&
          old[0] == reinterpret_cast<uint64_t>(SIG_IGN))
        bits |= uint64_t{1} << (s - 1);
    }
    return bits;
  }();
  return reset;
}

bool vfork_exec_usable() noexcept {
  // An empty range past any fd: 0 where the call is there and allowed.
  static const bool usable = ::syscall(SYS_close_range, ~0U, ~0U, 0) == 0;
  return usable;
}

void use_clone3(bool on) noexcept {
  g_clone3 = on;
}

int clone3_refusal() noexcept {
  return g_clone3_refusal.load();
}

bool clone3_in_use() noexcept {
#if defined(__x86_64__)
  return g_clone3.load();
#else
  return false;
#endif
}

pid_t vfork_exec(VforkPlan& plan) noexcept {
  // The child's stack: in our frame, which stays put while we wait for it (vfork).
  alignas(64) char stack[kChildStack];
  uint64_t saved = 0;
  plan.pidfd = -1;
  // Blocked raw, the libc-internal signals too: none may reach the child before it
  // has set every handler to its default.
  ::syscall(SYS_rt_sigprocmask, SIG_SETMASK, &kAllSignals, &saved, kKernelSigsetSize);
  plan.error = 0;
  pid_t pid = -1;
  int clone_errno = 0;
  bool cloned = false;
#if defined(__x86_64__)
  if (g_clone3.load(std::memory_order_relaxed)) {
    int pidfd = -1;
    CloneArgs args{};
    args.flags = CLONE_VM | CLONE_VFORK | kCloneClearSighand | (plan.want_pidfd ? kClonePidfd : 0);
    args.pidfd = reinterpret_cast<uint64_t>(&pidfd);
    args.exit_signal = SIGCHLD;
    args.stack = reinterpret_cast<uint64_t>(stack);
    args.stack_size = sizeof stack;
    plan.reset = ignored_signals_reset();
    long r = clone3_calling(&args, child_main, &plan);
    if (r == -ENOSYS || r == -EINVAL || r == -EPERM) {
      // An older kernel, or a sandbox refusing it: clone from now on.
      g_clone3_refusal = static_cast<int>(-r);
      g_clone3 = false;
    } else {
      cloned = true;
      pid = r < 0 ? -1 : static_cast<pid_t>(r);
      clone_errno = r < 0 ? static_cast<int>(-r) : 0;
      plan.pidfd = r > 0 && plan.want_pidfd ? pidfd : -1;
    }
  }
#endif
  if (!cloned) {
    // clone has CLONE_PIDFD too (5.2+; an older kernel ignores the flag and leaves
    // -1 here): a sandbox refusing clone3 (Docker's default seccomp profile) or a
    // 5.3-5.4 kernel without CLONE_CLEAR_SIGHAND still gives the pidfd with the child.
    int pidfd = -1;
    plan.reset = ~uint64_t{0};
    pid = __clone(child_main, stack + sizeof stack,
                  CLONE_VM | CLONE_VFORK | SIGCHLD | (plan.want_pidfd ? CLONE_PIDFD : 0), &plan, &pidfd);
    clone_errno = errno;
    plan.pidfd = pid > 0 && plan.want_pidfd ? pidfd : -1;
  }
  ::syscall(SYS_rt_sigprocmask, SIG_SETMASK, &saved, nullptr, kKernelSigsetSize);
  if (pid < 0) {
    plan.error = clone_errno;
    return -1;
  }
  if (plan.error != 0) { // it has exited (vfork): reap it
    if (plan.pidfd >= 0)
      ::close(std::exchange(plan.pidfd, -1));
    while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
    }
    return -1;
  }
  return pid;
}

} // namespace jp
