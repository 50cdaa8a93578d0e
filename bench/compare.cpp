#include "bench/compare.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

#include "bench/goals.hpp"
#include "messages/json.hpp"

namespace jp::bench {

namespace {

enum class verdict { better, worse, same, unknown };

struct Change {
  const Row* before = nullptr; // null: the figure is new
  double old_value = NAN, new_value = NAN;
  bool by_ratio = false;
  verdict v = verdict::unknown;
};

/// Lower is better, unless the figure is a rate or its goal is a minimum.
bool lower_is_better(const Row& r) {
  auto workload = r.label.substr(0, r.label.find(' '));
  for (auto& w : workload_specs())
    if (w.id == workload)
      for (auto& f : w.figures)
        if (f.name == r.figure)
          return !(f.goal == goal_kind::ratio_min || f.goal == goal_kind::abs_min ||
                   (f.goal == goal_kind::none && f.name.find("per_s") != std::string::npos));
  return r.figure.find("per_s") == std::string::npos;
}

/// `rows`' row of the figure `like` names (the last, if twice), or null.
const Row* find_row(const std::vector<Row>& rows, const Row& like) {
  const Row* found = nullptr;
  for (auto& r : rows)
    if (r.label == like.label && r.figure == like.figure)
      found = &r;
  return found;
}

/// `figure` gone from `old_value` to `new_value`: unknown when either is no value.
verdict judge(double old_value, double new_value, const Row& figure) {
  if (std::isnan(old_value) || std::isnan(new_value) || old_value < 0)
    return verdict::unknown;
  // From 0 (e.g. processes left over), any change is past the noise.
  auto change = old_value == 0 ? new_value : new_value / old_value - 1;
  if (std::fabs(change) <= (old_value == 0 ? 0 : compare_noise))
    return verdict::same;
  return (change < 0) == lower_is_better(figure) ? verdict::better : verdict::worse;
}

Change compare(const std::vector<Row>& before, const Row& now) {
  Change c;
  c.before = find_row(before, now);
  if (!c.before || now.met.rfind("failed", 0) == 0 || c.before->met.rfind("failed", 0) == 0)
    return c;
  c.by_ratio = !std::isnan(c.before->ratio) && !std::isnan(now.ratio) && c.before->ratio > 0;
  c.old_value = c.by_ratio ? c.before->ratio : c.before->jp_median;
  c.new_value = c.by_ratio ? now.ratio : now.jp_median;
  c.v = judge(c.old_value, c.new_value, now);
  return c;
}

/// The change in percent, or "from 0".
std::string change_text(const Change& c) {
  if (c.old_value == 0)
    return c.new_value == 0 ? "+0.0%" : "from 0";
  return fmt::format("{:+.1f}%", (c.new_value / c.old_value - 1) * 100);
}

double number_or_nan(const Json* j) {
  return j && j->is_number() ? j->as_number() : NAN;
}

std::string text_of(const Json& o, const char* key) {
  auto* v = o.find(key);
  return v && v->is_string() ? v->as_string() : std::string();
}

} // namespace

Result<std::vector<Row>> rows_from_json(const std::string& text) {
  auto j = Json::parse(text);
  if (!j)
    return Error{"not JSON: " + j.error()};
  if (!j->is_array())
    return Error{"expected an array of rows, as `jp-bench run --json FILE` writes"};
  std::vector<Row> rows;
  for (auto& o : j->as_array()) {
    if (!o.is_object() || text_of(o, "workload").empty() || text_of(o, "figure").empty())
      return Error{"a row without `workload` and `figure`: " + cut_text(o.dump(), 120)};
    Row r;
    r.label = text_of(o, "workload");
    r.figure = text_of(o, "figure");
    r.unit = text_of(o, "unit");
    r.floor_min = number_or_nan(o.find("floor_min"));
    r.floor_median = number_or_nan(o.find("floor_median"));
    r.jp_min = number_or_nan(o.find("jp_min"));
    r.jp_median = number_or_nan(o.find("jp_median"));
    r.ratio = number_or_nan(o.find("ratio"));
    r.goal = text_of(o, "goal");
    r.met = text_of(o, "met");
    rows.push_back(std::move(r));
  }
  return rows;
}

std::string format_comparison(const std::vector<Row>& before, const std::vector<Row>& now,
                              const std::string& before_name) {
  std::string out = fmt::format("compared with {} (× = ratio to the floor; otherwise jp-actors' median)\n"
                                "{:<10} {:<25} {:>12} {:>12} {:>8}\n",
                                before_name, "workload", "figure", "before", "now", "change");
  int better = 0, same = 0, fresh = 0, unknown = 0;
  std::vector<std::string> worse;
  for (auto& r : now) {
    auto c = compare(before, r);
    auto value = [&](double v, const std::string& unit) {
      return c.by_ratio ? fmt::format("{:.2f}×", v) : fmt::format("{:.4g} {}", v, unit);
    };
    if (!c.before) {
      ++fresh;
      out += fmt::format("{:<10} {:<25} {:>12} {:>12}\n", r.label, r.figure, "-", "new");
      continue;
    }
    if (c.v == verdict::unknown) {
      ++unknown;
      out += fmt::format("{:<10} {:<25} {:>12} {:>12}  not comparable (a round failed or no value)\n", r.label,
                         r.figure, "-", "-");
      continue;
    }
    const char* word = c.v == verdict::better ? "better" : c.v == verdict::worse ? "WORSE" : "";
    out += fmt::format("{:<10} {:<25} {:>12} {:>12} {:>8}  {}\n", r.label, r.figure, value(c.old_value, r.unit),
                       value(c.new_value, r.unit), change_text(c), word);
    if (c.v == verdict::better)
      ++better;
    else if (c.v == verdict::same)
      ++same;
    else
      worse.push_back(fmt::format("{} {} {}", r.label, r.figure, change_text(c)));
  }
  std::string names;
  for (auto& w : worse)
    names += (names.empty() ? " (" : ", ") + w;
  if (!names.empty())
    names += ")";
  out += fmt::format("{} figures against {}: {} worse by more than {:.0f}%{}, {} better, {} within {:.0f}%", now.size(),
                     before_name, worse.size(), compare_noise * 100, names, better, same, compare_noise * 100);
  if (fresh)
    out += fmt::format(", {} new", fresh);
  if (unknown)
    out += fmt::format(", {} not comparable", unknown);
  return out + "\n";
}

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  auto n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

} // namespace

