// jp-bench: BENCH.md's workloads, jp-actors against the OS floor (bench/floor.c).
//   jp-bench run [--quick] [--json FILE] [--compare OLD] [--rounds R] [--launcher K] [--child-session auto|always] [--output-on-io RULE] [--worker-threads N] [--io-poll-us N] [--caf KEY=VALUE] [W1 ...]
//   jp-bench compare OLD.json NEW.json                           two runs' figures side by side
//   jp-bench pairs OLD1.json NEW1.json [OLD2.json NEW2.json ...]  alternating pairs summed up
//   jp-bench worker W [--n N] [--bytes B] [--samples FILE] [--cpu FILE] --floor PATH   one jp-actors round
//   jp-bench gaps FILE...                                        W3's exits by the idle time before each
//   jp-bench count PATH [--n N]                                  a path without processes, for callgrind
//   jp-bench timeline FILE                                       W1's calls in a scheduler trace (perf script)
#include <CLI/CLI.hpp>
#include <climits>
#include <cstdlib>
#include <cstdio>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <optional>
#include <unistd.h>

#include "actors/io_thread_rules.hpp"
#include "bench/caf_settings.hpp"
#include "bench/compare.hpp"
#include "bench/counted_paths.hpp"
#include "bench/exit_gaps.hpp"
#include "bench/jp_workloads.hpp"
#include "bench/report.hpp"
#include "bench/spawn_layers.hpp"
#include "bench/spawn_timeline.hpp"
#include "messages/json.hpp"
#include "runtime/process/process.hpp"

using namespace jp::bench;

namespace {

std::string self_path() {
  char buf[PATH_MAX];
  auto n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, size_t(n)) : std::string("jp-bench");
}

std::string sibling(const std::string& name) {
  auto self = self_path();
  auto slash = self.rfind('/');
  return (slash == std::string::npos ? std::string(".") : self.substr(0, slash)) + "/" + name;
}

int worker(const WorkloadParams& p) {
  // `run --launcher` chooses how its workers start children (child_launch.hpp).
  if (const char* l = std::getenv("JP_BENCH_LAUNCHER"); l && std::string_view(l) == "boost")
    jp::use_launcher(jp::launcher_kind::boost_v2);
  else if (l && std::string_view(l) == "posix_spawn")
    jp::use_launcher(jp::launcher_kind::posix_spawn);
  // `run --child-session always`: every child in its own session, as before session 34.
  if (const char* c = std::getenv("JP_BENCH_CHILD_SESSION"); c && std::string_view(c) == "always")
    jp::use_own_sessions(true);
  // `run --output-on-io`: when a live tool's output may run on the io thread.
  if (const char* o = std::getenv("JP_BENCH_OUTPUT_ON_IO"); o && std::string_view(o) == "first-idle")
    jp::use_output_on_io(jp::output_on_io::first_idle);
  else if (o && std::string_view(o) == "all-idle")
    jp::use_output_on_io(jp::output_on_io::all_idle);
  else if (o && std::string_view(o) == "never")
    jp::use_output_on_io(jp::output_on_io::never);
  // `run --others-live-on-io`: whether what the io thread sends may run there with other tools live.
  if (const char* o = std::getenv("JP_BENCH_OTHERS_LIVE_ON_IO"); o && std::string_view(o) == "worker")
    jp::use_others_live_on_io(jp::others_live_on_io::worker);
  else if (o && std::string_view(o) == "all-idle")
    jp::use_others_live_on_io(jp::others_live_on_io::all_idle);
  auto figures = run_jp_workload(p);
  if (!figures) {
    std::fprintf(stderr, "jp-bench worker %s: %s\n", p.workload.c_str(), figures.error().c_str());
    return 1;
  }
  jp::Json f = jp::Json::object();
  for (auto& [k, v] : *figures)
    f.set(k, v);
  jp::Json line = jp::Json::object();
  line.set("workload", p.workload);
  line.set("figures", std::move(f));
  std::printf("%s\n", line.dump().c_str());
  return 0;
}

