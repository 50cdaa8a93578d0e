#include "bench/jp_workloads.hpp"

#include <caf/all.hpp>
#include <filesystem>
#include <functional>
#include <future>
#include <fstream>
#include <sstream>
#include <thread>
#include <cstdio>
#include <cstdlib>
#include <fmt/format.h>
#include <unistd.h>

#include "actors/scripted_subagents.hpp"
#include "bench/any_answer.hpp"
#include "bench/caf_settings.hpp"
#include "bench/cpu_use.hpp"
#include "bench/exit_gaps.hpp"
#include "bench/node_process.hpp"
#include "actors/subagent_handle.hpp"
#include "actors/turn_actor.hpp"
#include "actors/turn_loop.hpp"
#include "config/config_loader.hpp"
#include "messages/atoms.hpp"
#include "messages/call_result.hpp"
#include "messages/json_codec.hpp"
#include "runtime/actor_config.hpp"
#include "runtime/process/group_record.hpp"
#include "runtime/process/io_thread.hpp"
#include "tools/builtin_tools.hpp"

namespace jp::bench {

namespace {

// The tools the workloads call. Each child's argv is the one the floor runs.
constexpr const char* kToolsToml = R"(
[conversation.tools.true]
summary = "Run /bin/true"
command = {{ program = "/bin/true" }}
run = "unattended"

[conversation.tools.sh]
summary = "A sh -c script as a handle"
command = {{ program = "/bin/sh", args = ["-c", "{{{{tool.arguments.script}}}}"] }}
run = "unattended"
[conversation.tools.sh.parameters.script]
type = "string"
required = true
[conversation.tools.sh.spawn]
stateful = true
actions = ["spawn", "fetch", "abort"]

[conversation.tools.cat]
summary = "cat as a handle that takes input"
command = {{ program = "/bin/cat" }}
run = "unattended"
settle_ms = 0
[conversation.tools.cat.spawn]
stateful = true

[conversation.tools.floor]
summary = "The floor program's child modes: stamp MS | write BYTES"
command = {{ program = "{floor}", args = ["{{{{tool.arguments.mode}}}}", "{{{{tool.arguments.arg}}}}"] }}
run = "unattended"
[conversation.tools.floor.parameters.mode]
type = "string"
required = true
[conversation.tools.floor.parameters.arg]
type = "string"
required = true
[conversation.tools.floor.spawn]
stateful = true
actions = ["spawn", "fetch", "abort"]

# W10: a silent tool that takes input (probed while idle, as a REPL is), and a
# prompt; the floor runs the same commands.
[conversation.tools.silent]
summary = "sleep 600, stdin a pipe"
command = {{ program = "/bin/sleep", args = ["600"] }}
run = "unattended"
[conversation.tools.silent.spawn]
stateful = true

[conversation.tools.asker]
summary = "A prompt that waits for a line"
command = {{ program = "/bin/sh", args = ["-c", "printf 'name? '; read x; exit 0"] }}
run = "unattended"
[conversation.tools.asker.spawn]
stateful = true

# W8: up to 1,000 sub-agents of the bench's turn at once (a foreach counts as one;
# its elements count in max_live).
[agents]
max_concurrent = 1000
max_live = 1000
)";

// `sleep SECS` and `/bin/true` as handles: here under the names W6-W9 use, and for W9
// also on its node, where the client's tools of the same names say node = "w9".
constexpr const char* kHandleToolsToml = R"(
[conversation.tools.{sleep}]
summary = "sleep SECS as a handle"
{sleep_runs}
run = "unattended"
[conversation.tools.{sleep}.parameters.secs]
type = "string"
required = true
[conversation.tools.{sleep}.spawn]
stateful = true
actions = ["spawn", "fetch", "abort"]

[conversation.tools.{bin_true}]
summary = "/bin/true as a handle"
{true_runs}
run = "unattended"
[conversation.tools.{bin_true}.spawn]
stateful = true
actions = ["spawn", "abort"]
)";

/// The handle tools named `sleep` and `bin_true`, run here, or on `node` when given.
std::string handle_tools(const std::string& sleep, const std::string& bin_true, const std::string& node = "") {
  auto on_node = fmt::format("node = \"{}\"", node);
  return fmt::format(
    kHandleToolsToml, fmt::arg("sleep", sleep), fmt::arg("bin_true", bin_true),
    fmt::arg("sleep_runs",
             node.empty() ? R"(command = { program = "/bin/sleep", args = ["{{tool.arguments.secs}}"] })" : on_node),
    fmt::arg("true_runs", node.empty() ? R"(command = { program = "/bin/true" })" : on_node));
}

// W8's scripted sub-agents: `worker` spawns /bin/true and awaits it; `idler` spawns
// a sleep and awaits it (live and idle until aborted).
constexpr const char* kSubAgentsScript = R"(
[[agents]]
name = "bench" # the turn the workloads drive

[[subagents]]
name = "worker"
  [[subagents.steps]]
  [[subagents.steps.calls]]
  tool = "bin_true"
  arguments = { action = "spawn", id = "t" }
  [[subagents.steps.calls]]
  tool = "await"
  arguments = { all = ["t"] }

