#include "bench/spawn_layers.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <fmt/format.h>
#include <future>
#include <memory>
#include <utility>
#include <sys/epoll.h>
#include <csignal>
#include <sys/wait.h>
#include <unistd.h>

#include "bench/measure.hpp"
#include "bench/report.hpp"
#include "runtime/process/child_launch.hpp"
#include "runtime/process/controlling_terminal.hpp"
#include "runtime/process/io_thread.hpp"
#include "runtime/process/process.hpp"
#include "runtime/process/tool_environment.hpp"

namespace jp::bench {

namespace {

/// Reads `fd` until it would block or ends; true at its end.
bool drained(int fd) {
  char buf[4096];
  for (;;) {
    auto n = ::read(fd, buf, sizeof buf);
    if (n > 0)
      continue;
    if (n < 0 && errno == EINTR)
      continue;
    return n == 0 || errno != EAGAIN;
  }
}

/// The launcher layer: `n` children started by our vfork launcher, each watched as
/// the floor watches its own (pidfd and both pipes in epoll, the exit reaped, the
/// pipes drained and closed) before the next: µs a call, on average.
Result<double> launcher_round(long n, bool session) {
  int ep = ::epoll_create1(EPOLL_CLOEXEC);
  if (ep < 0)
    return Error{fmt::format("epoll_create1: {}", std::strerror(errno))};
  ChildLaunch l;
  l.argv = {"/bin/true"};
  l.env = spawn_environment({}, {}, {});
  l.session = session;
  l.want_pidfd = true; // as the process layer asks for it
  double total = 0;
  for (long i = 0; i < n; ++i) {
    auto t0 = now_ns();
    int out[2], err[2];
    if (::pipe2(out, O_CLOEXEC) != 0)
      return ::close(ep), Error{fmt::format("pipe2: {}", std::strerror(errno))};
    if (::pipe2(err, O_CLOEXEC) != 0)
      return ::close(out[0]), ::close(out[1]), ::close(ep), Error{fmt::format("pipe2: {}", std::strerror(errno))};
    ::fcntl(out[0], F_SETFL, O_NONBLOCK); // the parent's ends only, as the floor's
    ::fcntl(err[0], F_SETFL, O_NONBLOCK);
    l.out = out[1];
    l.err = err[1];
    auto child = launch_child(l, launcher_kind::vfork);
    ::close(out[1]);
    ::close(err[1]);
    int pidfd = child.pidfd;
    if (pidfd < 0) {
      if (child.error == 0) { // started but not to be watched: ended here
        ::kill(-child.pid, SIGKILL);
        ::waitpid(child.pid, nullptr, 0);
      }
      ::close(out[0]), ::close(err[0]), ::close(ep);
      return Error{fmt::format("launch: {}", std::strerror(child.error ? child.error : child.pidfd_error))};
    }
    int fds[3] = {pidfd, out[0], err[0]};
    for (int k = 0; k < 3; ++k) {
      epoll_event ev{EPOLLIN, {.u32 = uint32_t(k)}};
      ::epoll_ctl(ep, EPOLL_CTL_ADD, fds[k], &ev);
    }
    for (bool exited = false; !exited;) {
      epoll_event evs[3];
      int got = ::epoll_wait(ep, evs, 3, -1);
      for (int e = 0; e < got; ++e) {
        int& fd = fds[evs[e].data.u32];
        if (evs[e].data.u32 == 0)
          exited = true;
        else if (fd >= 0 && drained(fd))
          ::close(std::exchange(fd, -1)); // at its end: out of the epoll set, as the floor's
      }
    }
    int status = 0;
    ::waitpid(child.pid, &status, 0);
    for (int k = 0; k < 3; ++k) {
      if (k > 0 && fds[k] >= 0)
        drained(fds[k]); // a pipe not at its end yet
      if (fds[k] >= 0)
        ::close(fds[k]); // out of the epoll set too
    }
    total += us_between(t0, now_ns());
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
      return ::close(ep), Error{fmt::format("/bin/true ended with status {:#x}", status)};
  }
  ::close(ep);
  return total / double(n);
}

/// The process layer's calls: each spawned on the io thread when the last one's
/// exit is handled there, as W1's actors spawn the next call's child.
struct ProcessCalls {
  IoThread& io;
  long left;
  double total = 0;
  long done = 0;
  int64_t t0 = 0;
  std::shared_ptr<Process> current;
  std::promise<Status> finished;
};

void next_call(const std::shared_ptr<ProcessCalls>& c) {
  if (c->left-- == 0)
    return c->finished.set_value({});
  c->t0 = now_ns();
  ProcessEvents events;
  events.on_exit = [c](const ExitInfo& exit) {
    c->total += us_between(c->t0, now_ns());
    ++c->done;
    if (exit.signaled || exit.code != 0)
      return c->finished.set_value(Error{fmt::format("/bin/true ended with {}", exit.describe())});
    next_call(c);
  };
  auto p = spawn_process(c->io, SpawnSpec{{"/bin/true"}}, std::move(events));
  if (!p)
    return c->finished.set_value(Error{p.error()});
  c->current = *p; // the last one's handle goes: it has exited
}

Result<double> process_round(long n) {
  IoThread io;
  auto calls = std::make_shared<ProcessCalls>(ProcessCalls{io, n});
  auto finished = calls->finished.get_future();
  io.post([calls] { next_call(calls); });
  auto st = finished.get();
  io.post([calls] { calls->current.reset(); }); // dropped on the io thread, with the rest of its state
  if (!st)
    return Error{st.error};
  return calls->total / double(calls->done);
}

/// A worker's or the floor's figures, run as a process of its own.
Result<Figures> figures_of(const std::vector<std::string>& argv, const std::vector<std::string>& names) {
  auto out = run_capture(argv);
  auto figures = out ? parse_figures(*out) : Result<Figures>(Error{out.error()});
  if (!figures)
    return Error{figures.error()};
  for (auto& name : names)
    if (!figures->count(name))
      return Error{fmt::format("{} has no {}", argv[0], name)};
  return figures;
}

struct Layer {
  std::string name;
  int against = -1;       // the layer it adds to (-1: none)
  std::vector<double> us; // one a round
};

} // namespace

int spawn_layers(const std::string& self, const std::string& floor_path, long n, int rounds) {
  bool session = has_controlling_terminal(); // as spawn_process decides
  auto ns = std::to_string(n);
  // Our launcher both ways (what a session costs it), the process layer against the
  // way spawn_process starts its children here.
  enum { floor_group, floor_session, launcher_group, launcher_session, process, runtime };
  std::vector<Layer> layers{{"floor (posix_spawn, own group)"},
                            {"floor (posix_spawn, own session)", floor_group},
                            {"launcher (ours, own group)", floor_group},
                            {"launcher (ours, own session)", floor_session},
                            {"process layer (io thread, Asio)", session ? launcher_session : launcher_group},
                            {"runtime (W1 through the actors)", process}};
  auto failed = [](const std::string& what, const std::string& why) {
    std::fprintf(stderr, "\njp-bench layers: %s: %s\n", what.c_str(), why.c_str());
    return 1;
  };
  for (int r = 1; r <= rounds; ++r) {
    std::fprintf(stderr, "\rW1 in layers: round %d/%d", r, rounds);
    auto floor = figures_of({floor_path, "W1", "--n", ns}, {"mean_us", "session_mean_us"});
    if (!floor)
      return failed("floor", floor.error());
    layers[floor_group].us.push_back(floor->at("mean_us"));
    layers[floor_session].us.push_back(floor->at("session_mean_us"));
    for (int own_session = 0; own_session < 2; ++own_session) {
      auto ours = launcher_round(n, own_session);
      if (!ours)
        return failed("launcher", ours.error());
      layers[own_session ? launcher_session : launcher_group].us.push_back(*ours);
    }
    auto watched = process_round(n);
    if (!watched)
      return failed("process layer", watched.error());
    layers[process].us.push_back(*watched);
    auto w1 = figures_of({self, "worker", "W1", "--n", ns, "--floor", floor_path}, {"mean_us"});
    if (!w1)
      return failed("runtime", w1.error());
    layers[runtime].us.push_back(w1->at("mean_us"));
  }
  std::fprintf(stderr, "\r%40s\r", "");
  std::printf("W1 in layers: %ld calls a round, %d rounds; µs a call: median (min), and what the layer adds to "
              "the one named; jp-actors gives its children %s here\n",
              n, rounds, session ? "their own sessions (it has a terminal)" : "their own groups (it has no terminal)");
  std::vector<double> medians;
  for (auto& layer : layers) {
    double median = percentile(layer.us, 0.5), least = layer.us.front(); // sorted by percentile
    medians.push_back(median);
    std::string step = layer.against < 0 ? ""
                                         : fmt::format("{:+8.1f} on {}", median - medians[size_t(layer.against)],
                                                       layers[size_t(layer.against)].name);
    std::printf("%-34s %8.1f (%8.1f) %s\n", layer.name.c_str(), median, least, step.c_str());
  }
  return 0;
}

} // namespace jp::bench
