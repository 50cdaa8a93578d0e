#include "bench/spawn_timeline.hpp"

#include <algorithm>
#include <cctype>
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
  long by = 0;       // the task that emitted it: on a CPU at that moment
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

/// Where " [CPU] " is in `line` (a comm may hold brackets or spaces, not this).
size_t cpu_field(const std::string& line) {
  for (size_t at = line.find(" ["); at != std::string::npos; at = line.find(" [", at + 1)) {
    size_t digits = at + 2;
    while (digits < line.size() && std::isdigit(static_cast<unsigned char>(line[digits])))
      ++digits;
    if (digits > at + 2 && line.compare(digits, 2, "] ") == 0)
      return at;
  }
  return std::string::npos;
}

/// One line of `perf script`: "COMM PID/TID [CPU] SECS.USECS: EVENT: TRACE".
std::optional<Event> parse_line(const std::string& line) {
  auto cpu = cpu_field(line);
  if (cpu == std::string::npos)
    return std::nullopt;
  auto bracket = line.find("] ", cpu);
  auto colon = line.find(": ", bracket);
  auto slash = line.rfind('/', cpu);
  if (colon == std::string::npos || slash == std::string::npos)
    return std::nullopt;
  Event e;
  e.by = std::strtol(line.c_str() + slash + 1, nullptr, 10);
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
  if (v.empty())
    return fmt::format("{:<44} {:>8} {:>8} {:>8}\n", name, "-", "-", "-");
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

  // A child's fork, exec and exit, whatever order equal or skewed times put them in
  // (a pid used twice in one trace is not told apart: a wrap of the pid space).
  std::map<long, Call> calls; // by child
  for (auto& e : events)
    if (e.kind == Kind::fork)
      calls[e.child] = Call{e.child, e.pid, e.t_us};
  for (auto& e : events) {
    auto c = calls.find(e.pid);
    if (c == calls.end())
      continue;
    if (e.kind == Kind::exec && c->second.exec < 0)
      c->second.exec = e.t_us;
    else if (e.kind == Kind::exit)
      c->second.exit = e.t_us;
  }
  std::map<long, std::vector<Call>> by_spawner; // children that exec'd and exited (a thread never execs)
  for (auto& [child, c] : calls)
    if (c.exec >= 0 && c.exit >= 0)
      by_spawner[c.spawner].push_back(c);
  if (by_spawner.empty())
    return Error{"no child forked, exec'd and exited in the trace: record sched_process_fork, "
                 "sched_process_exec, sched_process_exit, sched_wakeup and sched_switch over W1 "
                 "(perf record -a -e ...), then give `perf script -F comm,pid,tid,cpu,time,event,trace`"};
  // The spawner: the thread that forked most of them; its calls only, in order.
  auto most = std::max_element(by_spawner.begin(), by_spawner.end(),
                               [](auto& a, auto& b) { return a.second.size() < b.second.size(); });
  long spawner = most->first;
  auto& mine = most->second;
  std::sort(mine.begin(), mine.end(), [](auto& a, auto& b) { return a.fork < b.fork; });
  if (mine.size() < 2)
    return Error{fmt::format("the thread {} forked no two children one after the other", spawner)};

  std::vector<double> spawn, program, noticed, between, cycle, child_waits, wakeups;
  size_t unseen = 0;      // calls where nothing showed the spawner on a CPU before its next fork
  size_t next_event = 0;  // one pass over the events, in time
  bool spawner_on = true; // until a switch says otherwise
  auto follow = [&](const Event& e) {
    if (e.kind == Kind::switch_ && e.prev == spawner)
      spawner_on = false;
    else if ((e.kind == Kind::switch_ && e.next == spawner) || e.by == spawner)
      spawner_on = true; // switched in, or it emitted the event itself
  };
  for (size_t i = 0; i + 1 < mine.size(); ++i) {
    auto& c = mine[i];
    double next_fork = mine[i + 1].fork;
    while (next_event < events.size() && events[next_event].t_us < c.fork)
      follow(events[next_event++]);
    // The child is runnable from its fork until it is first switched in, and from
    // each wake-up or preemption until it runs again: that time off a CPU, up to its
    // exec. A first run that the trace missed (the child seen only by its own events)
    // counts nothing.
    double waiting = 0, since = c.fork, seen_on = -1;
    bool first = true;
    size_t wakes = 0;
    for (; next_event < events.size() && events[next_event].t_us < next_fork; ++next_event) {
      auto& e = events[next_event];
      if (e.t_us <= c.exec) {
        bool switched_in = e.kind == Kind::switch_ && e.next == c.child;
        if (since >= 0 && (switched_in || e.by == c.child)) {
          if (switched_in || !first)
            waiting += e.t_us - since;
          since = -1;
          first = false;
        }
        if ((e.kind == Kind::switch_ && e.prev == c.child && e.prev_runnable) ||
            (e.kind == Kind::wakeup && e.pid == c.child)) {
          since = e.t_us;
          first = false;
        }
      }
      // The spawner on a CPU: when the child exits, or first after that.
      if (seen_on < 0 && e.t_us >= c.exit) {
        if (e.kind == Kind::exit && e.pid == c.child && spawner_on)
          seen_on = c.exit;
        else if (e.by == spawner || (e.kind == Kind::switch_ && e.next == spawner))
          seen_on = e.t_us;
      }
      follow(e);
      if (e.kind == Kind::wakeup && e.pid == spawner && e.t_us >= c.exit)
        ++wakes;
    }
    if (seen_on >= 0) {
      noticed.push_back(seen_on - c.exit);
      between.push_back(next_fork - seen_on);
    } else {
      ++unseen; // the trace missed its switch-in: left out of those two rows
    }
    spawn.push_back(c.exec - c.fork);
    program.push_back(c.exit - c.exec);
    cycle.push_back(next_fork - c.fork);
    child_waits.push_back(waiting);
    wakeups.push_back(double(wakes));
  }
  auto out = fmt::format("{:<44} {:>8} {:>8} {:>8}\n", fmt::format("{} calls of the thread {} (µs)", cycle.size(), spawner),
                         "min", "p50", "p90");
  out += row("fork to exec done (the spawn)", spawn);
  out += row("  of which the child runnable, off a CPU", child_waits);
  out += row("exec done to exit (the program)", program);
  out += row("exit to the spawner on a CPU", noticed);
  out += row("the spawner on a CPU to its next fork", between);
  out += row("fork to next fork (a call)", cycle);
  out += row("the spawner's wake-up events after the exit", wakeups);
  if (unseen > 0)
    out += fmt::format("({} calls left out of the exit's two rows: nothing showed the spawner on a CPU "
                       "between the exit and its next fork, a switch the trace missed)\n", unseen);
  return out;
}

} // namespace jp::bench
