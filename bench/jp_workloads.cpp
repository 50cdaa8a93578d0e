#include "bench/jp_workloads.hpp"

#include <caf/all.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <fmt/format.h>
#include <unistd.h>

#include "actors/turn_actor.hpp"
#include "config/config_loader.hpp"
#include "messages/atoms.hpp"
#include "messages/call_result.hpp"
#include "messages/json_codec.hpp"
#include "runtime/actor_config.hpp"
#include "runtime/io_thread.hpp"

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

[conversation.tools.sleep]
summary = "sleep SECS as a handle"
command = {{ program = "/bin/sleep", args = ["{{{{tool.arguments.secs}}}}"] }}
run = "unattended"
[conversation.tools.sleep.parameters.secs]
type = "string"
required = true
[conversation.tools.sleep.spawn]
stateful = true
actions = ["spawn", "fetch", "abort"]

[conversation.tools.cat]
summary = "cat as a handle that takes input"
command = {{ program = "/bin/cat" }}
run = "unattended"
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
)";

std::string temp_workspace() {
  char tmpl[] = "/tmp/jp-bench-XXXXXX";
  const char* dir = ::mkdtemp(tmpl);
  return dir ? dir : "/tmp";
}

/// One turn of jp-actors in this process, driven as the agent loop drives it.
class Runtime {
public:
  explicit Runtime(const std::string& floor_path) : workspace_(temp_workspace()) {
    auto config = apply_config_text(default_config(), fmt::format(kToolsToml, fmt::arg("floor", floor_path)),
                                    "bench tools");
    if (!config)
      throw std::runtime_error(config.error());
    config->workspace = workspace_;
    turn_ = spawn_turn(sys_, TurnContext{std::make_shared<const Config>(std::move(*config)), &io_, {}});
  }

  ~Runtime() {
    self_->send_exit(turn_, caf::exit_reason::user_shutdown);
    std::error_code ec;
    std::filesystem::remove_all(workspace_, ec);
  }

  /// One call; its result (or the runtime's error) once it answers.
  Result<std::string> call(const std::string& tool, const std::string& args) {
    send(tool, args);
    return receive();
  }

  /// Starts a call without waiting: the answer comes back through receive().
  void send(const std::string& tool, const std::string& args) {
    self_->send(turn_, call_atom::value, tool, args);
  }

  /// The next answer of a call started with send (answers come in completion order).
  Result<std::string> receive() {
    Result<std::string> out = Error{"no answer"};
    self_->receive([&](CallResult& r) {
      out = r.ok ? Result<std::string>(std::move(r.content)) : Result<std::string>(Error{r.content});
    });
    return out;
  }