[[subagents]]
name = "idler"
  [[subagents.steps]]
  [[subagents.steps.calls]]
  tool = "sleep"
  arguments = { action = "spawn", id = "s", secs = "600" }
  [[subagents.steps.calls]]
  tool = "await"
  arguments = { all = ["s"] }
)";

std::string temp_workspace() {
  char tmpl[] = "/tmp/jp-bench-XXXXXX";
  const char* dir = ::mkdtemp(tmpl);
  return dir ? dir : "/tmp";
}

using Reply = Result<std::string>;
using Then = std::function<void(Status)>;
using Done = std::function<void(Result<Figures>)>;

/// Issues tool calls from an event-based actor, as the agent actor does: a call is
/// a request to the turn, its answer a continuation on the same worker threads.
struct Driver {
  caf::event_based_actor* self;
  turn_actor turn;

  void call(const std::string& tool, const std::string& args, std::function<void(Reply)> k) {
    self->request(turn, caf::infinite, call_atom::value, tool, args)
      .then([k](CallResult& r) { k(r.ok ? Reply(std::move(r.content)) : Reply(Error{r.content})); },
            [k](caf::error& e) { k(Reply(Error{to_string(e)})); });
  }

  /// Pre-registers a batch's spawns, as the agent loop does before a batch runs.
  void batch(const std::vector<std::string>& ids, Then k) {
    self->request(turn, caf::infinite, batch_atom::value, ids)
      .then([k](bool) { k({}); }, [k](caf::error& e) { k(Error{to_string(e)}); });
  }

  /// `step(i, next)` for i = 0..n-1, one after the other; then `k`. A step's error
  /// ends the loop.
  void repeat(long n, std::function<void(long, Then)> step, Then k) {
    // Held by the pending step's continuation only: gone once the loop ends.
    struct Loop : std::enable_shared_from_this<Loop> {
      long n;
      std::function<void(long, Then)> step;
      Then k;
      void run(long i) {
        if (i == n)
          return k({});
        step(i, [self = shared_from_this(), i](Status st) {
          if (!st)
            return self->k(st);
          self->run(i + 1);
        });
      }
    };
    auto loop = std::make_shared<Loop>();
    loop->n = n;
    loop->step = std::move(step);
    loop->k = std::move(k);
    loop->run(0);
  }

  /// All calls at once (a batch); `each(reply)` per answer as it comes, then `k`.
  /// One batch at a time. The calls go as plain messages and their answers come
  /// back as such (answered): CAF 0.17 keeps an actor's requests in flight in a flat
  /// vector that every answer scans and shifts, so a caller with 1,000 requests in
  /// flight spends ~0.7 us per answer on that alone (W7's fan-in, bench/README.md),
  /// more than the turn spends on it.
  void all_at_once(const std::vector<std::pair<std::string, std::string>>& calls, std::function<Status(Reply&)> each,
                   Then k) {
    if (calls.empty())
      return k({});
    if (in_flight)
      return k(Error{"all_at_once: a batch is already in flight"});
    in_flight = std::make_shared<Batch>(Batch{calls.size(), {}, std::move(each), std::move(k)});
    for (auto& [tool, args] : calls)
      self->send(turn, call_atom::value, tool, args);
  }

  /// An answer to the batch in flight.
  void answered(Reply r) {
    auto b = in_flight;
    if (!b)
      return;
    if (auto st = b->each(r); !st && b->failed)
      b->failed = st;
    if (--b->left == 0) {
      in_flight.reset();
      b->k(b->failed);
    }
  }

  struct Batch {
    size_t left;
    Status failed;
    std::function<Status(Reply&)> each;
    Then k;
  };
  std::shared_ptr<Batch> in_flight; // all_at_once's, while its answers come
};

/// The bench's tools on top of the defaults, with `extra` (TOML) after them, in
/// `workspace`.
std::shared_ptr<const Config> bench_config(const std::string& floor_path, const std::string& extra,
                                           const std::string& workspace) {
  auto config = apply_config_text(
    default_config(), fmt::format(kToolsToml, fmt::arg("floor", floor_path)) + handle_tools("sleep", "bin_true"),
    "bench tools");
  if (config && !extra.empty())
    config = apply_config_text(std::move(*config), extra, "bench tools");
  // `run --worker-threads N` (main.cpp) measures the scheduler's thread count.
  if (const char* n = std::getenv("JP_BENCH_WORKER_THREADS"); config && n)
    config = apply_config_text(std::move(*config), fmt::format("[runtime]\nworker_threads = {}\n", n),
                               "jp-bench --worker-threads");
  // `run --io-poll-us N` measures how long the io thread polls before it sleeps.
  if (const char* n = std::getenv("JP_BENCH_IO_POLL_US"); config && n)
    config = apply_config_text(std::move(*config), fmt::format("[runtime]\nio_poll_us = {}\n", n),
                               "jp-bench --io-poll-us");
  if (!config)
    throw std::runtime_error(config.error());
  config->workspace = workspace;
  return std::make_shared<const Config>(std::move(*config));
}

