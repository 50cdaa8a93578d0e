#include "bench/cpu_use.hpp"

#include <algorithm>
#include <cstdlib>
#include <ctime>
#include <dirent.h>
#include <fmt/format.h>
#include <fstream>
#include <sstream>
#include <sys/resource.h>

namespace jp::bench {

namespace {

std::string read_small(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

double field_after(const std::string& text, const std::string& key) {
  auto at = text.find(key);
  return at == std::string::npos ? 0 : std::strtod(text.c_str() + at + key.size(), nullptr);
}

double us(const timeval& t) {
  return double(t.tv_sec) * 1e6 + double(t.tv_usec);
}

} // namespace

CpuTimes read_cpu_times() {
  CpuTimes t;
  timespec now{};
  ::clock_gettime(CLOCK_MONOTONIC, &now);
  t.wall_ns = double(now.tv_sec) * 1e9 + double(now.tv_nsec);
  if (DIR* dir = ::opendir("/proc/self/task")) {
    while (auto* e = ::readdir(dir)) {
      if (e->d_name[0] == '.')
        continue;
      std::string base = std::string("/proc/self/task/") + e->d_name;
      ThreadTimes th;
      th.tid = std::strtol(e->d_name, nullptr, 10);
      th.comm = read_small(base + "/comm");
      while (!th.comm.empty() && th.comm.back() == '\n')
        th.comm.pop_back();
      std::replace(th.comm.begin(), th.comm.end(), ' ', '_');
      std::istringstream stat(read_small(base + "/schedstat"));
      if (!(stat >> th.on_cpu_ns >> th.runqueue_ns >> th.slices))
        continue; // it ended while being read: left out, as one that ended before
      th.preempted = field_after(read_small(base + "/status"), "nonvoluntary_ctxt_switches:");
      t.threads.push_back(std::move(th));
    }
    ::closedir(dir);
  }
  std::sort(t.threads.begin(), t.threads.end(), [](auto& a, auto& b) { return a.tid < b.tid; });
  rusage self{}, children{};
  ::getrusage(RUSAGE_SELF, &self);
  ::getrusage(RUSAGE_CHILDREN, &children);
  t.user_us = us(self.ru_utime);
  t.sys_us = us(self.ru_stime);
  t.child_user_us = us(children.ru_utime);
  t.child_sys_us = us(children.ru_stime);
  return t;
}

std::string format_cpu_use(const CpuTimes& before, const CpuTimes& after, const std::string& workload, long ops) {
  double n = double(std::max(ops, 1L));
  auto out = fmt::format("# where the time went: {}, {} ops, us per op (wall {:.1f})\n", workload, ops,
                         (after.wall_ns - before.wall_ns) / 1e3 / n);
  double on_cpu = 0, runqueue = 0;
  for (auto& a : after.threads) {
    ThreadTimes b;
    for (auto& x : before.threads)
      if (x.tid == a.tid)
        b = x;
    double cpu = (a.on_cpu_ns - b.on_cpu_ns) / 1e3 / n, wait = (a.runqueue_ns - b.runqueue_ns) / 1e3 / n;
    on_cpu += cpu;
    runqueue += wait;
    out += fmt::format("thread {} {} on_cpu {:.1f} runqueue {:.1f} slices {:.2f} preempted {:.2f}\n", a.comm, a.tid,
                       cpu, wait, (a.slices - b.slices) / n, (a.preempted - b.preempted) / n);
  }
  out += fmt::format("threads on_cpu {:.1f} runqueue {:.1f}\n", on_cpu, runqueue);
  out += fmt::format("process user {:.1f} sys {:.1f}\n", (after.user_us - before.user_us) / n,
                     (after.sys_us - before.sys_us) / n);
  out += fmt::format("children user {:.1f} sys {:.1f}\n", (after.child_user_us - before.child_user_us) / n,
                     (after.child_sys_us - before.child_sys_us) / n);
  return out;
}

} // namespace jp::bench
