#define CAF_SUITE process
#include <caf/test/unit_test.hpp>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <climits>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sstream>
#include <string>
#include <thread>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

#include "runtime/process/child_launch.hpp"
#include "runtime/process/controlling_terminal.hpp"
#include "runtime/process/io_thread.hpp"
#include "runtime/process/kept_file.hpp"
#include "runtime/process/proc_stat.hpp"
#include "runtime/process/process.hpp"
#include "runtime/process/vfork_exec.hpp"
#include "io_round.hpp"
#include "owned_children.hpp"
#include "pidfd_pid.hpp"
#include "proc_syscall.hpp"
#include "raise_limits.hpp"
#include "child_wait.hpp"
#include "temp_dir.hpp"

using namespace jp;
using namespace std::chrono_literals;
using jp::testing::disown_child;
using jp::testing::own_child;
using jp::testing::pid_of_pidfd;

namespace {

// Generous: these bound a hang, they are not timing assertions.
constexpr auto kWait = 20s;

/// What a process reported; filled on the io thread, read by the test.
struct Collector {
  std::mutex mtx;
  std::condition_variable cv;
  std::string out, err;
  std::size_t out_bytes = 0;     // counted instead of kept when `count_only`
  std::size_t max_chunk = 0;
  bool count_only = false;
  std::size_t delivered = 0;     // stdout + stderr bytes
  bool acking = true;            // ack every chunk on arrival, as an owner keeping up
  std::size_t acked = 0;
  std::weak_ptr<Process> proc;   // weak: only the test's handle keeps the group alive
  std::optional<ExitInfo> exit;
  int exits = 0;
  std::string out_at_exit;       // what had arrived when on_exit ran

  /// Acks everything delivered so far (mtx held). Chunks that came before the
  /// process was known are acked once it is.
  void ack_delivered() {
    if (auto p = proc.lock()) {
      p->ack(delivered - acked);
      acked = delivered;
    }
  }

  void set_process(const std::shared_ptr<Process>& p) {
    std::lock_guard lock(mtx);
    proc = p;
    if (acking)
      ack_delivered();
  }

  void start_acking() {
    std::lock_guard lock(mtx);
    acking = true;
    ack_delivered();
  }

  ProcessEvents events(std::shared_ptr<Collector> self) {
    return {
      [self](stream_kind k, std::string_view chunk) {
        std::lock_guard lock(self->mtx);
        self->max_chunk = std::max(self->max_chunk, chunk.size());
        self->delivered += chunk.size();
        if (self->acking)
          self->ack_delivered();
        if (k == stream_kind::out) {
          self->out_bytes += chunk.size();
          if (!self->count_only)
            self->out.append(chunk);
        } else {
          self->err.append(chunk);
        }
        self->cv.notify_all();
      },
      [self](const ExitInfo& info) {
        std::lock_guard lock(self->mtx);
        self->exit = info;
        ++self->exits;
        self->out_at_exit = self->out;
        self->cv.notify_all();
      },
    };
  }

  bool wait_exit() {
    std::unique_lock lock(mtx);
    return cv.wait_for(lock, kWait, [&] { return exit.has_value(); });
  }

  bool wait_delivered(std::size_t n) {
    std::unique_lock lock(mtx);
    return cv.wait_for(lock, kWait, [&] { return delivered >= n; });
  }

  bool wait_out_contains(const std::string& s) {
    std::unique_lock lock(mtx);
    return cv.wait_for(lock, kWait, [&] { return out.find(s) != std::string::npos; });
  }

