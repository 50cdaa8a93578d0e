#include "runtime/store/experiment_report.hpp"

#include <algorithm>
#include <cmath>
#include <ctime>
#include <fmt/format.h>
#include <set>

namespace jp {

namespace {

std::string string_at(const Json& j, std::string_view key) {
  auto* v = j.find(key);
  return v && v->is_string() ? v->as_string() : std::string();
}

/// A number member, or `otherwise`.
/// A count or a time in milliseconds: a number a run could have written (a log is
/// anyone's file: 1e308 showed as `inf` in the table, a sum of them overflowed).
double number_at(const Json& j, std::string_view key, double otherwise = -1) {
  constexpr double kMost = 1e15; // ms: 30,000 years; tokens: more than any run
  auto* v = j.find(key);
  if (!v || !v->is_number())
    return otherwise;
  double d = v->as_number();
  return std::isfinite(d) && d >= 0 && d <= kMost ? d : otherwise;
}

bool ok_at(const Json& j) {
  auto* v = j.find("ok");
  return !v || !v->is_bool() || v->as_bool();
}

/// The `action` of a call's arguments ("" = none: a blocking call).
std::string action_of(const Json& e) {
  auto* args = e.find("arguments");
  return args && args->is_object() ? string_at(*args, "action") : std::string();
}

double round1(double x) {
  return std::round(x * 10) / 10;
}

/// Adds a reported count to a figure that is -1 until one is reported.
void add_count(int64_t& figure, double n) {
  if (n >= 0)
    figure = std::max<int64_t>(figure, 0) + static_cast<int64_t>(n);
}

/// The time covered by `spans`, overlaps counted once.
double covered(std::vector<std::pair<double, double>> spans) {
  std::sort(spans.begin(), spans.end());
  double total = 0, start = 0, end = -1;
  for (auto& [s, e] : spans) {
    if (s > end) {
      total += std::max(0.0, end - start);
      start = s;
      end = e;
    } else {
      end = std::max(end, e);
    }
  }
  return total + std::max(0.0, end - start);
}

/// The figures as (name, value), in the order tables and JSON show them; unknown
/// ones (-1) are left out. The one list of names both writers use.
std::vector<std::pair<std::string, double>> numbers_of(const AgentFigures& f) {
  std::vector<std::pair<std::string, double>> out{
    {"wall_ms", round1(f.wall_ms)},   {"model_ms", round1(f.model_ms)},
    {"tools_ms", round1(f.tools_ms)}, {"round_trips", static_cast<double>(f.round_trips)},
    {"tool_calls", static_cast<double>(f.tool_calls)},
    {"handles_spawned", static_cast<double>(f.handles_spawned)},
  };
  if (f.peak_handles >= 0)
    out.emplace_back("peak_handles", static_cast<double>(f.peak_handles));
  if (f.tokens_in >= 0)
    out.emplace_back("tokens_in", static_cast<double>(f.tokens_in));
  if (f.tokens_out >= 0)
    out.emplace_back("tokens_out", static_cast<double>(f.tokens_out));
  out.emplace_back("errors", static_cast<double>(f.errors));
  for (auto& [tool, n] : f.calls_by_tool)
    out.emplace_back("calls." + tool, static_cast<double>(n));
  return out;
}

Json figures_json(const AgentFigures& f) {
  auto j = Json::object();
  j.set("agent", f.agent);
  auto by_tool = Json::object();
  for (auto& [name, value] : numbers_of(f)) {
    if (name.starts_with("calls."))
      by_tool.set(name.substr(6), static_cast<int64_t>(value));
    else if (name.ends_with("_ms"))
      j.set(name, value);
    else
      j.set(name, static_cast<int64_t>(value));
  }
  j.set("calls_by_tool", std::move(by_tool));
  return j;
}

// -- tables -----------------------------------------------------------------------------

struct Column {
  const char* title;
  const char* figure; // numbers_of's name; "calls" is every calls.* figure
};

constexpr Column kColumns[] = {
  {"wall ms", "wall_ms"},      {"model ms", "model_ms"},   {"tools ms", "tools_ms"},
  {"rounds", "round_trips"},   {"calls", "tool_calls"},    {"spawned", "handles_spawned"},
  {"peak", "peak_handles"},    {"tok in", "tokens_in"},    {"tok out", "tokens_out"},
  {"errors", "errors"},
};

/// Rows of cells (the first row the titles), aligned: the first column and the
/// last to the left, the others to the right.
std::string render(const std::vector<std::vector<std::string>>& rows) {
  // Widths in characters, not bytes: "–" in a range is three bytes, one column.
  auto columns = [](const std::string& s) {
    return static_cast<size_t>(std::count_if(s.begin(), s.end(), [](char c) { return (c & 0xC0) != 0x80; }));
  };
  std::vector<size_t> width(rows.front().size(), 0);
  for (auto& r : rows)
    for (size_t i = 0; i < r.size(); ++i)
      width[i] = std::max(width[i], columns(r[i]));
  std::string out;
  for (auto& r : rows) {
    std::string line;
    for (size_t i = 0; i < r.size(); ++i) {
      bool left = i == 0 || i + 1 == r.size();
      auto pad = std::string(width[i] - columns(r[i]), ' ');
      line += (i ? "  " : "") + (left ? r[i] + (i + 1 == r.size() ? "" : pad) : pad + r[i]);
    }
    while (!line.empty() && line.back() == ' ')
      line.pop_back();
    out += line + "\n";
  }
  return out;
}

std::string number_text(double v, bool ms) {
  // A count's median over runs may fall between two (1.5): shown as it is.
  if (ms || v != static_cast<double>(static_cast<int64_t>(v)))
    return fmt::format("{:.1f}", v);
  return fmt::format("{}", static_cast<int64_t>(v));
}

/// A table with a row per agent and the totals: `cell(agent index or -1, figure)`
/// gives each cell, "-" where unknown.
template <class Cell, class ByTool>
std::string table(const std::vector<std::string>& agents, Cell cell, ByTool by_tool) {
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> titles{"agent"};
  for (auto& c : kColumns)
    titles.push_back(c.title);
  titles.push_back("calls by tool");
  rows.push_back(titles);
  for (int i = 0; i <= static_cast<int>(agents.size()); ++i) {
    int index = i < static_cast<int>(agents.size()) ? i : -1;
    std::vector<std::string> row{index < 0 ? "total" : agents[static_cast<size_t>(index)]};
    for (auto& c : kColumns)
      row.push_back(cell(index, c.figure));
    row.push_back(by_tool(index));
    rows.push_back(row);
  }
  return render(rows);
}

std::string by_tool_text(const std::map<std::string, std::string>& counts) {
  std::string out;
  for (auto& [tool, n] : counts)
    out += (out.empty() ? "" : ", ") + tool + " " + n;
  return out;
}

/// min, median, max of `values` (not empty).
std::tuple<double, double, double> spread(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  auto n = values.size();
  double median = n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
  return {values.front(), median, values.back()};
}

/// Per agent path (first-seen order over the runs, then "total"): figure -> values.
struct Gathered {
  std::vector<std::string> agents;
  std::map<std::string, std::map<std::string, std::vector<double>>> values;
};

Gathered gather(const std::vector<ExperimentReport>& runs) {
  Gathered g;
  std::set<std::string> seen;
  std::map<std::string, size_t> runs_of; // of each agent ("": the total)
  for (auto& run : runs) {
    for (auto& a : run.agents) {
      if (seen.insert(a.agent).second)
        g.agents.push_back(a.agent);
      ++runs_of[a.agent];
      for (auto& [name, v] : numbers_of(a))
        g.values[a.agent][name].push_back(v);
    }
    ++runs_of[""];
    for (auto& [name, v] : numbers_of(run.total))
      g.values[""][name].push_back(v);
  }
  // A tool not called in a run was called 0 times there, a count as known as any.
  for (auto& [key, figures] : g.values)
    for (auto& [name, values] : figures)
      if (name.starts_with("calls."))
        values.resize(runs_of[key], 0);
  return g;
}

} // namespace

double rfc3339_ms(const std::string& text) {
  std::tm tm{};
  int ms = 0;
  char z = 0;
  if (std::sscanf(text.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d.%3d%c", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour,
                  &tm.tm_min, &tm.tm_sec, &ms, &z) != 8 ||
      z != 'Z')
    return -1;
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  return static_cast<double>(::timegm(&tm)) * 1000 + ms;
}

ReportBuilder::Agent& ReportBuilder::agent(const std::string& path) {
  auto [it, added] = open_.agents.try_emplace(path);
  if (added) {
    open_.order.push_back(path);
    it->second.figures.agent = path;
    it->second.figures.peak_handles = -1;
  }
  return it->second;
}

void ReportBuilder::add(const Json& e) {
  auto kind = string_at(e, "event");
  if (kind == "run_end") {
    counted_any_ = true;
    open_.run_ms = number_at(e, "elapsed_ms");
    done_.push_back(std::move(open_));
    open_ = Run{};
    return;
  }
  if (kind.empty())
    return;
  // A stored conversation's events name no agent: they are the assistant's.
  auto path = string_at(e, "agent");
  auto& a = agent(path.empty() ? "assistant" : path);
  auto& f = a.figures;
  double t = rfc3339_ms(string_at(e, "time"));
  if (t >= 0) {
    a.first = a.first < 0 ? t : std::min(a.first, t);
    a.last = std::max(a.last, t);
  }
  if (kind == "turn_start") {
    a.turn_started = t;
  } else if (kind == "model_round") {
    ++f.round_trips;
    f.model_ms += std::max(0.0, number_at(e, "elapsed_ms", 0));
    add_count(f.tokens_in, number_at(e, "tokens_in"));
    add_count(f.tokens_out, number_at(e, "tokens_out"));
  } else if (kind == "chat_request") {
    a.request_at = t;
  } else if (kind == "chat_response") {
    if (string_at(e, "finish_reason") == "turn_end_inquiry")
      return; // the turn end's own await, not the model's
    ++f.round_trips;
    add_count(f.tokens_in, number_at(e, "tokens_in"));
    add_count(f.tokens_out, number_at(e, "tokens_out"));
    if (a.request_at >= 0 && t >= a.request_at)
      f.model_ms += t - a.request_at;
    a.request_at = -1;
  } else if (kind == "tool_call" || kind == "tool_call_request") {
    auto tool = string_at(e, kind == "tool_call" ? "tool" : "name");
    ++f.tool_calls;
    ++f.calls_by_tool[tool];
    if (kind == "tool_call_request") {
      auto id = string_at(e, "id");
      a.calls_at[id] = t;
      a.call_actions[id] = action_of(e);
    }
  } else if (kind == "tool_result") {
    double elapsed = std::max(0.0, number_at(e, "elapsed_ms", 0));
    if (t >= 0)
      a.tool_spans.push_back({t - elapsed, t});
    f.errors += !ok_at(e);
  } else if (kind == "tool_call_response") {
    auto id = string_at(e, "id");
    if (auto at = a.calls_at.find(id); at != a.calls_at.end()) {
      if (at->second >= 0 && t >= at->second)
        a.tool_spans.push_back({at->second, t});
      a.calls_at.erase(at);
    }
    bool ok = ok_at(e);
    f.errors += !ok;
    // A stored conversation has no handle counts: its spawns that answered.
    if (ok && a.call_actions[id] == "spawn" && f.peak_handles < 0)
      ++f.handles_spawned;
  } else if (kind == "turn_end") {
    double from = a.turn_started >= 0 ? a.turn_started : a.first;
    if (t >= 0 && from >= 0) {
      f.wall_ms += t - from;
      a.turn_spans.push_back({from, t});
    }
    a.turn_started = -1;
    // A sub-agent's turn is "interrupted" by its parent's abort too: the user's
    // interrupt is a top-level agent's.
    if (auto* i = e.find("interrupted"); i && i->is_bool() && i->as_bool() && path.find('/') == std::string::npos)
      open_.interrupted = true;
    f.errors += !string_at(e, "error").empty();
    if (auto spawned = number_at(e, "handles_spawned"); spawned >= 0) {
      if (f.peak_handles < 0)
        f.handles_spawned = 0; // counted by the registry from now on
      f.handles_spawned += static_cast<int64_t>(spawned);
      f.peak_handles = std::max<int64_t>(std::max<int64_t>(f.peak_handles, 0),
                                         static_cast<int64_t>(number_at(e, "peak_handles", 0)));
    }
  } else {
    return; // a kind no report counts
  }
  counted_any_ = true;
}

ExperimentReport ReportBuilder::finish(const Run& run) const {
  ExperimentReport r;
  auto& total = r.total;
  total.agent = "total";
  total.peak_handles = -1;
  double first = -1, last = -1;
  std::vector<std::pair<double, double>> turns; // every agent's
  for (auto& path : run.order) {
    auto a = run.agents.at(path);
    std::vector<std::pair<double, double>> spans;
    for (auto& s : a.tool_spans)
      spans.emplace_back(s.start, s.end);
    // A turn that never ended (a log cut short): up to its last event.
    if (a.turn_started >= 0 && a.last >= a.turn_started) {
      a.figures.wall_ms += a.last - a.turn_started;
      a.turn_spans.push_back({a.turn_started, a.last});
    }
    if (a.turn_started >= 0)
      r.cut_short.push_back(path);
    for (auto& s : a.turn_spans)
      turns.emplace_back(s.start, s.end);
    // Times are stamped to the ms, tool calls timed finer: a span may seem to start
    // before its turn did. An agent's tools never took longer than it did.
    a.figures.tools_ms = covered(std::move(spans));
    if (!a.turn_spans.empty()) // its turns in one ms are 0 ms: so are their tools
      a.figures.tools_ms = std::min(a.figures.tools_ms, a.figures.wall_ms);
    auto& f = a.figures;
    total.model_ms += f.model_ms;
    total.tools_ms += f.tools_ms;
    total.round_trips += f.round_trips;
    total.tool_calls += f.tool_calls;
    for (auto& [tool, n] : f.calls_by_tool)
      total.calls_by_tool[tool] += n;
    total.handles_spawned += f.handles_spawned;
    add_count(total.tokens_in, static_cast<double>(f.tokens_in));
    add_count(total.tokens_out, static_cast<double>(f.tokens_out));
    total.errors += f.errors;
    if (a.first >= 0)
      first = first < 0 ? a.first : std::min(first, a.first);
    last = std::max(last, a.last);
    r.agents.push_back(std::move(f));
  }
  // Without run_end (a stored conversation, a log cut short): the time some turn ran,
  // not the hours between a conversation's turns.
  total.wall_ms = run.run_ms >= 0 ? run.run_ms : !turns.empty() ? covered(std::move(turns)) : first >= 0 ? last - first : 0;
  r.interrupted = run.interrupted;
  return r;
}

std::vector<ExperimentReport> ReportBuilder::reports() const {
  std::vector<ExperimentReport> out;
  for (auto& run : done_)
    out.push_back(finish(run));
  if (!open_.order.empty())
    out.push_back(finish(open_));
  return out;
}

Json report_json(const ExperimentReport& report) {
  auto agents = Json::array();
  for (auto& a : report.agents)
    agents.push(figures_json(a));
  auto total = figures_json(report.total);
  total.erase("agent");
  auto j = Json::object().set("agents", std::move(agents)).set("total", std::move(total));
  if (!report.cut_short.empty()) {
    auto cut = Json::array();
    for (auto& a : report.cut_short)
      cut.push(Json(a));
    j.set("cut_short", std::move(cut));
  }
  if (report.interrupted)
    j.set("interrupted", true);
  return j;
}

namespace {

/// What makes any of `runs` partial, together.
ExperimentReport partial_of(const std::vector<ExperimentReport>& runs) {
  ExperimentReport all;
  for (auto& r : runs) {
    for (auto& a : r.cut_short)
      if (std::find(all.cut_short.begin(), all.cut_short.end(), a) == all.cut_short.end())
        all.cut_short.push_back(a);
    all.interrupted = all.interrupted || r.interrupted;
  }
  return all;
}

/// Lines after a table saying what makes its figures partial ("" when nothing does).
std::string partial_notes(const std::vector<ExperimentReport>& runs) {
  auto partial = partial_of(runs);
  auto& cut = partial.cut_short;
  bool interrupted = partial.interrupted;
  std::string out;
  if (!cut.empty())
    out += fmt::format("note: the log ends inside a turn of {} (no turn_end): the run was killed or its log cut "
                       "short, so these are the figures up to its last event\n",
                       fmt::join(cut, ", "));
  if (interrupted)
    out += "note: a turn was interrupted (Ctrl-C or a stop): its figures are those up to the interrupt\n";
  return out;
}

} // namespace

std::string report_table(const ExperimentReport& report) {
  std::vector<std::string> names;
  for (auto& a : report.agents)
    names.push_back(a.agent);
  auto figures = [&](int i) -> const AgentFigures& {
    return i < 0 ? report.total : report.agents[static_cast<size_t>(i)];
  };
  auto cell = [&](int i, std::string_view figure) -> std::string {
    for (auto& [name, v] : numbers_of(figures(i)))
      if (name == figure)
        return number_text(v, name.ends_with("_ms"));
    return "-";
  };
  auto by_tool = [&](int i) {
    std::map<std::string, std::string> counts;
    for (auto& [tool, n] : figures(i).calls_by_tool)
      counts[tool] = std::to_string(n);
    return by_tool_text(counts);
  };
  return table(names, cell, by_tool);
}

Json repeated_report_json(const std::vector<ExperimentReport>& runs) {
  auto g = gather(runs);
  // Shaped as one run's report is: each figure a spread, calls under calls_by_tool.
  auto entry = [&](const std::string& key) {
    auto j = Json::object();
    auto by_tool = Json::object();
    for (auto& [name, values] : g.values[key]) {
      auto [lo, mid, hi] = spread(values);
      auto s = Json::object().set("min", lo).set("median", mid).set("max", hi);
      if (values.size() < runs.size())
        s.set("runs", static_cast<int64_t>(values.size())); // not known in every run
      if (name.starts_with("calls."))
        by_tool.set(name.substr(6), std::move(s));
      else
        j.set(name, std::move(s));
    }
    return j.set("calls_by_tool", std::move(by_tool));
  };
  auto agents = Json::array();
  for (auto& path : g.agents)
    agents.push(entry(path).set("agent", path));
  return Json::object()
    .set("runs", static_cast<int64_t>(runs.size()))
    .set("agents", std::move(agents))
    .set("total", entry(""));
}

std::string repeated_report_table(const std::vector<ExperimentReport>& runs) {
  auto g = gather(runs);
  auto key = [&](int i) { return i < 0 ? std::string() : g.agents[static_cast<size_t>(i)]; };
  auto text = [](const std::vector<double>& values, bool ms) {
    auto [lo, mid, hi] = spread(values);
    auto out = number_text(mid, ms);
    if (lo != hi)
      out += " [" + number_text(lo, ms) + "–" + number_text(hi, ms) + "]";
    return out;
  };
  auto cell = [&](int i, const std::string& figure) -> std::string {
    auto& values = g.values[key(i)];
    auto it = values.find(figure);
    return it == values.end() ? "-" : text(it->second, figure.ends_with("_ms"));
  };
  auto by_tool = [&](int i) {
    std::map<std::string, std::string> counts;
    for (auto& [name, values] : g.values[key(i)])
      if (name.starts_with("calls."))
        counts[name.substr(6)] = text(values, false);
    return by_tool_text(counts);
  };
  return fmt::format("{} runs: median [min–max]\n", runs.size()) + table(g.agents, cell, by_tool);
}

Json runs_report_json(const std::vector<ExperimentReport>& runs) {
  if (runs.size() == 1)
    return report_json(runs.front());
  auto j = repeated_report_json(runs);
  // The partial's keys, as one run's report has them.
  auto partial = report_json(partial_of(runs));
  for (auto* key : {"cut_short", "interrupted"})
    if (auto* v = partial.find(key))
      j.set(key, *v);
  return j;
}

std::string runs_report_table(const std::vector<ExperimentReport>& runs) {
  return (runs.size() == 1 ? report_table(runs.front()) : repeated_report_table(runs)) + partial_notes(runs);
}

} // namespace jp
