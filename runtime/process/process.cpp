#include "runtime/process/process.hpp"

#include <algorithm>
#include <array>
#include <fmt/format.h>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <deque>
#include <exception>
#include <initializer_list>
#include <fcntl.h>
#include <map>
#include <mutex>
#include <optional>
#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <termios.h>
#include <thread>
#include <unistd.h>

#include <boost/asio.hpp>
#include <filesystem>
#include <fstream>

#include "messages/json.hpp"
#include "runtime/process/child_launch.hpp"
#include "runtime/process/controlling_terminal.hpp"
#include "runtime/process/group_record.hpp"
#include "runtime/process/kept_daemons.hpp"
#include "runtime/process/tool_environment.hpp"
#include "runtime/process/proc_stat.hpp"
#include "runtime/process/tool_mark.hpp"
#include "runtime/process/io_thread.hpp"

extern char** environ;

namespace jp {

namespace asio = boost::asio;
using boost::system::error_code;
using descriptor = asio::posix::stream_descriptor;

namespace {

constexpr int kPipeSize = 1024 * 1024;
// A pipe's size as made (16 pages): a tool that has written this much is a chatty one.
constexpr std::size_t kFirstPipeSize = 64 * 1024;
constexpr std::size_t kReadSize = kOutputChunkMax;
// Reads per readiness before yielding to other children (fairness).
constexpr int kReadsPerWakeup = 4;

/// A descriptor of a terminal's other side (the child's), opened from its master for
/// what only that side tells or takes (what it holds unread, a flush); -1 when it
/// cannot be opened. The caller closes it.
int terminal_peer(int master) {
  return ::ioctl(master, TIOCGPTPEER, O_RDONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
}
// What is still in a pipe when the leader has exited was written before, and fits in
// the pipe buffer; the cap only stops a writer that escaped the group kill from
// keeping us draining forever.
constexpr std::size_t kDrainCap = 8 * kPipeSize;
constexpr auto kReapRetry = std::chrono::milliseconds(2);
// ~10 s of retries: only unkillable (D state) processes survive SIGKILL that long.
constexpr int kReapTries = 5000;
constexpr auto kGraceReapRetry = std::chrono::milliseconds(20);
// Passes over /proc at a tool's exit for what it left outside its group (kill_escapes):
// each after killing what the last found, which may have forked just before. They
// end at the first that finds nothing (the common case: one), so the bound only
// stops a runner forking without end; what it still left is ended with jp-actors.
// (Stopping each found first would not catch more: a process a SIGSTOP or a SIGKILL
// reached forks no more either way, and what it forked before is the next pass's.)
constexpr int kEscapeKillPasses = 16;
// How long ~IoThread waits for its killed groups to be reaped.
constexpr auto kShutdownWait = std::chrono::seconds(10);
// A Ctrl-C waits for the input before it to be read: looked at this often, for at
// most kInterruptWait (process.hpp).
constexpr auto kInterruptPoll = std::chrono::milliseconds(2);

std::string errno_text(int err) {
  return std::strerror(err);
}

/// Runs a user callback; one that throws must not wedge the process's state machine.
template <class F, class... Args>
void call_user(F& f, Args&&... args) noexcept {
  if (!f)
    return;
  try {
    f(std::forward<Args>(args)...);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "jp-actors: process callback threw (ignored): %s\n", e.what());
  } catch (...) {
    std::fprintf(stderr, "jp-actors: process callback threw (ignored)\n");
  }
}

// ---- signal-safe record of live process groups (kill_all_process_groups)

constexpr std::size_t kSlots = 1 << 15; // more than the fds of this many children allow
std::atomic<pid_t> g_slots[kSlots]; // 0 = free
// Whether the group in that slot got its TERM (an abort's, or the shutdown's): the
// other sends none. A second TERM is a second signal, which a program may take as
// "now" (a jp-actors run as a tool cuts its tools' grace short).
std::atomic<bool> g_termed[kSlots];
std::atomic<std::size_t> g_next_slot{0};
std::atomic<bool> g_refuse_new{false}; // refuse_new_processes
std::atomic<void (*)()> g_output_read_seam{nullptr}; // on_output_read (tests)

std::atomic<launcher_kind> g_launcher{launcher_kind::vfork}; // use_launcher (bench/README.md: why)
std::atomic<bool> g_always_session{false}; // use_own_sessions
// Spawns past the g_refuse_new check whose group is not in g_slots yet: a signal's
// shutdown waits for them, or their child would miss the TERM and the KILL.
std::atomic<int> g_spawns_under_way{0};
void schedule_orphan_reap(IoThread& io); // below: what left a tool and exited is reaped
// How long refuse_new_processes waits for them: a spawn takes milliseconds; only an
// exec hung on a dead file system takes longer.
constexpr auto kSpawnSettle = std::chrono::seconds(5);
static_assert(std::atomic<pid_t>::is_always_lock_free);

/// Records a live group; returns its slot (kSlots when full).
std::size_t add_slot(pid_t pgid) {
  // Start where the last one was put: with thousands of live groups a scan from 0
  // would cost each spawn a pass over them.
  auto start = g_next_slot.load(std::memory_order_relaxed);
  for (std::size_t i = 0; i < kSlots; ++i) {
    auto at = (start + i) % kSlots;
    pid_t free_slot = 0;
    if (g_slots[at].compare_exchange_strong(free_slot, pgid)) {
      g_termed[at].store(false);
      g_next_slot.store(at + 1, std::memory_order_relaxed);
      return at;
    }
  }
  // Full: the group is still killed by its handle and by ~IoThread, only not by
  // kill_all_process_groups.
  return kSlots;
}

void remove_slot(std::size_t at, pid_t pgid) {
  if (at < kSlots && g_slots[at].load() == pgid) {
    // Before the slot is free: the next group in it must not look TERMed already.
    g_termed[at].store(false);
    pid_t expected = pgid;
    g_slots[at].compare_exchange_strong(expected, 0);
  }
}

/// An owned file descriptor (spawn_process's error paths close what they opened).
struct Fd {
  int fd = -1;
  Fd() = default;
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { reset(); }
  void reset() {
    if (fd >= 0)
      ::close(fd);
    fd = -1;
  }
  int release() { return std::exchange(fd, -1); }
};

bool make_pipe(Fd& read_end, Fd& write_end) {
  int p[2];
  if (::pipe2(p, O_CLOEXEC) != 0)
    return false;
  read_end.fd = p[0];
  write_end.fd = p[1];
  return true;
}

/// A process's command line as one short line for a model to read: control
/// characters escaped, invalid UTF-8 replaced, at most kLeftCommandMax bytes (cut
/// at a character, "…" after); its name in brackets when it shows no command line.
std::string command_shown(pid_t pid) {
  auto raw = read_proc_cmdline(pid, 4 * kLeftCommandMax);
  if (raw.empty())
    raw = "[" + read_proc_comm(pid) + "]";
  auto text = sanitize_utf8(raw);
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    auto c = static_cast<unsigned char>(text[i]);
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c < 0x20 || c == 0x7f) {
      char esc[8];
      std::snprintf(esc, sizeof esc, "\\x%02x", c);
      out += esc;
    } else if (c == 0xC2 && i + 1 < text.size() && static_cast<unsigned char>(text[i + 1]) <= 0x9f) {
      char esc[8]; // a C1 control
      std::snprintf(esc, sizeof esc, "\\u%04x", static_cast<unsigned>(static_cast<unsigned char>(text[++i])));
      out += esc;
    } else {
      out += static_cast<char>(c);
    }
  }
  if (out.size() > kLeftCommandMax) {
    auto cut = kLeftCommandMax;
    while (cut > 0 && (static_cast<unsigned char>(out[cut]) & 0xC0) == 0x80)
      --cut; // not inside a character
    out.resize(cut);
    out += "…";
  }
  return out;
}

/// Why execve refused the program (EACCES, ENOEXEC), and what to do: "" when it
/// cannot be told.
std::string not_runnable(const SpawnSpec& spec, int err) {
  const auto& name = spec.argv[0];
  static const std::string instead = "; or make its interpreter the program and the file its argument "
                                     "(program = \"sh\", args = [\"FILE\"])";
  if (err == ENOEXEC)
    return "it is no program this system runs (a program built for another machine, or a script without a "
           "first line naming its interpreter, #!/bin/sh)" +
           instead;
  if (name.find('/') == std::string::npos)
    return "the one found in PATH may not be run (not executable for this user: chmod +x it)" + instead;
  auto path = name.starts_with('/') || spec.cwd.empty() ? name : spec.cwd + "/" + name;
  struct stat st{};
  if (::stat(path.c_str(), &st) != 0)
    return "";
  if (S_ISDIR(st.st_mode))
    return "it is a directory, not a program";
  if (!S_ISREG(st.st_mode))
    return "it is not a file a program is in";
  // Before access(): on a noexec mount it says "not executable" too.
  struct statvfs fs{};
  if (::statvfs(path.c_str(), &fs) == 0 && (fs.f_flag & ST_NOEXEC))
    return "the file system it is on is mounted noexec, where no program runs" + instead;
  if (::access(path.c_str(), X_OK) != 0)
    return "the file is not executable for this user (chmod +x it)" + instead;
  return "";
}