  std::string out_copy() {
    std::lock_guard lock(mtx);
    return out;
  }
};

// A failed CAF_REQUIRE aborts the runner without unwinding: take our children along.
void on_abort(int sig) {
  kill_all_process_groups();
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}
const bool abort_handler_installed = [] {
  ::signal(SIGABRT, on_abort);
  return true;
}();

/// Kills the group on scope exit, so a failing test leaves no process behind (the
/// IoThread, declared before it, then reaps).
struct GroupGuard {
  pid_t pgid = 0;
  ~GroupGuard() {
    if (pgid > 0 && ::kill(-pgid, 0) == 0)
      ::kill(-pgid, SIGKILL);
  }
};

struct Spawned {
  std::shared_ptr<Collector> c = std::make_shared<Collector>();
  std::shared_ptr<Process> p;
  GroupGuard guard;
};

/// Spawns or fails the test.
void start(IoThread& io, Spawned& s, SpawnSpec spec) {
  auto r = spawn_process(io, std::move(spec), s.c->events(s.c));
  if (!r.ok())
    CAF_FAIL(r.error());
  s.p = *r;
  s.guard.pgid = s.p->pid();
  s.c->set_process(s.p);
}

SpawnSpec sh(std::string script) {
  return SpawnSpec{{"sh", "-c", std::move(script)}, "", {}, false};
}

/// terminate() and wait until the whole group is gone.
bool terminate_and_wait(Process& p, std::chrono::milliseconds grace) {
  auto gone = std::make_shared<std::promise<void>>();
  auto fut = gone->get_future();
  p.terminate(grace, [gone] { gone->set_value(); });
  return fut.wait_for(kWait) == std::future_status::ready;
}

/// Whether `pid` is blocked in a write(2) to its `fd`, by the kernel's own record.
bool blocked_writing(pid_t pid, int fd) {
  auto s = jp::testing::sleeping_in(pid);
  return s && s->nr == SYS_write && s->arg0 == fd;
}

bool group_gone(pid_t pgid) {
  return ::kill(-pgid, 0) == -1 && errno == ESRCH;
}

bool pid_gone(pid_t pid) {
  return ::kill(pid, 0) == -1 && errno == ESRCH;
}

/// Children of ours outside our own group (alive or zombies: handed to us, we are a
/// subreaper) once none is left, or how many are still there after a bound (shorter
/// than the test's watchdog, so what was left is said: pid, state, group, session).
/// Our children outside our own group (`tool`, a live tool's leader, aside) once
/// they are gone or 20 s passed.
size_t adopted_left(pid_t tool = 0) {
  auto adopted = [tool] {
    std::vector<ProcStat> out;
    for (auto& p : all_processes())
      if (p.ppid == ::getpid() && p.pgid != ::getpgrp() && p.pid != tool)
        out.push_back(p);
    return out;
  };
  auto deadline = std::chrono::steady_clock::now() + 20s;
  while (!adopted().empty() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(20ms);
  auto left = adopted();
  for (auto& p : left)
    CAF_MESSAGE("left: pid " << p.pid << " state " << p.state << " pgid " << p.pgid << " sid " << p.sid);
  return left.size();
}

} // namespace

CAF_TEST(the process layer grows the fd table at its start) {
  // Growing a table that threads share waits for an RCU grace period (bench/README.md
  // "The fd table"); the process layer grows it once, at its start, to 32,768 or the
  // fd limit. /proc/self/status says how many fds the table holds (FDSize).
  IoThread io;
  auto fd_size = [] {
    std::ifstream status("/proc/self/status");
    for (std::string line; std::getline(status, line);)
      if (line.rfind("FDSize:", 0) == 0)
        return std::stol(line.substr(7));
    return 0L;
  };
  rlimit fds{};
  CAF_REQUIRE_EQUAL(::getrlimit(RLIMIT_NOFILE, &fds), 0);
  auto want = static_cast<long>(std::min<rlim_t>(fds.rlim_cur, 32768));
  CAF_CHECK_GREATER_OR_EQUAL(fd_size(), want);
  // The descriptors that grew it are closed again.
  CAF_CHECK_EQUAL(::fcntl(static_cast<int>(want) - 1, F_GETFD), -1);
}

CAF_TEST(echo output arrives before exit 0) {
  IoThread io;
  Spawned s;
  start(io, s, SpawnSpec{{"echo", "hello"}, "", {}, false});
  CAF_REQUIRE(s.c->wait_exit());
  std::lock_guard lock(s.c->mtx);
  CAF_CHECK_EQUAL(s.c->out_at_exit, "hello\n");
  CAF_CHECK(s.c->exit->success());
  CAF_CHECK_EQUAL(s.c->exit->describe(), "exit status 0");
  CAF_CHECK_EQUAL(s.c->exits, 1);
}

CAF_TEST(exit status is reported) {
  IoThread io;
  Spawned s;
  start(io, s, sh("echo oops >&2; exit 3"));
  CAF_REQUIRE(s.c->wait_exit());
  std::lock_guard lock(s.c->mtx);
  CAF_CHECK(!s.c->exit->signaled);
  CAF_CHECK_EQUAL(s.c->exit->code, 3);
  CAF_CHECK_EQUAL(s.c->exit->describe(), "exit status 3");
  CAF_CHECK_EQUAL(s.c->err, "oops\n");
}

CAF_TEST(exit by signal is reported as a signal) {
  IoThread io;
  Spawned s;
  start(io, s, sh("kill -9 $$"));
  CAF_REQUIRE(s.c->wait_exit());
  std::lock_guard lock(s.c->mtx);
  CAF_CHECK(s.c->exit->signaled);
  CAF_CHECK_EQUAL(s.c->exit->signal, 9);
  CAF_CHECK_EQUAL(s.c->exit->describe(), "killed by signal 9 (SIGKILL)");
  CAF_CHECK(!s.c->exit->success());
}

CAF_TEST(the child leads its own process group) {
  IoThread io;
  Spawned s;
  start(io, s, SpawnSpec{{"sleep", "1000"}, "", {}, false});
  pid_t pid = s.p->pid();
  CAF_CHECK_EQUAL(::getpgid(pid), pid);
  CAF_CHECK_NOT_EQUAL(::getpgid(0), pid);
  CAF_REQUIRE(terminate_and_wait(*s.p, 5000ms));
  CAF_REQUIRE(s.c->wait_exit());
  std::lock_guard lock(s.c->mtx);
  CAF_CHECK(s.c->exit->signaled);
  CAF_CHECK_EQUAL(s.c->exit->signal, SIGTERM);
  CAF_CHECK(group_gone(pid));
}

CAF_TEST(stdin pipe: cat echoes what is written and ends on close) {
  IoThread io;
  Spawned s;
  start(io, s, SpawnSpec{{"cat"}, "", {}, true});
  s.p->write_stdin("abc");
  s.p->write_stdin("");
  s.p->write_stdin("def\n");
  CAF_REQUIRE(s.c->wait_out_contains("abcdef\n"));
  s.p->write_stdin("more");
  s.p->close_stdin();
  s.p->write_stdin("after close is ignored");
  CAF_REQUIRE(s.c->wait_exit());
  CAF_CHECK_EQUAL(s.p->stdin_queued(), 0u); // all written
  std::lock_guard lock(s.c->mtx);
  CAF_CHECK_EQUAL(s.c->out_at_exit, "abcdef\nmore");
  CAF_CHECK(s.c->exit->success());
}

CAF_TEST(an io thread that polls before it sleeps does what one that sleeps at once does) {
  // Polls of 10 ms: each echo below comes while the thread polls, the exit too, and
  // its end stops the loop (the destructor joins it).
  IoThread io{std::chrono::milliseconds(10)};
  Spawned s;
  start(io, s, SpawnSpec{{"cat"}, "", {}, true});
  std::string want;
  for (int i = 0; i < 20; ++i) {
    auto line = "line " + std::to_string(i) + "\n";
    want += line;
    s.p->write_stdin(line);
    CAF_REQUIRE(s.c->wait_out_contains(want));
  }
  std::promise<bool> ran;
  io.post([&] { ran.set_value(io.on_this_thread()); });
  CAF_CHECK(ran.get_future().get());
  s.p->close_stdin();
  CAF_REQUIRE(s.c->wait_exit());
  std::lock_guard lock(s.c->mtx);
  CAF_CHECK_EQUAL(s.c->out_at_exit, want);
  CAF_CHECK(s.c->exit->success());
}

CAF_TEST(stdin written at once and stdin queued behind a full pipe keep their order) {
  // A write with nothing queued goes into the pipe on the caller's thread; what
  // the pipe does not take waits on the io thread, and so does every write after
  // it until that is written. cat echoes all of it, in order.
  IoThread io;
  Spawned s;
  start(io, s, SpawnSpec{{"cat"}, "", {}, true});
  std::string sent;
  for (int i = 0; i < 48; ++i) {
    std::string chunk;
    for (int line = 0; line < (i % 3 == 0 ? 20000 : 3); ++line) // 160 KiB or a few lines
      chunk += fmt::format("{:04}:{:05}\n", i, line);
    sent += chunk;
    CAF_REQUIRE(s.p->write_stdin(chunk));
  }
  s.p->close_stdin();
  s.p->write_stdin("after the close: dropped\n");
  CAF_REQUIRE(s.c->wait_exit());
  CAF_CHECK_EQUAL(s.p->stdin_queued(), 0u);
  std::lock_guard lock(s.c->mtx);
  CAF_CHECK_EQUAL(s.c->out_at_exit.size(), sent.size());
  CAF_CHECK(s.c->out_at_exit == sent);
}

CAF_TEST(stdin written after the close is dropped even before the io thread closes it) {
  IoThread io;
  Spawned s;
  start(io, s, SpawnSpec{{"cat"}, "", {}, true});
  // The io thread is held, so the close waits there while the caller writes on.
  std::promise<void> release;
  auto held = release.get_future().share();
  io.post([held] { held.wait(); });
  CAF_CHECK(s.p->write_stdin("before\n")); // into the pipe at once
  s.p->close_stdin();
  CAF_CHECK(s.p->write_stdin("after\n"));
  release.set_value();
  CAF_REQUIRE(s.c->wait_exit());
  std::lock_guard lock(s.c->mtx);
  CAF_CHECK_EQUAL(s.c->out_at_exit, "before\n");
}

CAF_TEST(a pipe is made big once its tool has written a first pipe worth and stays small for one that has not) {
  // The child asks its stdout's pipe for its size (F_GETPIPE_SZ, through perl: Debian's
  // perl-base is essential) after the test says go, and writes it to stderr.
  const std::string ask = R"(read go; perl -e 'print STDERR fcntl(STDOUT, 1032, 0)')";
  IoThread io;
  Spawned chatty, quiet;
  start(io, chatty, SpawnSpec{{"sh", "-c", "head -c 300000 /dev/zero; " + ask}, "", {}, true});
  start(io, quiet, SpawnSpec{{"sh", "-c", ask}, "", {}, true});
  // All of it read: the pipe was made big on the way.
  CAF_REQUIRE(chatty.c->wait_delivered(300000));
  for (auto* s : {&chatty, &quiet}) {
    s->p->write_stdin("go\n");
    CAF_REQUIRE(s->c->wait_exit());
  }
  std::lock_guard chatty_lock(chatty.c->mtx), quiet_lock(quiet.c->mtx);
  CAF_CHECK_EQUAL(chatty.c->err, "1048576");
  CAF_CHECK_EQUAL(quiet.c->err, "65536");
}

CAF_TEST(a child that never reads stdin does not block large writes) {
  IoThread io;
  Spawned reader_not;
  start(io, reader_not, SpawnSpec{{"sleep", "1000"}, "", {}, true});
  for (int i = 0; i < 8; ++i)
    reader_not.p->write_stdin(std::string(4 * 1024 * 1024, 'x')); // far beyond the pipe
  // The io thread still serves other children meanwhile.
  Spawned other;
  start(io, other, SpawnSpec{{"echo", "still alive"}, "", {}, false});
  CAF_REQUIRE(other.c->wait_exit());
  CAF_CHECK_EQUAL(other.c->out_copy(), "still alive\n");
  reader_not.p->close_stdin(); // waits behind the queue; must not block either
  CAF_REQUIRE(terminate_and_wait(*reader_not.p, 0ms));
  CAF_REQUIRE(reader_not.c->wait_exit());
  CAF_CHECK(group_gone(reader_not.p->pid()));
}

CAF_TEST(a child that closes stdin early: writes after EPIPE are harmless) {
  IoThread io;
  Spawned s;
  start(io, s, SpawnSpec{{"sh", "-c", "exec 0<&-; echo closed; sleep 1000"}, "", {}, true});
  CAF_REQUIRE(s.c->wait_out_contains("closed\n"));
  for (int i = 0; i < 4; ++i)
    s.p->write_stdin(std::string(1024 * 1024, 'y'));
  CAF_REQUIRE(terminate_and_wait(*s.p, 5000ms));
  CAF_REQUIRE(s.c->wait_exit());
  CAF_CHECK(group_gone(s.p->pid()));
}

CAF_TEST(terminate ends a stopped child without waiting out the grace) {
  IoThread io;
  Spawned s;
  start(io, s, sh("echo stopping; kill -STOP $$; sleep 1000"));
  CAF_REQUIRE(s.c->wait_out_contains("stopping\n"));
  pid_t pid = s.p->pid();
  auto deadline = std::chrono::steady_clock::now() + kWait;
  auto stopped = [pid] {
    auto st = read_proc_stat(pid);
    return st && st->state == 'T';
  };
  while (!stopped() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(1ms);
  CAF_REQUIRE(stopped());
  // A grace longer than the wait: only a TERM it acts on ends it in time, and a
  // stopped process acts on one once continued.
  CAF_REQUIRE(terminate_and_wait(*s.p, 3600s));
  std::lock_guard lock(s.c->mtx);
  CAF_REQUIRE(s.c->exit.has_value());
  CAF_CHECK(s.c->exit->signaled);
  CAF_CHECK_EQUAL(s.c->exit->signal, SIGTERM);
}

CAF_TEST(terminate kills a TERM-ignoring child and its grandchildren) {
  IoThread io;
  Spawned s;
  start(io, s, sh("trap '' TERM; sleep 1000 & echo $!; sleep 1000 & echo $!; echo ready; wait"));
  CAF_REQUIRE(s.c->wait_out_contains("ready\n"));
  std::vector<pid_t> grandchildren;
  {
    auto out = s.c->out_copy();
    std::size_t pos = 0;
    for (int i = 0; i < 2; ++i) {
      auto nl = out.find('\n', pos);
      grandchildren.push_back(std::stoi(out.substr(pos, nl - pos)));
      pos = nl + 1;
    }
  }
  for (pid_t g : grandchildren)
    CAF_CHECK_EQUAL(::getpgid(g), s.p->pid());
  bool exit_before_gone = false;
  auto gone = std::make_shared<std::promise<void>>();
  auto fut = gone->get_future();
  s.p->terminate(100ms, [gone, c = s.c, &exit_before_gone] {
    {
      std::lock_guard lock(c->mtx);
      exit_before_gone = c->exit.has_value();
    }
    gone->set_value();
  });
  CAF_REQUIRE(fut.wait_for(kWait) == std::future_status::ready);
  CAF_CHECK(exit_before_gone);
  CAF_CHECK(group_gone(s.p->pid()));
  for (pid_t g : grandchildren)
    CAF_CHECK(pid_gone(g)); // killed and reaped, not zombies
  std::lock_guard lock(s.c->mtx);
  CAF_CHECK(s.c->exit->signaled);
  CAF_CHECK_EQUAL(s.c->exit->signal, SIGKILL);
  CAF_CHECK_EQUAL(s.c->exits, 1);
}

CAF_TEST(a worker behind a wrapper that dies of the TERM keeps its grace to clean up) {
  // The leader waits on a worker of its group; the TERM ends the leader at once,
  // the worker traps it and takes a moment to clean up. It was killed at the
  // leader's exit; the grace is the group's. It ends once the group is empty.
  jp::testing::temp_dir dir;
  auto done = (dir.path / "cleaned").string();
  IoThread io;
  Spawned s;
  start(io, s, sh(fmt::format("sh -c 'trap \"sleep 0.2; echo cleaned > {}; exit 0\" TERM; echo ready; "
                              "while :; do sleep 1 & wait $!; done'; echo after",
                              done)));
  CAF_REQUIRE(s.c->wait_out_contains("ready\n"));
  CAF_REQUIRE(terminate_and_wait(*s.p, 3600s));
  std::ifstream in(done);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CAF_CHECK_EQUAL(text, "cleaned\n");
  CAF_CHECK(group_gone(s.p->pid()));
  std::lock_guard lock(s.c->mtx);
  CAF_REQUIRE(s.c->exit.has_value());
  CAF_CHECK(s.c->exit->signaled);
  CAF_CHECK_EQUAL(s.c->exit->signal, SIGTERM);
}

CAF_TEST(what left the group and ignores the TERM is killed when the grace ends after its leader died) {
  // The leader dies of the TERM at once; what it put in a session of its own ignores
  // the TERM. The grace's end kills it (it was spared once the group was empty).
  jp::testing::temp_dir dir;
  auto pidfile = (dir.path / "escaped").string();
  IoThread io;
  Spawned s;
  start(io, s, sh(fmt::format("setsid sh -c 'trap \"\" TERM; echo $$ > {0}.tmp; mv {0}.tmp {0}; exec sleep 1000' & "
                              "until [ -s {0} ]; do sleep 0.01; done; echo ready; wait",
                              pidfile)));
  CAF_REQUIRE(s.c->wait_out_contains("ready\n"));
  pid_t escaped = 0;
  std::ifstream(pidfile) >> escaped;
  CAF_REQUIRE(escaped > 0);
  CAF_REQUIRE(terminate_and_wait(*s.p, 300ms));
  bool gone = pid_gone(escaped);
  CAF_CHECK(gone);
  if (!gone) // the test's own to end
    ::kill(escaped, SIGKILL);
}

CAF_TEST(a leader exiting while a grandchild holds stdout reports exit promptly) {
  IoThread io;
  Spawned s;
  start(io, s, sh("sleep 1000 & echo hi"));
  // Would take 1000 s if we waited for EOF on stdout.
  CAF_REQUIRE(s.c->wait_exit());
  {
    std::lock_guard lock(s.c->mtx);
    CAF_CHECK(s.c->exit->success());
    CAF_CHECK_EQUAL(s.c->out_at_exit, "hi\n");
  }
  // Already exited: on_gone comes once the grandchild is reaped.
  CAF_REQUIRE(terminate_and_wait(*s.p, 5000ms));
  CAF_CHECK(group_gone(s.p->pid()));
  // And again: a process whose group is gone answers terminate at once.
  CAF_REQUIRE(terminate_and_wait(*s.p, 5000ms));
}

/// bash's `ready PID ARGV0`: waits until the job PID has exec'd (its argv[0] is
/// ARGV0), so its command line is its program's, not the forked shell's.
constexpr const char* kReadyFunction =
  "ready() { until read -r -d '' a < /proc/$1/cmdline && [ \"$a\" = \"$2\" ]; do :; done; }; ";

CAF_TEST(what the leader left running is killed at its exit and counted with the first few named) {
  IoThread io;
  Spawned s;
  start(io, s, SpawnSpec{{"bash", "-c", std::string(kReadyFunction) +
                                          "for i in 1 2 3 4 5; do sleep 100$i & ready $! sleep; done; echo up"},
                         "", {}, false});
  CAF_REQUIRE(s.c->wait_exit());
  CAF_CHECK(group_gone(s.p->pid())); // told once the group is reaped
  std::lock_guard lock(s.c->mtx);
  CAF_CHECK(s.c->exit->success());
  CAF_CHECK_EQUAL(s.c->exit->left_running, 5u);
  CAF_REQUIRE_EQUAL(s.c->exit->left_commands.size(), kLeftNamedMax);
  for (auto& c : s.c->exit->left_commands)
    CAF_CHECK(c.starts_with("sleep 100") && c.size() == 10);
}

CAF_TEST(a command line left running is named on one short line with its control characters escaped) {
  IoThread io;
  Spawned s;
  // exec -a: what its command line says is the script's to choose.
  start(io, s, SpawnSpec{{"bash", "-c",
                          std::string(kReadyFunction) +
                            "evil=$'evil\\e[31m\\nname\\x7f'; long=$(printf 'y%.0s' {1..200}); "
                            "(exec -a \"$evil\" sleep 1000) & ready $! \"$evil\"; "
                            "(exec -a \"$long\" sleep 1001) & ready $! \"$long\"; echo up"},
                         "", {}, false});
  CAF_REQUIRE(s.c->wait_exit());
  std::lock_guard lock(s.c->mtx);
  CAF_CHECK_EQUAL(s.c->exit->left_running, 2u);
  auto& named = s.c->exit->left_commands;
  auto has = [&](const std::string& c) { return std::find(named.begin(), named.end(), c) != named.end(); };
  CAF_CHECK(has("evil\\x1b[31m\\nname\\x7f 1000"));
  CAF_CHECK(has(std::string(kLeftCommandMax, 'y') + "…"));
}

CAF_TEST(a leader that leaves nothing running or is terminated reports nothing left running) {
  IoThread io;
  // The third leaves `true` exited and perhaps not yet reaped by the shell: a
  // zombie is not running.
  for (auto script : {"echo quiet", "true & sleep 0 & wait; echo done",
                      "true & p=$!; until [ ! -e /proc/$p ] || "
                      "[ \"$(cut -d' ' -f3 /proc/$p/stat 2>/dev/null)\" = Z ]; do :; done; echo zombie"}) {
    Spawned s;
    start(io, s, sh(script));
    CAF_REQUIRE(s.c->wait_exit());
    std::lock_guard lock(s.c->mtx);
    CAF_CHECK_EQUAL(s.c->exit->left_running, 0u);
    CAF_CHECK(s.c->exit->left_commands.empty());
  }
  Spawned t;
  start(io, t, sh("sleep 1000 & echo ready; wait"));
  CAF_REQUIRE(t.c->wait_out_contains("ready\n"));
  CAF_REQUIRE(terminate_and_wait(*t.p, 5000ms));
  CAF_CHECK(group_gone(t.p->pid()));
  std::lock_guard lock(t.c->mtx);
  CAF_REQUIRE(t.c->exit.has_value());
  CAF_CHECK_EQUAL(t.c->exit->left_running, 0u);
}

CAF_TEST(what left a tool and exited after it is reaped and a child of our own group is left to us) {
  // We are a subreaper: a tool's setsid children are handed to us when it exits.
  // Those that then exit must not stay zombies until jp-actors ends; a child the
  // program forked itself (in our own group) is its own to reap.
  pid_t mine = ::fork();
  if (mine == 0)
    ::_exit(7);
  IoThread io;
  Spawned s;
  start(io, s, sh("for i in 1 2 3; do setsid sh -c 'sleep 0.3' </dev/null >/dev/null 2>&1 & done; echo $!"));
  CAF_REQUIRE(s.c->wait_exit());
  CAF_CHECK_EQUAL(adopted_left(), 0u); // the three sleeps exited and were reaped
  int status = 0;
  CAF_CHECK_EQUAL(::waitpid(mine, &status, 0), mine); // ours, left for us
  CAF_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 7);
}

CAF_TEST(what left a tool and exited is reaped while the tool still runs) {
  // A handle that double-forks helpers as it runs (`(cmd &)`, a watcher) handed
  // each to us: reaped only when some tool's group ended, they piled up as zombies
  // for the handle's life (hundreds a second in an mcp or node session).
  IoThread io;
  Spawned s;
  start(io, s, sh("for i in 1 2 3; do (setsid sh -c 'sleep 0.2' </dev/null >/dev/null 2>&1 &); done; "
                  "echo up; exec sleep 1000"));
  CAF_REQUIRE(s.c->wait_out_contains("up\n"));
  CAF_CHECK_EQUAL(adopted_left(s.p->pid()), 0u); // the three exited and were reaped, the tool runs
  CAF_REQUIRE(terminate_and_wait(*s.p, 5000ms));
}

CAF_TEST(the CLI reaps what left a tool for a group of its own in the session of the CLI) {
  // Without a terminal a tool shares jp-actors' session; a job of its own group
  // there (set -m, timeout) handed to us must be reaped too where every child is a
  // tool's (the CLI says so), or it stays a zombie until jp-actors ends.
  reap_orphans_in_own_session(true);
  IoThread io;
  Spawned s;
  start(io, s, sh("timeout 10 sleep 0.3 </dev/null >/dev/null 2>&1 & echo $!")); // timeout: a group of its own
  CAF_REQUIRE(s.c->wait_exit());
  CAF_CHECK_EQUAL(adopted_left(), 0u);
  reap_orphans_in_own_session(false);
}

CAF_TEST(output written before exit is never lost while a grandchild holds the pipe) {
  IoThread io;
  Spawned s;
  s.c->count_only = true;
  // More than the pipe holds, so part is read while it runs and the rest is drained
  // after the exit, without waiting for an EOF that the sleep would hold back.
  start(io, s, sh("sleep 1000 & head -c 3000000 /dev/zero; echo done >&2"));
  CAF_REQUIRE(s.c->wait_exit());
  {
    std::lock_guard lock(s.c->mtx);
    CAF_CHECK(s.c->exit->success());
    CAF_CHECK_EQUAL(s.c->out_bytes, 3000000u);
    CAF_CHECK_EQUAL(s.c->err, "done\n");
  }
  CAF_REQUIRE(terminate_and_wait(*s.p, 5000ms));
  CAF_CHECK(group_gone(s.p->pid()));
}

CAF_TEST(no file descriptor is left open once a process is gone) {
  auto open_fds = [] {
    std::size_t n = 0;
    for (auto& e : std::filesystem::directory_iterator("/proc/self/fd"))
      (void)e, ++n;
    return n;
  };
  IoThread io;
  {
    // asio opens its reactor's fds with the first watched process.
    Spawned warm_up;
    start(io, warm_up, SpawnSpec{{"true"}, "", {}, false});
    CAF_REQUIRE(terminate_and_wait(*warm_up.p, 5000ms));
  }
  auto before = open_fds();
  {
    Spawned s;
    start(io, s, SpawnSpec{{"sh", "-c", "sleep 1000 & cat"}, "", {}, true});
    s.p->write_stdin("x");
    CAF_REQUIRE(s.c->wait_out_contains("x"));
    CAF_REQUIRE(terminate_and_wait(*s.p, 5000ms));
  }
  auto c = std::make_shared<Collector>();
  CAF_REQUIRE(!spawn_process(io, SpawnSpec{{"jp-no-such-program-xyz"}, "", {}, true}, c->events(c)).ok());
  CAF_CHECK_EQUAL(open_fds(), before);
}

CAF_TEST(binary and invalid UTF-8 output passes through byte-exact) {
  std::string all;
  for (int b = 0; b < 256; ++b)
    all.push_back(static_cast<char>(b));
  all += "\xff\xfe\xc3(\xed\xa0\x80 end";
  char path[] = "/tmp/jp-process-test-XXXXXX";
  int fd = ::mkstemp(path);
  CAF_REQUIRE(fd >= 0);
  CAF_REQUIRE(::write(fd, all.data(), all.size()) == static_cast<ssize_t>(all.size()));
  ::close(fd);
  struct Unlink {
    const char* p;
    ~Unlink() { ::unlink(p); }
  } unlink_later{path};

  IoThread io;
  Spawned s;
  start(io, s, SpawnSpec{{"sh", "-c", "cat \"$1\"; cat \"$1\" >&2", "sh", path}, "", {}, false});
  CAF_REQUIRE(s.c->wait_exit());
  std::lock_guard lock(s.c->mtx);
  CAF_CHECK(s.c->exit->success());
  CAF_CHECK(s.c->out == all);
  CAF_CHECK(s.c->err == all);
}

CAF_TEST(huge output is fully counted in bounded chunks) {
  IoThread io;
  Spawned s;
  s.c->count_only = true;
  start(io, s, SpawnSpec{{"head", "-c", "50000000", "/dev/zero"}, "", {}, false});
  CAF_REQUIRE(s.c->wait_exit());
  std::lock_guard lock(s.c->mtx);
  CAF_CHECK(s.c->exit->success());
  CAF_CHECK_EQUAL(s.c->out_bytes, 50000000u);
  CAF_CHECK(s.c->max_chunk <= kOutputChunkMax);
}

CAF_TEST(spawning a missing program is an error naming it) {
  IoThread io;
  auto c = std::make_shared<Collector>();
  auto r = spawn_process(io, SpawnSpec{{"jp-no-such-program-xyz", "a"}, "", {}, false}, c->events(c));
  CAF_REQUIRE(!r.ok());
  CAF_CHECK(r.error().find("jp-no-such-program-xyz") != std::string::npos);
  CAF_CHECK(r.error().find("not found in PATH") != std::string::npos);

  auto bad_cwd = spawn_process(io, SpawnSpec{{"true"}, "/nonexistent/jp-dir", {}, false}, c->events(c));
  CAF_REQUIRE(!bad_cwd.ok());
  CAF_CHECK(bad_cwd.error().find("/nonexistent/jp-dir") != std::string::npos);

  auto empty = spawn_process(io, SpawnSpec{}, c->events(c));
  CAF_CHECK(!empty.ok());
}

CAF_TEST(cwd and env are applied) {
  char tmpl[] = "/tmp/jp-process-cwd-XXXXXX";
  CAF_REQUIRE(::mkdtemp(tmpl) != nullptr);
  struct Rmdir {
    const char* p;
    ~Rmdir() { ::rmdir(p); }
  } rmdir_later{tmpl};
  char real[PATH_MAX];
  CAF_REQUIRE(::realpath(tmpl, real) != nullptr);
  ::setenv("JP_PROCESS_TEST_OVERRIDE", "parent", 1);
  ::setenv("JP_PROCESS_TEST_INHERITED", "inherited", 1);

  IoThread io;
  Spawned s;
  start(io, s,
        SpawnSpec{{"sh", "-c",
                   "pwd -P; echo \"$JP_PROCESS_TEST_NEW\"; echo \"$JP_PROCESS_TEST_OVERRIDE\"; "
                   "echo \"$JP_PROCESS_TEST_INHERITED\""},
                  tmpl,
                  {"JP_PROCESS_TEST_NEW=new value", "JP_PROCESS_TEST_OVERRIDE=child"},
                  false});
  CAF_REQUIRE(s.c->wait_exit());
  std::lock_guard lock(s.c->mtx);
  CAF_CHECK(s.c->exit->success());
  CAF_CHECK_EQUAL(s.c->out, std::string(real) + "\nnew value\nchild\ninherited\n");
}

CAF_TEST(dropping the handle kills the group and on_exit still arrives) {
  IoThread io;
  Spawned s;
  start(io, s, sh("sleep 1000 & sleep 1000"));
  s.p.reset();
  CAF_REQUIRE(s.c->wait_exit());
  std::lock_guard lock(s.c->mtx);
  CAF_CHECK(s.c->exit->signaled);
  CAF_CHECK_EQUAL(s.c->exit->signal, SIGKILL);
}

CAF_TEST(kill_all_process_groups kills every live group) {
  IoThread io;
  Spawned a, b;
  start(io, a, SpawnSpec{{"sleep", "1000"}, "", {}, false});
  start(io, b, sh("sleep 1000 & wait"));
  kill_all_process_groups();
  CAF_REQUIRE(a.c->wait_exit());
  CAF_REQUIRE(b.c->wait_exit());
  CAF_CHECK(terminate_and_wait(*a.p, 0ms));
  CAF_CHECK(terminate_and_wait(*b.p, 0ms));
  CAF_CHECK(group_gone(a.p->pid()));
  CAF_CHECK(group_gone(b.p->pid()));
}

CAF_TEST(an abort after the shutdown s TERM sends the group no second TERM) {
  // A second TERM is a second signal: a jp-actors run as a tool takes it as "now"
  // and kills its tools without their grace. The shutdown's TERM, then the program's
  // abort of that handle, sent two. The tool writes a line per TERM and one at the
  // CONT that follows the abort's signals (a TERM sent with it is delivered first).
  testing::temp_dir dir;
  auto file = (dir.path / "signals").string();
  IoThread io;
  Spawned s;
  start(io, s, sh(fmt::format("trap 'echo t >> {0}' TERM; trap 'echo c >> {0}' CONT; echo up; "
                              "while :; do sleep 0.01; done",
                              file)));
  CAF_REQUIRE(s.c->wait_out_contains("up\n"));
  auto lines = [&] {
    std::ifstream in(file);
    std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    return all;
  };
  terminate_all_process_groups();
  CAF_REQUIRE(testing::wait_for([&] { return lines() == "t\n"; }));
  s.p->terminate(60s, [] {});
  CAF_REQUIRE(testing::wait_for([&] { return lines().find("c\n") != std::string::npos; }));
  CAF_CHECK_EQUAL(lines(), "t\nc\n");
  ::kill(-s.p->pid(), SIGKILL);
  CAF_CHECK(s.c->wait_exit());
}

CAF_TEST(a group whose leader died of the shutdown s TERM keeps the shutdown s grace) {
  // The shutdown's TERM came before the program's abort, and the leader (a wrapper:
  // here `exec sleep`) died of it at once: taken for an exit of its own, the rest of
  // its group was stopped and killed at the leader's reap, mid-cleanup (a jp-actors
  // run as a tool under `bash -c` never TERMed its own tools). The member's cleanup
  // waits, in its trap, until the leader was reaped.
  testing::temp_dir dir;
  auto up = dir.path / "up", got = dir.path / "got", release = dir.path / "release", done = dir.path / "done";
  IoThread io;
  Spawned s;
  start(io, s, sh(fmt::format("sh -c 'trap \"touch {1}; while [ ! -e {2} ]; do sleep 0.01; done; touch {3}; exit 0\" "
                              "TERM; touch {0}; while :; do sleep 0.01; done' & exec sleep 1000",
                              up.string(), got.string(), release.string(), done.string())));
  CAF_REQUIRE(testing::wait_for([&] { return std::filesystem::exists(up); }));
  terminate_all_process_groups(); // as a signal's shutdown does, before any abort
  CAF_REQUIRE(testing::wait_for([&] { return std::filesystem::exists(got); }));
  auto leader = fmt::format("/proc/{}", s.p->pid()); // its pid is the group's id: not reused while members hold it
  CAF_REQUIRE(testing::wait_for([&] { return !std::filesystem::exists(leader); })); // reaped
  std::ofstream{release};
  CAF_CHECK(testing::wait_for([&] { return std::filesystem::exists(done); }));
  CAF_CHECK(s.c->wait_exit()); // the member's end ends the group
}

CAF_TEST(destroying the io thread kills and reaps its groups) {
  auto c = std::make_shared<Collector>();
  GroupGuard guard;
  pid_t pid = 0;
  std::shared_ptr<Process> keep; // the handle outlives the io thread here
  {
    IoThread io;
    auto r = spawn_process(io, sh("sleep 1000 & sleep 1000"), c->events(c));
    CAF_REQUIRE(r.ok());
    pid = (*r)->pid();
    guard.pgid = pid;
    keep = *r;
  }
  CAF_CHECK(group_gone(pid));
  std::lock_guard lock(c->mtx);
  CAF_CHECK_EQUAL(c->exits, 1);
}

namespace {

/// How many pidfds this process holds.
int open_pidfds() {
  int n = 0;
  for (auto& e : std::filesystem::directory_iterator("/proc/self/fd")) {
    std::error_code ec;
    n += std::filesystem::read_symlink(e.path(), ec).string().find("pidfd") != std::string::npos;
  }
  return n;
}

} // namespace

CAF_TEST(an io thread destroyed right after an exit still closes its descriptors and tells gone) {
  // A group's descriptors are closed after its owner hears of the exit (let_go,
  // queued behind what the news made ready): ~IoThread must not stop its loop in
  // between. Whatever the timing, every round ends with the pidfd closed and
  // on_gone told once; the handle outlives the io thread (ASan: no use of its
  // destroyed context when the handle goes). The pauses only make the old window
  // likely (a review's repro: 50 of 50 rounds left the pidfd open).
  GroupGuard guard;
  for (int round = 0; round < 20; ++round) {
    std::shared_ptr<Process> keep;
    auto gone = std::make_shared<std::atomic<int>>(0);
    {
      IoThread io;
      ProcessEvents events;
      events.on_output = [](stream_kind, std::string_view) {};
      events.on_exit = [](const ExitInfo&) { std::this_thread::sleep_for(200us); }; // an owner's work
      auto r = spawn_process(io, SpawnSpec{{"sleep", "1000"}, "", {}, false}, events);
      CAF_REQUIRE(r.ok());
      keep = *r;
      guard.pgid = keep->pid();
      keep->terminate(10s, [gone] { ++*gone; }); // SIGTERM ends sleep at once
      std::this_thread::sleep_for(100us);
    }
    CAF_CHECK_EQUAL(open_pidfds(), 0);
    CAF_CHECK_EQUAL(gone->load(), 1);
    CAF_CHECK(group_gone(guard.pgid));
    keep.reset();
  }
}

CAF_TEST(an owner that does not ack stalls the output at the limit; acks let it all through) {
  IoThread io;
  Spawned s;
  s.c->count_only = true;
  s.c->acking = false;
  constexpr std::size_t total = 256u << 20;
  start(io, s, SpawnSpec{{"head", "-c", std::to_string(total), "/dev/zero"}, "", {}, false});
  CAF_REQUIRE(s.c->wait_delivered(kOutputAckLimit));
  // Paused: head ends up blocked on its full pipe, and the io thread, gone round
  // its loop since with that pipe readable, reads none of it. Were reading not
  // paused, head would run to its end instead, or the round would deliver more.
  auto deadline = std::chrono::steady_clock::now() + kWait;
  auto exited = [&] {
    std::lock_guard lock(s.c->mtx);
    return s.c->exit.has_value();
  };
  while (!blocked_writing(s.p->pid(), 1) && !exited() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(1ms);
  if (!blocked_writing(s.p->pid(), 1))
    CAF_FAIL("head is not blocked writing to its pipe (exited: " << exited() << "): reading was not paused");
  std::size_t seen = 0;
  {
    std::lock_guard lock(s.c->mtx);
    seen = s.c->delivered;
  }
  CAF_REQUIRE(jp::testing::io_went_round(io, kWait));
  {
    std::lock_guard lock(s.c->mtx);
    CAF_CHECK_EQUAL(s.c->delivered, seen);
    CAF_CHECK_LESS_OR_EQUAL(s.c->delivered, kOutputAckLimit + kOutputChunkMax);
    CAF_CHECK(!s.c->exit.has_value());
  }
  s.c->start_acking();
  CAF_REQUIRE(s.c->wait_exit());
  std::lock_guard lock(s.c->mtx);
  CAF_CHECK(s.c->exit->success());
  CAF_CHECK_EQUAL(s.c->out_bytes, total);
  CAF_CHECK(s.c->max_chunk <= kOutputChunkMax);
}

CAF_TEST(output left in the pipe of a paused stream still arrives before on_exit) {
  IoThread io;
  Spawned s;
  s.c->count_only = true;
  s.c->acking = false;
  // Past the limit by less than any pipe holds, so the writing completes; the leader
  // exits only once the stream is surely paused (the limit was reached), and what was
  // left in the pipe must not be lost.
  constexpr std::size_t total = kOutputAckLimit + 32 * 1024;
  start(io, s,
        SpawnSpec{{"sh", "-c", "head -c " + std::to_string(total) + " /dev/zero; read line"}, "", {}, true});
  CAF_REQUIRE(s.c->wait_delivered(kOutputAckLimit));
  CAF_CHECK(s.p->write_stdin("go\n"));
  CAF_REQUIRE(s.c->wait_exit()); // never acked
  std::lock_guard lock(s.c->mtx);
  CAF_CHECK(s.c->exit->success());
  CAF_CHECK_EQUAL(s.c->out_bytes, total);
  CAF_CHECK_EQUAL(s.c->exits, 1);
}

CAF_TEST(a leader exiting while its stream is paused still reports the exit) {
  IoThread io;
  Spawned s;
  s.c->count_only = true;
  s.c->acking = false;
  // The background writer ends up blocked on the pipe; the leader exits when told to.
  start(io, s, SpawnSpec{{"sh", "-c", "head -c 8388608 /dev/zero & read line"}, "", {}, true});
  CAF_REQUIRE(s.c->wait_delivered(kOutputAckLimit));
  CAF_CHECK(s.p->write_stdin("go\n"));
  CAF_REQUIRE(s.c->wait_exit()); // never acked
  CAF_CHECK(group_gone(s.p->pid()));
  std::lock_guard lock(s.c->mtx);
  CAF_CHECK(s.c->exit->success());
  CAF_CHECK_LESS(s.c->delivered, 8388608u); // the writer was killed with its group
  CAF_CHECK_EQUAL(s.c->exits, 1);
}

// The process an output read's seam asks, and what the seam found (on_output_read).
std::atomic<Process*> g_read_process{nullptr};
std::atomic<int> g_reads_seen{0};
std::atomic<int> g_reads_told_unread{0};

void ask_at_output_read() {
  if (auto* p = g_read_process.load()) {
    ++g_reads_seen;
    if (p->output_unread())
      ++g_reads_told_unread;
  }
}

CAF_TEST(output read from a tool and not yet delivered is unread) {
  // The io thread takes a chunk out of its descriptor before it counts it: asked in
  // between (as a look's probe may, on another thread), the chunk was in neither
  // count, and a prompt after a line typed to a shell was believed with its answer
  // still on its way (a look answered "waiting" without `got hi`). The seam asks at
  // that point, from the io thread itself: what tells it there is the read under way.
  for (bool pty : {false, true}) {
    CAF_MESSAGE("pty: " << pty);
    IoThread io;
    Spawned s;
    SpawnSpec spec{{"sh", "-c", "stty -echo 2>/dev/null; read a; echo \"got $a\"; exec sleep 1000"}, "", {}, !pty};
    spec.pty = pty;
    start(io, s, spec);
    g_reads_seen = 0;
    g_reads_told_unread = 0;
    g_read_process = s.p.get();
    on_output_read(ask_at_output_read);
    CAF_CHECK(s.p->write_stdin("hi\n"));
    bool got = s.c->wait_out_contains("got hi");
    on_output_read(nullptr);
    g_read_process = nullptr;
    CAF_REQUIRE(got);
    CAF_CHECK(g_reads_seen.load() > 0);
    CAF_CHECK_EQUAL(g_reads_told_unread.load(), g_reads_seen.load());
    CAF_CHECK(terminate_and_wait(*s.p, std::chrono::milliseconds(0)));
  }
}

CAF_TEST(input the tool has not read and output its owner has not taken are told) {
  // What the input-wait probe asks before it believes a prompt or a blocked read:
  // input on its way to the tool (in its pipe, or held by its terminal), output on
  // its way to the owner (in the pipe, or delivered and not acked).
  for (bool pty : {false, true}) {
    CAF_MESSAGE("pty: " << pty);
    IoThread io;
    Spawned idle, reader;
    idle.c->acking = false;
    auto spec = [pty](std::vector<std::string> argv) {
      SpawnSpec s{std::move(argv), "", {}, !pty};
      s.pty = pty;
      return s;
    };
    start(io, idle, spec({"sh", "-c", "stty -echo 2>/dev/null; echo ready; exec sleep 1000"}));
    CAF_REQUIRE(idle.c->wait_out_contains("ready"));
    CAF_CHECK(idle.p->output_unread()); // delivered, not acked
    idle.c->start_acking();
    // (Once the io thread is out of its read: one under way counts as unread.)
    CAF_CHECK(testing::wait_for([&] { return !idle.p->output_unread(); }));
    CAF_CHECK(!idle.p->input_unread());
    CAF_CHECK(idle.p->write_stdin("x\n"));
    CAF_CHECK(idle.p->input_unread()); // sleep never reads it
    // One that reads the line: not unread once what it printed after it came.
    start(io, reader, spec({"sh", "-c", "stty -echo 2>/dev/null; echo ready; read a; echo took; exec sleep 1000"}));
    CAF_REQUIRE(reader.c->wait_out_contains("ready"));
    CAF_CHECK(reader.p->write_stdin("x\n"));
    CAF_REQUIRE(reader.c->wait_out_contains("took"));
    CAF_CHECK(!reader.p->input_unread());
    CAF_CHECK(testing::wait_for([&] { return !reader.p->output_unread(); }));
  }
}

CAF_TEST(write_stdin refuses input beyond the queue limit when the child never reads) {
  IoThread io;
  Spawned s;
  start(io, s, SpawnSpec{{"sleep", "1000"}, "", {}, true});
  const std::string mib(1 << 20, 'x');
  int accepted = 0;
  bool refused = false;
  for (int i = 0; i < 64 && !refused; ++i) {
    if (s.p->write_stdin(mib))
      ++accepted;
    else
      refused = true;
  }
  CAF_CHECK(refused);
  CAF_CHECK_GREATER_OR_EQUAL(accepted, 16); // the limit itself is accepted
  auto queued = s.p->stdin_queued();
  CAF_CHECK_LESS_OR_EQUAL(queued, kStdinQueueLimit);
  CAF_CHECK_GREATER(queued + mib.size(), kStdinQueueLimit); // refused only when it would pass
  CAF_CHECK(!s.p->write_stdin(mib));
  CAF_CHECK(s.p->write_stdin("")); // nothing to queue is never refused
  CAF_REQUIRE(terminate_and_wait(*s.p, 0ms));
  CAF_CHECK_EQUAL(s.p->stdin_queued(), 0u); // the unwritten rest was dropped
}

namespace {

SpawnSpec on_pty(std::vector<std::string> argv) {
  SpawnSpec spec;
  spec.argv = std::move(argv);
  spec.pty = true;
  return spec;
}

/// The session's processes, found in /proc (field 6 of stat).
std::vector<pid_t> session_of(pid_t sid) {
  std::vector<pid_t> out;
  for (auto& e : std::filesystem::directory_iterator("/proc")) {
    auto name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos)
      continue;
    // Plain read(2): a process that ends while being read gives an error (as for
    // marked_sleep::argv0), where an ifstream throws.
    int fd = ::open((e.path() / "stat").c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
      continue;
    char buf[1024];
    auto n = ::read(fd, buf, sizeof buf);
    ::close(fd);
    if (n <= 0)
      continue;
    std::string text(buf, static_cast<size_t>(n));
    auto close = text.rfind(')');
    if (close == std::string::npos)
      continue;
    std::istringstream rest(text.substr(close + 2));
    std::string state;
    long ppid = 0, pgrp = 0, session = 0;
    rest >> state >> ppid >> pgrp >> session;
    if (session == sid)
      out.push_back(std::stoi(name));
  }
  return out;
}

/// Kills what is left of a session when a test fails early.
struct SessionGuard {
  pid_t sid = 0;
  ~SessionGuard() {
    if (sid > 0)
      for (pid_t p : session_of(sid))
        ::kill(p, SIGKILL);
  }
};

} // namespace

CAF_TEST(a pty child has a terminal on 0 1 2 and leads its own session) {
  IoThread io;
  Spawned s;
  start(io, s, on_pty({"sh", "-c", "test -t 0 && test -t 1 && test -t 2 && echo tty; "
                                   "stty size; echo \"$TERM\"; cut -d' ' -f6 /proc/$$/stat"}));
  CAF_REQUIRE(s.c->wait_exit());
  auto out = s.c->out_copy();
  CAF_CHECK(out.find("tty\r\n24 80\r\nxterm-256color\r\n") != std::string::npos);
  CAF_CHECK(out.find(std::to_string(s.p->pid())) != std::string::npos); // sid == its pid
  std::lock_guard lock(s.c->mtx);
  CAF_CHECK(s.c->exit->success());
}

CAF_TEST(typing into a pty reaches the child and resize is seen) {
  IoThread io;
  Spawned s;
  start(io, s, on_pty({"sh", "-c", "read line; echo \"got $line\"; "
                                   "trap 'stty size; exit 0' WINCH; echo ready; while :; do sleep 0.05; done"}));
  s.p->write_stdin("hello\n");
  CAF_REQUIRE(s.c->wait_out_contains("got hello"));
  CAF_CHECK(s.c->out_copy().find("hello\r\n") != std::string::npos); // the terminal echoes
  CAF_REQUIRE(s.c->wait_out_contains("ready"));
  s.p->resize(40, 120);
  CAF_REQUIRE(s.c->wait_out_contains("40 120"));
  CAF_REQUIRE(s.c->wait_exit());
}

CAF_TEST(terminating a pty shell kills every job of its session) {
  IoThread io;
  Spawned s;
  // An interactive shell with job control: each job is a process group of its own.
  start(io, s, on_pty({"bash", "--norc", "--noprofile", "-i"}));
  SessionGuard guard{s.p->pid()};
  s.p->write_stdin("sleep 1000 & sleep 1001 & echo started-$((6*7))\n");
  CAF_REQUIRE(s.c->wait_out_contains("started-42"));
  auto members = session_of(s.p->pid());
  CAF_CHECK(members.size() >= 3u);
  std::vector<pid_t> groups;
  for (pid_t p : members)
    groups.push_back(::getpgid(p));
  std::sort(groups.begin(), groups.end());
  groups.erase(std::unique(groups.begin(), groups.end()), groups.end());
  CAF_CHECK(groups.size() >= 3u); // the shell's and one per job
  CAF_REQUIRE(terminate_and_wait(*s.p, 5000ms));
  CAF_CHECK(session_of(s.p->pid()).empty());
  for (pid_t p : members)
    CAF_CHECK(pid_gone(p));
}

CAF_TEST(a pty child exiting leaves no job of its session behind) {
  IoThread io;
  Spawned s;
  start(io, s, on_pty({"bash", "--norc", "--noprofile", "-i"}));
  SessionGuard guard{s.p->pid()};
  s.p->write_stdin("sleep 1000 & echo started-$((6*7))\n");
  CAF_REQUIRE(s.c->wait_out_contains("started-42"));
  auto members = session_of(s.p->pid());
  s.p->write_stdin("exit\n");
  CAF_REQUIRE(s.c->wait_exit());
  CAF_CHECK(session_of(s.p->pid()).empty());
  for (pid_t p : members)
    CAF_CHECK(pid_gone(p));
}

namespace {

/// What a child sees of how it was started: its argv[0], whether it leads its
/// group and its session, its blocked and ignored signals, its open fds, its cwd,
/// and whether it has a terminal; one line each.
const char* kStartProbe =
  "echo \"$0\"; read -r _ _ _ _ pgrp sid _ < /proc/$$/stat; "
  "[ \"$pgrp\" = $$ ] && echo group; [ \"$sid\" = $$ ] && echo session; "
  "grep '^SigBlk' /proc/$$/status | tr '\\t' ' '; "
  // Standard signals only: glibc's posix_spawn leaves its internal ones (32, 33) ignored.
  "ign=$(sed -n 's/^SigIgn:\\t//p' /proc/$$/status); echo \"ignored: $(( 0x$ign & 0x7fffffff ))\"; "
  "for f in /proc/$$/fd/*; do printf '%s ' \"${f##*/}\"; done; echo; pwd -P; "
  "if test -t 0; then echo tty; else echo notty; fi";

/// The probe's report under one launcher, with signals ignored here to see that
/// the child gets them back at their default: SIGPIPE (as the CLI ignores it),
/// SIGINT and SIGQUIT (as glibc's system() does while it runs), and SIGHUP ignored
/// through an SA_SIGINFO action.
std::string start_report(launcher_kind kind, SpawnSpec spec) {
  use_launcher(kind);
  auto pipe = ::signal(SIGPIPE, SIG_IGN);
  auto interrupt = ::signal(SIGINT, SIG_IGN);
  auto quit = ::signal(SIGQUIT, SIG_IGN);
  struct sigaction ignore_info{}, hangup{};
  ignore_info.sa_flags = SA_SIGINFO;
  ignore_info.sa_sigaction = reinterpret_cast<void (*)(int, siginfo_t*, void*)>(reinterpret_cast<void (*)()>(SIG_IGN));
  ::sigaction(SIGHUP, &ignore_info, &hangup);
  IoThread io;
  Spawned s;
  start(io, s, std::move(spec));
  ::signal(SIGPIPE, pipe);
  ::signal(SIGINT, interrupt);
  ::signal(SIGQUIT, quit);
  ::sigaction(SIGHUP, &hangup, nullptr);
  if (!s.c->wait_exit())
    return "no exit";
  return s.c->out_copy();
}

/// use_clone3(on) for a scope; as it was after, whatever happens in it.
struct Clone3As {
  bool was = clone3_in_use();
  explicit Clone3As(bool on) { use_clone3(on); }
  ~Clone3As() { use_clone3(was); }
  Clone3As(const Clone3As&) = delete;
  Clone3As& operator=(const Clone3As&) = delete;
};

/// Whether this kernel has clone3 with CLONE_CLEAR_SIGHAND (5.5) and nothing
/// filters our system calls (no seccomp filter that might refuse it).
bool clone3_expected() {
  struct utsname u{};
  int major = 0, minor = 0;
  if (::uname(&u) != 0 || std::sscanf(u.release, "%d.%d", &major, &minor) != 2)
    return false;
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);)
    if (line.starts_with("Seccomp:"))
      return line.ends_with("0") && (major > 5 || (major == 5 && minor >= 5));
  return false;
}

} // namespace