std::string format_pairs(const std::vector<std::pair<std::vector<Row>, std::vector<Row>>>& pairs) {
  std::string out = fmt::format("{} alternating pairs (× = ratio to the floor, jp-actors' own medians after the counts; otherwise jp-actors' median)\n"
                                "{:<10} {:<25} {:>12} {:>12} {:>8}  {}\n",
                                pairs.size(), "workload", "figure", "old", "new", "change", "new better / worse in");
  // Every figure of the new runs, in the order they first come.
  std::vector<const Row*> figures;
  for (auto& pair : pairs)
    for (auto& r : pair.second)
      if (std::none_of(figures.begin(), figures.end(),
                       [&](const Row* f) { return f->label == r.label && f->figure == r.figure; }))
        figures.push_back(&r);
  std::vector<std::string> better, worse;
  for (auto* f : figures) {
    // The pairs where both runs scored it (as compare() takes them), and one scale for
    // all of them: the ratio to the floor when every such pair has one.
    std::vector<std::pair<const Row*, const Row*>> scored;
    bool by_ratio = true;
    for (auto& [before, now] : pairs)
      if (auto* n = find_row(now, *f))
        if (auto c = compare(before, *n); c.v != verdict::unknown) {
          scored.emplace_back(c.before, n);
          by_ratio = by_ratio && c.by_ratio;
        }
    std::vector<double> olds, news, jp_olds, jp_news;
    int wins = 0, losses = 0;
    for (auto [b, n] : scored) {
      double o = by_ratio ? b->ratio : b->jp_median, v = by_ratio ? n->ratio : n->jp_median;
      auto each = judge(o, v, *n);
      if (each == verdict::unknown)
        continue;
      olds.push_back(o);
      news.push_back(v);
      jp_olds.push_back(b->jp_median);
      jp_news.push_back(n->jp_median);
      wins += each == verdict::better;
      losses += each == verdict::worse;
    }
    if (olds.empty()) {
      out += fmt::format("{:<10} {:<25} {:>12} {:>12}  not comparable in any pair\n", f->label, f->figure, "-", "-");
      continue;
    }
    Change c;
    c.old_value = median(olds);
    c.new_value = median(news);
    auto value = [&](double v) { return by_ratio ? fmt::format("{:.2f}×", v) : fmt::format("{:.4g} {}", v, f->unit); };
    auto n = olds.size();
    // A ratio moves with its floor too: jp-actors' own medians beside it (this VM's
    // floors at W3's p99 spread over 160-1,090 us across one set of pairs).
    auto own = by_ratio ? fmt::format("  (jp-actors {:.4g} -> {:.4g} {})", median(jp_olds), median(jp_news), f->unit)
                        : std::string();
    out += fmt::format("{:<10} {:<25} {:>12} {:>12} {:>8}  {} / {} of {}{}\n", f->label, f->figure, value(c.old_value),
                       value(c.new_value), change_text(c), wins, losses, n, own);
    // Named: past the noise in the medians and the same way in three pairs of four,
    // of four pairs at least (a binary against itself on this VM's W5 was "better"
    // in 5 of 8 pairs).
    auto overall = n >= pairs_named_at ? judge(c.old_value, c.new_value, *f) : verdict::same;
    auto name = fmt::format("{} {} {}", f->label, f->figure, change_text(c));
    if (overall == verdict::better && 4 * size_t(wins) >= 3 * n)
      better.push_back(name);
    else if (overall == verdict::worse && 4 * size_t(losses) >= 3 * n)
      worse.push_back(name);
  }
  auto list = [](const std::vector<std::string>& xs) {
    std::string s;
    for (auto& x : xs)
      s += (s.empty() ? " (" : ", ") + x;
    return s.empty() ? s : s + ")";
  };
  out += fmt::format("over {} pairs: {} worse{}, {} better{} (past {:.0f}% in the medians and in 3 pairs of 4, "
                     "of {} at least)\n",
                     pairs.size(), worse.size(), list(worse), better.size(), list(better), compare_noise * 100,
                     pairs_named_at);
  return out;
}

bool any_worse(const std::vector<Row>& before, const std::vector<Row>& now) {
  for (auto& r : now)
    if (compare(before, r).v == verdict::worse)
      return true;
  return false;
}

} // namespace jp::bench