/// One turn of jp-actors in this process; a workload runs on a Driver actor.
/// `extra_toml` adds to the bench's tools (W9: its node and the tools there).
class Runtime {
public:
  explicit Runtime(const std::string& floor_path, const std::string& extra_toml = "")
    : workspace_(temp_workspace()), config_(bench_config(floor_path, extra_toml, workspace_)),
      io_(io_poll(config_->runtime)), cfg_(config_->runtime.worker_threads, uses_nodes(*config_) ? &config_->node : nullptr),
      sys_{with_bench_caf_settings(cfg_)} {
    // `run --caf` (main.cpp): say what the scheduler runs with, so a run shows it took.
    if (std::getenv(kCafSettingsVariable))
      std::fprintf(stderr, "jp-bench worker: CAF settings:\n%s", work_stealing_settings(sys_.config()).c_str());
    // As the CLI does: live groups are recorded for the crash sweep.
    if (auto recorded = open_group_record(state_path(*config_, "live")); !recorded)
      throw std::runtime_error(recorded.error);
    auto script = parse_script(kSubAgentsScript, "bench sub-agents");
    if (!script)
      throw std::runtime_error(script.error());
    // Sub-agents (W8) play the script above; nobody watches them.
    TurnLoopContext agent;
    agent.config = config_;
    agent.io = &io_;
    agent.agent_path = "bench";
    agent.subagents = std::make_shared<ScriptedSubAgents>(std::make_shared<const Script>(std::move(*script)));
    TurnContext ctx{config_, &io_, {}};
    ctx.subagents = subagent_factory(agent);
    turn_ = spawn_turn(sys_, std::move(ctx));
  }

  ~Runtime() {
    caf::anon_send_exit(turn_, caf::exit_reason::user_shutdown);
    close_group_record();
    std::error_code ec;
    std::filesystem::remove_all(workspace_, ec);
  }

  /// Runs `workload` on a driver actor; blocks until it calls its Done.
  Result<Figures> drive(std::function<void(Driver&, Done)> workload) {
    std::promise<Result<Figures>> result;
    auto future = result.get_future();
    sys_.spawn([&, workload](caf::event_based_actor* self) -> caf::behavior {
      auto d = std::make_shared<Driver>(Driver{self, turn_, nullptr});
      // A batch's answers (Driver::all_at_once), and its calls' errors. Plain
      // messages to an actor that is gone are dropped, not answered: a turn that
      // ends fails the batch.
      self->set_error_handler([d](caf::error& e) { d->answered(Reply(Error{to_string(e)})); });
      self->monitor(turn_);
      self->set_down_handler([d](caf::down_msg& dm) {
        if (auto b = std::exchange(d->in_flight, nullptr))
          b->k(Error{"the turn ended during a batch: " + to_string(dm.reason)});
      });
      workload(*d, [self, d, &result](Result<Figures> r) {
        result.set_value(std::move(r));
        self->quit();
      });
      return {
        [d](CallResult& r) { d->answered(r.ok ? Reply(std::move(r.content)) : Reply(Error{r.content})); },
        [](run_atom) {}, // alive until Done
      };
    });
    return future.get();
  }

private:
  std::string workspace_;
  std::shared_ptr<const Config> config_;
  IoThread io_;
  RuntimeActorConfig cfg_;
  caf::actor_system sys_{cfg_};
  turn_actor turn_;
};

std::string spawn_args(const std::string& id, const std::string& params) {
  return fmt::format(R"({{"action":"spawn","id":"{}"{}}})", id, params.empty() ? "" : "," + params);
}

std::string ids_json(const std::vector<std::string>& ids) {
  Json arr = Json::array();
  for (auto& id : ids)
    arr.push(Json(id));
  return arr.dump();
}

std::vector<std::string> numbered_ids(const std::string& prefix, long n) {
  std::vector<std::string> ids;
  for (long i = 0; i < n; ++i)
    ids.push_back(prefix + std::to_string(i));
  return ids;
}

/// The parsed await answer, or why it is not one.
Result<AwaitResult> await_answer(const Reply& answer) {
  if (!answer)
    return Error{answer.error()};
  auto j = Json::parse(*answer);
  if (!j)
    return Error{j.error()};
  return await_result_from_json(*j);
}

Status ok_or(const Reply& r, const char* what) {
  if (!r)
    return Error{fmt::format("{}: {}", what, r.error())};
  return {};
}

/// The exit stamp a `stamp` child printed (its whole output).
Result<int64_t> stamp_of(const HandleStatus& s) {
  if (!s.state.ok || s.state.content.empty())
    return Error{fmt::format("handle {} ended with {:?} {:?}", s.id, s.state.content, s.state.error.message)};
  return int64_t(std::stoll(s.state.content));
}

/// Children of this process still alive or unreaped (any state), from /proc.
long children_left() {
  long count = 0;
  auto me = std::to_string(::getpid());
  for (auto& entry : std::filesystem::directory_iterator("/proc")) {
    std::ifstream in(entry.path() / "stat");
    std::string stat;
    if (!in || !std::getline(in, stat))
      continue;
    auto close = stat.rfind(')'); // comm may contain spaces
    if (close == std::string::npos)
      continue;
    std::istringstream rest(stat.substr(close + 2));
    std::string state, ppid;
    rest >> state >> ppid;
    count += ppid == me;
  }
  return count;
}

/// Spawns `ids` as one batch of calls; `k` once every spawn has answered.
void spawn_batch(Driver& d, const std::vector<std::string>& ids, const std::string& tool,
                 const std::string& params, Then k) {
  d.batch(ids, [&d, ids, tool, params, k](Status st) {
    if (!st)
      return k(st);
    std::vector<std::pair<std::string, std::string>> calls;
    for (auto& id : ids)
      calls.emplace_back(tool, spawn_args(id, params));
    d.all_at_once(calls, [](Reply& r) { return ok_or(r, "spawn"); }, k);
  });
}