CAF_TEST(every launcher starts a child alike) {
  SpawnSpec piped{{"sh", "-c", kStartProbe}, "/", {}, true, true};
  // An fd of ours without O_CLOEXEC, as a library might leave one.
  int null_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  int stray = ::fcntl(null_fd, F_DUPFD, 10); // past what the child's listing may hold
  ::close(null_fd);
  CAF_REQUIRE(stray >= 10);
  CAF_REQUIRE_EQUAL(::fcntl(stray, F_GETFD) & FD_CLOEXEC, 0);
  auto boost = start_report(launcher_kind::boost_v2, piped);
  auto spawn = start_report(launcher_kind::posix_spawn, piped);
  auto vfork = start_report(launcher_kind::vfork, piped);
  // Our launcher where the kernel has no clone3: every handler reset in the child.
  std::string vfork_clone;
  {
    Clone3As off(false);
    vfork_clone = start_report(launcher_kind::vfork, piped);
  }
  ::close(stray);
  CAF_CHECK_EQUAL(boost, spawn);
  CAF_CHECK_EQUAL(boost, vfork);
  CAF_CHECK_EQUAL(boost, vfork_clone);
  // argv[0] as given; its group's leader, and its session's when we have a
  // terminal it must not reach; nothing blocked or ignored; only 0-2 and the control
  // channel (3) open (4 is the listing's own): not the stray fd above, nor one this
  // test process inherited without O_CLOEXEC; no terminal.
  std::string leads = has_controlling_terminal() ? "group\nsession\n" : "group\n";
  CAF_CHECK_EQUAL(boost.substr(0, boost.find("0 1 2 3 ")),
                  "sh\n" + leads + "SigBlk: 0000000000000000\nignored: 0\n");
  CAF_CHECK(boost.find("\n0 1 2 3 4 \n") != std::string::npos);
  CAF_CHECK(boost.find("\n/\nnotty\n") != std::string::npos);

  auto boost_pty = start_report(launcher_kind::boost_v2, on_pty({"sh", "-c", kStartProbe}));
  auto spawn_pty = start_report(launcher_kind::posix_spawn, on_pty({"sh", "-c", kStartProbe}));
  auto vfork_pty = start_report(launcher_kind::vfork, on_pty({"sh", "-c", kStartProbe}));
  CAF_CHECK_EQUAL(boost_pty, spawn_pty);
  CAF_CHECK_EQUAL(boost_pty, vfork_pty);
  CAF_CHECK(boost_pty.find("group\r\nsession\r\n") != std::string::npos);
  CAF_CHECK(boost_pty.find("tty\r\n") != std::string::npos);
}