/// A launch reports a bad cwd and a missing program alike; say which it was.
/// (Both may come from a model's arguments: echoed as far as a path needs, no more.)
std::string spawn_error(const SpawnSpec& spec, int err) {
  auto prog = cut_text(spec.argv[0], 200);
  if (!spec.cwd.empty()) {
    auto cd_error = [&](int e) {
      return "cannot start '" + prog + "': cannot change to directory '" + cut_text(spec.cwd, 200) + "': " +
             errno_text(e);
    };
    struct stat st{};
    if (::stat(spec.cwd.c_str(), &st) != 0)
      return cd_error(errno);
    if (!S_ISDIR(st.st_mode))
      return cd_error(ENOTDIR);
    if (::access(spec.cwd.c_str(), X_OK) != 0)
      return cd_error(errno);
  }
  if (err == ENOTSUP && spec.limits.any())
    return "cannot start '" + prog + "' within its resource limits (runtime.tool_limits, "
           "conversation.tools.NAME.limits, mcp.servers.NAME.limits): this system refuses close_range (Linux 5.9 "
           "or later), without which jp-actors cannot set them before the program runs; leave them unset to run "
           "tools without limits";
  if (err == E2BIG) {
    // Linux takes an argument or variable of at most 128 KiB, and about a quarter of
    // the stack limit for all of them together: say which, and what to do instead.
    size_t longest = 0, total = 0;
    const char* what = "argument";
    for (auto [list, kind] : {std::pair{&spec.argv, "argument"}, std::pair{&spec.env, "variable (env)"}})
      for (auto& a : *list) {
        if (a.size() > longest) {
          longest = a.size();
          what = kind;
        }
        total += a.size() + 1;
      }
    return fmt::format("cannot start '{}': Argument list too long: its longest {} is {} bytes (at most 131,072 "
                       "each), {} bytes in all with the variables it sets; pass long text through a file or stdin "
                       "instead",
                       prog, what, longest, total);
  }
  // The file is there and its `#!` interpreter is not (a CRLF line end, a
  // program not installed): execve says ENOENT for both.
  if (err == ENOENT && spec.argv[0].find('/') != std::string::npos) {
    auto path = spec.argv[0].starts_with('/') || spec.cwd.empty() ? spec.argv[0] : spec.cwd + "/" + spec.argv[0];
    struct stat st{};
    if (::stat(path.c_str(), &st) == 0)
      return fmt::format("cannot start '{}': the file is there, but the interpreter its first line (#!) names "
                         "was not found (a line end of \\r\\n makes one), or a library it needs",
                         prog);
  }
  // `examples/tools/x.sh` written in a config read from elsewhere: say where from.
  if (err == ENOENT && spec.argv[0].find('/') != std::string::npos && !spec.argv[0].starts_with('/'))
    return fmt::format("cannot start '{}': {} (a relative path is found from the {}'s working directory, {}{})",
                       prog, errno_text(err), spec.server ? "server" : "tool",
                       spec.cwd.empty() ? "jp-actors' own" : "'" + cut_text(spec.cwd, 200) + "'",
                       spec.server ? "" : "; the workspace, unless the tool sets its cwd");
  if (err == EACCES || err == ENOEXEC)
    if (auto why = not_runnable(spec, err); !why.empty())
      return "cannot start '" + prog + "': " + why;
  auto found = err == ENOENT ? program_in_path(spec.argv[0]) : std::string(); // "" for a path
  if (!found.empty())
    return fmt::format("cannot start '{}': {} is there, but the interpreter its first line (#!) names was not "
                       "found (a line end of \\r\\n makes one), or a library it needs",
                       prog, cut_text(found, 200));
  if (err == ENOENT && spec.argv[0].find('/') == std::string::npos)
    return fmt::format("cannot start '{}': not found in PATH (its absolute directories: a program of the working "
                       "directory runs only by a path, ./{})",
                       prog, cut_text(spec.argv[0], 100));
  return "cannot start '" + prog + "': " + errno_text(err);
}

// ---- the io-thread side of one child

struct Stream {
  stream_kind kind;
  std::optional<descriptor> d;
  bool reading = false; // waiting for the pipe to become readable
  bool paused = false;  // not waiting: the owner is behind on acks
  bool done = false;    // EOF/error, or drained after the leader exited
  std::size_t until_big = 0; // bytes to read before the pipe is made big (0: it is, or never is)
};

/// The io thread reads every pipe into this one buffer and hands the bytes on at
/// once (on_output copies what it keeps): no per-stream buffer, so a handle that
/// waits costs no memory for reading.
char* read_buffer() {
  static thread_local std::unique_ptr<char[]> buf(new char[kReadSize]);
  return buf.get();
}

/// Oldest first: the order what a command left running is named in.
bool started_before(const ProcStat& a, const ProcStat& b) {
  return a.start != b.start ? a.start < b.start : a.pid < b.pid;
}

/// Whether a tool marked `mark` may have left something running outside its group
/// (below, with the orphans).
bool escape_may_live(const std::string& mark);

/// Everything about one child that the io thread owns. All members except `pid`,
/// `io`, `has_stdin`, `stdin_queued`, `finished` and the caller's way into stdin
/// (`stdin_fd` under `stdin_mtx`, `stdin_closing`) are touched only on the io
/// thread. Kept alive by the registry (until the group is gone) and by pending
/// handlers, so dropping the user's handle never cuts on_exit short.
class ProcState : public std::enable_shared_from_this<ProcState> {
public:
  ProcState(IoThread& io, pid_t pid, std::size_t slot, bool has_stdin, bool session,
            std::string mark, ProcessEvents events)
    : io(io), pid(pid), slot(slot), has_stdin(has_stdin), session(session), mark(std::move(mark)),
      events_(std::move(events)) {
    out_.kind = stream_kind::out;
    err_.kind = stream_kind::err;
    ctl_.kind = stream_kind::control;
    ctl_.done = true; // until a control channel is attached
  }

  IoThread& io;
  const pid_t pid;
  const std::size_t slot; // in the signal-safe record of live groups
  const bool has_stdin;
  const bool session; // a pty's child: its session's every group is ours (shell jobs)
  const std::string mark; // in its environment (runtime/process/tool_mark.hpp)
  std::pair<uint64_t, uint64_t> started; // the crash record's start window (group_record.hpp)
  bool server = false;                   // SpawnSpec::server
  std::vector<std::string> daemons;      // SpawnSpec::daemons
  /// Set once no request needs the io thread (group gone, or forgotten by ~IoThread).
  std::atomic<bool> finished{false};
  /// Bytes accepted by write_stdin and not yet written or dropped. Counted up on the
  /// caller's thread (so the limit holds without a round trip), down on the io thread.
  std::atomic<std::size_t> stdin_queued{0};
  /// Bytes accepted by write_stdin ever (counted after stdin_queued): with it, what
  /// the tool has read (input_read).
  std::atomic<uint64_t> stdin_accepted{0};
  /// interrupt()s asked whose SIGINT has not gone out or been dropped: counted up on
  /// the caller's thread (so a look right after it knows), down on the io thread.
  std::atomic<int> interrupts_pending{0};

  std::optional<descriptor> pidfd_;
  std::optional<descriptor> stdin_;
  Stream out_, err_, ctl_;
  /// The output descriptors' numbers (a terminal's master; stdout's and stderr's
  /// pipes), for output_unread on any thread: -1 once closed (under out_mtx).
  std::mutex out_mtx;
  std::array<int, 2> out_fds{-1, -1};

  // The caller's way into stdin: a write with nothing queued before it goes into
  // the pipe on the caller's thread, without a hop to the io thread (W5: the child
  // reads it a wake-up sooner). The fd is closed only on the io thread, under the
  // lock, so a write never reaches a closed (or reused) descriptor.
  std::mutex stdin_mtx;
  int stdin_fd = -1; // while stdin_ is open; guarded by stdin_mtx
  std::optional<InputFile> input_file; // what the child's stdin is (set at start)
  std::atomic<bool> stdin_closing{false}; // the caller closed it: later input is dropped
  std::atomic<bool> stdin_gone{false};    // the child closed it (EPIPE): input is dropped

  /// Caller's thread: `bytes` (reserved by the caller) go into the pipe now, as
  /// far as it takes them, unless something is queued before them; the rest is
  /// queued on the io thread. Under the lock, so callers on several threads keep
  /// their order. Not for a terminal: a resize the caller posted before must reach
  /// it first. A full pipe or a reader gone (EPIPE) is the io thread's to find out.
  void write_or_queue(std::string bytes) {
    std::lock_guard lock(stdin_mtx);
    if (!session && stdin_fd >= 0 && stdin_queued.load() == bytes.size()) {
      auto n = ::write(stdin_fd, bytes.data(), bytes.size());
      if (n > 0) {
        stdin_queued -= static_cast<std::size_t>(n);
        bytes.erase(0, static_cast<std::size_t>(n));
      } else if (n < 0 && errno == EPIPE) {
        stdin_gone = true; // told to the caller now (Process::input_closed); the fd is the io thread's to close
        stdin_queued -= bytes.size();
        return;
      }
    }
    if (!bytes.empty())
      io.post([st = shared_from_this(), b = std::move(bytes)]() mutable { st->write_stdin(std::move(b)); });
  }

  /// Any thread: input queued, in the pipe, or held by the terminal (Process::input_unread).
  /// A terminal's count is asked of a descriptor of its own side opened for the
  /// question: its poll first passes on what the kernel still holds for it (typed
  /// bytes reach the line discipline from a work queue, later than our write).
  bool input_unread() {
    if (stdin_queued.load() > 0)
      return true;
    std::lock_guard lock(stdin_mtx); // the fd stays open meanwhile
    if (stdin_fd < 0)
      return false;
    if (!session) {
      int n = 0;
      return ::ioctl(stdin_fd, FIONREAD, &n) == 0 && n > 0;
    }
    int peer = terminal_peer(stdin_fd);
    if (peer < 0)
      return false; // cannot be told: as before
    pollfd pfd{peer, POLLIN, 0};
    bool unread = ::poll(&pfd, 1, 0) == 1 && (pfd.revents & POLLIN) != 0;
    ::close(peer);
    return unread;
  }

  /// Any thread: output the tool wrote that its owner has not taken yet: read here
  /// and on its way (not acked), or still in its pipes or its terminal (a poll
  /// passes on what a terminal's side still holds, as for input_unread).
  /// In this order: the descriptors, then a read under way, then what was read and
  /// not acked. The io thread empties a descriptor before it counts what it read
  /// (read_chunk): asked the other way round, a chunk just read was in neither count,
  /// and a shell's prompt after the line typed to it was believed with its answer
  /// still to come (a look answered "waiting" without it).
  bool output_unread() {
    if (unacked_.load() > 0)
      return true; // (a yes needs no order: the common case, no poll)
    {
      std::lock_guard lock(out_mtx); // the fds stay open meanwhile
      std::array<pollfd, 2> fds{};
      nfds_t n = 0;
      for (int fd : out_fds)
        if (fd >= 0)
          fds[n++] = pollfd{fd, POLLIN, 0};
      if (n > 0 && ::poll(fds.data(), n, 0) > 0 &&
          std::any_of(fds.begin(), fds.begin() + n, [](const pollfd& p) { return (p.revents & POLLIN) != 0; }))
        return true;
    }
    // The poll's empty answer before the loads below, on any CPU (the kernel's pipe
    // poll reads its state without a barrier).
    std::atomic_thread_fence(std::memory_order_seq_cst);
    return reading_.load() > 0 || unacked_.load() > 0;
  }