// ---- the workloads (each ends by calling its Done exactly once)

void w1(Driver& d, long n, Done done) {
  auto us = std::make_shared<std::vector<double>>();
  d.repeat(
    n,
    [&d, us](long, Then next) {
      auto t0 = now_ns();
      d.call("true", "{}", [us, t0, next](Reply r) {
        us->push_back(us_between(t0, now_ns()));
        next(ok_or(r, "true"));
      });
    },
    [us, done](Status st) {
      if (!st)
        return done(Error{st.error});
      done(Figures{{"mean_us", mean(*us)}, {"p50_us", percentile(*us, 0.5)}, {"p99_us", percentile(*us, 0.99)}});
    });
}

void w2(Driver& d, long n, Done done) {
  auto rss = std::make_shared<RssGrowth>();
  auto t0 = now_ns();
  auto ids = numbered_ids("h", n);
  spawn_batch(d, ids, "sh", R"("script":"sleep 0.2; echo done")", [&d, ids, rss, t0, done](Status st) {
    if (!st)
      return done(Error{st.error});
    d.call("await", fmt::format(R"({{"all":{}}})", ids_json(ids)), [rss, t0, done](Reply r) {
      auto wall_ms = us_between(t0, now_ns()) / 1000.0;
      auto res = await_answer(r);
      if (!res)
        return done(Error{res.error()});
      for (auto& s : res->completed)
        if (!s.state.ok || s.state.content != "done\n")
          return done(Error{fmt::format("W2: handle {} ended with {:?}", s.id, s.state.content)});
      done(Figures{{"wall_ms", wall_ms}, {"rss_growth_mb", rss->growth_kib() / 1024.0}});
    });
  });
}

// Child i exits after (i*379) % 1000 ms, printing its exit stamp: spread over [0,1) s.
std::string stamp_params(long i) {
  return fmt::format(R"("mode":"stamp","arg":"{}")", (i * 379) % 1000);
}

struct W3State {
  int64_t spawned = 0;
  std::vector<ExitSample> samples; // each exit: its figures, and --samples
  std::vector<std::string> pending;
  std::string samples_path;
};

/// W3's figures from its exits: all of them, and those after the spawn phase (the
/// earlier ones measure the spawn backlog, not a wake-up).
Figures w3_figures(const std::vector<ExitSample>& samples) {
  std::vector<double> after, all;
  for (auto& s : samples) {
    all.push_back(s.latency_us);
    if (s.after_spawn_us > 0)
      after.push_back(s.latency_us);
  }
  return {{"p50_us", percentile(after, 0.5)}, {"p99_us", percentile(after, 0.99)},
          {"p50_all_us", percentile(all, 0.5)}, {"p99_all_us", percentile(all, 0.99)}};
}

void w3_await(Driver& d, std::shared_ptr<W3State> st, Done done) {
  if (st->pending.empty() && !st->samples_path.empty()) {
    std::ofstream out(st->samples_path);
    out << format_exit_samples(st->samples);
    if (!out.flush())
      return done(Error{fmt::format("W3: cannot write its samples to {}", st->samples_path)});
  }
  if (st->pending.empty())
    return done(w3_figures(st->samples));
  d.call("await", fmt::format(R"({{"any":{}}})", ids_json(st->pending)), [&d, st, done](Reply r) {
    auto t = now_ns();
    auto answer = r ? read_any_answer(*r) : Result<std::vector<Completed>>(Error{r.error()});
    if (!answer)
      return done(Error{answer.error()});
    if (answer->empty())
      return done(Error{"W3: an `await any` answered with nothing completed"});
    for (auto& c : *answer) {
      auto stamp = std::stoll(c.result);
      st->samples.push_back({us_between(st->spawned, stamp), us_between(stamp, t)});
      if (std::erase(st->pending, c.id) != 1)
        return done(Error{fmt::format("W3: `{}` completed, which was not awaited (or twice)", c.id)});
    }
    w3_await(d, st, done);
  });
}

void w3(Driver& d, long n, const std::string& samples_path, Done done) {
  auto ids = numbered_ids("s", n);
  d.batch(ids, [&d, ids, n, samples_path, done](Status st) {
    if (!st)
      return done(Error{st.error});
    std::vector<std::pair<std::string, std::string>> calls;
    for (long i = 0; i < n; ++i)
      calls.emplace_back("floor", spawn_args(ids[size_t(i)], stamp_params(i)));
    d.all_at_once(calls, [](Reply& r) { return ok_or(r, "spawn"); }, [&d, ids, samples_path, done](Status st) {
      if (!st)
        return done(Error{st.error});
      auto state = std::make_shared<W3State>();
      state->spawned = now_ns();
      state->pending = ids;
      state->samples_path = samples_path;
      w3_await(d, state, done);
    });
  });
}