namespace {

/// `value`, or the hard limit of `resource` we run under where that is lower (what
/// resource_limits gives a child: none above it).
uint64_t within_ours(int resource, uint64_t value) {
  rlimit now{};
  ::getrlimit(resource, &now);
  return now.rlim_max == RLIM_INFINITY ? value : std::min<uint64_t>(value, now.rlim_max);
}

/// A child's limits as bash reports them (KiB, processes, seconds, hard seconds,
/// KiB, fds, core KiB), then whether it could raise its open files, then a lowered
/// soft one.
constexpr const char* kLimitsProbe =
  "ulimit -d; ulimit -u; ulimit -t; ulimit -H -t; ulimit -f; ulimit -n; ulimit -H -c; "
  "ulimit -n 100000 2>/dev/null && echo raised || echo held; ulimit -S -n 32 && ulimit -n";

} // namespace

CAF_TEST(every launcher but posix_spawn gives a child resource limits it cannot raise) {
  SpawnSpec limited{{"bash", "-c", kLimitsProbe}, "", {}, false};
  limited.limits = ToolLimits{64, 4000, 30, 5, 64};
  // (Held unless it has CAP_SYS_RESOURCE, which lets any process raise them.)
  auto expected = fmt::format("{}\n{}\n{}\n{}\n{}\n{}\n0\n{}\n32\n", within_ours(RLIMIT_DATA, 64ull << 20) / 1024,
                              within_ours(RLIMIT_NPROC, 4000), std::min<uint64_t>(30, within_ours(RLIMIT_CPU, 31) - 1),
                              within_ours(RLIMIT_CPU, 31), within_ours(RLIMIT_FSIZE, 5ull << 20) / 1024,
                              within_ours(RLIMIT_NOFILE, 64),
                              jp::testing::may_raise_hard_limits() ? "raised" : "held");
  CAF_CHECK_EQUAL(start_report(launcher_kind::boost_v2, limited), expected);
  {
    Clone3As off(false);
    CAF_CHECK_EQUAL(start_report(launcher_kind::vfork, limited), expected);
  }
  CAF_CHECK_EQUAL(start_report(launcher_kind::vfork, limited), expected);
  // posix_spawn cannot set them before the program runs: the spawn is refused, saying why.
  use_launcher(launcher_kind::posix_spawn);
  IoThread io;
  auto refused = spawn_process(io, limited, ProcessEvents{[](stream_kind, std::string_view) {}, [](const ExitInfo&) {}});
  use_launcher(launcher_kind::vfork);
  CAF_REQUIRE(!refused.ok());
  CAF_CHECK(refused.error().find("runtime.tool_limits") != std::string::npos);
  CAF_CHECK(refused.error().find("close_range") != std::string::npos);
}