  /// Io thread: before the output descriptors close, output_unread forgets them.
  void forget_out_fds() {
    std::lock_guard lock(out_mtx);
    out_fds = {-1, -1};
  }

  /// Io thread: closes stdin (cancelling a pending write), never under a caller's write.
  void close_stdin_fd() {
    {
      std::lock_guard lock(stdin_mtx);
      stdin_fd = -1;
    }
    stdin_.reset();
  }

  void start() {
    // Wait first: Asio re-arms the descriptor at each wait (EPOLL_CTL_MOD), and the
    // kernel's re-arm reports what the pipe already holds, so an edge that passed
    // before it is not lost. A read first would be one more system call while the
    // child still waits for this thread's core (at most tools' start, nothing to read).
    for (Stream* s : {&out_, &err_, &ctl_})
      if (!s->done)
        read_more(*s);
    schedule_orphan_reap(io);
    pidfd_->async_wait(descriptor::wait_read,
                       [self = shared_from_this()](error_code ec) { self->on_leader_exit(ec); });
  }

  /// Any thread: counts `n` more queued stdin bytes, unless that passes the limit
  /// (`always`: whatever it is, for what drops the queue before it goes).
  bool reserve_stdin(std::size_t n, bool always = false) {
    auto queued = stdin_queued.load();
    do {
      if (!always && n > kStdinQueueLimit - queued)
        return false;
    } while (!stdin_queued.compare_exchange_weak(queued, queued + n));
    stdin_accepted += n;
    return true;
  }

  void write_stdin(std::string bytes) {
    if (!stdin_ || stdin_close_requested_ || bytes.empty()) {
      stdin_queued -= bytes.size(); // reserved by the caller, dropped here
      return;
    }
    stdin_queue_.push_back(std::move(bytes));
    start_write();
  }

  /// Io thread: write_stdin after dropping what is queued and not written yet; the
  /// front of a write under way keeps the part given to it (its buffer), and the
  /// rest of it goes when that write completes.
  void write_stdin_dropping_queued(std::string bytes) {
    std::size_t dropped = 0;
    while (stdin_queue_.size() > (stdin_writing_ ? 1 : 0)) {
      dropped += stdin_queue_.back().size() - (stdin_queue_.size() == 1 ? stdin_offset_ : 0);
      stdin_queue_.pop_back();
    }
    if (stdin_queue_.empty())
      stdin_offset_ = 0;
    stdin_queued -= dropped;
    drop_front_rest_ = stdin_writing_;
    // And what the terminal holds unread, as its Ctrl-C would: else the Ctrl-C
    // waits behind a full line buffer that nobody reads (a program busy meanwhile),
    // and its signal with it. What a write under way puts in after this, the Ctrl-C
    // itself drops.
    if (session) {
      std::lock_guard lock(stdin_mtx);
      int peer = stdin_fd < 0 ? -1 : terminal_peer(stdin_fd);
      if (peer >= 0) {
        ::tcflush(peer, TCIFLUSH);
        ::close(peer);
      }
    }
    // A write under way may wait for room that the flush made without waking it:
    // cancelled, it ends with what it wrote (on_written), and the Ctrl-C goes next.
    if (stdin_writing_ && stdin_) {
      error_code ignored;
      stdin_->cancel(ignored);
    }
    write_stdin(std::move(bytes));
  }

  /// Any thread: the terminal's modes (Process::terminal_modes).
  std::optional<Process::TerminalModes> terminal_modes() {
    std::lock_guard lock(stdin_mtx); // the fd stays open meanwhile
    termios t{};
    if (stdin_fd < 0 || ::tcgetattr(stdin_fd, &t) != 0)
      return std::nullopt;
    // Ctrl-C as the interrupt: an editor may keep signals with another key for it (emacs' C-g).
    return Process::TerminalModes{(t.c_lflag & ICANON) != 0,
                                  (t.c_lflag & ISIG) != 0 && (t.c_lflag & NOFLSH) == 0 && t.c_cc[VINTR] == '\x03'};
  }

  /// Any thread: `bytes` of output taken in by the owner. Only a paused stream needs
  /// the io thread: an ack otherwise costs it no wake-up (one per chunk, before).
  void ack(std::size_t bytes) {
    auto cur = unacked_.load();
    while (!unacked_.compare_exchange_weak(cur, cur - std::min(bytes, cur))) {
    }
    // Seen after the subtraction (both seq_cst): pump's pause sees this ack, or this
    // sees its pause -- never neither.
    if (any_paused_.load() && unacked_.load() < kOutputAckLimit)
      io.post([self = shared_from_this()] { self->resume_reading(); });
  }

  /// io thread: the streams paused for acks read on, once the owner has caught up.
  void resume_reading() {
    if (unacked_.load() >= kOutputAckLimit)
      return;
    any_paused_ = false;
    for (Stream* s : {&out_, &err_, &ctl_}) {
      if (s->paused) {
        s->paused = false;
        pump(*s);
      }
    }
  }

  void close_stdin() {
    stdin_close_requested_ = true;
    start_write();
  }

  void resize(int rows, int cols) {
    if (!session || !out_.d)
      return;
    struct winsize ws{};
    ws.ws_row = static_cast<unsigned short>(rows);
    ws.ws_col = static_cast<unsigned short>(cols);
    ::ioctl(out_.d->native_handle(), TIOCSWINSZ, &ws); // the kernel sends SIGWINCH
  }

  void terminate(std::chrono::milliseconds grace, std::function<void()> on_gone) {
    if (gone_) {
      call_user(on_gone);
      return;
    }
    if (on_gone)
      on_gone_.push_back(std::move(on_gone));
    if (leader_reaped_ || terminating_)
      return; // already on its way out; on_gone fires when the group is gone
    terminating_ = true;
    // A terminal closing for a pty's session (interactive shells ignore SIGTERM),
    // the TERM, then a CONT: a stopped process acts on the TERM only once continued
    // (stopped jobs; and a tool in our session, in no orphaned group, stops on a
    // stop signal). Not the TERM again to a group the shutdown sent one.
    bool termed = slot < kSlots && g_termed[slot].exchange(true);
    if (session)
      signal_all({SIGHUP, SIGTERM, SIGCONT}, true, termed);
    else
      signal_all({SIGTERM, SIGCONT}, true, termed);
    signal_escaped(SIGTERM);
    grace_timer_.emplace(io.context());
    grace_timer_->expires_after(grace);
    grace_timer_->async_wait([self = shared_from_this()](error_code ec) {
      if (ec)
        return;
      self->grace_over_ = true;
      // The pgid is ours to signal while the leader is unreaped, or (its grace kept
      // past its exit) while members hold it: reap_group has not found it empty.
      if (!self->leader_reaped_ || !self->group_empty_)
        self->signal_all({SIGKILL}, !self->leader_reaped_);
      self->signal_escaped(SIGKILL); // by mark and start time: never another's
      if (self->leader_reaped_)
        remove_slot(self->slot, self->pid);
    });
  }

  void kill_now() {
    if (!leader_reaped_) {
      signal_all({SIGKILL});
    } else if (grace_kept_ && !group_empty_) { // an abort's grace past its leader: ended now
      signal_group({SIGKILL}, false);
      signal_escaped(SIGKILL);
    }
  }

  /// Ctrl-C for a pipe tool: SIGINT to its group, as a terminal sends it to its
  /// foreground job (not to the session's other groups: those are background jobs),
  /// once the tool has read the input given before it (a terminal's line is read
  /// before its Ctrl-C) -- not what came after it -- or after kInterruptWait if it
  /// reads no more.
  /// `input_before`: stdin_accepted when it was asked, on the asker's thread.
  void interrupt(uint64_t input_before) {
    if (leader_reaped_ || terminating_) {
      --interrupts_pending;
      return;
    }
    interrupts_.push_back({input_before, asio::steady_timer::clock_type::now() + kInterruptWait});
    send_interrupts();
  }

  /// Process::resume, on the io thread: while the leader is ours (unreaped, its
  /// group's id not another's) and no abort is stopping it.
  void resume() {
    if (!leader_reaped_ && !terminating_)
      signal_all({SIGCONT});
  }

  void send_interrupts() {
    if (leader_reaped_ || terminating_) {
      interrupts_pending -= static_cast<int>(interrupts_.size());
      interrupts_.clear();
      return;
    }
    auto now = asio::steady_timer::clock_type::now();
    auto read = input_read();
    while (!interrupts_.empty() && (read >= interrupts_.front().input_before || now >= interrupts_.front().by)) {
      signal_group({SIGINT});
      interrupts_.pop_front();
      --interrupts_pending;
    }
    if (interrupts_.empty())
      return;
    interrupt_timer_.emplace(io.context());
    interrupt_timer_->expires_after(kInterruptPoll);
    interrupt_timer_->async_wait([self = shared_from_this()](error_code ec) {
      if (!ec)
        self->send_interrupts();
    });
  }

  /// Bytes of input the tool has read, or that were dropped: all accepted but those
  /// queued here and those still in the pipe. (Read in this order, a write racing it
  /// makes it less, never more: a Ctrl-C waits, never comes early.) Once its stdin is
  /// closed (Ctrl-D), the pipe is looked at through the probe kept then.
  uint64_t input_read() {
    auto accepted = stdin_accepted.load();
    uint64_t pending = stdin_queued.load();
    int in_pipe = 0;
    int fd = stdin_ ? stdin_->native_handle() : stdin_probe_;
    if (fd >= 0 && ::ioctl(fd, FIONREAD, &in_pipe) == 0 && in_pipe > 0)
      pending += static_cast<uint64_t>(in_pipe);
    return accepted > pending ? accepted - pending : 0;
  }