void w4(Driver& d, long long bytes, Done done) {
  auto rss = std::make_shared<RssGrowth>();
  auto t0 = now_ns();
  d.call("floor", spawn_args("w", fmt::format(R"("mode":"write","arg":"{}")", bytes)),
         [&d, rss, t0, bytes, done](Reply r) {
           if (!r)
             return done(Error{r.error()});
           d.call("await", R"({"all":["w"]})", [rss, t0, bytes, done](Reply r) {
             auto secs = us_between(t0, now_ns()) / 1e6;
             auto res = await_answer(r);
             if (!res)
               return done(Error{res.error()});
             if (res->completed.size() != 1 || !res->completed[0].state.ok)
               return done(Error{"W4: the writer did not succeed"});
             done(Figures{{"mb_per_s", double(bytes) / 1e6 / secs},
                          {"rss_growth_mb", rss->growth_kib() / 1024.0}});
           });
         });
}

/// Looks until `line` has come back (the answers since the apply, `seen`): fetches
/// that wait for the next output (`wait_ms`, the tool's settle_ms = 0), or, polled,
/// fetches that answer at once.
void w5_until_echoed(Driver& d, std::string line, bool polled, std::shared_ptr<std::string> seen, Reply r,
                     Then k) {
  if (!r)
    return k(Error{r.error()});
  auto report = report_from_response(*r);
  if (!report)
    return k(Error{report.error()});
  *seen += report->state.content;
  if (seen->find(line) != std::string::npos)
    return k({});
  if (report->state.stopped())
    return k(Error{"W5: cat stopped before it echoed the line"});
  auto fetch = polled ? R"({"action":"fetch","id":"cat"})" : R"({"action":"fetch","id":"cat","wait_ms":10000})";
  d.call("cat", fetch, [&d, line, polled, seen, k](Reply r) {
    w5_until_echoed(d, line, polled, seen, std::move(r), k);
  });
}

/// `n` round trips: the apply answers at once and fetches poll until the echo came
/// (polled), or the apply waits for it. Microseconds each, into `us`.
void w5_round_trips(Driver& d, long n, bool polled, std::shared_ptr<std::vector<double>> us, Then done) {
  d.repeat(
    n,
    [&d, polled, us](long i, Then next) {
      auto line = fmt::format("line {}\n", i);
      auto t0 = now_ns();
      auto apply = fmt::format(R"({{"action":"apply","id":"cat","input":{},"wait_ms":{}}})", Json(line).dump(),
                               polled ? 0 : 10000);
      d.call("cat", apply, [&d, line, polled, t0, us, next](Reply r) {
        w5_until_echoed(d, line, polled, std::make_shared<std::string>(), std::move(r), [t0, us, next](Status st) {
          us->push_back(us_between(t0, now_ns()));
          next(st);
        });
      });
    },
    done);
}

void w5(Driver& d, long n, Done done) {
  auto waited = std::make_shared<std::vector<double>>();
  auto polled = std::make_shared<std::vector<double>>();
  d.call("cat", spawn_args("cat", ""), [&d, n, waited, polled, done](Reply r) {
    if (!r)
      return done(Error{r.error()});
    w5_round_trips(d, n, true, polled, [&d, n, waited, polled, done](Status st) {
      if (!st)
        return done(Error{st.error});
      w5_round_trips(d, n, false, waited, [&d, waited, polled, done](Status st) {
        if (!st)
          return done(Error{st.error});
        d.call("cat", R"({"action":"abort","id":"cat"})", [waited, polled, done](Reply r) {
          if (!r)
            return done(Error{r.error()});
          done(Figures{{"p50_us", percentile(*polled, 0.5)},
                       {"p99_us", percentile(*polled, 0.99)},
                       {"p50_waited_us", percentile(*waited, 0.5)},
                       {"p99_waited_us", percentile(*waited, 0.99)}});
        });
      });
    });
  });
}

// W10's wait and the settle time it leaves to the tools' default (settle_ms 100), as
// the floor's W10_WAIT_MS and W10_SETTLE_MS.
constexpr long kW10WaitMs = 20;

/// `n` fetches of a silent handle with wait_ms 20: how late each answers.
void w10_deadlines(Driver& d, long n, std::shared_ptr<std::vector<double>> late, Then done) {
  d.repeat(
    n,
    [&d, late](long, Then next) {
      auto t0 = now_ns();
      d.call("silent", fmt::format(R"({{"action":"fetch","id":"s","wait_ms":{}}})", kW10WaitMs),
             [t0, late, next](Reply r) {
               if (!r)
                 return next(Error{r.error()});
               late->push_back(us_between(t0, now_ns()) - kW10WaitMs * 1000.0);
               next({});
             });
    },
    done);
}

/// `n` spawns of a prompt, each answered once it is seen waiting for input; then
/// its handle aborted. Microseconds from the call to the answer, into `us`.
void w10_prompts(Driver& d, long n, std::shared_ptr<std::vector<double>> us, Then done) {
  d.repeat(
    n,
    [&d, us](long i, Then next) {
      auto id = fmt::format("a{}", i);
      auto t0 = now_ns();
      d.call("asker", spawn_args(id, R"("wait_ms":10000)"), [&d, id, t0, us, next](Reply r) {
        us->push_back(us_between(t0, now_ns()));
        auto report = r ? report_from_response(*r) : Result<HandleReport>(Error{r.error()});
        if (!report)
          return next(Error{report.error()});
        if (report->state.kind != state_kind::waiting)
          return next(Error{"W10: the prompt's spawn answered before it was seen waiting: " + *r});
        d.call("asker", fmt::format(R"({{"action":"abort","id":"{}"}})", id),
               [next](Reply r) { next(r ? Status{} : Status{Error{r.error()}}); });
      });
    },
    done);
}