CAF_TEST(a child gets back the soft limit on open files we raised for ourselves) {
  // As when we started at 256 and raised ours to the hard limit (io_thread.cpp).
  rlimit files{};
  ::getrlimit(RLIMIT_NOFILE, &files);
  CAF_REQUIRE(files.rlim_cur >= 256);
  auto was = give_children_open_files(256, files.rlim_max);
  SpawnSpec plain{{"bash", "-c", "ulimit -S -n; ulimit -H -n"}, "", {}, false};
  auto hard = files.rlim_max == RLIM_INFINITY ? std::string("unlimited") : std::to_string(files.rlim_max);
  auto back = fmt::format("256\n{}\n", hard);
  CAF_CHECK_EQUAL(start_report(launcher_kind::boost_v2, plain), back);
  CAF_CHECK_EQUAL(start_report(launcher_kind::vfork, plain), back);
  // posix_spawn cannot give it back: the child has ours (started all the same).
  CAF_CHECK_EQUAL(start_report(launcher_kind::posix_spawn, plain), fmt::format("{}\n{}\n", files.rlim_cur, hard));
  // The tool's own open_files wins.
  SpawnSpec own = plain;
  own.limits.open_files = 64;
  CAF_CHECK_EQUAL(start_report(launcher_kind::vfork, own), "64\n64\n");
  // Nothing to give back (ours was not raised): the child has ours.
  give_children_open_files(0, 0);
  CAF_CHECK_EQUAL(start_report(launcher_kind::vfork, plain), fmt::format("{}\n{}\n", files.rlim_cur, hard));
  give_children_open_files(was.first, was.second);
}