  /// Before the caller's close of stdin (Ctrl-D): a read end of the same pipe, never
  /// read, so a later Ctrl-C can still tell what the tool has not read (FIONREAD).
  /// The tool sees its end of input all the same: that is the writers' closing.
  void keep_stdin_probe() {
    if (stdin_probe_ < 0 && stdin_ && !session) // (a terminal's master would open a new terminal)
      stdin_probe_ = ::open(fmt::format("/proc/self/fd/{}", stdin_->native_handle()).c_str(),
                            O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  }

  void close_stdin_probe() {
    if (stdin_probe_ >= 0)
      ::close(stdin_probe_);
    stdin_probe_ = -1;
  }

  /// `sigs`, in turn, to the group, and for a session to every group of it (its
  /// members read once). Only while the leader is unreaped (its pid names our
  /// group) or, for a session, while members remain (they keep the session id from
  /// being reused).
  /// `leader_termed`: the shutdown sent the leader's group its TERM already (a second
  /// is a second signal); the session's other groups get theirs.
  void signal_all(std::initializer_list<int> sigs, bool leader_running = true, bool leader_termed = false) {
    signal_group(sigs, leader_running, leader_termed);
    if (!session)
      return;
    std::vector<pid_t> done{pid};
    for (auto& m : session_members(pid)) {
      if (std::find(done.begin(), done.end(), m.pgid) != done.end())
        continue;
      done.push_back(m.pgid);
      for (int sig : sigs)
        ::kill(-m.pgid, sig);
    }
  }

  /// `sigs`, in turn, to the leader's group (signal_all's first part).
  void signal_group(std::initializer_list<int> sigs, bool leader_running = true, bool leader_termed = false) {
    for (int sig : sigs)
      if (sig != SIGTERM || !leader_termed)
        ::kill(-pid, sig);
    // A running leader may have left its group for another of our session (a
    // session's leader cannot): by its pid then, which is ours while it is unreaped.
    // Not as well when it is still there: a second TERM is a second signal.
    if (!session && leader_running && !leader_reaped_ && ::getpgid(pid) != pid)
      for (int sig : sigs)
        ::kill(pid, sig);
  }

  /// An abort reaches what left the group too: the session's other groups (`set -m`
  /// jobs; while one is left, no other session can have the leader's pid as id) and,
  /// by the mark, what left the session (setsid, double forks). Done by the next
  /// escape scan (one pass over /proc serves every abort waiting by then); what it
  /// signals is remembered, so the handle is gone only once that is.
  void signal_escaped(int sig);

  /// The escape scan's part for this process: `sig` to what `all` says left its group.
  void signal_escaped(int sig, const std::vector<MarkedProcess>& all) {
    bool inherited = sig == SIGKILL; // a nested jp-actors' tools: its TERM, our KILL
    auto kept = kept_daemons(daemons, all, [&](const MarkedProcess& p) { return left_group(p, inherited); });
    for (auto& p : all) {
      if (!left_group(p, inherited) || kept.count(p.stat.pid))
        continue;
      // A signal's shutdown TERMs whatever carries our marks itself (after the
      // program's aborts began): this abort's would be a second TERM. Still counted,
      // so the handle ends only once it is gone.
      bool termed = sig == SIGTERM && g_refuse_new.load() && mark_names(p.mark, mark, false);
      if (!signal_if_same(p.stat.pid, p.stat.start, termed ? 0 : sig))
        continue; // gone since the scan (or its pid another's now)
      if (!is_escaped(p.stat))
        escaped_.push_back(p.stat);
    }
    --escape_scans_pending_;
  }

  /// Whether `p` is this tool's and out of its group: its session's members or what
  /// carries its mark, if they descend from us (a mark copied elsewhere, or a session
  /// id reused since, names someone else's). The group's own are reached by kill(-pid).
  bool left_group(const MarkedProcess& p, bool inherited = true) const {
    // A session member that a nested jp-actors marked as its own tool gets its TERM
    // from that jp-actors (a second cuts its grace short); our KILL reaches it.
    bool member = p.stat.sid == pid && (inherited || p.mark.empty() || mark_names(p.mark, mark, false));
    return p.ours && (member || mark_names(p.mark, mark, inherited)) && p.stat.pgid != pid;
  }

  bool is_escaped(const ProcStat& st) const {
    return std::any_of(escaped_.begin(), escaped_.end(),
                       [&](const ProcStat& e) { return e.pid == st.pid && e.start == st.start; });
  }

  /// At a tool's own exit, once its group is empty: what it left running outside
  /// it (setsid, a double fork, `timeout 300 srv &`: timeout leads a group of its
  /// own) is named as kill_left names what it left in it, and killed; the exit is
  /// told once that is gone (reap_group: escaped_gone). Else the model is told
  /// nothing was left, and it runs on until jp-actors ends. Looked for again after
  /// each kill, a few times: one killed may have forked just before.
  void kill_escapes();

  /// Reaps what signal_escaped killed that was reparented to us; whether all is gone.
  bool escaped_gone() {
    std::erase_if(escaped_, [](const ProcStat& e) {
      auto now = read_proc_stat(e.pid);
      // Reaped only when it is still that process and ours: a pid reused by a
      // child of ours that just exited is its watcher's to reap, with its status.
      if (now && now->start == e.start && now->ppid == ::getpid() && ::waitpid(e.pid, nullptr, WNOHANG) == e.pid)
        now = read_proc_stat(e.pid);
      // Gone, or a zombie of someone else's (dead; its parent reaps it), or the pid reused.
      return !now || now->start != e.start || (now->state == 'Z' && now->ppid != ::getpid());
    });
    return escaped_.empty();
  }

  /// ~IoThread, thread stopped: drop every asio object before the io_context dies.
  void forget() {
    bool told_not_closed = finished && !gone_; // group_gone has run, let_go has not
    if (!leader_reaped_ || grace_kept_) // else freed at the exit, and perhaps another group's since
      remove_slot(slot, pid);
    pidfd_.reset();
    close_stdin_fd();
    forget_out_fds();
    out_.d.reset();
    err_.d.reset();
    ctl_.d.reset();
    grace_timer_.reset();
    reap_timer_.reset();
    interrupt_timer_.reset();
    close_stdin_probe();
    finished = true;
    if (told_not_closed)
      record_group_ended(pid, started.first, started.second); // reaped, only its let_go never ran
  }

private:
  /// Waits until the pipe has something to read (or EOF).
  void read_more(Stream& s) {
    s.reading = true;
    s.d->async_wait(descriptor::wait_read, [self = shared_from_this(), &s](error_code ec) {
      s.reading = false;
      self->on_readable(s, ec);
    });
  }

  /// Reads a chunk of `s` into the read buffer: what it read counts as
  /// unacknowledged until acked. The read under way counts in `reading_`: it empties
  /// the descriptor before the count has its bytes (output_unread).
  ssize_t read_chunk(Stream& s) {
    ++reading_;
    ssize_t n = ::read(s.d->native_handle(), read_buffer(), kReadSize);
    if (n > 0) {
      if (auto seam = g_output_read_seam.load())
        seam();
      unacked_ += static_cast<std::size_t>(n);
    }
    --reading_;
    return n;
  }

  /// Hands the chunk read_chunk read to the owner.
  void deliver(Stream& s, std::size_t n) { call_user(events_.on_output, s.kind, std::string_view(read_buffer(), n)); }

  void on_readable(Stream& s, error_code ec) {
    if (ec == asio::error::operation_aborted && !leader_reaped_) {
      s.done = true; // cancelled without an exit: being torn down
      return;
    }
    if (ec && ec != asio::error::operation_aborted) {
      s.done = true;
      maybe_finish();
      return;
    }
    pump(s);
  }

  /// Reads what the pipe has: until EAGAIN (then waits again), EOF, the owner falls
  /// behind (pauses until acks), or a few reads were done (yields, then goes on).
  void pump(Stream& s) {
    if (leader_reaped_) {
      drain(s); // take what is left, don't wait for EOF
      s.done = true;
      maybe_finish();
      return;
    }
    for (int i = 0; i < kReadsPerWakeup; ++i) {
      if (unacked_.load() >= kOutputAckLimit) {
        s.paused = true; // leave the rest in the pipe until the owner acks
        any_paused_ = true;
        if (unacked_.load() < kOutputAckLimit) // acked meanwhile, without seeing the pause
          asio::post(io.context(), [self = shared_from_this()] { self->resume_reading(); });
        return;
      }
      ssize_t n = read_chunk(s);
      if (n > 0) {
        if (s.until_big > 0) {
          s.until_big -= std::min(s.until_big, std::size_t(n));
          // A chatty tool (it wrote a first pipe's worth): a big pipe, fewer
          // wake-ups. Here, not at the spawn: most tools never write that much, and
          // the spawning thread does not wait for this. Failure (the user's pipe
          // limit) is harmless.
          if (s.until_big == 0)
            ::fcntl(s.d->native_handle(), F_SETPIPE_SZ, kPipeSize);
        }
        deliver(s, std::size_t(n));
        continue;
      }
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0 && errno == EAGAIN) {
        read_more(s);
        return;
      }
      s.done = true; // EOF (or an error): nothing more will come
      if (n == 0)
        call_user(events_.on_output_end, s.kind);
      maybe_finish();
      return;
    }
    s.reading = true; // a continuation is queued; on_leader_exit must not drain now
    asio::post(io.context(), [self = shared_from_this(), &s] {
      s.reading = false;
      if (!s.done)
        self->pump(s);
    });
  }

