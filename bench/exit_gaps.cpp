#include "bench/exit_gaps.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <limits>
#include <sstream>

#include "bench/measure.hpp"

namespace jp::bench {

std::string format_exit_samples(const std::vector<ExitSample>& samples) {
  std::string out = "# W3's exits: us after the spawn phase (below 0: during it), us from the stamp to the answer\n";
  for (auto& s : samples)
    out += fmt::format("{:.1f} {:.1f}\n", s.after_spawn_us, s.latency_us);
  return out;
}

Result<std::vector<ExitSample>> read_exit_samples(const std::string& text) {
  std::vector<ExitSample> out;
  std::istringstream in(text);
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    if (line.empty() || line[0] == '#')
      continue;
    std::istringstream fields(line);
    ExitSample s;
    std::string rest;
    if (!(fields >> s.after_spawn_us >> s.latency_us) || (fields >> rest))
      return Error{fmt::format("line {}: expected two numbers (us after the spawn phase, us to the answer), got `{}`",
                               n, line)};
    out.push_back(s);
  }
  return out;
}

namespace {

struct Band {
  const char* name;
  double below_us; // the gap's upper bound
  std::vector<double> latencies;
};

std::string band_line(const char* name, std::vector<double>& v) {
  if (v.empty())
    return fmt::format("{:<12} {:>6}\n", name, 0);
  auto p50 = percentile(v, 0.5), p90 = percentile(v, 0.9);
  return fmt::format("{:<12} {:>6} {:>8.0f} {:>8.0f} {:>8.0f}\n", name, v.size(), p50, p90, v.back());
}

} // namespace

std::string format_exit_gaps(const std::vector<std::vector<ExitSample>>& rounds) {
  std::vector<Band> bands = {{"< 0.3 ms", 300, {}},
                             {"0.3-1 ms", 1000, {}},
                             {"1-3 ms", 3000, {}},
                             {"3-6 ms", 6000, {}},
                             {">= 6 ms", std::numeric_limits<double>::infinity(), {}}};
  std::vector<double> all;
  for (auto round : rounds) {
    std::sort(round.begin(), round.end(),
              [](const ExitSample& a, const ExitSample& b) { return a.after_spawn_us < b.after_spawn_us; });
    // The first exit of a round has no exit before it: it is left out of the bands.
    for (size_t i = 1; i < round.size(); ++i) {
      if (round[i].after_spawn_us <= 0)
        continue; // during the spawn phase: it waited for the spawns, not for a wake-up
      double gap = round[i].after_spawn_us - round[i - 1].after_spawn_us;
      auto band = std::find_if(bands.begin(), bands.end(), [&](const Band& b) { return gap < b.below_us; });
      band->latencies.push_back(round[i].latency_us);
      all.push_back(round[i].latency_us);
    }
  }
  std::string out = "exits after the spawn phase, by the time since the exit before (us from the stamp to the answer)\n";
  out += fmt::format("{:<12} {:>6} {:>8} {:>8} {:>8}\n", "gap", "exits", "p50", "p90", "max");
  for (auto& b : bands)
    out += band_line(b.name, b.latencies);
  auto p50 = percentile(all, 0.5), p99 = percentile(all, 0.99);
  out += fmt::format("{:<12} {:>6} {:>8.0f} {:>8} (p99 {:.0f})\n", "all", all.size(), p50, "", p99);
  return out;
}

} // namespace jp::bench