void w10(Driver& d, long n, Done done) {
  auto late = std::make_shared<std::vector<double>>();
  auto prompts = std::make_shared<std::vector<double>>();
  d.call("silent", spawn_args("s", R"("wait_ms":0)"), [&d, n, late, prompts, done](Reply r) {
    if (!r)
      return done(Error{r.error()});
    w10_deadlines(d, n, late, [&d, n, late, prompts, done](Status st) {
      if (!st)
        return done(Error{st.error});
      d.call("silent", R"({"action":"abort","id":"s"})", [&d, n, late, prompts, done](Reply r) {
        if (!r)
          return done(Error{r.error()});
        w10_prompts(d, std::max(n / 5, 1L), prompts, [late, prompts, done](Status st) {
          if (!st)
            return done(Error{st.error});
          done(Figures{{"late_p50_us", percentile(*late, 0.5)},
                       {"late_p99_us", percentile(*late, 0.99)},
                       {"prompt_p50_us", percentile(*prompts, 0.5)},
                       {"prompt_p99_us", percentile(*prompts, 0.99)}});
        });
      });
    });
  });
}

void w6(Driver& d, long n, Done done) {
  auto ids = numbered_ids("z", n);
  auto rss = std::make_shared<RssGrowth>();
  auto t0 = now_ns();
  spawn_batch(d, ids, "sleep", R"("secs":"60")", [&d, ids, n, rss, t0, done](Status st) {
    if (!st)
      return done(Error{st.error});
    auto per_handle_kib = rss->growth_kib() / double(n);
    auto spawn_secs = us_between(t0, now_ns()) / 1e6;
    auto t1 = now_ns();
    std::vector<std::pair<std::string, std::string>> aborts;
    for (auto& id : ids)
      aborts.emplace_back("sleep", fmt::format(R"({{"action":"abort","id":"{}"}})", id));
    d.all_at_once(aborts, [](Reply& r) { return ok_or(r, "abort"); },
                  [=](Status st) {
                    if (!st)
                      return done(Error{st.error});
                    auto abort_ms = us_between(t1, now_ns()) / 1000.0;
                    done(Figures{{"spawn_rate_per_s", double(n) / spawn_secs},
                                 {"rss_per_handle_kib", per_handle_kib},
                                 {"abort_ms", abort_ms},
                                 {"left", double(children_left())}});
                  });
  });
}

void w7_waiters(Driver& d, double rate, Done done) {
  // 1,000 awaits on one running handle, answered when it stops. Each answer's time
  // is taken as it arrives; they are read after the last one (as the floor reads
  // its stamp once): reading one would delay the time taken of the next.
  d.call("floor", spawn_args("one", R"("mode":"stamp","arg":"300")"), [&d, rate, done](Reply r) {
    if (!r)
      return done(Error{r.error()});
    constexpr int waiters = 1000;
    std::vector<std::pair<std::string, std::string>> awaits(waiters, {"await", R"({"any":["one"]})"});
    auto arrived = std::make_shared<std::vector<std::pair<int64_t, Reply>>>();
    arrived->reserve(waiters);
    d.all_at_once(
      awaits,
      [arrived](Reply& r) -> Status {
        arrived->emplace_back(now_ns(), std::move(r));
        return {};
      },
      [arrived, rate, done](Status st) {
        if (!st)
          return done(Error{st.error});
        std::vector<double> us;
        for (auto& [t, r] : *arrived) {
          auto res = await_answer(r);
          if (!res)
            return done(Error{res.error()});
          if (res->completed.size() != 1)
            return done(Error{"W7: an await answered before the handle stopped"});
          auto stamp = stamp_of(res->completed[0]);
          if (!stamp)
            return done(Error{stamp.error()});
          us.push_back(us_between(*stamp, t));
        }
        done(Figures{{"awaits_per_s", rate}, {"p50_us", percentile(us, 0.5)}, {"p99_us", percentile(us, 0.99)}});
      });
  });
}

void w7(Driver& d, long n, Done done) {
  auto ids = numbered_ids("t", 10);
  auto all = fmt::format(R"({{"all":{}}})", ids_json(ids));
  spawn_batch(d, ids, "sh", R"("script":"true")", [&d, all, n, done](Status st) {
    if (!st)
      return done(Error{st.error});
    d.call("await", all, [&d, all, n, done](Reply r) {
      if (!r)
        return done(Error{r.error()});
      auto t0 = now_ns();
      d.repeat(
        n, [&d, all](long, Then next) { d.call("await", all, [next](Reply r) { next(ok_or(r, "await")); }); },
        [&d, t0, n, done](Status st) {
          if (!st)
            return done(Error{st.error});
          w7_waiters(d, double(n) / (us_between(t0, now_ns()) / 1e6), done);
        });
    });
  });
}

/// A foreach spawn `id` of `n` elements ("0".."n-1"), `max_concurrent` at a time,
/// each sub-agent playing `script` (kSubAgentsScript).
Json foreach_spawn(const std::string& id, long n, long max_concurrent, const std::string& script) {
  Json elements = Json::array();
  for (long i = 0; i < n; ++i)
    elements.push(Json(std::to_string(i)));
  return Json::object()
    .set("action", "spawn")
    .set("id", id)
    .set("elements", std::move(elements))
    .set("prompt", "{{element}}")
    .set("max_concurrent", max_concurrent)
    .set("script", script);
}