  /// Reads what is in the pipe now. Stops at EAGAIN too: a grandchild may still hold
  /// the write end, and we must not wait for its EOF.
  void drain(Stream& s) {
    std::size_t total = 0;
    while (total < kDrainCap) {
      ssize_t n = read_chunk(s);
      if (n > 0) {
        deliver(s, std::size_t(n));
        total += std::size_t(n);
      } else if (n < 0 && errno == EINTR) {
        continue;
      } else {
        break; // EOF, EAGAIN or an error
      }
    }
  }

  void on_leader_exit(error_code ec) {
    if (ec == asio::error::operation_aborted)
      return; // torn down by ~IoThread
    // The leader is a zombie, so its pid (our pgid) cannot be reused yet. After an
    // abort (the user asked: no news), kill the rest of its group (a pty's: its
    // session's every group) now, while the pgid still surely names it. Otherwise
    // stop it instead, to be named before it is killed (kill_left): what the command
    // left running in the background dies with it, and the model is told so, or it
    // believes its server runs. (A stopped group's id is not reused either: its
    // members hold it.)
    // A signal's shutdown TERMed the group before the program's abort came: the
    // grace is the shutdown's, which kills what is left at its end. (Taken for an
    // exit of its own, a wrapper's death of that TERM had the rest of its group, a
    // jp-actors run under `bash -c`, stopped and killed within milliseconds.)
    bool shutdown_termed = !terminating_ && slot < kSlots && g_termed[slot].load();
    bool name_left = !terminating_ && !shutdown_termed;
    // Aborted while its grace runs: the leader was a wrapper that died of the TERM
    // at once (bash, make, npm), and what it ran is cleaning up. The rest of the
    // group keeps the grace the TERM gave it; the grace's end kills what is left
    // (reap_group watches the group meanwhile, the members holding its id).
    bool in_grace = !session && ((terminating_ && grace_timer_ && !grace_over_) || shutdown_termed);
    grace_kept_ = in_grace;
    if (!in_grace) {
      signal_all({name_left ? SIGSTOP : SIGKILL}, false);
      if (terminating_)
        signal_escaped(SIGKILL); // aborted: no grace is left for what left the group
    }
    // Stopped members stay in the kill-all's reach (a signal to jp-actors) until they
    // are killed: they hold the pgid, so it names no one else meanwhile.
    if (!name_left && !in_grace)
      remove_slot(slot, pid);
    // A pty's session is named and killed before its leader is reaped: its other
    // groups' ids are its members', but nothing else keeps the leader's own group id
    // (the session's) from being reused once it is reaped, and kill_left signals it.
    if (name_left && session) {
      kill_left();
      remove_slot(slot, pid);
    }
    int status = 0;
    pid_t r;
    do
      r = ::waitpid(pid, &status, 0);
    while (r < 0 && errno == EINTR);
    if (r == pid && WIFSIGNALED(status)) {
      exit_.signaled = true;
      exit_.signal = WTERMSIG(status);
    } else if (r == pid) {
      exit_.code = WEXITSTATUS(status);
    } else {
      exit_.code = -1; // someone else reaped it (a stray waitpid(-1))
    }
    leader_reaped_ = true;
    if (name_left && !session) {
      kill_left();
      remove_slot(slot, pid);
    }
    if (grace_timer_ && !in_grace)
      grace_timer_->cancel();
    // Wake the readers: their handlers drain what is left (keeping chunk order) and
    // finish without waiting for EOF. A paused stream has no handler to wake: drain
    // it here, acked or not, so an owner that is behind still hears of the exit.
    for (Stream* s : {&out_, &err_, &ctl_}) {
      if (s->done)
        continue;
      if (s->reading) {
        s->d->cancel();
      } else if (s->paused) {
        s->paused = false;
        drain(*s);
        s->done = true;
      }
    }
    any_paused_ = false; // nothing reads on after the exit: acks need not post
    maybe_finish();
  }

  /// The leader is reaped (a pty's: not yet, a zombie); what was left in its group
  /// (a pty's: its session) was stopped at its exit (on_leader_exit). Nothing left
  /// (the common case: one system call, no scan): done. Else the members it stopped
  /// still hold the group's id, so the pid cannot be reused (the kernel hands out no
  /// pid that is a group's id) and kill(-pid) still names our group: stopped, they
  /// can neither exit nor fork nor leave it of themselves. They are listed (one pass
  /// over /proc), the first few named in the exit's news
  /// (ExitInfo::left_commands), and killed.
  void kill_left() {
    if (!session && ::kill(-pid, 0) != 0)
      return;
    // Not while the program shuts down (a signal's): it ends every group, so what
    // still runs of this one was not left behind by the command.
    if (g_refuse_new.load()) {
      signal_all({SIGKILL}, false);
      return;
    }
    std::vector<ProcStat> left;
    for (auto& p : session ? session_members(pid) : all_processes()) {
      if (!(session || p.pgid == pid) || p.pid == pid)
        continue;
      // A zombie was not running, nor one exiting (its command line gone); one we may
      // not signal (a setuid program) was neither stopped nor is killed. On a terminal
      // such a one may be a job the hangup of the leader's exit is ending (a server
      // started with `&`): told as left running if the hangup is what it dies of
      // (reap_group), not a subshell ending as it would have anyway.
      bool exiting = p.state == 'Z' || p.state == 'X' || read_proc_cmdline(p.pid, 1).empty();
      if (exiting && session)
        hangup_candidates_.emplace_back(p.pid, "[" + read_proc_comm(p.pid) + "]");
      else if (!exiting && ::kill(p.pid, 0) == 0)
        left.push_back(p);
    }
    std::sort(left.begin(), left.end(), started_before);
    for (std::size_t i = 0; i < left.size() && i < kLeftNamedMax; ++i)
      exit_.left_commands.push_back(command_shown(left[i].pid));
    exit_.left_running = left.size();
    signal_all({SIGKILL}, false); // wakes the stopped, to die; reap_group reaps them
  }

  void maybe_finish() {
    if (!leader_reaped_ || !out_.done || !err_.done || !ctl_.done || exit_delivered_)
      return;
    exit_delivered_ = true;
    exit_.input_unread = unread_input_bytes() + input_lost_;
    // on_exit waits until the rest of the group is reaped too (group_gone), so an
    // owner told "exited" never sees a process of that group still around. The
    // read ends and the pidfd are closed after it is told (group_gone): every
    // stream is done, and their closes need not delay the news.
    drop_stdin();
    reap_group();
  }

  void start_write() {
    if (!stdin_ || stdin_writing_)
      return;
    if (stdin_queue_.empty()) {
      if (stdin_close_requested_) {
        keep_stdin_probe();
        close_stdin_fd();
      }
      return;
    }
    stdin_writing_ = true;
    const auto& front = stdin_queue_.front();
    stdin_->async_write_some(
      asio::buffer(front.data() + stdin_offset_, front.size() - stdin_offset_),
      [self = shared_from_this()](error_code ec, std::size_t n) { self->on_written(ec, n); });
  }

  void on_written(error_code ec, std::size_t n) {
    stdin_writing_ = false;
    if (!stdin_)
      return; // dropped while this completion was queued; its bytes were uncounted then
    if (ec == asio::error::operation_aborted && drop_front_rest_)
      ec = {}; // cancelled for a terminal's Ctrl-C (write_stdin_dropping_queued), with n written
    if (ec) {
      // EPIPE: the child closed its stdin, nothing more can go in. (Or we closed.)
      if (ec == asio::error::broken_pipe) {
        stdin_gone = true;
        // What it never read, counted before it is dropped with the pipe: the input
        // the end's note tells of (it was past the pipe's 64 KiB, the note said nothing).
        input_lost_ += unread_input_bytes();
      }
      drop_stdin();
      return;
    }
    stdin_queued -= n;
    stdin_offset_ += n;
    if (std::exchange(drop_front_rest_, false)) { // a terminal's Ctrl-C came meanwhile
      stdin_queued -= stdin_queue_.front().size() - stdin_offset_;
      stdin_offset_ = stdin_queue_.front().size();
    }
    if (stdin_offset_ == stdin_queue_.front().size()) {
      stdin_queue_.pop_front();
      stdin_offset_ = 0;
    }
    start_write();
  }

  /// Bytes given to its input and not read: queued here, and in its pipe or held by
  /// its terminal (asked of a descriptor of the terminal's own side, as
  /// input_unread does).
  std::uint64_t unread_input_bytes() {
    // Under the lock: a caller's write (write_or_queue) counts what went in under it,
    // after the child may already have read it and ended.
    std::lock_guard lock(stdin_mtx);
    std::uint64_t n = stdin_queued.load();
    if (stdin_fd < 0)
      return n;
    int fd = session ? terminal_peer(stdin_fd) : stdin_fd;
    int held = 0;
    if (fd >= 0 && ::ioctl(fd, FIONREAD, &held) == 0 && held > 0)
      n += static_cast<std::uint64_t>(held);
    if (session && fd >= 0)
      ::close(fd);
    return n;
  }

  /// Nothing more goes in: close the pipe and uncount what will never be written.
  void drop_stdin() {
    drop_front_rest_ = false;
    close_stdin_fd(); // cancels a pending write before its buffer goes
    std::size_t left = 0;
    for (const auto& b : stdin_queue_)
      left += b.size();
    stdin_queued -= left - stdin_offset_;
    stdin_queue_.clear();
    stdin_offset_ = 0;
  }

