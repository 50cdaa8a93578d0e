#include "runtime/process/input_wait.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <string>
#include <dirent.h>
#include <vector>
#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "runtime/process/proc_stat.hpp"
#include "runtime/process/tcp_listeners.hpp"

namespace jp {

namespace {

/// What `pid`'s `fd` is; false when it has none (or it cannot be told).
bool file_of(pid_t pid, int fd, struct stat& out) {
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d/fd/%d", static_cast<int>(pid), fd);
  return ::stat(path, &out) == 0;
}

/// Whether `s` is the tool's input `input`; for a terminal, /dev/tty (which
/// full-screen programs such as less open to read keys) is its own terminal too.
bool is_input(const struct stat& s, const struct stat& input, bool terminal) {
  if (terminal && S_ISCHR(s.st_mode) && s.st_rdev == makedev(5, 0))
    return true;
  return s.st_dev == input.st_dev && s.st_ino == input.st_ino;
}

/// Whether `pid`'s `fd` is the tool's input (is_input): `input` where known, else
/// what `leader`'s fd 0 is.
bool is_tool_input(pid_t pid, int fd, pid_t leader, bool terminal, const InputFile* input) {
  struct stat s{}, want{};
  if (!file_of(pid, fd, s))
    return false;
  if (input) {
    want.st_dev = static_cast<dev_t>(input->dev);
    want.st_ino = static_cast<ino_t>(input->ino);
  } else if (!file_of(leader, 0, want)) {
    return false;
  }
  return is_input(s, want, terminal);
}

/// The syscall `pid` is blocked in and its arguments; false when it runs.
bool blocked_syscall(pid_t pid, long& nr, unsigned long (&args)[6]) {
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d/syscall", static_cast<int>(pid));
  int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return false;
  char buf[256];
  auto n = ::read(fd, buf, sizeof buf - 1);
  ::close(fd);
  if (n <= 0)
    return false;
  buf[n] = '\0';
  // "running", or "<nr> <arg0 in hex> ... <arg5> <sp> <pc>", or "-1 ..." (blocked
  // outside a syscall).
  char* end = nullptr;
  nr = std::strtol(buf, &end, 10);
  if (end == buf || nr < 0)
    return false;
  for (auto& arg : args)
    arg = std::strtoul(end, &end, 16);
  return true;
}

/// `n` bytes of `pid`'s memory at `address` (a child's: ours to read).
bool read_memory(pid_t pid, unsigned long address, void* into, size_t n) {
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d/mem", static_cast<int>(pid));
  int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return false;
  auto got = ::pread(fd, into, n, static_cast<off_t>(address));
  ::close(fd);
  return got == static_cast<ssize_t>(n);
}

/// `n` bytes at `address` in the memory of `pid`, which sleeps in syscall `nr` with
/// `args`: trusted only if it still sleeps in the same call once they are read (else
/// that memory may have been reused).
bool read_while_blocked(pid_t pid, long nr, const unsigned long (&args)[6], unsigned long address, void* into,
                        size_t n) {
  long again_nr = 0;
  unsigned long again[6] = {};
  return address != 0 && read_memory(pid, address, into, n) && blocked_syscall(pid, again_nr, again) &&
         again_nr == nr && std::equal(args, args + 6, again);
}

/// The timeout of the poll / select `pid` sleeps in, in milliseconds: -1 when it
/// has none (it waits for its fds alone), or that cannot be told. One passed by
/// address is read from its memory (read_while_blocked). A call restarted after a
/// signal shows what was left of its time: a long one may look brief then, once.
int64_t poll_timeout_ms(pid_t pid, long nr, const unsigned long (&args)[6]) {
  auto in_ms = [](int64_t secs, int64_t fraction_ns) {
    return secs < 0 || fraction_ns < 0 ? int64_t{-1} : std::min<int64_t>(secs, INT32_MAX) * 1000 + fraction_ns / 1000000;
  };
  auto read_at = [&](unsigned long address, void* into, size_t n) {
    return read_while_blocked(pid, nr, args, address, into, n);
  };
  auto timespec_at = [&](unsigned long address) {
    struct timespec ts{};
    return read_at(address, &ts, sizeof ts) ? in_ms(ts.tv_sec, ts.tv_nsec) : int64_t{-1};
  };
  switch (nr) {
#ifdef SYS_poll
    case SYS_poll:
      return static_cast<int>(args[2]);
#endif
#ifdef SYS_epoll_wait
    case SYS_epoll_wait:
#endif
    case SYS_epoll_pwait:
      return static_cast<int>(args[3]);
    case SYS_ppoll:
      return timespec_at(args[2]);
    case SYS_pselect6:
      return timespec_at(args[4]);
#ifdef SYS_select
    case SYS_select: {
      struct timeval tv{};
      return read_at(args[4], &tv, sizeof tv) ? in_ms(tv.tv_sec, tv.tv_usec * 1000) : int64_t{-1};
    }
#endif
    default:
      return -1;
  }
}

/// Whether the poll / select `pid` sleeps in waits to read the tool's input (`known`,
/// else what `leader`'s fd 0 is) among its fds, read from its memory: `git add --patch` polls
/// the pipes of the `git diff-files` it runs, its stdin the terminal, before it has
/// shown anything to answer. True where that cannot be told (an epoll's fds are not
/// in its memory; more fds than are looked at; memory that cannot be read).
bool polls_input(pid_t pid, pid_t leader, long nr, const unsigned long (&args)[6], bool terminal,
                 const InputFile* known) {
  constexpr unsigned long kMaxPollFds = 256;
  constexpr unsigned long kMaxSelectFds = 1024; // FD_SETSIZE
  struct stat input{};
  if (known) {
    input.st_dev = static_cast<dev_t>(known->dev);
    input.st_ino = static_cast<ino_t>(known->ino);
  } else if (!file_of(leader, 0, input)) {
    return true;
  }
  auto is_input_fd = [&](int fd) {
    struct stat s{};
    return fd >= 0 && file_of(pid, fd, s) && is_input(s, input, terminal);
  };
  switch (nr) {
#ifdef SYS_poll
    case SYS_poll:
#endif
    case SYS_ppoll: {
      auto n = args[1];
      if (n > kMaxPollFds)
        return true;
      std::vector<struct pollfd> fds(n);
      if (n > 0 && !read_while_blocked(pid, nr, args, args[0], fds.data(), n * sizeof(struct pollfd)))
        return true;
      return std::any_of(fds.begin(), fds.end(), [&](const struct pollfd& p) {
        return (p.events & (POLLIN | POLLRDNORM | POLLPRI)) != 0 && is_input_fd(p.fd);
      });
    }
#ifdef SYS_select
    case SYS_select:
#endif
    case SYS_pselect6: {
      auto n = args[0];
      if (n > kMaxSelectFds)
        return true;
      if (args[1] == 0)
        return false; // it waits to read nothing
      // fd_set is whole longs, fd i bit i % bits of long i / bits (the kernel reads
      // as many as cover nfds: so do we, staying inside its memory).
      constexpr unsigned long kBits = 8 * sizeof(unsigned long);
      unsigned long words[kMaxSelectFds / kBits] = {};
      auto count = (n + kBits - 1) / kBits;
      if (count > 0 && !read_while_blocked(pid, nr, args, args[1], words, count * sizeof(unsigned long)))
        return true;
      for (unsigned long fd = 0; fd < n; ++fd)
        if ((words[fd / kBits] >> (fd % kBits) & 1) != 0 && is_input_fd(static_cast<int>(fd)))
          return true;
      return false;
    }
    default:
      return true;
  }
}

bool is_read(long nr) {
  return nr == SYS_read || nr == SYS_readv || nr == SYS_pread64;
}

bool is_poll(long nr) {
  switch (nr) {
#ifdef SYS_poll
    case SYS_poll:
#endif
#ifdef SYS_select
    case SYS_select:
#endif
#ifdef SYS_epoll_wait
    case SYS_epoll_wait:
#endif
    case SYS_ppoll:
    case SYS_pselect6:
    case SYS_epoll_pwait:
      return true;
    default:
      return false;
  }
}

/// The inodes of the sockets `pid` has open; none when it cannot be told, and
/// `too_many` when it has more than 256 fds (not all looked at).
std::vector<unsigned long> socket_inodes(pid_t pid, bool& too_many) {
  std::vector<unsigned long> out;
  char dir[64];
  std::snprintf(dir, sizeof dir, "/proc/%d/fd", static_cast<int>(pid));
  DIR* d = ::opendir(dir);
  if (!d)
    return out;
  size_t seen = 0;
  while (auto* e = ::readdir(d)) {
    if (e->d_name[0] == '.')
      continue;
    if (++seen > 256) {
      too_many = true;
      break;
    }
    char link[64];
    auto n = ::readlinkat(::dirfd(d), e->d_name, link, sizeof link - 1);
    unsigned long inode = 0;
    if (n > 0 && (link[n] = '\0', std::sscanf(link, "socket:[%lu]", &inode) == 1))
      out.push_back(inode);
  }
  ::closedir(d);
  return out;
}

/// Whether `pid` listens on a TCP port: a server (`python3 -m http.server`, a dev
/// server), whose poll waits on its clients, not on its stdin. (Any socket would be
/// too much: an asyncio REPL holds a socket pair to wake itself, a client a
/// database's connection.)
bool listens(pid_t pid) {
  bool too_many = false;
  auto mine = socket_inodes(pid, too_many);
  if (too_many)
    return true; // a JVM, a dev server watching files: taken for a server, not asking
  if (mine.empty())
    return false;
  auto listeners = tcp_listeners("/proc/" + std::to_string(pid) + "/net");
  return listeners && std::any_of(listeners->begin(), listeners->end(), [&](const TcpListener& l) {
           return std::find(mine.begin(), mine.end(), l.inode) != mine.end();
         });
}

/// Whether `pid` sleeps in a read of the tool's input (is_tool_input), or, where `polls`, in
/// a poll / select with that as its own stdin, waiting to read it (polls_input).
/// Counted on a terminal only, when the poller listens on no port (a REPL waiting
/// for a line, e.g. Python's readline; vim). Not on a pipe, nor a server on a
/// terminal: an event loop polls its stdin among its sockets.
/// `brief_poll`: set when it is a poll that ends within a second by itself (a program
/// that looks for a key between the frames of its progress, not only a reader).
bool reads_input(pid_t pid, pid_t leader, bool terminal, bool polls, bool* brief_poll, const InputFile* input) {
  long nr = 0;
  unsigned long args[6] = {};
  if (!blocked_syscall(pid, nr, args))
    return false;
  if (is_read(nr))
    return is_tool_input(pid, static_cast<int>(args[0]), leader, terminal, input);
  if (!(polls && is_poll(nr) && is_tool_input(pid, 0, leader, terminal, input) && !listens(pid) &&
        polls_input(pid, leader, nr, args, terminal, input)))
    return false;
  if (brief_poll) {
    auto timeout = poll_timeout_ms(pid, nr, args);
    *brief_poll = timeout >= 0 && timeout <= 1000;
  }
  return true;
}

/// Calls `fn(tid)` for each thread of `pid` until it returns false; false when
/// `pid`'s threads cannot be listed (it is gone).
template <class F>
bool each_thread(pid_t pid, F fn) {
  char dir[64];
  std::snprintf(dir, sizeof dir, "/proc/%d/task", static_cast<int>(pid));
  DIR* d = ::opendir(dir);
  if (!d)
    return false;
  while (auto* e = ::readdir(d))
    if (e->d_name[0] != '.' && !fn(static_cast<pid_t>(std::strtol(e->d_name, nullptr, 10))))
      break;
  ::closedir(d);
  return true;
}

/// Up to `max` descendants of `pid` (its children first), by the kernel's lists of
/// each thread's children: at most `max_lists` of them read, so a process of many
/// threads costs no more than a few.
std::vector<pid_t> descendants(pid_t pid, size_t max, size_t max_lists) {
  std::vector<pid_t> found;
  size_t lists = 0;
  for (size_t next = 0;; pid = found[next++]) {
    each_thread(pid, [&](pid_t tid) {
      if (++lists > max_lists)
        return false;
      char path[96];
      std::snprintf(path, sizeof path, "/proc/%d/task/%d/children", static_cast<int>(pid), static_cast<int>(tid));
      int fd = ::open(path, O_RDONLY | O_CLOEXEC);
      if (fd < 0)
        return true;
      char buf[512];
      auto n = ::read(fd, buf, sizeof buf - 1);
      ::close(fd);
      buf[n > 0 ? n : 0] = '\0';
      for (char* at = buf; found.size() < max;) {
        char* end = nullptr;
        long child = std::strtol(at, &end, 10);
        if (end == at)
          break;
        found.push_back(static_cast<pid_t>(child));
        at = end;
      }
      return true;
    });
    if (next >= found.size() || found.size() >= max || lists > max_lists)
      return found;
  }
}

} // namespace

pid_t input_reader(pid_t leader, bool terminal, bool* brief_poll, const InputFile* input) {
  if (brief_poll)
    *brief_poll = false;
  pid_t reader = leader;
  pid_t foreground = 0;
  if (terminal) {
    auto st = read_proc_stat(leader);
    if (!st)
      return 0;
    if (st->tpgid > 0)
      reader = foreground = st->tpgid; // the foreground job's leader reads the terminal
  }
  if (reads_input(reader, leader, terminal, terminal, brief_poll, input))
    return reader;
  // A child reading it while its parent waits for it, or reads what it writes:
  // `git commit`'s editor, a shell's `cd x && python3 ask.py` or `x=$(head -n1)`,
  // `seq 300 | less`. Polling it too in the foreground job: `sh -c 'vim x; make'`,
  // whose vim is no job of its own.
  for (pid_t child : descendants(leader, 32, 64)) {
    if (child == reader)
      continue;
    bool in_foreground = false;
    if (terminal) {
      auto st = read_proc_stat(child);
      in_foreground = st && st->pgid == foreground;
    }
    if (reads_input(child, leader, terminal, in_foreground, brief_poll, input))
      return child;
  }
  return 0;
}

namespace {

/// How often the threads of `pid` (the first 64) have run, summed: a tool's main
/// thread may read its answers while another works.
uint64_t threads_run_count(pid_t pid) {
  uint64_t runs = 0;
  int threads = 0;
  bool listed = each_thread(pid, [&](pid_t tid) {
    if (++threads > 64)
      return false;
    runs += run_count(tid);
    return true;
  });
  return listed ? runs : run_count(pid);
}

} // namespace

uint64_t group_run_count(pid_t leader) {
  uint64_t runs = threads_run_count(leader);
  for (pid_t child : descendants(leader, 32, 64))
    runs += threads_run_count(child);
  return runs;
}

} // namespace jp