CAF_TEST(a limit stays within our own hard one and the CPU time s soft one a second below its hard one) {
  auto same = [](std::optional<ResourceLimit> got, uint64_t soft, uint64_t hard) {
    return got && got->soft == soft && got->hard == hard;
  };
  CAF_CHECK(!resource_limit(RLIMIT_CPU, 0, 100, 1)); // not set: none
  CAF_CHECK(same(resource_limit(RLIMIT_CPU, 30, UINT64_MAX, 1), 30, 31));
  // Our hard limit the ceiling: the soft one below it still, so SIGXCPU comes first.
  CAF_CHECK(same(resource_limit(RLIMIT_CPU, 30, 10, 1), 9, 10));
  CAF_CHECK(same(resource_limit(RLIMIT_CPU, 30, 1, 1), 1, 1));
  CAF_CHECK(same(resource_limit(RLIMIT_NOFILE, 64, 32), 32, 32));
  CAF_CHECK(same(resource_limit(RLIMIT_NOFILE, 64, 1024), 64, 64));
}

CAF_TEST(a child past its memory CPU time or file size limit fails and its exit says which limit) {
  IoThread io;
  // perl (Debian's perl-base, always there) asking for 256 MiB under 64.
  Spawned memory;
  SpawnSpec big{{"perl", "-e", "my $x = 'a' x (256 << 20); print qq(allocated\n)"}, "", {}, false};
  big.limits.memory_mb = 64;
  start(io, memory, big);
  CAF_REQUIRE(memory.c->wait_exit());
  CAF_CHECK(!memory.c->exit->success());
  CAF_CHECK_EQUAL(memory.c->out_copy(), "");
  Spawned busy;
  SpawnSpec spin{{"bash", "-c", "while :; do :; done"}, "", {}, false};
  spin.limits.cpu_secs = 1;
  start(io, busy, spin);
  CAF_REQUIRE(busy.c->wait_exit());
  CAF_CHECK(busy.c->exit->signaled);
  CAF_CHECK_EQUAL(busy.c->exit->signal, SIGXCPU);
  CAF_CHECK_EQUAL(busy.c->exit->describe(), "killed by signal 24 (SIGXCPU): it used up its CPU time limit");
  Spawned writer;
  SpawnSpec large{{"bash", "-c", "head -c 2M /dev/zero > big; wc -c < big; exec head -c 2M /dev/zero > again"},
                  "", {}, false};
  jp::testing::temp_dir dir;
  large.cwd = dir.path.string();
  large.limits.file_size_mb = 1;
  start(io, writer, large);
  CAF_REQUIRE(writer.c->wait_exit());
  CAF_CHECK_EQUAL(writer.c->out_copy(), "1048576\n");
  CAF_CHECK_EQUAL(writer.c->exit->describe(), "killed by signal 25 (SIGXFSZ): it wrote past its file size limit");
}

namespace {

/// Everything a child of ours wrote to `fd` until its end; `fd` closed after.
std::string read_to_end(int fd) {
  std::string out;
  char buf[512];
  for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) != 0;)
    if (n > 0)
      out.append(buf, static_cast<size_t>(n));
    else if (errno != EINTR)
      break;
  ::close(fd);
  return out;
}

/// The status of `pid`, a child own_child made ours, reaped and let go.
int reaped_status(pid_t pid) {
  int status = 0;
  CAF_CHECK_EQUAL(::waitpid(pid, &status, 0), pid);
  disown_child(pid);
  return status;
}

/// What `probe` printed when launch_child started it under `kind`, in its own
/// session or only its own group; the child reaped (killed if it hangs).
std::string launched_report(launcher_kind kind, bool session, const char* probe) {
  int p[2];
  CAF_REQUIRE_EQUAL(::pipe2(p, O_CLOEXEC), 0);
  ChildLaunch l;
  l.argv = {"sh", "-c", probe};
  l.env = spawn_environment({}, {}, {});
  l.out = l.err = p[1];
  l.session = session;
  auto launched = launch_child(l, kind);
  ::close(p[1]);
  CAF_REQUIRE_EQUAL(launched.error, 0);
  own_child(launched.pid, SIGKILL);
  auto out = read_to_end(p[0]);
  int status = reaped_status(launched.pid);
  CAF_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  return out;
}

/// The exit code of `pid`, a child of ours that checks something by itself (-1
/// when it was killed); killed if the test aborts first.
int exit_code_of(pid_t pid) {
  CAF_REQUIRE(pid > 0);
  own_child(pid, SIGKILL);
  int status = 0;
  CAF_REQUIRE_EQUAL(::waitpid(pid, &status, 0), pid);
  disown_child(pid);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

} // namespace

CAF_TEST(every launcher gives a child its own session or only its own group) {
  // The session it is in: its own, or ours (then it leads its group in it).
  const char* probe = "read -r _ _ _ _ pgrp sid _ < /proc/$$/stat; "
                      "[ \"$pgrp\" = $$ ] && echo group; [ \"$sid\" = $$ ] && echo session; "
                      "echo \"sid $sid\"";
  auto ours = fmt::format("sid {}\n", ::getsid(0));
  for (auto kind : {launcher_kind::boost_v2, launcher_kind::posix_spawn, launcher_kind::vfork}) {
    auto own = launched_report(kind, true, probe);
    CAF_CHECK(own.starts_with("group\nsession\nsid "));
    CAF_CHECK_NOT_EQUAL(own.substr(own.find("sid ")), ours);
    CAF_CHECK_EQUAL(launched_report(kind, false, probe), "group\n" + ours);
  }
}

namespace {

/// A child waiting for a line, launched by `kind` with its pidfd asked for: the
/// pidfd is the child's (/proc says whose), not readable while it waits, readable
/// once it ended.
void check_pidfd(launcher_kind kind) {
  int p[2], in[2];
  CAF_REQUIRE_EQUAL(::pipe2(p, O_CLOEXEC), 0);
  CAF_REQUIRE_EQUAL(::pipe2(in, O_CLOEXEC), 0);
  ChildLaunch l;
  l.argv = {"sh", "-c", "read -r line; echo \"got $line\""};
  l.env = spawn_environment({}, {}, {});
  l.in = in[0];
  l.out = l.err = p[1];
  l.session = false;
  l.want_pidfd = true;
  auto launched = launch_child(l, kind);
  ::close(p[1]);
  ::close(in[0]);
  CAF_REQUIRE_EQUAL(launched.error, 0);
  own_child(launched.pid, SIGKILL);
  // The pidfd is ours to close, whatever fails below.
  std::unique_ptr<int, void (*)(int*)> pidfd(&launched.pidfd, [](int* fd) {
    if (*fd >= 0)
      ::close(std::exchange(*fd, -1));
  });
  CAF_CHECK_EQUAL(launched.pidfd_error, 0);
  CAF_REQUIRE(launched.pidfd >= 0);
  CAF_CHECK_EQUAL(pid_of_pidfd(launched.pidfd), std::to_string(launched.pid));
  pollfd running{launched.pidfd, POLLIN, 0};
  CAF_CHECK_EQUAL(::poll(&running, 1, 0), 0);
  CAF_REQUIRE_EQUAL(::write(in[1], "x\n", 2), 2);
  ::close(in[1]);
  pollfd ended{launched.pidfd, POLLIN, 0};
  CAF_CHECK_EQUAL(::poll(&ended, 1, 30000), 1);
  CAF_CHECK_EQUAL(ended.revents, POLLIN);
  auto out = read_to_end(p[0]);
  reaped_status(launched.pid);
  CAF_CHECK_EQUAL(out, "got x\n");
}

/// The pidfd our launcher gets from the kernel with the child (clone3's or clone's
/// CLONE_PIDFD), not one opened after: vfork_exec itself, a child that exits at once.
void check_pidfd_from_clone() {
  char file[] = "/bin/true";
  char* argv[] = {file, nullptr};
  char* envp[] = {nullptr};
  VforkPlan plan;
  plan.file = file;
  plan.path = "/bin";
  plan.argv = argv;
  plan.envp = envp;
  int null_fd = ::open("/dev/null", O_RDWR | O_CLOEXEC);
  CAF_REQUIRE(null_fd >= 0);
  plan.in = plan.out = plan.err = null_fd;
  plan.session = false;
  plan.want_pidfd = true;
  pid_t pid = vfork_exec(plan);
  ::close(null_fd);
  int error = plan.error;
  CAF_REQUIRE_EQUAL(error, 0);
  CAF_REQUIRE(pid > 0);
  own_child(pid, SIGKILL);
  CAF_CHECK(plan.pidfd >= 0);
  if (plan.pidfd >= 0) {
    CAF_CHECK_EQUAL(pid_of_pidfd(plan.pidfd), std::to_string(pid));
    pollfd ended{plan.pidfd, POLLIN, 0};
    CAF_CHECK_EQUAL(::poll(&ended, 1, 30000), 1);
    CAF_CHECK_EQUAL(ended.revents, POLLIN);
    ::close(plan.pidfd);
  }
  CAF_CHECK_EQUAL(reaped_status(pid), 0);
}

} // namespace