  /// Leader reaped and its group killed: reap group members reparented to us (we are
  /// a subreaper) until the group is empty. No further kill here: after the leader is
  /// reaped the pgid could in theory name someone else's group.
  void reap_group() {
    int status;
    // Once the group was found empty its id is free, and may be another's by the
    // next try (waiting on what escaped it): it is not asked about again.
    if (!group_empty_) {
      for (pid_t reaped; (reaped = ::waitpid(-pid, &status, WNOHANG)) > 0;)
        note_hung_up(reaped, status);
      group_empty_ = ::kill(-pid, 0) != 0 && errno == ESRCH;
      if (group_empty_)
        remove_slot(slot, pid); // its id is free (listed on through an abort's grace)
    }
    bool empty = group_empty_;
    // Once found empty, its id is free, as the group's: not scanned for (and killed
    // by) again, while what escaped it keeps the exit waiting.
    if (session && !session_empty_) {
      // The session's other groups: members whose parent died are ours to reap now
      // (we are a subreaper); the session id cannot be reused while any is left.
      auto members = session_members(pid);
      for (auto& m : members) {
        // By its start: one whose parent is not us may be reaped by it and its pid
        // reused since the scan.
        if (m.state != 'Z')
          signal_if_same(m.pid, m.start, SIGKILL);
        if (::waitpid(m.pid, &status, WNOHANG) == m.pid)
          note_hung_up(m.pid, status);
      }
      session_empty_ = session_members(pid).empty();
    }
    empty = empty && (!session || session_empty_);
    // An abort (terminating_) reached what left the group already (signal_escaped);
    // a program that ends kills every tool's (kill_escaped_processes).
    if (empty && !escapes_looked_for_ && !terminating_ && !g_refuse_new.load()) {
      escapes_looked_for_ = true;
      if (escape_may_live(mark)) {
        kill_escapes();
        reap_tries_ = 0; // what it killed gets the whole wait, not what the group left of it
      }
    }
    empty = escape_scans_pending_ == 0 && escaped_gone() && empty;
    // While an abort's grace runs past the leader, the group has until its end (then
    // killed): not given up on before, and looked at less often.
    bool in_grace = grace_kept_ && !grace_over_;
    if (empty || (!in_grace && ++reap_tries_ > kReapTries)) {
      if (empty && grace_timer_) // an abort's grace kept past the leader's exit: nothing left to kill
        grace_timer_->cancel();
      group_gone();
      return;
    }
    if (!reap_timer_)
      reap_timer_.emplace(io.context());
    reap_timer_->expires_after(in_grace ? kGraceReapRetry : kReapRetry);
    reap_timer_->async_wait([self = shared_from_this()](error_code ec) {
      if (!ec)
        self->reap_group();
    });
  }

  /// A member kill_left found exiting, reaped: one the terminal's hangup ended is
  /// told as left running (ExitInfo::left_running), as a pipe's would be.
  void note_hung_up(pid_t reaped, int status) {
    auto it = std::find_if(hangup_candidates_.begin(), hangup_candidates_.end(),
                           [&](auto& c) { return c.first == reaped; });
    if (it == hangup_candidates_.end())
      return;
    if (WIFSIGNALED(status) && WTERMSIG(status) == SIGHUP) {
      if (exit_.left_commands.size() < kLeftNamedMax)
        exit_.left_commands.push_back(it->second);
      ++exit_.left_running;
    }
    hangup_candidates_.erase(it);
  }

  void group_gone();
  void let_go();

  ProcessEvents events_;
  ExitInfo exit_;
  bool leader_reaped_ = false;
  bool exit_delivered_ = false;
  std::uint64_t input_lost_ = 0; // io thread: input dropped unread when its reader closed the pipe (EPIPE)
  bool gone_ = false;
  bool terminating_ = false;
  std::atomic<int> reading_{0}; // a read_chunk under way: what it reads is counted after the read (output_unread)
  std::atomic<std::size_t> unacked_{0}; // output read and not yet acked (acked from any thread)
  std::atomic<bool> any_paused_{false};  // a stream waits for acks: an ack must wake the io thread
  int reap_tries_ = 0;
  std::vector<std::pair<pid_t, std::string>> hangup_candidates_; // kill_left's exiting members, named
  bool group_empty_ = false; // reap_group found the leader's group gone: its id is free since
  bool session_empty_ = false; // a pty's: its session's, likewise
  std::optional<asio::steady_timer> grace_timer_;
  bool grace_over_ = false; // its timer fired: what was left of the group was killed
  bool grace_kept_ = false; // the leader died in an abort's grace, which the rest of the group keeps
  std::optional<asio::steady_timer> reap_timer_;
  // Ctrl-Cs asked and not sent yet, in order: each waits for the input before it to
  // be read (input_read), until `by`.
  struct PendingInterrupt {
    uint64_t input_before;
    asio::steady_timer::time_point by;
  };
  std::deque<PendingInterrupt> interrupts_;
  std::optional<asio::steady_timer> interrupt_timer_;
  int stdin_probe_ = -1; // keep_stdin_probe's, while the group lives
  std::vector<std::function<void()>> on_gone_;
  std::vector<ProcStat> escaped_; // killed outside the group (an abort, kill_escapes), not yet gone
  int escape_scans_pending_ = 0;  // signal_escaped calls the scan has not served yet
  bool escapes_looked_for_ = false; // reap_group's look at its own exit (kill_escapes)

  std::deque<std::string> stdin_queue_;
  std::size_t stdin_offset_ = 0;
  bool stdin_writing_ = false;
  bool drop_front_rest_ = false; // the write under way ends its front: the rest is dropped
  bool stdin_close_requested_ = false;
};

// ---- registry of live groups (for ~IoThread)

struct Registry {
  std::mutex mtx;
  std::condition_variable cv;
  std::map<pid_t, std::shared_ptr<ProcState>> live; // until the group is gone
  // Gone, its owner told, its descriptors not yet closed (let_go is queued):
  // ~IoThread waits for these too, or its context would drop let_go with them open.
  std::vector<std::shared_ptr<ProcState>> closing;
};

Registry& registry() {
  static auto* r = new Registry; // leaked: must outlive static IoThreads
  return *r;
}

/// The pids of live tools, sorted: each leads its own group (the group id is its
/// pid) and perhaps its own session (the session id is its pid).
std::vector<pid_t> live_tools() {
  auto& reg = registry();
  std::lock_guard lock(reg.mtx);
  std::vector<pid_t> out;
  for (auto& [pid, st] : reg.live)
    out.push_back(pid);
  return out; // a std::map's keys: sorted
}

// ---- orphans: what we adopted as a subreaper reaped when it exits

std::atomic<bool> g_reap_own_session{false}; // reap_orphans_in_own_session

/// Our children now (every thread's: a child is its spawning thread's); from a pass
/// over /proc where the kernel lists no children (CONFIG_PROC_CHILDREN off).
std::vector<pid_t> own_children() {
  std::vector<pid_t> out;
  std::error_code ec;
  bool listed = false;
  for (auto& task : std::filesystem::directory_iterator("/proc/self/task", ec)) {
    std::ifstream in(task.path() / "children");
    listed = listed || in.is_open();
    for (pid_t pid; in >> pid;)
      out.push_back(pid);
  }
  if (!listed)
    for (auto& st : all_processes())
      if (st.ppid == ::getpid())
        out.push_back(st.pid);
  return out;
}

/// The children of our first thread: the kernel hands it what a dead process leaves
/// behind (we are a subreaper; a tool's leader is its spawning thread's child).
/// Read through a descriptor each io thread keeps open: one pread, not an open and a
/// close per look; every thread's (own_children) where the kernel lists none.
std::vector<pid_t> adopted_children() {
  struct Kept {
    int fd = -1;
    ~Kept() {
      if (fd >= 0)
        ::close(fd);
    }
  };
  thread_local Kept kept;
  // Opened again while it could not be (out of descriptors for a moment): not the
  // pass over /proc for good. A kernel that lists no children fails it each time, as
  // cheaply.
  if (kept.fd < 0)
    kept.fd = ::open(fmt::format("/proc/self/task/{}/children", ::getpid()).c_str(), O_RDONLY | O_CLOEXEC);
  char buf[4096];
  ssize_t n = kept.fd < 0 ? -1 : ::pread(kept.fd, buf, sizeof buf, 0);
  if (n < 0 || n == static_cast<ssize_t>(sizeof buf)) // unlisted, or more than fit
    return own_children();
  std::vector<pid_t> out;
  for (ssize_t i = 0; i < n;) {
    pid_t pid = 0;
    for (; i < n && buf[i] >= '0' && buf[i] <= '9'; ++i)
      pid = pid * 10 + (buf[i] - '0');
    if (pid > 0)
      out.push_back(pid);
    for (; i < n && (buf[i] < '0' || buf[i] > '9'); ++i) {
    }
  }
  return out;
}

bool escape_may_live(const std::string& mark) {
  // Asked once the tool's group is empty: every ancestor such a process had in it
  // is gone, so the eldest of them still alive is our child now, with the mark. The
  // common exit has no child of ours but live tools: one pread, no pass over /proc
  // (W1 pays that pread, ≈ 1-5 us).
  auto children = adopted_children();
  if (children.empty())
    return false;
  auto leaders = live_tools();
  return std::any_of(children.begin(), children.end(), [&](pid_t c) {
    return !std::binary_search(leaders.begin(), leaders.end(), c) && mark_names(mark_of(c), mark);
  });
}

void ProcState::kill_escapes() {
  auto leaders = live_tools();
  std::erase(leaders, pid); // its own session's members are read: they are not a live tool's
  for (int pass = 0; pass < kEscapeKillPasses; ++pass) {
    std::vector<ProcStat> found;
    // By its mark only: the group (and a pty's session) is empty, so its id may be
    // another's by now (left_group's session test is the abort's, while it is not).
    auto all = processes_with_marks(leaders);
    auto ours = [this](const MarkedProcess& p) { return p.ours && mark_names(p.mark, mark); };
    auto kept = kept_daemons(daemons, all, ours);
    for (auto& p : all)
      if (ours(p) && !is_escaped(p.stat) && !kept.count(p.stat.pid))
        found.push_back(p.stat);
    if (found.empty())
      return;
    std::sort(found.begin(), found.end(), started_before);
    for (auto& st : found) {
      // One exiting (its command line gone: a double fork's middle) was not left
      // running, as in kill_left: waited for, not told. Named before the kill.
      bool exiting = read_proc_cmdline(st.pid, 1).empty();
      auto shown = !exiting && exit_.left_commands.size() < kLeftNamedMax ? command_shown(st.pid) : std::string();
      if (!signal_if_same(st.pid, st.start, SIGKILL))
        continue; // gone since the scan
      escaped_.push_back(st);
      if (exiting)
        continue;
      if (!shown.empty())
        exit_.left_commands.push_back(std::move(shown));
      ++exit_.left_running;
    }
  }
}

