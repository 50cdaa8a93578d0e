// What both sides of a workload report, and how: figures by name, percentiles,
// the clock, and the runtime's own memory (peak RSS over the workload, idle RSS
// subtracted).
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <fstream>
#include <map>
#include <string>
#include <vector>

namespace jp::bench {

using Figures = std::map<std::string, double>;

inline int64_t now_ns() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts); // the clock the `stamp` children print
  return int64_t(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

/// Microseconds from `t0` to `t1` (now_ns readings).
inline double us_between(int64_t t0, int64_t t1) {
  return double(t1 - t0) / 1000.0;
}

/// Nearest-rank percentile, q in [0,1]; sorts `v`.
inline double percentile(std::vector<double>& v, double q) {
  if (v.empty())
    return 0;
  std::sort(v.begin(), v.end());
  auto i = std::min(v.size() - 1, static_cast<size_t>(q * double(v.size())));
  return v[i];
}

inline double mean(const std::vector<double>& v) {
  double sum = 0;
  for (double x : v)
    sum += x;
  return v.empty() ? 0 : sum / double(v.size());
}

/// A field of /proc/self/status in KiB ("VmRSS", "VmHWM").
inline double status_kib(const std::string& field) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(field + ":", 0) == 0)
      return std::stod(line.substr(field.size() + 1));
  return 0;
}

/// Memory growth of this process over a stretch of work: construct when idle,
/// read growth_kib() after. Resets the kernel's peak (clear_refs 5) so the peak is
/// the workload's own.
class RssGrowth {
public:
  RssGrowth() : idle_(status_kib("VmRSS")) { std::ofstream("/proc/self/clear_refs") << "5"; }
  double growth_kib() const { return std::max(0.0, status_kib("VmHWM") - idle_); }

private:
  double idle_;
};

} // namespace jp::bench