  /// Pre-registers a batch's spawns, as the agent loop does before a batch runs.
  Status batch(const std::vector<std::string>& ids) {
    Status st;
    self_->request(turn_, caf::infinite, batch_atom::value, ids)
      .receive([](bool) {}, [&](caf::error& e) { st = Status(Error{to_string(e)}); });
    return st;
  }

private:
  std::string workspace_;
  IoThread io_;
  RuntimeActorConfig cfg_;
  caf::actor_system sys_{cfg_};
  caf::scoped_actor self_{sys_};
  caf::actor turn_;
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

double us_between(int64_t t0, int64_t t1) {
  return double(t1 - t0) / 1000.0;
}

/// The parsed await answer, or why it is not one.
Result<AwaitResult> await_answer(const Result<std::string>& answer) {
  if (!answer)
    return Error{answer.error()};
  auto j = Json::parse(*answer);
  if (!j)
    return Error{j.error()};
  return await_result_from_json(*j);
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

// A step that returns Status: stop the workload with its error.
#define TRY(expr)                                                                                  \
  if (auto status_ = (expr); !status_)                                                             \
    return Error { status_.error }

Status expect_ok(const Result<std::string>& r, const char* what) {
  if (!r)
    return Error{fmt::format("{}: {}", what, r.error())};
  return {};
}

// ---- the workloads

Result<Figures> w1(Runtime& rt, long n) {
  std::vector<double> us;
  for (long i = 0; i < n; ++i) {
    auto t0 = now_ns();
    TRY(expect_ok(rt.call("true", "{}"), "true"));
    us.push_back(us_between(t0, now_ns()));
  }
  return Figures{{"mean_us", mean(us)}, {"p50_us", percentile(us, 0.5)}, {"p99_us", percentile(us, 0.99)}};
}

/// Spawns `ids` as one batch of calls; returns when every spawn has answered.
Status spawn_batch(Runtime& rt, const std::vector<std::string>& ids, const std::string& tool,
                   const std::string& params) {
  TRY(rt.batch(ids));
  for (auto& id : ids)
    rt.send(tool, spawn_args(id, params));
  for (size_t i = 0; i < ids.size(); ++i)
    TRY(expect_ok(rt.receive(), "spawn"));
  return {};
}

Result<Figures> w2(Runtime& rt, long n) {
  RssGrowth rss;
  auto t0 = now_ns();
  auto ids = numbered_ids("h", n);
  TRY(spawn_batch(rt, ids, "sh", R"("script":"sleep 0.2; echo done")"));
  auto done = await_answer(rt.call("await", fmt::format(R"({{"all":{}}})", ids_json(ids))));
  if (!done)
    return Error{done.error()};
  auto wall_ms = us_between(t0, now_ns()) / 1000.0;
  for (auto& s : done->completed)
    if (!s.state.ok || s.state.content != "done\n")
      return Error{fmt::format("W2: handle {} ended with {:?}", s.id, s.state.content)};
  return Figures{{"wall_ms", wall_ms}, {"rss_growth_mb", rss.growth_kib() / 1024.0}};
}

// Child i exits after (i*379) % 1000 ms, printing its exit stamp: spread over [0,1) s.
std::string stamp_params(long i) {
  return fmt::format(R"("mode":"stamp","arg":"{}")", (i * 379) % 1000);
}

Result<Figures> w3(Runtime& rt, long n) {
  auto ids = numbered_ids("s", n);
  TRY(rt.batch(ids));
  for (long i = 0; i < n; ++i)
    rt.send("floor", spawn_args(ids[size_t(i)], stamp_params(i)));
  for (long i = 0; i < n; ++i)
    TRY(expect_ok(rt.receive(), "spawn"));
  auto spawned = now_ns();
  std::vector<double> after, all;
  std::vector<std::string> pending = ids;
  while (!pending.empty()) {
    auto r = await_answer(rt.call("await", fmt::format(R"({{"any":{}}})", ids_json(pending))));
    auto t = now_ns();
    if (!r)
      return Error{r.error()};
    for (auto& s : r->completed) {
      auto stamp = std::stoll(s.state.content);
      all.push_back(us_between(stamp, t));
      if (stamp > spawned)
        after.push_back(us_between(stamp, t));
    }
    pending.clear();
    for (auto& s : r->pending)
      pending.push_back(s.id);
  }
  return Figures{{"p50_us", percentile(after, 0.5)}, {"p99_us", percentile(after, 0.99)},
                 {"p50_all_us", percentile(all, 0.5)}, {"p99_all_us", percentile(all, 0.99)}};
}

Result<Figures> w4(Runtime& rt, long long bytes) {
  RssGrowth rss;
  auto t0 = now_ns();
  TRY(expect_ok(rt.call("floor", spawn_args("w", fmt::format(R"("mode":"write","arg":"{}")", bytes))),
                "spawn"));
  auto done = await_answer(rt.call("await", R"({"all":["w"]})"));
  auto secs = us_between(t0, now_ns()) / 1e6;
  if (!done)
    return Error{done.error()};
  if (done->completed.size() != 1 || !done->completed[0].state.ok)
    return Error{"W4: the writer did not succeed"};
  return Figures{{"mb_per_s", double(bytes) / 1e6 / secs}, {"rss_growth_mb", rss.growth_kib() / 1024.0}};
}

Result<Figures> w5(Runtime& rt, long n) {
  TRY(expect_ok(rt.call("cat", spawn_args("cat", "")), "spawn"));
  std::vector<double> us;
  std::string seen;
  for (long i = 0; i < n; ++i) {
    auto line = fmt::format("line {}\n", i);
    auto t0 = now_ns();
    auto applied = rt.call("cat", fmt::format(R"({{"action":"apply","id":"cat","input":{}}})", Json(line).dump()));
    seen.clear();
    for (auto r = applied;; r = rt.call("cat", R"({"action":"fetch","id":"cat"})")) {
      if (!r)
        return Error{r.error()};
      auto report = report_from_response(*r);
      if (!report)
        return Error{report.error()};
      seen += report->state.content;
      if (seen.find(line) != std::string::npos)
        break;
    }
    us.push_back(us_between(t0, now_ns()));
  }
  TRY(expect_ok(rt.call("cat", R"({"action":"abort","id":"cat"})"), "abort"));
  return Figures{{"p50_us", percentile(us, 0.5)}, {"p99_us", percentile(us, 0.99)}};
}

Result<Figures> w6(Runtime& rt, long n) {
  auto ids = numbered_ids("z", n);
  double per_handle_kib = 0;
  auto t0 = now_ns();
  {
    RssGrowth rss;
    TRY(spawn_batch(rt, ids, "sleep", R"("secs":"60")"));
    per_handle_kib = rss.growth_kib() / double(n);
  }
  auto spawn_secs = us_between(t0, now_ns()) / 1e6;
  auto t1 = now_ns();
  for (auto& id : ids)
    rt.send("sleep", fmt::format(R"({{"action":"abort","id":"{}"}})", id));
  for (long i = 0; i < n; ++i)
    TRY(expect_ok(rt.receive(), "abort"));
  auto abort_ms = us_between(t1, now_ns()) / 1000.0;
  return Figures{{"spawn_rate_per_s", double(n) / spawn_secs},
                 {"rss_per_handle_kib", per_handle_kib},
                 {"abort_ms", abort_ms},
                 {"left", double(children_left())}};
}

Result<Figures> w7(Runtime& rt, long n) {
  auto ids = numbered_ids("t", 10);
  TRY(spawn_batch(rt, ids, "sh", R"("script":"true")"));
  auto all = fmt::format(R"({{"all":{}}})", ids_json(ids));
  TRY(expect_ok(rt.call("await", all), "await"));
  auto t0 = now_ns();
  for (long i = 0; i < n; ++i)
    TRY(expect_ok(rt.call("await", all), "await"));
  auto rate = double(n) / (us_between(t0, now_ns()) / 1e6);
  // 1,000 awaits on one running handle, answered when it stops.
  TRY(expect_ok(rt.call("floor", spawn_args("one", R"("mode":"stamp","arg":"300")")), "spawn"));
  constexpr int waiters = 1000;
  for (int i = 0; i < waiters; ++i)
    rt.send("await", R"({"any":["one"]})");
  std::vector<double> us;
  for (int i = 0; i < waiters; ++i) {
    auto r = await_answer(rt.receive());
    auto t = now_ns();
    if (!r)
      return Error{r.error()};
    if (r->completed.size() != 1)
      return Error{"W7: an await answered before the handle stopped"};
    us.push_back(us_between(std::stoll(r->completed[0].state.content), t));
  }
  return Figures{{"awaits_per_s", rate}, {"p50_us", percentile(us, 0.5)}, {"p99_us", percentile(us, 0.99)}};
}

long or_default(long n, long dflt) {
  return n > 0 ? n : dflt;
}

} // namespace

Result<Figures> run_jp_workload(const WorkloadParams& p) {
  Runtime rt(p.floor_path);
  const auto& w = p.workload;
  if (w == "W1")
    return w1(rt, or_default(p.n, 2000));
  if (w == "W2")
    return w2(rt, or_default(p.n, 1000));
  if (w == "W3")
    return w3(rt, or_default(p.n, 200));
  if (w == "W4")
    return w4(rt, p.bytes > 0 ? p.bytes : 256ll << 20);
  if (w == "W5")
    return w5(rt, or_default(p.n, 2000));
  if (w == "W6")
    return w6(rt, or_default(p.n, 5000));
  if (w == "W7")
    return w7(rt, or_default(p.n, 10000));
  return Error{fmt::format("unknown workload `{}`; expected one of W1 W2 W3 W4 W5 W6 W7", w)};
}

} // namespace jp::bench