thread_local bool t_orphan_reap_due = false;
// What left a tool's group (setsid, a double fork, a job of its own) and was handed
// to us when its parent died is reaped within about this long of its exit, not when
// jp-actors ends (a long mcp, node or query session gathered zombies): a pass runs
// this long after a tool starts or a group exits, and again while a tool or such a
// process still lives (a handle double-forking helpers as it runs made hundreds a
// second, reaped only when some group ended).
constexpr auto kOrphanReapDelay = std::chrono::seconds(1);

void schedule_orphan_reap(IoThread& io);

/// Reaps our zombie children that lead no live tool and are not in our own group
/// (nor our session, unless reap_orphans_in_own_session): what a program embedding
/// us forks itself stays there, its own to reap. Whether one such still lives.
bool reap_orphans() {
  auto children = own_children();
  // A spawn under way may have a leader not yet registered: next time (a spawn
  // that starts after this check makes a pid not among `children`).
  if (g_spawns_under_way.load() > 0)
    return true;
  auto leaders = live_tools();
  auto self_pgid = ::getpgrp(), self_sid = ::getsid(0);
  bool own_session = g_reap_own_session.load();
  bool living = false;
  for (auto pid : children) {
    if (std::binary_search(leaders.begin(), leaders.end(), pid))
      continue;
    auto st = read_proc_stat(pid);
    if (!st || st->ppid != ::getpid() || st->pgid == self_pgid || (!own_session && st->sid == self_sid))
      continue;
    if (st->state == 'Z')
      ::waitpid(pid, nullptr, WNOHANG);
    else
      living = true;
  }
  return living;
}

void schedule_orphan_reap(IoThread& io) {
  if (t_orphan_reap_due)
    return;
  t_orphan_reap_due = true;
  auto timer = std::make_shared<asio::steady_timer>(io.context(), kOrphanReapDelay);
  timer->async_wait([timer, &io](error_code ec) {
    t_orphan_reap_due = false;
    // One still lives, or a tool that may hand us more: its exit is looked for too.
    if (!ec && (reap_orphans() || !live_tools().empty()))
      schedule_orphan_reap(io);
  });
}

// ---- escape scans: one pass over /proc serves every abort queued on the io thread

struct EscapeRequest {
  std::shared_ptr<ProcState> st;
  int sig;
};
// Per io thread: requests are made and served only there.
thread_local std::vector<EscapeRequest> t_escape_requests;
thread_local std::chrono::steady_clock::time_point t_last_escape_scan;
// A scan reads every process's stat: aborts in a burst (a turn end, a thousand
// handles) share scans at most this often instead of each paying for its own.
constexpr auto kEscapeScanInterval = std::chrono::milliseconds(20);

std::vector<pid_t> live_tools(); // the registry's, below

void run_escape_scan() {
  auto requests = std::move(t_escape_requests);
  t_escape_requests.clear();
  t_last_escape_scan = std::chrono::steady_clock::now();
  // The live tools themselves, and the processes in a session one leads (found by
  // their session): their environment need not be read (that is what costs).
  auto all = processes_with_marks(live_tools());
  for (auto& r : requests)
    r.st->signal_escaped(r.sig, all);
}

void ProcState::signal_escaped(int sig) {
  ++escape_scans_pending_;
  bool scheduled = !t_escape_requests.empty();
  t_escape_requests.push_back({shared_from_this(), sig});
  if (scheduled)
    return;
  auto timer = std::make_shared<asio::steady_timer>(io.context(), t_last_escape_scan + kEscapeScanInterval);
  timer->async_wait([timer](error_code ec) {
    if (!ec)
      run_escape_scan();
  });
}

void ProcState::group_gone() {
  // Nothing is left for a request to do (stdin was dropped with the exit, the group
  // is reaped): set before the owner hears of the exit, so that dropping its handle
  // then posts no kill to this thread.
  finished = true;
  auto self = shared_from_this(); // the registry may hold the last other reference
  // Out of the live count before anyone is told: an owner that hears "exited" or
  // "gone" and then counts live groups must not count this one.
  auto& reg = registry();
  {
    std::lock_guard lock(reg.mtx);
    reg.live.erase(pid);
    reg.closing.push_back(self);
  }
  reg.cv.notify_all();
  // Moved out: the callbacks may hold the user's handle, which holds us.
  auto events = std::move(events_);
  events_ = {};
  if (events.on_exit)
    call_user(events.on_exit, exit_);
  // The rest once what the news made ready on this thread has run: the owner's
  // actors, and the next call and its spawn, when they run here (io_thread_send:
  // drain() is posted already). Its descriptors' closes (an epoll deregistration
  // and a close each) and the crash record's line are then not on the path from
  // this exit to the next child (perf sched of W1: 7 system calls, ≈ 11 us here).
  io.post([self] { self->let_go(); });
}

/// Its descriptors closed, then "gone" told: "gone" means nothing of it is left
/// open either.
void ProcState::let_go() {
  forget_out_fds();
  out_.d.reset();
  err_.d.reset();
  ctl_.d.reset();
  pidfd_.reset();
  grace_timer_.reset();
  reap_timer_.reset();
  interrupt_timer_.reset();
  close_stdin_probe();
  gone_ = true;
  auto callbacks = std::move(on_gone_);
  on_gone_.clear();
  for (auto& f : callbacks)
    call_user(f);
  // A crash before this line leaves a record of a group that is gone: the sweep
  // skips it.
  record_group_ended(pid, started.first, started.second);
  schedule_orphan_reap(io);
  auto& reg = registry();
  {
    std::lock_guard lock(reg.mtx);
    std::erase_if(reg.closing, [this](auto& st) { return st.get() == this; }); // the post holds us
  }
  reg.cv.notify_all();
}

/// The user's handle. Dropping the last one kills a still running group.
class ProcessHandle final : public Process {
public:
  explicit ProcessHandle(std::shared_ptr<ProcState> st) : st_(std::move(st)) {}

  ~ProcessHandle() override {
    if (!st_->finished)
      st_->io.post([st = st_] { st->kill_now(); });
  }

  pid_t pid() const override { return st_->pid; }

  bool write_stdin(std::string bytes) override {
    if (st_->finished || !st_->has_stdin || bytes.empty() || st_->stdin_closing)
      return true; // dropped, as the io thread would (after a close: it may not have closed yet)
    if (!st_->reserve_stdin(bytes.size()))
      return false;
    st_->write_or_queue(std::move(bytes));
    return true;
  }

  bool write_stdin_dropping_queued(std::string bytes) override {
    if (st_->finished || !st_->has_stdin || bytes.empty() || st_->stdin_closing)
      return true;
    // A full queue is when a Ctrl-C is needed most: it goes in, the queue is dropped.
    st_->reserve_stdin(bytes.size(), true);
    st_->io.post([st = st_, b = std::move(bytes)]() mutable { st->write_stdin_dropping_queued(std::move(b)); });
    return true;
  }

  std::size_t stdin_queued() const override { return st_->stdin_queued.load(); }
  std::optional<TerminalModes> terminal_modes() const override { return st_->terminal_modes(); }
  std::optional<InputFile> input_file() const override { return st_->input_file; }
  bool input_unread() const override { return st_->input_unread(); }
  bool output_unread() const override { return st_->output_unread(); }

  bool input_closed() const override { return st_->stdin_gone.load(); }

  void ack(std::size_t bytes) override {
    if (!st_->finished && bytes > 0)
      st_->ack(bytes);
  }

  void close_stdin() override {
    st_->stdin_closing = true;
    if (!st_->finished)
      st_->io.post([st = st_] { st->close_stdin(); });
  }

  void resize(int rows, int cols) override {
    if (!st_->finished)
      st_->io.post([st = st_, rows, cols] { st->resize(rows, cols); });
  }

  void interrupt() override {
    if (st_->finished)
      return;
    ++st_->interrupts_pending;
    st_->io.post([st = st_, before = st_->stdin_accepted.load()] { st->interrupt(before); });
  }

  bool interrupt_pending() const override { return st_->interrupts_pending.load() > 0; }

  void resume() override {
    if (st_->finished)
      return;
    st_->io.post([st = st_] { st->resume(); });
  }

  void terminate(std::chrono::milliseconds grace, std::function<void()> on_gone) override {
    if (!on_gone && st_->finished)
      return; // nothing to signal, nobody to tell (a handle quitting after its exit)
    st_->io.post([st = st_, grace, f = std::move(on_gone)]() mutable {
      st->terminate(grace, std::move(f));
    });
  }

private:
  std::shared_ptr<ProcState> st_;
};

/// Hands `fd` over to the io thread's context. A pipe's end is made non-blocking
/// through Asio (our own reads and writes need it, and Asio, told so, does not set
/// it again); the pidfd is left to Asio.
bool wrap(IoThread& io, std::optional<descriptor>& d, Fd& fd, error_code& ec, bool pipe = true) {
  d.emplace(io.context());
  d->assign(fd.fd, ec);
  if (ec)
    return false;
  fd.release();
  if (pipe)
    d->non_blocking(true, ec);
  return !ec;
}

} // namespace

std::string ExitInfo::describe() const {
  if (!signaled)
    return "exit status " + std::to_string(code);
  std::string text = "killed by signal " + std::to_string(signal);
  if (const char* abbrev = ::sigabbrev_np(signal))
    text += std::string(" (SIG") + abbrev + ")";
  // Sent by the kernel at a resource limit (runtime.tool_limits, or the user's own).
  if (signal == SIGXCPU)
    text += ": it used up its CPU time limit";
  else if (signal == SIGXFSZ)
    text += ": it wrote past its file size limit";
  return text;
}

namespace {

/// Whether a start failed for want of what other tools' ends give back: file
/// descriptors, processes, memory (a retry may start it).
bool wanted_resource(int err) {
  return err == EMFILE || err == ENFILE || err == EAGAIN || err == ENOMEM;
}

} // namespace