/// A file's text; errors name it.
jp::Result<std::string> read_text(const std::string& path) {
  std::ifstream in(path);
  if (!in)
    return jp::Error{fmt::format("cannot read {}", path)};
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

/// The rows of a JSON run in `path`; errors name the file.
jp::Result<std::vector<Row>> read_rows(const std::string& path) {
  auto text = read_text(path);
  if (!text)
    return jp::Error{text.error()};
  auto rows = rows_from_json(*text);
  if (!rows)
    return jp::Error{fmt::format("{}: {}", path, rows.error())};
  return rows;
}

/// Two runs' rows, read; a file that is not a run is said on stderr.
std::optional<std::pair<std::vector<Row>, std::vector<Row>>> read_pair(const std::string& before,
                                                                        const std::string& now) {
  auto b = read_rows(before);
  auto n = read_rows(now);
  for (auto* r : {&b, &n})
    if (!*r) {
      std::fprintf(stderr, "jp-bench: %s\n", r->error().c_str());
      return std::nullopt;
    }
  return std::pair{std::move(*b), std::move(*n)};
}

int pair_files(const std::vector<std::string>& files) {
  std::vector<std::pair<std::vector<Row>, std::vector<Row>>> pairs;
  for (size_t i = 0; i + 1 < files.size(); i += 2) {
    auto pair = read_pair(files[i], files[i + 1]);
    if (!pair)
      return 2;
    pairs.push_back(std::move(*pair));
  }
  std::fputs(format_pairs(pairs).c_str(), stdout);
  return 0;
}

/// W3's sample files (--samples), one a round, summed up by format_exit_gaps.
int gap_files(const std::vector<std::string>& files) {
  std::vector<std::vector<jp::bench::ExitSample>> rounds;
  for (auto& f : files) {
    auto text = read_text(f);
    if (!text) {
      std::fprintf(stderr, "jp-bench gaps: %s\n", text.error().c_str());
      return 2;
    }
    auto samples = read_exit_samples(*text);
    if (!samples) {
      std::fprintf(stderr, "jp-bench gaps: %s: %s\n", f.c_str(), samples.error().c_str());
      return 2;
    }
    rounds.push_back(std::move(*samples));
  }
  std::fputs(format_exit_gaps(rounds).c_str(), stdout);
  return 0;
}

/// A scheduler trace of W1 (bench/spawn_timeline.hpp), summed up.
int timeline_file(const std::string& file) {
  auto text = read_text(file);
  if (!text) {
    std::fprintf(stderr, "jp-bench timeline: %s\n", text.error().c_str());
    return 2;
  }
  auto summary = format_spawn_timeline(*text);
  if (!summary) {
    std::fprintf(stderr, "jp-bench timeline: %s: %s\n", file.c_str(), summary.error().c_str());
    return 2;
  }
  std::fputs(summary->c_str(), stdout);
  return 0;
}

int compare_files(const std::string& before, const std::string& now) {
  auto pair = read_pair(before, now);
  if (!pair)
    return 2;
  std::fputs(format_comparison(pair->first, pair->second, before).c_str(), stdout);
  return 0;
}

int run(bool quick, int rounds, const std::string& json_file, const std::string& compare_file,
        const std::vector<std::string>& selected) {
  // An earlier run to compare with is read first: a bad file is said before the rounds.
  std::vector<Row> before;
  if (!compare_file.empty()) {
    auto rows = read_rows(compare_file);
    if (!rows) {
      std::fprintf(stderr, "jp-bench: --compare: %s\n", rows.error().c_str());
      return 2;
    }
    before = std::move(*rows);
  }
  auto cases = select_cases(selected, quick);
  if (!cases) {
    std::fprintf(stderr, "jp-bench: %s\n", cases.error().c_str());
    return 2;
  }
  // jp-actors is beside jp-bench in a pack (.benchpack), one folder up in a build.
  auto node = sibling("jp-actors");
  if (::access(node.c_str(), X_OK) != 0)
    node = sibling("../jp-actors");
  Binaries bin{sibling("jp-floor"), self_path(), node};
  if (::access(bin.floor.c_str(), X_OK) != 0) {
    std::fprintf(stderr, "jp-bench: the floor program %s is missing; build the jp-floor target\n",
                 bin.floor.c_str());
    return 2;
  }
  std::fprintf(stderr, "jp-bench: %zu case(s), %d rounds each, floor and jp-actors interleaved%s\n",
               cases->size(), rounds, quick ? " (quick counts)" : "");
  auto rows = run_cases(*cases, rounds, bin);
  std::fputs(format_table(rows).c_str(), stdout);
  if (!compare_file.empty())
    std::fputs(("\n" + format_comparison(before, rows, compare_file)).c_str(), stdout);
  if (!json_file.empty()) {
    std::ofstream out(json_file);
    out << rows_json(rows);
    if (!out) {
      std::fprintf(stderr, "jp-bench: cannot write %s\n", json_file.c_str());
      return 1;
    }
  }
  for (auto& r : rows)
    if (r.met.rfind("failed", 0) == 0)
      return 1; // a workload that did not run is an error; an unmet goal is a finding
  return 0;
}

} // namespace

