#include "bench/spawn_timeline.hpp"

#include <algorithm>
#include <cstdlib>
#include <fmt/format.h>
#include <map>
#include <optional>
#include <sstream>
#include <vector>

#include "bench/measure.hpp"

namespace jp::bench {

namespace {

enum class Kind { fork, exec, exit, wakeup, switch_ };

struct Event {
  double t_us = 0;
  Kind kind = Kind::fork;
  long pid = 0;      // fork: the parent thread; exec, exit, wakeup: the task
  long child = 0;    // fork: the new task
  long prev = 0;     // switch: the task switched out
  bool prev_runnable = false;
  long next = 0;     // switch: the task switched in
};

/// The number after `key` where the key starts the text or follows a space, or nullopt.
std::optional<long> number_after(const std::string& trace, const std::string& key) {
  size_t at = 0;
  if (trace.compare(0, key.size(), key) == 0) {
    at = key.size();
  } else {
    auto found = trace.find(" " + key);
    if (found == std::string::npos)
      return std::nullopt;
    at = found + 1 + key.size();
  }
  char* end = nullptr;
  long v = std::strtol(trace.c_str() + at, &end, 10);
  return end == trace.c_str() + at ? std::nullopt : std::optional<long>(v);
}

/// One line of `perf script`: "COMM PID/TID [CPU] SECS.USECS: EVENT: TRACE".
std::optional<Event> parse_line(const std::string& line) {
  auto bracket = line.find("] ");
  auto colon = bracket == std::string::npos ? std::string::npos : line.find(": ", bracket);
  if (colon == std::string::npos)
    return std::nullopt;
  Event e;
  e.t_us = std::strtod(line.c_str() + bracket + 2, nullptr) * 1e6;
  auto ev_start = line.find_first_not_of(' ', colon + 2);
  auto ev_end = line.find(": ", ev_start);
  if (ev_start == std::string::npos || ev_end == std::string::npos)
    return std::nullopt;
  auto event = line.substr(ev_start, ev_end - ev_start);
  auto trace = line.substr(ev_end + 2);
  std::optional<long> pid;
  if (event == "sched:sched_process_fork") {
    e.kind = Kind::fork;
    pid = number_after(trace, "pid=");
    auto child = number_after(trace, "child_pid=");
    if (!child)
      return std::nullopt;
    e.child = *child;
  } else if (event == "sched:sched_process_exec") {
    e.kind = Kind::exec;
    pid = number_after(trace, "pid=");
  } else if (event == "sched:sched_process_exit") {
    e.kind = Kind::exit;
    pid = number_after(trace, "pid=");
  } else if (event == "sched:sched_wakeup") {
    e.kind = Kind::wakeup;
    pid = number_after(trace, "pid=");
  } else if (event == "sched:sched_switch") {
    e.kind = Kind::switch_;
    auto prev = number_after(trace, "prev_pid="), next = number_after(trace, "next_pid=");
    auto state = trace.find(" prev_state=");
    if (!prev || !next || state == std::string::npos)
      return std::nullopt;
    e.prev = *prev;
    e.next = *next;
    e.prev_runnable = trace.compare(state + 12, 1, "R") == 0;
    return e;
  } else {
    return std::nullopt;
  }
  if (!pid)
    return std::nullopt;
  e.pid = *pid;
  return e;
}

struct Call {
  long child = 0, spawner = 0;
  double fork = 0, exec = -1, exit = -1;
};

std::string row(const char* name, std::vector<double> v) {
  auto p50 = percentile(v, 0.5), p90 = percentile(v, 0.9); // sorts v
  return fmt::format("{:<44} {:>8.1f} {:>8.1f} {:>8.1f}\n", name, v.front(), p50, p90);
}

} // namespace

Result<std::string> format_spawn_timeline(const std::string& text) {
  std::vector<Event> events;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (auto e = parse_line(line))
      events.push_back(*e);
  // perf script's order is by time within a CPU's buffer, not quite across them
  std::stable_sort(events.begin(), events.end(), [](auto& a, auto& b) { return a.t_us < b.t_us; });

  std::map<long, Call> calls; // by child
  for (auto& e : events) {
    if (e.kind == Kind::fork)
      calls[e.child] = Call{e.child, e.pid, e.t_us};
    else if (auto c = calls.find(e.pid); c != calls.end() && e.kind == Kind::exec && c->second.exec < 0)
      c->second.exec = e.t_us;
    else if (c != calls.end() && e.kind == Kind::exit)
      c->second.exit = e.t_us;
  }
  std::vector<Call> done; // children that exec'd and exited: the calls (a thread never execs)
  for (auto& [child, c] : calls)
    if (c.exec >= 0 && c.exit >= 0)
      done.push_back(c);
  if (done.size() < 2)
    return Error{"no two children forked, exec'd and exited in the trace: record sched_process_fork, "
                 "sched_process_exec, sched_process_exit, sched_wakeup and sched_switch over W1 "
                 "(perf record -a -e ...), then give `perf script -F comm,pid,tid,cpu,time,event,trace`"};
  std::sort(done.begin(), done.end(), [](auto& a, auto& b) { return a.fork < b.fork; });
  // The spawner: the thread that forked most of them.
  std::map<long, size_t> by_spawner;
  for (auto& c : done)
    ++by_spawner[c.spawner];
  long spawner = std::max_element(by_spawner.begin(), by_spawner.end(),
                                  [](auto& a, auto& b) { return a.second < b.second; })->first;

  std::vector<double> spawn, program, noticed, between, cycle, child_waits, wakeups;
  size_t next_event = 0;
  bool spawner_on = true; // until a switch says otherwise
  // One pass over the events in time, following the spawner's state (on a CPU or not).
  for (size_t i = 0; i + 1 < done.size(); ++i) {
    auto& c = done[i];
    if (c.spawner != spawner)
      continue;
    double next_fork = done[i + 1].fork;
    // Replay up to this call's fork.
    while (next_event < events.size() && events[next_event].t_us < c.fork) {
      auto& e = events[next_event++];
      if (e.kind == Kind::switch_) {
        if (e.prev == spawner)
          spawner_on = false;
        if (e.next == spawner)
          spawner_on = true;
      }
    }
    // The child: off a CPU while runnable between its fork and its exec.
    double waiting = 0, since = -1;
    double running_after_exit = -1;
    size_t wakes = 0;
    for (size_t k = next_event; k < events.size() && events[k].t_us <= next_fork; ++k) {
      auto& e = events[k];
      if (e.kind == Kind::switch_) {
        if (e.t_us <= c.exec) {
          if (e.prev == c.child && e.prev_runnable)
            since = e.t_us;
          if (e.next == c.child && since >= 0) {
            waiting += e.t_us - since;
            since = -1;
          }
        }
        if (e.prev == spawner)
          spawner_on = false;
        if (e.next == spawner) {
          spawner_on = true;
          if (e.t_us >= c.exit && running_after_exit < 0)
            running_after_exit = e.t_us;
        }
      } else if (e.kind == Kind::wakeup && e.pid == spawner && e.t_us >= c.exit) {
        ++wakes;
      }
      if (e.kind == Kind::exit && e.pid == c.child && spawner_on && running_after_exit < 0)
        running_after_exit = e.t_us; // it was on a CPU when the child went
      next_event = k + 1;
    }
    if (running_after_exit < 0)
      running_after_exit = next_fork; // ran without a switch (polling on its CPU)
    spawn.push_back(c.exec - c.fork);
    program.push_back(c.exit - c.exec);
    noticed.push_back(running_after_exit - c.exit);
    between.push_back(next_fork - running_after_exit);
    cycle.push_back(next_fork - c.fork);
    child_waits.push_back(waiting);
    wakeups.push_back(double(wakes));
  }
  if (cycle.empty())
    return Error{fmt::format("the thread {} forked no two children one after the other", spawner)};
  auto out = fmt::format("{:<44} {:>8} {:>8} {:>8}\n", fmt::format("{} calls of the thread {} (µs)", cycle.size(), spawner),
                         "min", "p50", "p90");
  out += row("fork to exec done (the spawn)", spawn);
  out += row("  of which the child runnable, off a CPU", child_waits);
  out += row("exec done to exit (the program)", program);
  out += row("exit to the spawner on a CPU", noticed);
  out += row("the spawner on a CPU to its next fork", between);
  out += row("fork to next fork (a call)", cycle);
  out += row("the spawner's wake-up events after the exit", wakeups);
  return out;
}

} // namespace jp::bench
