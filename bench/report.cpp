#include "bench/report.hpp"

#include <cerrno>
#include <cmath>
#include <cstring>
#include <fcntl.h>
#include <map>
#include <fmt/format.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench/goals.hpp"
#include "bench/measure.hpp"
#include "messages/json.hpp"

extern char** environ;

namespace jp::bench {

namespace {

const WorkloadSpec* spec_of(const std::string& workload) {
  for (auto& s : workload_specs())
    if (s.id == workload)
      return &s;
  return nullptr;
}


std::vector<std::string> case_args(const Case& c) {
  std::vector<std::string> a{c.workload};
  if (c.n > 0)
    a.insert(a.end(), {"--n", std::to_string(c.n)});
  if (c.bytes > 0)
    a.insert(a.end(), {"--bytes", std::to_string(c.bytes)});
  return a;
}

std::string goal_text(const FigureSpec& f) {
  switch (f.goal) {
    case goal_kind::none: return "";
    case goal_kind::ratio_max: return fmt::format("≤ {}× floor", f.value);
    case goal_kind::ratio_min: return fmt::format("≥ {}× floor", f.value);
    case goal_kind::abs_max: return fmt::format("≤ {} {}", f.value, f.unit);
    case goal_kind::abs_min: return fmt::format("≥ {} {}", f.value, f.unit);
  }
  return "";
}

/// The one place goals are applied.
bool goal_met(const FigureSpec& f, double ratio, double jp_value) {
  switch (f.goal) {
    case goal_kind::none: return true;
    case goal_kind::ratio_max: return ratio <= f.value;
    case goal_kind::ratio_min: return ratio >= f.value;
    case goal_kind::abs_max: return jp_value <= f.value;
    case goal_kind::abs_min: return jp_value >= f.value;
  }
  return false;
}

double median(std::vector<double> v) {
  return percentile(v, 0.5 - 1e-9); // nearest rank: the middle of 3
}

double min_of(const std::vector<double>& v) {
  return v.empty() ? 0 : *std::min_element(v.begin(), v.end());
}

double max_of(const std::vector<double>& v) {
  return v.empty() ? 0 : *std::max_element(v.begin(), v.end());
}

std::string num(double x) {
  if (std::isnan(x))
    return "-";
  if (x == 0 || std::fabs(x) >= 100)
    return fmt::format("{:.0f}", x);
  if (std::fabs(x) >= 10)
    return fmt::format("{:.1f}", x);
  return fmt::format("{:.2f}", x);
}

/// Progress on stderr: one line rewritten in place on a terminal, else a line per
/// step (CI logs).
void progress(const std::string& text) {
  static const bool tty = ::isatty(STDERR_FILENO) != 0;
  if (tty)
    std::fprintf(stderr, "\r\033[K%s", text.c_str());
  else if (!text.empty())
    std::fprintf(stderr, "%s\n", text.c_str());
  std::fflush(stderr);
}

} // namespace

/// Runs argv (no shell), returns its stdout; stderr passes through.
Result<std::string> run_capture(const std::vector<std::string>& argv) {
  int p[2];
  if (::pipe2(p, O_CLOEXEC) != 0)
    return Error{fmt::format("pipe: {}", std::strerror(errno))};
  posix_spawn_file_actions_t fa;
  ::posix_spawn_file_actions_init(&fa);
  ::posix_spawn_file_actions_adddup2(&fa, p[1], 1);
  std::vector<char*> args;
  for (auto& a : argv)
    args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  int rc = ::posix_spawn(&pid, args[0], &fa, nullptr, args.data(), environ);
  ::posix_spawn_file_actions_destroy(&fa);
  ::close(p[1]);
  if (rc != 0) {
    ::close(p[0]);
    return Error{fmt::format("cannot start {}: {}", argv[0], std::strerror(rc))};
  }
  std::string out;
  char buf[4096];
  for (;;) {
    auto n = ::read(p[0], buf, sizeof buf);
    if (n > 0)
      out.append(buf, size_t(n));
    else if (n < 0 && errno == EINTR)
      continue;
    else
      break;
  }
  ::close(p[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    return Error{fmt::format("{} {} failed ({})", argv[0], argv.size() > 1 ? argv[1] : "",
                             WIFSIGNALED(status) ? fmt::format("signal {}", WTERMSIG(status))
                                                 : fmt::format("exit {}", WEXITSTATUS(status)))};
  return out;
}

Result<Figures> parse_figures(const std::string& line) {
  auto j = Json::parse(line);
  if (!j || !j->is_object())
    return Error{fmt::format("not a result line: {:?}", line)};
  auto* f = j->find("figures");
  if (!f || !f->is_object())
    return Error{fmt::format("no figures in {:?}", line)};
  Figures out;
  for (auto& [k, v] : f->as_object())
    out[k] = v.is_number() ? v.as_number() : std::nan("");
  return out;
}

Result<std::vector<Case>> select_cases(const std::vector<std::string>& selected, bool quick) {
  std::vector<Case> all = {
    {"W1", "W1", quick ? 200 : 0},
    {"W2", "W2", quick ? 100 : 0},
    {"W3", "W3", quick ? 50 : 0},
    {"W4 256MiB", "W4", 0, quick ? 32ll << 20 : 256ll << 20},
    {"W4 2GiB", "W4", 0, quick ? 256ll << 20 : 2048ll << 20},
    {"W5", "W5", quick ? 200 : 0},
    {"W6", "W6", quick ? 300 : 0},
    {"W7", "W7", quick ? 1000 : 0},
    {"W8", "W8", quick ? 100 : 0},
    {"W9", "W9", quick ? 100 : 0},
    {"W10", "W10", quick ? 8 : 0},
  };
  if (quick) { // labels say what ran
    all[3].label = "W4 32MiB";
    all[4].label = "W4 256MiB";
  }
  if (selected.empty())
    return all;
  std::vector<Case> out;
  for (auto& w : selected) {
    if (!spec_of(w))
      return Error{fmt::format("unknown workload `{}`; expected some of W1 W2 W3 W4 W5 W6 W7 W8 W9 W10", w)};
    for (auto& c : all)
      if (c.workload == w)
        out.push_back(c);
  }
  return out;
}

std::vector<Row> run_cases(const std::vector<Case>& cases, int rounds, const Binaries& bin) {
  std::vector<Row> rows;
  for (auto& c : cases) {
    const WorkloadSpec& spec = *spec_of(c.workload);
    std::map<std::string, std::vector<double>> floor, jp;
    std::string failure;
    for (int r = 1; r <= rounds && failure.empty(); ++r) {
      // Interleaved, so drift of the machine hits both sides alike.
      for (bool is_floor : {true, false}) {
        if (is_floor && !spec.floor)
          continue;
        progress(fmt::format("{} round {}/{}: {}", c.label, r, rounds, is_floor ? "floor" : "jp-actors"));
        auto argv = is_floor ? std::vector<std::string>{bin.floor}
                             : std::vector<std::string>{bin.jp, "worker", "--floor", bin.floor, "--jp-actors", bin.node};
        auto extra = case_args(c);
        argv.insert(argv.end(), extra.begin(), extra.end());
        auto out = run_capture(argv);
        auto figures = out ? parse_figures(*out) : Result<Figures>(Error{out.error()});
        if (!figures) {
          failure = fmt::format("{}: {}", is_floor ? "floor" : "jp-actors", figures.error());
          break;
        }
        for (auto& [k, v] : *figures)
          (is_floor ? floor : jp)[k].push_back(v);
      }
    }
    progress("");
    for (auto& f : spec.figures) {
      Row row;
      row.label = c.label;
      row.figure = f.name;
      row.unit = f.unit;
      row.goal = goal_text(f);
      if (!failure.empty()) {
        row.met = "failed: " + failure;
        rows.push_back(row);
        continue;
      }
      auto& fv = floor[f.name];
      auto& jv = jp[f.name];
      row.floor_min = fv.empty() ? std::nan("") : min_of(fv);
      row.floor_median = fv.empty() ? std::nan("") : median(fv);
      row.jp_min = jv.empty() ? std::nan("") : min_of(jv); // a floor-only figure
      row.jp_median = jv.empty() ? std::nan("") : median(jv);
      row.ratio = !fv.empty() && row.floor_median != 0 ? row.jp_median / row.floor_median : std::nan("");
      double judged = f.worst_round ? max_of(jv) : row.jp_median;
      if (f.goal != goal_kind::none)
        row.met = goal_met(f, row.ratio, judged) ? "met" : "NOT met";
      rows.push_back(row);
    }
  }
  return rows;
}

std::string format_table(const std::vector<Row>& rows) {
  std::string out = fmt::format("{:<10} {:<25} {:>9} {:>9} {:>9} {:>9} {:>7}  {:<16} {}\n", "workload",
                                "figure", "floor min", "floor med", "jp min", "jp med", "ratio", "goal", "");
  for (auto& r : rows) {
    if (r.met.rfind("failed", 0) == 0) {
      out += fmt::format("{:<10} {:<25} {}\n", r.label, r.figure, r.met);
      continue;
    }
    auto figure = r.unit.empty() ? r.figure : fmt::format("{} ({})", r.figure, r.unit);
    // fmt pads by code points, so "µ" and "≤" line up.
    out += fmt::format("{:<10} {:<25} {:>9} {:>9} {:>9} {:>9} {:>7}  {:<16} {}\n", r.label, figure,
                       num(r.floor_min), num(r.floor_median), num(r.jp_min), num(r.jp_median),
                       std::isnan(r.ratio) ? "-" : fmt::format("{:.2f}", r.ratio), r.goal, r.met);
  }
  return out;
}

std::string rows_json(const std::vector<Row>& rows) {
  Json arr = Json::array();
  for (auto& r : rows) {
    Json o = Json::object();
    o.set("workload", r.label);
    o.set("figure", r.figure);
    o.set("unit", r.unit);
    o.set("floor_min", std::isnan(r.floor_min) ? Json() : Json(r.floor_min));
    o.set("floor_median", std::isnan(r.floor_median) ? Json() : Json(r.floor_median));
    o.set("jp_min", std::isnan(r.jp_min) ? Json() : Json(r.jp_min));
    o.set("jp_median", std::isnan(r.jp_median) ? Json() : Json(r.jp_median));
    o.set("ratio", std::isnan(r.ratio) ? Json() : Json(r.ratio));
    o.set("goal", r.goal);
    o.set("met", r.met);
    arr.push(std::move(o));
  }
  return arr.dump() + "\n";
}

} // namespace jp::bench
