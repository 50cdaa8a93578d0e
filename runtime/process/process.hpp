// Child processes, owned: each runs in its own process group (and session, when we have a
// controlling terminal it must not reach, or it has a terminal of its own); all of its I/O and
// its exit are watched on the one io thread (io_thread.hpp); the owner hears about
// it through callbacks invoked on that thread. No CAF here, so the process layer
// can be tested and benchmarked on its own.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <sys/types.h>
#include <vector>

#include "../../messages/result.hpp"
#include "child_launch.hpp"
#include "input_wait.hpp"

namespace jp {

/// How long a pipe tool's Ctrl-C waits at most for the input before it to be read.
inline constexpr std::chrono::milliseconds kInterruptWait{1000};

class IoThread;

struct SpawnSpec {
  std::vector<std::string> argv;     // argv[0] is looked up in PATH if it has no '/'
  std::string cwd;                   // "" = inherit
  std::vector<std::string> env;      // "KEY=VALUE" added to / overriding the parent's
  bool stdin_pipe = false;           // false: stdin is /dev/null
  bool control_channel = false;      // fd 3: a pipe the tool writes ToolState lines to
  // A pseudo-terminal instead of pipes: the child leads a new session with the
  // terminal as its controlling tty on 0/1/2; its output (stdout and stderr alike)
  // arrives as stream_kind::out, write_stdin types into it. TERM defaults to
  // xterm-256color.
  bool pty = false;
  int rows = 24;
  int cols = 80;
  // The parent's variables are inherited without secrets (runtime/process/tool_environment.hpp):
  // these names pass anyway, and these are left out whatever they are called.
  std::vector<std::string> env_pass;
  std::vector<std::string> env_drop;
  // A server jp-actors talks to itself (an MCP server), not a tool's: no handle's
  // group, so live_handle_group_count leaves it out.
  bool server = false;
  // Kernel resource limits the child and all it starts get (resource_limit.hpp).
  ToolLimits limits;
  // Names of daemons (runtime.daemons, kept_daemons.hpp): one that left the group,
  // and what it started, is left running at the exit and the abort (one still in the
  // group is not: that is killed).
  std::vector<std::string> daemons;
};

/// ExitInfo::left_commands: how many are named, and how long each may be.
inline constexpr std::size_t kLeftNamedMax = 3;
inline constexpr std::size_t kLeftCommandMax = 80;

/// How a process ended.
struct ExitInfo {
  bool signaled = false;
  int code = 0;   // exit status when !signaled
  int signal = 0; // signal number when signaled
  /// Processes of its group still running when it exited, killed then (nothing
  /// outlives its handle): how many, and the command lines of the first few
  /// (kLeftNamedMax, oldest first, each one line of at most kLeftCommandMax bytes,
  /// control characters escaped). Never set for an abort's kill (terminate), nor
  /// for a pty's session.
  std::size_t left_running = 0;
  std::vector<std::string> left_commands;
  /// Bytes given to its input that it never read (queued, in its pipe, or held by its
  /// terminal when it ended): they went nowhere.
  std::uint64_t input_unread = 0;
  bool success() const { return !signaled && code == 0; }
  /// "exit status 3" / "killed by signal 9 (SIGKILL)"
  std::string describe() const;
};

enum class stream_kind { out, err, control };

/// Output flow control: the owner acknowledges (Process::ack) the bytes it has
/// consumed of what on_output delivered. Once this many bytes are unacknowledged,
/// no more output is read from the child until acks bring it below, so the child's
/// writes block on a full pipe instead of piling up in the owner's memory. At most
/// one chunk (kOutputChunkMax) per stream is delivered beyond it. When the leader exits, what
/// is left in the pipes is still delivered (bounded), acknowledged or not, and then
/// on_exit: an owner that never acks stalls the child's output, never its exit.
inline constexpr std::size_t kOutputAckLimit = 4u << 20;

/// The largest chunk on_output delivers: a whole pipe buffer, so a fast writer
/// costs few reads and few messages.
inline constexpr std::size_t kOutputChunkMax = 1u << 20;

/// write_stdin refuses input that would leave more than this many bytes queued and
/// not yet written to the child's stdin pipe.
inline constexpr std::size_t kStdinQueueLimit = 16u << 20;

/// Callbacks, all invoked on the io thread, in order: every output chunk a process
/// wrote before it exited is delivered before on_exit. on_exit is called exactly once.
struct ProcessEvents {
  std::function<void(stream_kind, std::string_view)> on_output;
  std::function<void(const ExitInfo&)> on_exit;
  /// A stream read to its end (EOF) before the child's exit was seen: the child (or
  /// what shares the stream) closed it, or is exiting. Not told after the exit.
  std::function<void(stream_kind)> on_output_end;
};

/// One running child. Methods may be called from any thread; they hand the work to
/// the io thread, which must outlive such calls. Destroying the last reference to a
/// process that still runs kills its group (also fine after the IoThread is gone).
class Process {
public:
  virtual ~Process() = default;
  virtual pid_t pid() const = 0;  // also the process group id
  /// Queue bytes for stdin. Never blocks, even when the child does not read. Returns
  /// false, queueing nothing, when the bytes queued and not yet written would then
  /// exceed kStdinQueueLimit (checked on the caller's thread). Without a stdin pipe,
  /// after close_stdin, or once the child closed its stdin, the bytes are dropped
  /// (true: nothing was refused).
  virtual bool write_stdin(std::string bytes) = 0;
  /// As write_stdin, but what write_stdin queued before and is not written yet is
  /// dropped first (a write under way ends with the part it is writing), and what a
  /// terminal holds unread: a terminal's Ctrl-C, with which the kernel drops what
  /// the program has not read. Returns false, queueing and dropping nothing, as
  /// write_stdin does.
  virtual bool write_stdin_dropping_queued(std::string bytes) = 0;
  /// Bytes passed to write_stdin and not yet written to the pipe (or dropped).
  virtual std::size_t stdin_queued() const = 0;
  /// A terminal's modes now, as its program set them (nullopt: no terminal, or its
  /// input is closed).
  struct TerminalModes {
    bool lines = true;   // ICANON: the program reads whole lines, at most 4095 bytes each
    bool signals = true; // ISIG without NOFLSH, VINTR Ctrl-C: it is SIGINT, and drops the unread input
  };
  virtual std::optional<TerminalModes> terminal_modes() const = 0;
  /// What the child's stdin is (its pipe, or its terminal), as it was started: a read
  /// of it is a read of the tool's input, whatever its fd 0 is by now (none: no
  /// stdin of ours).
  virtual std::optional<InputFile> input_file() const = 0;
  /// Whether input given to the tool is still to be read by it: queued here, in its
  /// stdin pipe, or held by its terminal for its reader (a whole line where the
  /// terminal hands lines over). A tool in that state is not waiting for input,
  /// whatever its prompt or its blocked read says (the read is about to return).
  virtual bool input_unread() const = 0;
  /// Whether output the tool wrote is still to be taken by the owner (not acked, or
  /// still in its pipes or held by its terminal): what it said last is not seen yet.
  virtual bool output_unread() const = 0;
  /// The child closed its stdin: a write found no reader (EPIPE), so that write and
  /// every later one were dropped. Known at the first write after the close: one
  /// that went into the pipe at once (nothing queued before it) is refused at once.
  virtual bool input_closed() const = 0;
  virtual void close_stdin() = 0;
  /// The owner consumed `bytes` more of the output delivered through on_output (see
  /// kOutputAckLimit). Any thread; no-op once the process is finished.
  virtual void ack(std::size_t bytes) = 0;
  /// A terminal's new size (pty only; the foreground job gets SIGWINCH).
  virtual void resize(int rows, int cols) = 0;
  /// Ctrl-C without a terminal: SIGINT to the group, once the tool has read what
  /// write_stdin queued before it, or after kInterruptWait (a signal must get through
  /// to a tool that reads nothing). No-op once the leader is gone.
  virtual void interrupt() = 0;
  /// An interrupt() whose SIGINT has not gone out yet (nor been dropped: the leader
  /// gone, the group being ended). Any thread.
  virtual bool interrupt_pending() const = 0;
  /// SIGCONT to the group (a pty's: every group of its session), as a shell's `fg`:
  /// a tool stopped by SIGSTOP runs on.
  virtual void resume() = 0;
  /// SIGTERM to the group, then SIGKILL to the group after `grace`; `on_gone` runs
  /// (io thread) once the leader is reaped and no process of the group is left.
  /// For a pty, "the group" is every group of its session (shell jobs included),
  /// and SIGHUP goes with the SIGTERM, as when a terminal closes.
  /// What left the group (other groups of its session, and by its mark what left the
  /// session: setsid, double forks) gets the same signals, and on_gone waits for it.
  /// With no on_gone, a group already gone costs nothing (no post to the io thread).
  virtual void terminate(std::chrono::milliseconds grace, std::function<void()> on_gone) = 0;
};

/// Starts a child in its own process group, leading its own session when it has a
/// pty or we have a controlling terminal (child_launch.hpp, controlling_terminal.hpp),
/// marked (runtime/process/tool_mark.hpp), and watches it on `io`. When the leader exits, any process left in its group is
/// killed (nothing outlives its handle; on_exit's ExitInfo says what was) and the pipes are drained.
/// `transient` (optional) is set when it failed for want of what other tools' ends
/// give back (file descriptors, processes, memory: EMFILE, ENFILE, EAGAIN, ENOMEM),
/// so that a retry may start it.
Result<std::shared_ptr<Process>> spawn_process(IoThread& io, SpawnSpec spec, ProcessEvents events,
                                               bool* transient = nullptr);

/// Signal-safe: SIGKILL every live process group started by spawn_process.
void kill_all_process_groups() noexcept;

/// Signal-safe: send `sig` to every live process group started by spawn_process.
void signal_all_process_groups(int sig) noexcept;
/// SIGTERM to every live group that has had none (an abort's TERM counts): a shutdown
/// beginning while the program aborts its handles sends no group a second one.
/// Async-signal-safe.
void terminate_all_process_groups() noexcept;

/// The pids of the live tools, sorted (each leads its own group). Not signal-safe.
std::vector<pid_t> live_tool_pids();

/// Signal-safe: whether a process group started by spawn_process is still alive.
bool any_process_group_alive() noexcept;

/// jp-actors is ending (a signal): spawn_process starts nothing new from now on.
/// Returns once every spawn under way has put its group where the functions above
/// find it (bounded: a few seconds), so a child started as the signal landed is not
/// missed. Not signal-safe (it waits).
void refuse_new_processes() noexcept;

/// Whether refuse_new_processes() was called: jp-actors is ending on a signal, and
/// every tool's group gets its SIGTERM from that, not from its handle's abort.
bool new_processes_refused() noexcept;

/// How many process groups started by spawn_process are still alive.
size_t live_process_group_count();

/// How many of them are tools' (handles'): those of servers (SpawnSpec::server) left out.
size_t live_handle_group_count();

/// Tests only: `seam` runs on the io thread after each read of a tool's output, with
/// the bytes out of their descriptor and not yet delivered (nullptr: none). Where
/// Process::output_unread must still tell them.
void on_output_read(void (*seam)()) noexcept;

/// How spawn_process starts children from now on (child_launch.hpp); the
/// benchmark compares them.
void use_launcher(launcher_kind kind) noexcept;

/// From now on every child leads its own session (`always`), or only those with a
/// pty or started while we have a controlling terminal (the default); the
/// benchmark compares the two (`bench/run --child-session`).
void use_own_sessions(bool always) noexcept;

/// What exited after leaving a tool's group is reaped (we are a subreaper) when it
/// is outside our own process group and session (a program embedding us keeps the
/// children it forks there); `own_session`: also in our session (the CLI, whose every
/// child is a tool's: without a terminal its tools share its session).
void reap_orphans_in_own_session(bool own_session) noexcept;

namespace detail {
/// Used by ~IoThread: SIGKILL the groups `io` watches and wait (bounded) until the
/// io thread has reaped them.
void kill_watched_processes(IoThread& io) noexcept;
/// Used by ~IoThread after its thread stopped: drop the asio objects of processes
/// still left on `io` (not reaped in time), so none outlives the io_context.
void forget_watched_processes(IoThread& io) noexcept;
} // namespace detail

} // namespace jp