CAF_TEST(every launcher hands over the pidfd of its child) {
  check_pidfd(launcher_kind::boost_v2);
  check_pidfd(launcher_kind::posix_spawn);
  check_pidfd(launcher_kind::vfork);
  check_pidfd_from_clone();
  if (clone3_expected())
    CAF_CHECK_EQUAL(clone3_refusal(), 0); // not a mistake of ours hidden by the fallback
  CAF_MESSAGE((clone3_in_use() ? "through clone3" : "through clone (clone3 refused here)"));
  // Where clone3 is missing or refused: clone's pidfd.
  Clone3As off(false);
  check_pidfd(launcher_kind::vfork);
  check_pidfd_from_clone();
}

CAF_TEST(the child resets every standard signal it may inherit ignored) {
  // What the child resets itself: every standard signal a process can ignore.
  auto reset = ignored_signals_reset();
  for (int sig : {SIGHUP, SIGINT, SIGQUIT, SIGPIPE, SIGTERM, SIGCHLD, SIGUSR1, SIGTTOU, SIGSYS})
    CAF_CHECK(reset >> (sig - 1) & 1);
  CAF_CHECK_EQUAL(reset >> (SIGKILL - 1) & 1, 0u);
  CAF_CHECK_EQUAL(reset >> (SIGSTOP - 1) & 1, 0u);
}

CAF_TEST(a process without a controlling terminal is told so and one with a terminal is not) {
  // In a child of ours: first in a session of its own (no terminal), then with a
  // pseudo-terminal made its controlling one. Only system calls there (we have
  // threads): 0 when both answers are right, else which one was wrong.
  pid_t pid = ::fork();
  if (pid == 0) {
    if (::setsid() < 0)
      ::_exit(10);
    if (has_controlling_terminal())
      ::_exit(11);
    int master = ::posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
    char name[128];
    if (master < 0 || ::grantpt(master) != 0 || ::unlockpt(master) != 0 || ::ptsname_r(master, name, sizeof name) != 0)
      ::_exit(12);
    int slave = ::open(name, O_RDWR | O_CLOEXEC); // a session leader without one: it becomes ours
    if (slave < 0)
      ::_exit(13);
    ::_exit(has_controlling_terminal() ? 0 : 14);
  }
  CAF_CHECK_EQUAL(exit_code_of(pid), 0);
}

CAF_TEST(a member of a session whose leader gains a terminal later still has none) {
  // What has_controlling_terminal keeps between calls rests on this: only a leader
  // gains a terminal, and the members it had before do not get it. In a child of
  // ours leading a session of its own, a member asks, the leader then gains a
  // pseudo-terminal, and the member asks again: told none, and /dev/tty refused.
  pid_t pid = ::fork();
  if (pid == 0) {
    int go[2];
    if (::setsid() < 0 || ::pipe(go) != 0)
      ::_exit(10);
    pid_t member = ::fork();
    if (member == 0) {
      ::close(go[1]); // a leader that dies ends the wait below
      char c;
      if (has_controlling_terminal() || ::read(go[0], &c, 1) != 1)
        ::_exit(20);
      if (has_controlling_terminal())
        ::_exit(21);
      int fd = ::open("/dev/tty", O_RDONLY | O_NOCTTY);
      ::_exit(fd < 0 && errno == ENXIO ? 0 : 22);
    }
    int master = ::posix_openpt(O_RDWR | O_NOCTTY);
    char name[128];
    if (member < 0 || master < 0 || ::grantpt(master) != 0 || ::unlockpt(master) != 0 ||
        ::ptsname_r(master, name, sizeof name) != 0 || ::open(name, O_RDWR) < 0 || !has_controlling_terminal())
      ::_exit(11);
    int status = 0;
    if (::write(go[1], "x", 1) != 1 || ::waitpid(member, &status, 0) != member || !WIFEXITED(status))
      ::_exit(12);
    ::_exit(WEXITSTATUS(status));
  }
  CAF_CHECK_EQUAL(exit_code_of(pid), 0);
}

CAF_TEST(every child leads its own session when the benchmark asks for it) {
  use_own_sessions(true); // bench/run --child-session always
  auto report = start_report(launcher_kind::vfork, SpawnSpec{{"sh", "-c", kStartProbe}, "/", {}, true, true});
  use_own_sessions(false);
  CAF_CHECK(report.starts_with("sh\ngroup\nsession\n"));
  auto by_default = start_report(launcher_kind::vfork, SpawnSpec{{"sh", "-c", kStartProbe}, "/", {}, true, true});
  CAF_CHECK_EQUAL(by_default.find("session\n") != std::string::npos, has_controlling_terminal());
}

CAF_TEST(every launcher gives a child without a stdin pipe dev null to read) {
  // Our launcher hands every such child one /dev/null of ours, opened once: it is
  // the child's fd 0 only (a second spawn finds it as the first left it), read-only.
  const char* probe = "readlink /proc/$$/fd/0; cat; echo \"end $?\"; "
                      "for f in /proc/$$/fd/*; do printf '%s ' \"${f##*/}\"; done; echo; "
                      "echo x 2>/dev/null >&0 || echo read-only";
  SpawnSpec no_stdin{{"sh", "-c", probe}, "/", {}, false, false};
  std::string expected = "/dev/null\nend 0\n0 1 2 3 \nread-only\n"; // 3: the listing's own
  for (auto kind : {launcher_kind::boost_v2, launcher_kind::posix_spawn, launcher_kind::vfork, launcher_kind::vfork})
    CAF_CHECK_EQUAL(start_report(kind, no_stdin), expected);
  use_launcher(launcher_kind::vfork);
}

CAF_TEST(our dev null closed by someone else is not handed on under its old number) {
  // An embedder's "close what is not mine" closes our /dev/null; the lowest free
  // number goes to the next open, here a pipe holding a secret: a child must still
  // read /dev/null, never that pipe.
  use_launcher(launcher_kind::vfork);
  const char* probe = "readlink /proc/$$/fd/0; cat; echo \"end $?\"";
  SpawnSpec no_stdin{{"sh", "-c", probe}, "/", {}, false, false};
  CAF_REQUIRE_EQUAL(start_report(launcher_kind::vfork, no_stdin), "/dev/null\nend 0\n");
  int ours = -1;
  for (auto& e : std::filesystem::directory_iterator("/proc/self/fd")) {
    int fd = std::stoi(e.path().filename().string());
    std::error_code ec;
    if (std::filesystem::read_symlink(e.path(), ec) == "/dev/null" && (::fcntl(fd, F_GETFD) & FD_CLOEXEC) &&
        (::fcntl(fd, F_GETFL) & O_ACCMODE) == O_RDONLY)
      ours = std::max(ours, fd); // the test's own are opened and closed around it
  }
  CAF_REQUIRE(ours >= 0);
  ::close(ours);
  int secret[2];
  CAF_REQUIRE_EQUAL(::pipe2(secret, O_CLOEXEC), 0);
  int lowest = std::min(secret[0], secret[1]);
  CAF_CHECK(lowest <= ours); // the number freed (or a lower one) is taken
  CAF_REQUIRE_EQUAL(::write(secret[1], "secret\n", 7), 7);
  ::close(secret[1]);
  CAF_CHECK_EQUAL(start_report(launcher_kind::vfork, no_stdin), "/dev/null\nend 0\n");
  ::close(secret[0]);
}

CAF_TEST(a kept file is opened once and again only when its number is no longer it) {
  // A plain file (as /dev/null is in a broken sandbox): the same fd at every use,
  // none opened per use; closed behind our back and its number taken, a new one.
  testing::temp_dir dir;
  auto path = dir.path / "kept";
  std::ofstream(path) << "kept\n";
  auto other = dir.path / "other";
  std::ofstream(other) << "other\n";
  auto open_fds = [] {
    std::size_t n = 0;
    for (auto& e : std::filesystem::directory_iterator("/proc/self/fd"))
      (void)e, ++n;
    return n;
  };
  KeptFile kept(path.string());
  int fd = kept.fd();
  CAF_REQUIRE(fd >= 0);
  auto before = open_fds();
  for (int i = 0; i < 100; ++i)
    CAF_REQUIRE_EQUAL(kept.fd(), fd);
  CAF_CHECK_EQUAL(open_fds(), before);
  CAF_CHECK(::fcntl(fd, F_GETFD) & FD_CLOEXEC);
  CAF_CHECK_EQUAL(::fcntl(fd, F_GETFL) & O_ACCMODE, O_RDONLY);
  ::close(fd);
  int taken = ::open(other.c_str(), O_RDONLY | O_CLOEXEC); // the lowest free number: fd's
  CAF_REQUIRE_EQUAL(taken, fd);
  int again = kept.fd();
  CAF_CHECK_NOT_EQUAL(again, fd);
  char text[8] = {};
  CAF_CHECK_EQUAL(::pread(again, text, sizeof text - 1, 0), 5);
  CAF_CHECK_EQUAL(std::string(text), "kept\n");
  CAF_CHECK_EQUAL(kept.fd(), again);
  ::close(taken);
  ::close(again);
  CAF_CHECK_EQUAL(KeptFile((dir.path / "missing").string()).fd(), -1);
}