/// Calls `k` with the count of this process's children once there are at least `n`,
/// or 60 s have passed. Polls between short awaits on `id`, so the driver's thread
/// is never blocked (the sub-agents run on the same scheduler).
void wait_children(Driver& d, const std::string& id, long n, std::chrono::steady_clock::time_point deadline,
                   std::function<void(long)> k) {
  long count = children_left();
  if (count >= n || std::chrono::steady_clock::now() > deadline)
    return k(count);
  d.call("await", fmt::format(R"({{"any":["{}"],"timeout_secs":0.02}})", id),
         [&d, id, n, deadline, k](Reply) { wait_children(d, id, n, deadline, k); });
}

/// W8's second half: 200 sub-agents live and idle at once.
constexpr long kIdleSubAgents = 200;

void w8_idle(Driver& d, double rate, Done done) {
  constexpr long idle = kIdleSubAgents;
  auto spawn = foreach_spawn("idle", idle, idle, "idler");
  auto rss = std::make_shared<RssGrowth>();
  d.batch({"idle"}, [&d, spawn, rss, rate, done](Status st) {
    if (!st)
      return done(Error{st.error});
    d.call("foreach", spawn.dump(), [&d, rss, rate, done](Reply r) {
      if (!r)
        return done(Error{r.error()});
      // Each sleeps once its sub-agent spawned it; the await comes right after.
      auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
      wait_children(d, "idle", kIdleSubAgents, deadline, [&d, rss, rate, done](long live) {
        if (live < kIdleSubAgents)
          return done(Error{fmt::format("W8: only {} of {} idle sub-agents started", live, kIdleSubAgents)});
        auto per_kib = rss->growth_kib() / double(kIdleSubAgents);
        d.call("foreach", R"({"action":"abort","id":"idle"})", [rate, per_kib, done](Reply r) {
          if (!r)
            return done(Error{r.error()});
          done(Figures{{"subagents_per_s", rate},
                       {"rss_per_idle_subagent_kib", per_kib},
                       {"left", double(children_left())}});
        });
      });
    });
  });
}

/// W8: `n` scripted sub-agents through one foreach, 100 at a time, each spawning
/// /bin/true and awaiting it: sub-agents per second. Then `idle` sub-agents live at
/// once, each awaiting its own sleep: memory per live idle sub-agent (its handle and
/// process's share included), and what an abort of them all leaves.
void w8(Driver& d, long n, Done done) {
  auto each = foreach_spawn("each", n, 100, "worker");
  auto t0 = now_ns();
  d.batch({"each"}, [&d, n, each, t0, done](Status st) {
    if (!st)
      return done(Error{st.error});
    d.call("foreach", each.dump(), [&d, n, t0, done](Reply r) {
      if (!r)
        return done(Error{r.error()});
      d.call("await", R"({"all":["each"],"timeout_secs":600})", [&d, n, t0, done](Reply r) {
        auto res = await_answer(r);
        if (!res)
          return done(Error{res.error()});
        if (res->completed.size() != 1 || !res->completed[0].state.ok)
          return done(Error{fmt::format("W8: the foreach did not complete: {}", *r)});
        if (res->completed[0].state.content.find("\"error\"") != std::string::npos)
          return done(Error{fmt::format("W8: a sub-agent failed: {}", res->completed[0].state.content.substr(0, 400))});
        double rate = double(n) / (us_between(t0, now_ns()) / 1e6);
        w8_idle(d, rate, done);
      });
    });
  });
}

/// `n` fetch round trips (wait_ms 0) on a running `tool` handle `id`: each in µs.
void fetch_round_trips(Driver& d, const std::string& tool, const std::string& id, long n,
                       std::function<void(Result<std::vector<double>>)> k) {
  d.call(tool, spawn_args(id, R"("secs":"600","wait_ms":0)"), [&d, tool, id, n, k](Reply r) {
    if (!r)
      return k(Error{fmt::format("{} spawn: {}", tool, r.error())});
    auto us = std::make_shared<std::vector<double>>();
    auto fetch = fmt::format(R"({{"action":"fetch","id":"{}","wait_ms":0}})", id);
    d.repeat(
      n,
      [&d, tool, fetch, us](long, Then next) {
        auto t0 = now_ns();
        d.call(tool, fetch, [us, t0, next](Reply r) {
          us->push_back(us_between(t0, now_ns()));
          next(ok_or(r, "fetch"));
        });
      },
      [&d, tool, id, us, k](Status st) {
        if (!st)
          return k(Error{st.error});
        d.call(tool, fmt::format(R"({{"action":"abort","id":"{}"}})", id), [us, k](Reply r) {
          if (!r)
            return k(Error{r.error()});
          k(std::move(*us));
        });
      });
  });
}

/// Spawns `n` handles of `tool` in one batch: spawns per second.
void spawn_rate(Driver& d, const std::string& tool, const std::string& prefix, long n,
                std::function<void(Result<double>)> k) {
  auto t0 = now_ns();
  spawn_batch(d, numbered_ids(prefix, n), tool, R"("wait_ms":0)", [n, t0, k](Status st) {
    if (!st)
      return k(Error{st.error});
    k(double(n) / (us_between(t0, now_ns()) / 1e6));
  });
}