Result<std::shared_ptr<Process>> spawn_process(IoThread& io, SpawnSpec spec, ProcessEvents events, bool* transient) {
  if (transient)
    *transient = false;
  auto lacking = [transient](int err) {
    if (transient)
      *transient = wanted_resource(err);
    return err;
  };
  if (spec.argv.empty())
    return Error{"cannot start a process: empty command"};
  // Counted before the check (both seq_cst): refuse_new_processes either sees this
  // spawn under way and waits for its slot, or this spawn sees the refusal.
  ++g_spawns_under_way;
  struct Settled {
    ~Settled() { --g_spawns_under_way; }
  } settled;
  if (g_refuse_new.load())
    return Error{"not started: jp-actors is ending (it got a terminate signal)"};
  const std::string prog = spec.argv[0];
  auto mark = next_tool_mark();
  spec.env.push_back(std::string(kToolMarkVariable) + "=" + tool_mark_value(mark));

  Fd in_r, in_w, out_r, out_w, err_r, err_w, ctl_r, ctl_w;
  std::string terminal; // the pty's slave side, for the child to open
  if (spec.pty) {
    // out_r is the master: the child's output comes from it, input goes to a dup.
    out_r.fd = ::posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
    char name[128];
    if (out_r.fd < 0 || ::grantpt(out_r.fd) != 0 || ::unlockpt(out_r.fd) != 0 ||
        ::ptsname_r(out_r.fd, name, sizeof name) != 0)
      return Error{"cannot start '" + prog + "': pseudo-terminal: " + errno_text(lacking(errno))};
    terminal = name;
    struct winsize ws{};
    ws.ws_row = static_cast<unsigned short>(spec.rows);
    ws.ws_col = static_cast<unsigned short>(spec.cols);
    ::ioctl(out_r.fd, TIOCSWINSZ, &ws);
    in_w.fd = ::fcntl(out_r.fd, F_DUPFD_CLOEXEC, 0);
    if (in_w.fd < 0)
      return Error{"cannot start '" + prog + "': pseudo-terminal: " + errno_text(lacking(errno))};
    // The terminal is libvterm's (an xterm); the tool's own env may still say otherwise.
    spec.env.insert(spec.env.begin(), "TERM=xterm-256color");
  } else if (!make_pipe(out_r, out_w) || !make_pipe(err_r, err_w) ||
             (spec.control_channel && !make_pipe(ctl_r, ctl_w)) ||
             (spec.stdin_pipe && !make_pipe(in_r, in_w))) {
    return Error{"cannot start '" + prog + "': pipe: " + errno_text(lacking(errno))};
  }

  // The child: its own process group, no signal blocked or handled, our pipe ends
  // (or the pty) as 0-2 and the control channel as 3. Its own session too when it
  // has a pty (its controlling terminal) or we have a controlling terminal, which it
  // would inherit (/dev/tty: our prompts, our user's keys). Without one, a group of
  // its own keeps it as far from any terminal, and setsid's scheduler group (made
  // and freed per child: W1 on the quiet machine, the floor's session_mean_us
  // against its mean_us) is not paid.
  ChildLaunch launch;
  launch.session = spec.pty || g_always_session.load(std::memory_order_relaxed) || has_controlling_terminal();
  launch.argv = spec.argv;
  launch.env = spawn_environment(spec.env, spec.env_pass, spec.env_drop);
  launch.cwd = spec.cwd;
  launch.terminal = terminal;
  launch.in = spec.stdin_pipe ? in_r.fd : -1;
  launch.out = out_w.fd;
  launch.err = err_w.fd;
  launch.control = spec.control_channel && !spec.pty ? ctl_w.fd : -1;
  launch.want_pidfd = true;
  launch.limits = resource_limits(spec.limits);
  launch.limits_required = spec.limits.any();
  // The child's start time lies between these: the crash-sweep record says so at
  // once, without reading /proc (which waits while the child is still in execve).
  auto earliest = boot_ticks_now();
  auto launched = launch_child(launch, g_launcher.load());
  if (launched.error != 0)
    return Error{spawn_error(spec, lacking(launched.error))};
  pid_t pid = launched.pid;
  Fd pidfd; // ours to close, whatever happens below
  pidfd.fd = launched.pidfd;

  auto slot = add_slot(pid);
  auto latest = boot_ticks_now();
  record_group_started(pid, earliest, latest);
  in_r.reset();
  out_w.reset();
  err_w.reset();
  ctl_w.reset();
  // Give up on a child we cannot watch: kill and reap it right here.
  auto abandon = [&](const std::string& what, int err) -> Error {
    ::kill(-pid, SIGKILL);
    remove_slot(slot, pid); // before the reap: the pgid names no other group while it is listed
    while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
    }
    return Error{"cannot watch '" + prog + "': " + what + ": " + errno_text(lacking(err))};
  };
  if (pidfd.fd < 0)
    return abandon("pidfd_open", launched.pidfd_error);

  bool has_stdin = spec.stdin_pipe || spec.pty;
  auto st = std::make_shared<ProcState>(io, pid, slot, has_stdin, spec.pty, std::move(mark), std::move(events));
  st->started = {earliest, latest};
  st->server = spec.server;
  st->daemons = std::move(spec.daemons);
  error_code ec;
  if (!wrap(io, st->pidfd_, pidfd, ec, false) || !wrap(io, st->out_.d, out_r, ec) ||
      (!spec.pty && !wrap(io, st->err_.d, err_r, ec)) ||
      (has_stdin && !wrap(io, st->stdin_, in_w, ec)) ||
      (spec.control_channel && !spec.pty && !wrap(io, st->ctl_.d, ctl_r, ec)))
    return abandon("io_context", ec.value());
  if (st->stdin_) {
    st->stdin_fd = st->stdin_->native_handle();
    // The child's side: a pipe's two ends are one file; a terminal's is its peer.
    int side = spec.pty ? terminal_peer(st->stdin_fd) : st->stdin_fd;
    struct stat s{};
    if (side >= 0 && ::fstat(side, &s) == 0)
      st->input_file = InputFile{static_cast<uint64_t>(s.st_dev), static_cast<uint64_t>(s.st_ino)};
    if (spec.pty && side >= 0)
      ::close(side);
  }
  st->out_fds = {st->out_.d->native_handle(), st->err_.d ? st->err_.d->native_handle() : -1};

  st->err_.done = spec.pty; // a terminal has one stream
  st->out_.until_big = st->err_.until_big = spec.pty ? 0 : kFirstPipeSize; // a terminal is no pipe
  st->ctl_.done = !spec.control_channel || spec.pty;
  {
    auto& reg = registry();
    std::lock_guard lock(reg.mtx);
    reg.live[pid] = st;
  }
  io.post([st] { st->start(); });
  return std::shared_ptr<Process>(std::make_shared<ProcessHandle>(std::move(st)));
}

void kill_all_process_groups() noexcept {
  signal_all_process_groups(SIGKILL);
}

void signal_all_process_groups(int sig) noexcept {
  for (auto& slot : g_slots) {
    pid_t pgid = slot.load();
    if (pgid > 0)
      ::kill(-pgid, sig);
  }
}

void terminate_all_process_groups() noexcept {
  for (std::size_t at = 0; at < kSlots; ++at) {
    pid_t pgid = g_slots[at].load();
    if (pgid > 0 && !g_termed[at].exchange(true))
      ::kill(-pgid, SIGTERM);
  }
}

std::vector<pid_t> live_tool_pids() {
  return live_tools();
}

bool any_process_group_alive() noexcept {
  for (auto& slot : g_slots)
    if (slot.load() > 0)
      return true;
  return false;
}

void on_output_read(void (*seam)()) noexcept {
  g_output_read_seam.store(seam);
}

void use_launcher(launcher_kind kind) noexcept {
  g_launcher.store(kind);
}

void use_own_sessions(bool always) noexcept {
  g_always_session.store(always);
}

void reap_orphans_in_own_session(bool own_session) noexcept {
  g_reap_own_session.store(own_session);
}

bool new_processes_refused() noexcept {
  return g_refuse_new.load();
}

void refuse_new_processes() noexcept {
  g_refuse_new.store(true);
  auto deadline = std::chrono::steady_clock::now() + kSpawnSettle;
  while (g_spawns_under_way.load() > 0 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

namespace detail {

namespace {
std::vector<std::shared_ptr<ProcState>> watched_by(IoThread& io, bool remove) {
  auto& reg = registry();
  std::lock_guard lock(reg.mtx);
  std::vector<std::shared_ptr<ProcState>> found;
  for (auto it = reg.live.begin(); it != reg.live.end();) {
    if (&it->second->io == &io) {
      found.push_back(it->second);
      if (remove) {
        it = reg.live.erase(it);
        continue;
      }
    }
    ++it;
  }
  for (auto& st : reg.closing)
    if (&st->io == &io)
      found.push_back(st);
  if (remove)
    std::erase_if(reg.closing, [&](auto& st) { return &st->io == &io; });
  return found;
}
} // namespace

void kill_watched_processes(IoThread& io) noexcept {
  auto mine = watched_by(io, false);
  if (mine.empty())
    return;
  io.post([mine] {
    for (auto& st : mine)
      st->kill_now();
  });
  if (io.on_this_thread())
    return; // cannot wait for ourselves
  mine.clear();
  auto& reg = registry();
  std::unique_lock lock(reg.mtx);
  reg.cv.wait_for(lock, kShutdownWait, [&] {
    for (auto& [pid, st] : reg.live)
      if (&st->io == &io)
        return false;
    return std::none_of(reg.closing.begin(), reg.closing.end(), [&](auto& st) { return &st->io == &io; });
  });
}

void forget_watched_processes(IoThread& io) noexcept {
  for (auto& st : watched_by(io, true))
    st->forget();
}

} // namespace detail

} // namespace jp

namespace jp {

size_t live_process_group_count() {
  auto& reg = registry();
  std::lock_guard lock(reg.mtx);
  return reg.live.size();
}

size_t live_handle_group_count() {
  auto& reg = registry();
  std::lock_guard lock(reg.mtx);
  return static_cast<size_t>(std::count_if(reg.live.begin(), reg.live.end(), [](auto& e) { return !e.second->server; }));
}

} // namespace jp