CAF_TEST(every launcher names a missing program and a bad cwd) {
  int pidfds_before = open_pidfds();
  for (auto kind : {launcher_kind::boost_v2, launcher_kind::posix_spawn, launcher_kind::vfork}) {
    use_launcher(kind);
    IoThread io;
    auto c = std::make_shared<Collector>();
    auto missing = spawn_process(io, SpawnSpec{{"jp-no-such-program-xyz"}, "", {}, false}, c->events(c));
    CAF_REQUIRE(!missing.ok());
    CAF_CHECK_EQUAL(missing.error(), "cannot start 'jp-no-such-program-xyz': not found in PATH (its absolute "
                                     "directories: a program of the working directory runs only by a path, "
                                     "./jp-no-such-program-xyz)");
    auto relative = spawn_process(io, SpawnSpec{{"tools/jp-no-such.sh"}, "/tmp", {}, false}, c->events(c));
    CAF_REQUIRE(!relative.ok());
    CAF_CHECK_EQUAL(relative.error(), "cannot start 'tools/jp-no-such.sh': No such file or directory (a relative "
                                      "path is found from the tool's working directory, '/tmp'; the workspace, "
                                      "unless the tool sets its cwd)");
    // There, with an interpreter that is not: not where it was looked for.
    jp::testing::temp_dir scripts;
    scripts.write("crlf.sh", "#!/bin/sh\r\necho hi\r\n");
    ::chmod((scripts.path / "crlf.sh").c_str(), 0755);
    auto crlf = spawn_process(io, SpawnSpec{{"./crlf.sh"}, scripts.path.string(), {}, false}, c->events(c));
    CAF_REQUIRE(!crlf.ok());
    CAF_CHECK_EQUAL(crlf.error(), "cannot start './crlf.sh': the file is there, but the interpreter its first line "
                                  "(#!) names was not found (a line end of \\r\\n makes one), or a library it needs");
    auto bad_cwd = spawn_process(io, SpawnSpec{{"true"}, "/nonexistent/jp-dir", {}, false}, c->events(c));
    CAF_REQUIRE(!bad_cwd.ok());
    CAF_CHECK_EQUAL(bad_cwd.error(),
                    "cannot start 'true': cannot change to directory '/nonexistent/jp-dir': No such file or directory");
    // A long one (a model chose it) is echoed as far as a path needs, no further.
    auto long_cwd = spawn_process(io, SpawnSpec{{"true"}, "/nonexistent/" + std::string(3000, 'c'), {}, false},
                                  c->events(c));
    CAF_REQUIRE(!long_cwd.ok());
    CAF_CHECK_LESS(long_cwd.error().size(), 400u);
    CAF_CHECK(long_cwd.error().find("(3013 bytes)") != std::string::npos);
    auto not_exec = spawn_process(io, SpawnSpec{{"/tmp"}, "", {}, false}, c->events(c)); // a directory
    CAF_REQUIRE(!not_exec.ok());
    CAF_CHECK_EQUAL(not_exec.error(), "cannot start '/tmp': it is a directory, not a program");
    // A script without execute permission, or without its #! line: what to do.
    scripts.write("plain.sh", "echo hi\n");
    auto plain = spawn_process(io, SpawnSpec{{"./plain.sh"}, scripts.path.string(), {}, false}, c->events(c));
    CAF_REQUIRE(!plain.ok());
    CAF_CHECK_EQUAL(plain.error(), "cannot start './plain.sh': the file is not executable for this user (chmod +x "
                                   "it); or make its interpreter the program and the file its argument (program = "
                                   "\"sh\", args = [\"FILE\"])");
    ::chmod((scripts.path / "plain.sh").c_str(), 0755);
    for (auto kind : {launcher_kind::boost_v2, launcher_kind::posix_spawn, launcher_kind::vfork}) {
      use_launcher(kind);
      auto bare = spawn_process(io, SpawnSpec{{"./plain.sh"}, scripts.path.string(), {}, false}, c->events(c));
      CAF_REQUIRE(!bare.ok());
      CAF_CHECK_EQUAL(bare.error(), "cannot start './plain.sh': it is no program this system runs (a program built for "
                                    "another machine, or a script without a first line naming its interpreter, "
                                    "#!/bin/sh); or make its interpreter the program and the file its argument "
                                    "(program = \"sh\", args = [\"FILE\"])");
    }
    use_launcher(launcher_kind::vfork);
    // An argument past Linux's 128 KiB (a model's file text): which limit, and what instead.
    auto too_long = spawn_process(io, SpawnSpec{{"echo", std::string(200000, 'x')}, "", {}, false}, c->events(c));
    CAF_REQUIRE(!too_long.ok());
    CAF_CHECK(too_long.error().starts_with("cannot start 'echo': Argument list too long: its longest argument "
                                           "is 200000 bytes (at most 131,072 each), "));
    CAF_CHECK(too_long.error().ends_with("; pass long text through a file or stdin instead"));
    auto big_env = spawn_process(io, SpawnSpec{{"true"}, "", {"X=" + std::string(200000, 'x')}, false}, c->events(c));
    CAF_REQUIRE(!big_env.ok());
    CAF_CHECK(big_env.error().find("its longest variable (env) is 200002 bytes") != std::string::npos);
  }
  use_launcher(launcher_kind::vfork);
  CAF_CHECK_EQUAL(open_pidfds(), pidfds_before); // none kept of a child that never ran
}

#if defined(__x86_64__) // sandboxed_spawn's filter names x86-64's system calls
namespace {

/// What tests/process/sandboxed_spawn printed: a child started by our default
/// launcher where a seccomp filter refuses `call` with `err`.
std::string sandboxed_spawn(const char* call, const char* err, bool boost = false) {
  int p[2];
  CAF_REQUIRE_EQUAL(::pipe2(p, O_CLOEXEC), 0);
  ChildLaunch l;
  l.argv = {JP_SANDBOXED_SPAWN, call, err};
  if (boost)
    l.argv.push_back("boost");
  l.env = spawn_environment({}, {}, {});
  l.out = l.err = p[1];
  l.session = false;
  auto launched = launch_child(l, launcher_kind::vfork);
  ::close(p[1]);
  CAF_REQUIRE_EQUAL(launched.error, 0);
  own_child(launched.pid, SIGKILL);
  auto out = read_to_end(p[0]);
  int status = reaped_status(launched.pid);
  CAF_CHECK(WIFEXITED(status));
  if (WIFEXITED(status) && WEXITSTATUS(status) == 2)
    CAF_FAIL("no seccomp filter to be had here: " << out);
  return out;
}

} // namespace

CAF_TEST(our launcher starts children where a sandbox refuses clone3 or close_range) {
  // Only 0-2 reach the child (3 is its listing's own), never our fd without O_CLOEXEC.
  // clone3 refused: clone, the pidfd with the child all the same.
  CAF_CHECK_EQUAL(sandboxed_spawn("clone3", "ENOSYS"), "started, exit status 0\npidfd: the child's\n"
                                                         "vfork usable: yes, clone3 refused with: 38\nfds: 0 1 2 3\n");
  CAF_CHECK_EQUAL(sandboxed_spawn("clone3", "EPERM"), "started, exit status 0\npidfd: the child's\n"
                                                        "vfork usable: yes, clone3 refused with: 1\nfds: 0 1 2 3\n");
  // close_range refused (or before 5.9): glibc's posix_spawn, which closes our fds itself.
  for (auto err : {"ENOSYS", "EPERM"})
    CAF_CHECK_EQUAL(sandboxed_spawn("close_range", err), "started, exit status 0\npidfd: the child's\n"
                                                         "vfork usable: no, clone3 refused with: 0\nfds: 0 1 2 3\n");
  // Boost's launcher (the benchmark's) refuses to start a child it cannot keep our
  // fds from, rather than pass them on.
  CAF_CHECK_EQUAL(sandboxed_spawn("close_range", "ENOSYS", true), "not started: Function not implemented\n");
}
#endif

CAF_TEST(the launchers search PATH as execvp does but never the working directory) {
  // Boost's search skips what it may not run, so it says "not found" where execvp
  // says "Permission denied": left out.
  testing::temp_dir dir;
  auto a = dir.path / "a", b = dir.path / "b";
  std::filesystem::create_directories(a);
  std::filesystem::create_directories(b);
  std::ofstream(a / "jp-path-probe") << "#!/bin/sh\necho from-a\n"; // not executable
  std::ofstream(b / "jp-path-probe") << "#!/bin/sh\necho from-b\n";
  std::filesystem::permissions(b / "jp-path-probe", std::filesystem::perms::owner_all);
  std::string old_path = std::getenv("PATH") ? std::getenv("PATH") : "";
  auto missing = (dir.path / "missing").string();
  struct Outcome {
    std::string out, error;
  };
  auto run_with_path = [&](const std::string& path) {
    ::setenv("PATH", path.c_str(), 1);
    IoThread io;
    auto c = std::make_shared<Collector>();
    auto r = spawn_process(io, SpawnSpec{{"jp-path-probe"}, "", {}, false}, c->events(c));
    ::setenv("PATH", old_path.c_str(), 1);
    if (!r.ok())
      return Outcome{"", r.error()};
    GroupGuard guard{(*r)->pid()};
    c->set_process(*r);
    return Outcome{c->wait_exit() ? c->out_copy() : "no exit", ""};
  };
  for (auto kind : {launcher_kind::boost_v2, launcher_kind::posix_spawn, launcher_kind::vfork}) {
    use_launcher(kind);
    // A missing directory and one whose file may not be run are passed over.
    auto found = run_with_path(missing + "::" + a.string() + ":" + b.string());
    CAF_CHECK_EQUAL(found.error, "");
    CAF_CHECK_EQUAL(found.out, "from-b\n");
    auto denied = run_with_path(missing + ":" + a.string());
    CAF_CHECK_EQUAL(denied.error, "cannot start 'jp-path-probe': the one found in PATH may not be run (not "
                                  "executable for this user: chmod +x it); or make its interpreter the program "
                                  "and the file its argument (program = \"sh\", args = [\"FILE\"])");
    auto absent = run_with_path(missing);
    CAF_CHECK(absent.error.starts_with("cannot start 'jp-path-probe': not found in PATH"));
    // An empty or relative entry names the working directory (the workspace, someone's
    // repository): passed over, whichever way the name is found.
    std::ofstream(dir.path / "jp-path-probe") << "#!/bin/sh\necho from-here\n";
    std::filesystem::permissions(dir.path / "jp-path-probe", std::filesystem::perms::owner_all);
    auto here = std::filesystem::current_path();
    std::filesystem::current_path(dir.path);
    auto relative = run_with_path("b:" + missing);
    auto empty = run_with_path(missing + ":");
    std::filesystem::current_path(here);
    CAF_CHECK(relative.error.starts_with("cannot start 'jp-path-probe': not found in PATH"));
    CAF_CHECK(empty.error.starts_with("cannot start 'jp-path-probe': not found in PATH"));
    // Found, with an interpreter that is not: said so, not "not found".
    std::ofstream(b / "jp-path-probe") << "#!/bin/sh\r\necho from-b\r\n";
    auto crlf = run_with_path(b.string());
    std::ofstream(b / "jp-path-probe") << "#!/bin/sh\necho from-b\n";
    CAF_CHECK(crlf.error.starts_with("cannot start 'jp-path-probe': " + (b / "jp-path-probe").string() +
                                     " is there, but the interpreter"));
  }
  use_launcher(launcher_kind::vfork);
}

CAF_TEST(every launcher gives the child its pipes when our own 0 and 1 are closed) {
  // A daemon may run without stdin and stdout: the pipes then get fds 0 and 1, and
  // setting the child's 0-2 must neither leave one closed nor overwrite a source.
  for (auto kind : {launcher_kind::boost_v2, launcher_kind::posix_spawn, launcher_kind::vfork}) {
    use_launcher(kind);
    int saved_in = ::fcntl(0, F_DUPFD_CLOEXEC, 10), saved_out = ::fcntl(1, F_DUPFD_CLOEXEC, 10);
    CAF_REQUIRE(saved_in >= 0 && saved_out >= 0);
    std::string error, out, err;
    bool exited = false, success = false;
    {
      IoThread io;
      Spawned s;
      ::close(0);
      ::close(1);
      // No check until 0 and 1 are ours again: the test's report goes to 1.
      auto r = spawn_process(io, SpawnSpec{{"sh", "-c", "cat; echo out; echo err >&2"}, "", {}, true},
                             s.c->events(s.c));
      if (r.ok()) {
        s.p = *r;
        s.guard.pgid = s.p->pid();
        s.c->set_process(s.p);
        s.p->write_stdin("in\n");
        s.p->close_stdin();
        exited = s.c->wait_exit();
        std::lock_guard lock(s.c->mtx);
        out = s.c->out;
        err = s.c->err;
        success = exited && s.c->exit->success();
      } else {
        error = r.error();
      }
    } // the io thread and every fd of the child's gone, 0 and 1 among them
    ::dup2(saved_in, 0);
    ::dup2(saved_out, 1);
    ::close(saved_in);
    ::close(saved_out);
    CAF_MESSAGE("launcher " << static_cast<int>(kind));
    CAF_CHECK_EQUAL(error, "");
    CAF_CHECK(exited);
    CAF_CHECK_EQUAL(out, "in\nout\n");
    CAF_CHECK_EQUAL(err, "err\n");
    CAF_CHECK(success);
  }
  use_launcher(launcher_kind::vfork);
}

CAF_TEST(an fd another thread opens without O_CLOEXEC while we spawn never reaches a child) {
  // What taking the fds away in the child itself is for: marking them in the parent
  // before the clone would let one opened in between through (bench/README.md).
  std::atomic<bool> stop{false};
  std::thread opener([&] {
    while (!stop.load()) {
      int fd = ::open("/dev/null", O_RDONLY); // no O_CLOEXEC, as libcurl's sockets
      if (fd >= 0)
        ::close(fd);
    }
  });
  std::string odd;
  for (int i = 0; i < 100 && odd.empty(); ++i) {
    IoThread io;
    Spawned s;
    // Its fds: 0-2, and 3 for the listing itself; a fd of ours would come before it.
    start(io, s, sh("for f in /proc/$$/fd/*; do printf '%s ' \"${f##*/}\"; done"));
    if (!s.c->wait_exit())
      odd = "no exit";
    else if (auto out = s.c->out_copy(); out != "0 1 2 3 ")
      odd = out;
  }
  stop.store(true);
  opener.join();
  CAF_CHECK_EQUAL(odd, "");
}