int main(int argc, char** argv) {
  CLI::App app{"jp-bench: BENCH.md's workloads W1-W9 and W10, jp-actors against the OS floor"};
  app.require_subcommand(1);

  bool quick = false;
  int rounds = 3;
  std::string json_file;
  std::vector<std::string> selected;
  auto* run_cmd = app.add_subcommand("run", "Run floor and jp-actors interleaved; print the table");
  run_cmd->add_flag("--quick", quick, "Small counts (a smoke test of the benchmark itself)");
  run_cmd->add_option("--rounds", rounds, "Rounds per side (at least 3)")->check(CLI::Range(3, 100));
  run_cmd->add_option("--json", json_file, "Also write the rows as JSON to FILE");
  std::string compare_file;
  run_cmd->add_option("--compare", compare_file,
                      "An earlier run's JSON (--json): after the table, each figure's change against it and one "
                      "line naming each figure worse by more than 5%");
  std::vector<std::string> compared;
  auto* compare_cmd = app.add_subcommand("compare", "Compare two JSON runs (--json), figure by figure");
  compare_cmd->add_option("files", compared, "OLD.json NEW.json")->required()->expected(2);
  std::vector<std::string> paired;
  auto* pairs_cmd = app.add_subcommand(
    "pairs", "Sum up alternating pairs of JSON runs (old, new, old, new ...): each figure's medians over the pairs "
             "and in how many the new run was better and worse");
  pairs_cmd->add_option("files", paired, "OLD1.json NEW1.json [OLD2.json NEW2.json ...]")->required();
  run_cmd->add_option("workloads", selected, "Workloads to run (default: all): W1 ... W10");
  std::string launcher = "vfork";
  run_cmd->add_option("--launcher", launcher,
                      "How jp-actors starts children: vfork (ours, the default), posix_spawn (glibc's) or boost "
                      "(Boost.Process v2's fork launcher); bench/README.md compares them")
    ->check(CLI::IsMember({"vfork", "boost", "posix_spawn"}));
  std::string child_session = "auto";
  run_cmd->add_option("--child-session", child_session,
                      "Whether jp-actors' children lead their own sessions: auto (only with a pty or when jp-actors "
                      "has a controlling terminal, the default) or always (as before; bench/README.md, session 34)")
    ->check(CLI::IsMember({"auto", "always"}));
  std::string output_on_io = "all-idle";
  run_cmd->add_option("--output-on-io", output_on_io,
                      "When a live tool's output may run on jp-actors' io thread (no other tool live): all-idle "
                      "(every worker asleep, the default), first-idle (the first worker asleep, the default until 2026-12-04) "
                      "or never (a worker runs it, as before session 35); bench/README.md")
    ->check(CLI::IsMember({"first-idle", "all-idle", "never"}));
  std::string others_live_on_io = "all-idle";
  run_cmd->add_option("--others-live-on-io", others_live_on_io,
                      "With other tools live, where what jp-actors' io thread sends (an exit, an output) runs: "
                      "all-idle (the default: on the io thread when every worker sleeps, as with none live) or "
                      "worker (the io thread stays free for their events, the default until 2026-12-04); "
                      "bench/README.md")
    ->check(CLI::IsMember({"worker", "all-idle"}));
  int worker_threads = 0;
  run_cmd->add_option("--worker-threads", worker_threads,
                      "jp-actors' runtime.worker_threads in the workers (default: the config's own); "
                      "bench/README.md measures it")
    ->check(CLI::Range(1, 64));
  int io_poll_us = -1;
  run_cmd->add_option("--io-poll-us", io_poll_us,
                      "jp-actors' runtime.io_poll_us in the workers (default: the config's own); "
                      "bench/README.md measures it")
    ->check(CLI::Range(0, 10000));
  std::vector<std::string> caf_settings;
  run_cmd->add_option("--caf", caf_settings,
                      "KEY=VALUE: one of CAF's work-stealing settings for jp-actors' side (repeatable), e.g. "
                      "work-stealing.aggressive-poll-attempts=30000; bench/README.md says what to measure with it")
    ->expected(1)
    ->allow_extra_args(false) // one value a --caf: the workloads may follow
    ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);

  WorkloadParams p;
  auto* worker_cmd = app.add_subcommand("worker", "One jp-actors round of one workload (used by run)");
  worker_cmd->add_option("workload", p.workload, "W1 ... W10")->required();
  worker_cmd->add_option("--n", p.n, "Count (default: BENCH.md's)");
  worker_cmd->add_option("--bytes", p.bytes, "W4: bytes the child writes");
  worker_cmd->add_option("--floor", p.floor_path, "The jp-floor binary (its child modes)")->required();
  worker_cmd->add_option("--jp-actors", p.jp_actors_path, "The jp-actors binary (W9 runs it as a node)");
  worker_cmd->add_option("--samples", p.samples_path,
                         "W3: write each exit to FILE (us after the spawn phase, us to the answer), for `gaps`");
  worker_cmd->add_option("--cpu", p.cpu_path,
                         "Write where the time went to FILE: each thread's time on a CPU and waiting for one, "
                         "the process's and its children's CPU, per operation (jp-floor --cpu writes the same); "
                         "not W9");
  std::vector<std::string> gapped;
  auto* gaps_cmd = app.add_subcommand(
    "gaps", "Sum up W3's exits (worker W3 --samples, jp-floor W3 --samples; one file a round) by the time since "
            "the exit before each: how the answer's latency grows with how long the threads it wakes have slept");
  gaps_cmd->add_option("files", gapped, "FILE...")->required();

  std::string traced;
  auto* timeline_cmd = app.add_subcommand(
    "timeline", "Sum up W1's calls in a scheduler trace: the text of `perf script -F comm,pid,tid,cpu,time,event,"
                "trace` over `perf record -a -e sched:sched_process_fork,sched:sched_process_exec,"
                "sched:sched_process_exit,sched:sched_wakeup,sched:sched_switch` of either side's W1 (bench/quiet's "
                "TRACE step): per call, the spawn, the program, the exit until the spawning thread runs, and that "
                "thread's work until its next spawn");
  timeline_cmd->add_option("file", traced, "FILE")->required();

  std::string counted;
  long count_n = 0;
  auto* count_cmd = app.add_subcommand(
    "count", "Run one path of the workloads without processes, to be counted with valgrind --tool=callgrind "
             "(which cannot run jp-actors' processes); prints its average time per run. Paths:\n" +
               counted_path_names());
  count_cmd->add_option("path", counted, "One of the paths listed above")->required();
  count_cmd->add_option("--n", count_n, "Runs (default: the path's own)")->check(CLI::Range(1L, 100000000L));

  std::string layers_floor;
  long layers_n = 2000;
  int layers_rounds = 5;
  auto* layers_cmd = app.add_subcommand(
    "layers", "W1 in layers: the floor (its own group, its own session), our launcher in the floor's kind of loop, "
              "the process layer on an io thread, and W1 through the actors; per layer µs a call (median and min "
              "over the rounds) and what it adds to the layer below (bench/README.md, \"W1 in layers\")");
  layers_cmd->add_option("--floor", layers_floor, "The jp-floor binary")->required();
  layers_cmd->add_option("--n", layers_n, "Calls a round (default 2000, W1's)")->check(CLI::Range(1L, 1000000L));
  layers_cmd->add_option("--rounds", layers_rounds, "Rounds, each layer once a round (default 5)")
    ->check(CLI::Range(1, 1000));

  CLI11_PARSE(app, argc, argv);
  if (*layers_cmd) {
    // This jp-bench runs the runtime layer's worker.
    return spawn_layers(self_path(), std::filesystem::absolute(layers_floor).string(), layers_n, layers_rounds);
  }
  if (*count_cmd) {
    auto us = run_counted_path(counted, count_n);
    if (!us) {
      std::fprintf(stderr, "jp-bench count: %s\n", us.error().c_str());
      return 1;
    }
    std::printf("{\"path\":\"%s\",\"us_per_run\":%.3f}\n", counted.c_str(), *us);
    return 0;
  }
  if (*gaps_cmd)
    return gap_files(gapped);
  if (*timeline_cmd)
    return timeline_file(traced);
  if (*worker_cmd) {
    if (!p.samples_path.empty() && p.workload != "W3") {
      std::fprintf(stderr, "jp-bench worker %s: --samples is W3's only (its exits one by one)\n", p.workload.c_str());
      return 2;
    }
    if (!p.cpu_path.empty() && p.workload == "W9") {
      std::fprintf(stderr, "jp-bench worker W9: --cpu is W1-W8's only (W9's node is another process)\n");
      return 2;
    }
    p.floor_path = std::filesystem::absolute(p.floor_path).string(); // children run elsewhere
    return worker(p);
  }
  ::setenv("JP_BENCH_LAUNCHER", launcher.c_str(), 1); // read by the workers
  ::setenv("JP_BENCH_CHILD_SESSION", child_session.c_str(), 1);
  ::setenv("JP_BENCH_OUTPUT_ON_IO", output_on_io.c_str(), 1);
  ::setenv("JP_BENCH_OTHERS_LIVE_ON_IO", others_live_on_io.c_str(), 1);
  if (worker_threads > 0)
    ::setenv("JP_BENCH_WORKER_THREADS", std::to_string(worker_threads).c_str(), 1); // bench_config reads it
  else
    ::unsetenv("JP_BENCH_WORKER_THREADS"); // not one left from an earlier shell
  if (io_poll_us >= 0)
    ::setenv("JP_BENCH_IO_POLL_US", std::to_string(io_poll_us).c_str(), 1); // bench_config reads it
  else
    ::unsetenv("JP_BENCH_IO_POLL_US");
  std::string cafs;
  for (const auto& text : caf_settings) {
    if (auto checked = check_caf_setting(text); !checked) {
      std::fprintf(stderr, "jp-bench run: %s\n", checked.error.c_str());
      return 2;
    }
    cafs += (cafs.empty() ? "" : ";") + text;
  }
  if (!cafs.empty())
    ::setenv(kCafSettingsVariable, cafs.c_str(), 1); // the workers' Runtime applies them
  else
    ::unsetenv(kCafSettingsVariable);
  if (*compare_cmd)
    return compare_files(compared[0], compared[1]);
  if (*pairs_cmd) {
    if (paired.size() % 2) {
      std::fprintf(stderr, "jp-bench pairs: %zu files, an odd number: give an old run and a new run for each pair\n",
                   paired.size());
      return 2;
    }
    return pair_files(paired);
  }
  return run(quick, rounds, json_file, compare_file, selected);
}