/// W9: fetch round trips and a batch of spawns, on this machine and on a node over
/// loopback (a `jp-actors node` process): the remote figures against the local ones.
void w9_run(Driver& d, long n, Done done) {
  long fetches = 2 * n;
  fetch_round_trips(d, "sleep", "lf", fetches, [&d, n, fetches, done](Result<std::vector<double>> local) {
    if (!local)
      return done(Error{local.error()});
    auto local_p50 = percentile(*local, 0.5);
    fetch_round_trips(d, "far_sleep", "rf", fetches, [&d, n, local_p50, done](Result<std::vector<double>> remote) {
      if (!remote)
        return done(Error{remote.error()});
      auto remote_p50 = percentile(*remote, 0.5);
      spawn_rate(d, "bin_true", "lt", n, [&d, n, local_p50, remote_p50, done](Result<double> local_rate) {
        if (!local_rate)
          return done(Error{local_rate.error()});
        spawn_rate(d, "far_true", "rt", n, [=](Result<double> remote_rate) {
          if (!remote_rate)
            return done(Error{remote_rate.error()});
          done(Figures{{"fetch_p50_ratio", remote_p50 / local_p50},
                       {"local_fetch_p50_us", local_p50},
                       {"remote_fetch_p50_us", remote_p50},
                       {"spawn_rate_ratio", *remote_rate / *local_rate},
                       {"local_spawns_per_s", *local_rate},
                       {"remote_spawns_per_s", *remote_rate}});
        });
      });
    });
  });
}

/// W9 around its node: a temporary state directory (the node token), the node's
/// workspace and config, the node process, then the run against it.
Result<Figures> w9(const WorkloadParams& p, long n) {
  auto dir = temp_workspace();
  struct Cleanup {
    std::string dir;
    ~Cleanup() {
      std::error_code ec;
      std::filesystem::remove_all(dir, ec);
    }
  } cleanup{dir};
  // The token is made by the node and read by this process: both look here.
  ::setenv("XDG_STATE_HOME", (dir + "/state").c_str(), 1);
  std::filesystem::create_directories(dir + "/node-workspace");
  auto node_config = dir + "/node.toml";
  std::ofstream(node_config) << handle_tools("far_sleep", "far_true");
  auto node = NodeProcess::start(p.jp_actors_path, dir + "/node-workspace", node_config);
  if (!node)
    return Error{node.error()};
  Runtime rt(p.floor_path, fmt::format("[nodes.w9]\naddress = \"{}\"\n", (*node)->address()) +
                             handle_tools("far_sleep", "far_true", "w9"));
  using namespace std::placeholders;
  return rt.drive(std::bind(w9_run, _1, n, _2));
}

long or_default(long n, long dflt) {
  return n > 0 ? n : dflt;
}

} // namespace

Result<Figures> run_jp_workload(const WorkloadParams& p) {
  using namespace std::placeholders;
  const auto& w = p.workload;
  std::function<void(Driver&, Done)> run;
  long ops = 1; // what --cpu's figures are per
  if (w == "W1")
    run = std::bind(w1, _1, ops = or_default(p.n, 2000), _2);
  else if (w == "W2")
    run = std::bind(w2, _1, ops = or_default(p.n, 1000), _2);
  else if (w == "W3")
    run = std::bind(w3, _1, ops = or_default(p.n, 200), p.samples_path, _2);
  else if (w == "W4")
    run = std::bind(w4, _1, p.bytes > 0 ? p.bytes : 256ll << 20, _2);
  else if (w == "W5")
    run = std::bind(w5, _1, ops = or_default(p.n, 2000), _2);
  else if (w == "W6")
    run = std::bind(w6, _1, ops = or_default(p.n, 5000), _2);
  else if (w == "W7")
    run = std::bind(w7, _1, ops = or_default(p.n, 10000), _2);
  else if (w == "W8")
    run = std::bind(w8, _1, ops = or_default(p.n, 1000), _2);
  else if (w == "W9")
    return w9(p, or_default(p.n, 1000));
  else if (w == "W10")
    run = std::bind(w10, _1, ops = or_default(p.n, 100), _2);
  else
    return Error{fmt::format("unknown workload `{}`; expected one of W1 W2 W3 W4 W5 W6 W7 W8 W9 W10", w)};
  Runtime rt(p.floor_path);
  std::ofstream cpu_out; // opened first: a path that cannot be written fails before the round
  if (!p.cpu_path.empty()) {
    cpu_out.open(p.cpu_path);
    if (!cpu_out)
      return Error{fmt::format("--cpu {}: cannot write it", p.cpu_path)};
  }
  auto before = p.cpu_path.empty() ? CpuTimes{} : read_cpu_times(); // the runtime's start-up left out
  auto figures = rt.drive(run);
  if (figures && !p.cpu_path.empty()) {
    cpu_out << format_cpu_use(before, read_cpu_times(), w, ops);
    cpu_out.close();
    if (!cpu_out)
      return Error{fmt::format("--cpu {}: cannot write it", p.cpu_path)};
  }
  return figures;
}

} // namespace jp::bench
