#include "bench/counted_paths.hpp"

#include <chrono>
#include <fmt/format.h>
#include <functional>
#include <jp/jp.hpp>
#include <mutex>
#include <stdexcept>
#include <vector>

#include "actors/await_condition.hpp"
#include "actors/await_hub.hpp"
#include "bench/any_answer.hpp"
#include "messages/json_codec.hpp"
#include "messages/response_cap.hpp"
#include "tools/argument_validation.hpp"
#include "tools/builtin_tools.hpp"

namespace jp::bench {

namespace {

constexpr int cycle_ids = 170; // W3's pending awaits after its spawn phase, about

using Clock = std::chrono::steady_clock;

double us_since(Clock::time_point t0, long runs) {
  return std::chrono::duration<double, std::micro>(Clock::now() - t0).count() / double(runs);
}

/// W3's handles as the hub knows them after the spawn phase: `cycle_ids` ids the
/// registry answered a watch of as running (statuses counted from `seq` on), and
/// that first await over.
Result<std::vector<std::string>> known_running(AwaitHub& hub, uint64_t& seq) {
  std::vector<std::string> ids;
  std::vector<HandleStatus> first;
  for (int i = 0; i < cycle_ids; ++i) {
    ids.push_back(fmt::format("s{}", i));
    first.push_back(HandleStatus{ids.back(), ToolState::running(), {}, {}, seq++});
  }
  hub.watching(ids);
  hub.add(1, AwaitRequest{ids, {}}, first);
  if (hub.timeout(1).answers.size() != 1)
    return Error{"the first await did not end at its timeout"};
  return ids;
}

/// The arguments of an `await any` over `ids`, as the assistant writes them.
std::string any_args(const std::vector<std::string>& ids) {
  std::string args = "{\"any\":[";
  for (size_t i = 0; i < ids.size(); ++i)
    args += fmt::format("{}\"{}\"", i ? "," : "", ids[i]);
  return args + "]}";
}

/// `args` parsed, read and checked against the tool's schema, as the turn does.
Result<AwaitRequest> checked_await(const std::string& args, const ToolConfig& tool) {
  auto j = Json::parse(args, duplicate_keys::refuse);
  auto req = j ? await_request_from_json(*j) : Result<AwaitRequest>(Error{j.error()});
  if (!req || !validate_arguments(tool, *j))
    return Error{"the arguments were refused"};
  return req;
}

/// Whether the stop's answer, written as the turn writes it and read as the driver
/// reads it, is the one handle `id`.
bool answers_only(AwaitHub& hub, const AwaitResult& result, const std::string& id) {
  auto text = hub.answer_text(result, 1 << 20);
  auto answer = read_any_answer(text ? *text : await_answer_text(result, 1 << 20));
  return answer && answer->size() == 1 && (*answer)[0].id == id;
}

/// W3's cycle without actors: the turn's re-issued `await any` of 170 handles the
/// hub knows running (parse, request, schema, distinct ids, add_known), one of them
/// stops (update), the answer is written, and the driver parses it.
Result<double> await_cycle(long n) {
  auto config = default_config();
  auto& tool = config.tools.at("await");
  AwaitHub hub;
  uint64_t seq = 1;
  auto ids = known_running(hub, seq);
  if (!ids)
    return Error{"await-cycle: " + ids.error()};
  std::string args = any_args(*ids);
  auto t0 = Clock::now();
  for (long c = 0; c < n; ++c) {
    auto req = checked_await(args, tool);
    if (!req)
      return Error{"await-cycle: " + req.error()};
    auto distinct = distinct_ids(*req);
    if (hub.stopped_answer(distinct, 1 << 20))
      return Error{"await-cycle: answered as if every handle had stopped"};
    auto fx = hub.add_known(100 + uint64_t(c), *req, distinct);
    if (!fx || !fx->answers.empty())
      return Error{"await-cycle: the hub did not take the await as waiting"};
    auto& id = (*ids)[size_t(c % cycle_ids)];
    auto stop = hub.update(HandleStatus{id, ToolState::success("12345678\n"), {}, {}, seq++});
    if (stop.answers.size() != 1)
      return Error{"await-cycle: the stop answered no await"};
    if (!answers_only(hub, *stop.answers[0].result, id))
      return Error{"await-cycle: the answer is not the one handle that completed"};
    hub.update(HandleStatus{id, ToolState::running(), {}, {}, seq++}); // running again, for the next cycle
  }
  return us_since(t0, n);
}

/// W3's cycle as its driver runs it, without actors: after each answer the rest of
/// what was pending is awaited again (rounds of 170 ids, each stopping one by one;
/// at a round's end they all run again, as new handles of the same ids would).
Result<double> await_rest(long n) {
  auto config = default_config();
  auto& tool = config.tools.at("await");
  AwaitHub hub;
  uint64_t seq = 1;
  auto known = known_running(hub, seq);
  if (!known)
    return Error{"await-rest: " + known.error()};
  auto& ids = *known;
  auto pending = ids;
  auto t0 = Clock::now();
  for (long c = 0; c < n; ++c) {
    if (pending.empty()) { // a new round
      for (auto& id : ids)
        hub.update(HandleStatus{id, ToolState::running(), {}, {}, seq++});
      pending = ids;
    }
    auto req = checked_await(any_args(pending), tool);
    if (!req)
      return Error{"await-rest: " + req.error()};
    auto key = 100 + uint64_t(c);
    auto fx = hub.add_rest(key, *req); // as the turn does
    if (!fx) {
      auto distinct = distinct_ids(*req);
      if (hub.stopped_answer(distinct, 1 << 20))
        return Error{"await-rest: answered as if every handle had stopped"};
      fx = hub.add_known(key, *req, distinct);
    }
    if (!fx || !fx->answers.empty())
      return Error{"await-rest: the hub did not take the await as waiting"};
    auto id = pending[size_t(c * 37) % pending.size()];
    auto stop = hub.update(HandleStatus{id, ToolState::success("12345678\n"), {}, {}, seq++});
    if (stop.answers.size() != 1)
      return Error{"await-rest: the stop answered no await"};
    if (!answers_only(hub, *stop.answers[0].result, id))
      return Error{"await-rest: the answer is not the one handle that completed"};
    std::erase(pending, id);
  }
  return us_since(t0, n);
}

/// A function tool's config, its function and the runtime's session around them.
struct FunctionRig {
  Runtime rt{builtin_config()};
  Session session;
  FunctionRig(ToolConfig tool, FunctionTool fn) : session(make(rt, std::move(tool), std::move(fn))) {}
  static Session make(Runtime& rt, ToolConfig tool, FunctionTool fn) {
    if (auto added = rt.add_function_tool(std::move(tool), std::move(fn)); !added)
      throw std::runtime_error("counted_paths: " + added.error);
    return rt.session();
  }
};

/// W1's call without its process: a one-shot function tool whose result is ready.
Result<double> oneshot(long n) {
  auto tool = function_tool_config("done", "Done at once", {});
  tool.stateful = false;
  FunctionRig rig(tool, [](const Json&, const Progress&) {
    return Invocation{FunctionResult::ready(ToolState::success("ok\n"))};
  });
  auto t0 = Clock::now();
  for (long i = 0; i < n; ++i)
    if (auto r = rig.session.call("done", Json::object()).get(); !r.ok || r.content != "ok\n")
      return Error{fmt::format("oneshot: {}", r.content)};
  return us_since(t0, n);
}

/// W5's calls without a process: apply a line to a function tool that echoes it as
/// progress, then fetch until it is there.
Result<double> look(long n) {
  FunctionRig rig(function_tool_config("echo", "Echo input", {}, true), [](const Json&, const Progress& progress) {
    Invocation inv;
    inv.input = [progress](const Json& in) { progress(in.is_string() ? in.as_string() : in.dump()); };
    return inv;
  });
  if (auto sp = rig.session.spawn("echo", "e", Json::object()).get(); !sp.ok)
    return Error{fmt::format("look: spawn: {}", sp.content)};
  auto t0 = Clock::now();
  for (long i = 0; i < n; ++i) {
    auto line = fmt::format("[{}]", i); // no character the answer's JSON escapes
    auto a = rig.session.apply("e", Json(line)).get();
    if (!a.ok)
      return Error{fmt::format("look: apply: {}", a.content)};
    for (std::string seen = a.content; seen.find(line) == std::string::npos;) {
      auto f = rig.session.fetch("e").get();
      if (!f.ok)
        return Error{fmt::format("look: fetch: {}", f.content)};
      seen += f.content;
    }
  }
  return us_since(t0, n);
}

/// Function-tool handles the driver ends itself, spawned in rounds of `cycle_ids`
/// (W3's pending handles, without their processes).
struct Jobs {
  std::mutex m;
  std::vector<FunctionResult> results; // of the round's handles, in spawn order
  FunctionRig rig{function_tool_config("job", "A job", {}), [this](const Json&, const Progress&) {
                    Invocation inv;
                    std::lock_guard lock(m);
                    results.push_back(inv.result);
                    return inv;
                  }};

  /// The round's ids, each spawned.
  Result<std::vector<std::string>> spawn_round(long round) {
    {
      std::lock_guard lock(m);
      results.clear();
    }
    std::vector<std::string> ids;
    for (int i = 0; i < cycle_ids; ++i) {
      ids.push_back(fmt::format("j{}_{}", round, i));
      if (auto sp = rig.session.spawn("job", ids.back(), Json::object()).get(); !sp.ok)
        return Error{fmt::format("spawn: {}", sp.content)};
    }
    return ids;
  }
  /// The round's handle `at` ends.
  void end(size_t at) {
    std::lock_guard lock(m);
    results[at].succeed("123\n");
  }
  /// µs per cycle over rounds until `n` cycles ran: `round(r, ids)` runs round r's
  /// cycles on its spawned `ids` and says how many it ran and the µs they took.
  template <class Round>
  Result<double> rounds(std::string_view path, long n, Round round) {
    double spent = 0;
    long cycles = 0;
    for (long r = 0; cycles < n; ++r) {
      auto ids = spawn_round(r);
      Result<std::pair<long, double>> ran = ids ? round(r, *ids) : Error{ids.error()};
      if (!ran)
        return Error{fmt::format("{}: {}", path, ran.error())};
      cycles += ran->first;
      spent += ran->second;
    }
    return spent / double(cycles);
  }
};

/// W3's cycle through the actors without processes: 170 function-tool handles the
/// path ends one at a time, an `await any` of those pending before each end.
Result<double> stops(long n) {
  Jobs jobs;
  return jobs.rounds("stops", n, [&](long, std::vector<std::string>& pending) -> Result<std::pair<long, double>> {
    auto t0 = Clock::now();
    for (int i = 0; i < cycle_ids; ++i) {
      auto answer = jobs.rig.session.await_any(pending);
      jobs.end(size_t(i * 37 % cycle_ids)); // 37 and 170 are coprime: each once
      auto r = answer.get();
      auto completed = r.ok ? read_any_answer(r.content) : Result<std::vector<Completed>>(Error{r.content});
      if (!completed || completed->empty())
        return Error{fmt::format("await: {}", r.content)};
      for (auto& c : *completed)
        if (std::erase(pending, c.id) != 1)
          return Error{fmt::format("`{}` completed, which was not pending", c.id)};
    }
    if (!pending.empty())
      return Error{fmt::format("{} handles still pending after every one ended", pending.size())};
    return std::pair{long{cycle_ids}, std::chrono::duration<double, std::micro>(Clock::now() - t0).count()};
  });
}

/// W3's tail through the actors: a stop that comes before the driver re-issues its
/// `await any` of the rest (two stops close together). Each cycle one handle ends,
/// an `await any` of it alone makes sure the turn has heard, then the rest is
/// awaited and answered at once with it.
Result<double> stops_ahead(long n) {
  Jobs jobs;
  return jobs.rounds("stops-ahead", n,
                     [&](long round, std::vector<std::string>& pending) -> Result<std::pair<long, double>> {
    // The first answer leaves the rest that the cycles await.
    jobs.end(0);
    if (auto r = jobs.rig.session.await_any(pending).get(); !r.ok)
      return Error{fmt::format("await: {}", r.content)};
    pending.erase(pending.begin());
    auto t0 = Clock::now();
    for (int i = 1; i < cycle_ids; ++i) {
      auto at = size_t(i * 37 % cycle_ids); // 37 and 170 are coprime: each once, 0 not again
      auto id = fmt::format("j{}_{}", round, at);
      jobs.end(at);
      if (auto heard = jobs.rig.session.await_any({id}).get(); !heard.ok)
        return Error{fmt::format("await of `{}`: {}", id, heard.content)};
      auto r = jobs.rig.session.await_any(pending).get();
      auto completed = r.ok ? read_any_answer(r.content) : Result<std::vector<Completed>>(Error{r.content});
      if (!completed || completed->size() != 1 || (*completed)[0].id != id)
        return Error{fmt::format("the rest's await did not answer `{}` alone: {}", id, r.content)};
      std::erase(pending, id);
    }
    return std::pair{long{cycle_ids - 1}, std::chrono::duration<double, std::micro>(Clock::now() - t0).count()};
  });
}

/// W7's rate without processes: `await all` of ten handles long stopped, again and
/// again (the turn answers it from what it knows).
Result<double> stopped_awaits(long n) {
  FunctionRig rig(function_tool_config("done", "Done at once", {}), [](const Json&, const Progress&) {
    return Invocation{FunctionResult::ready(ToolState::success("ok\n"))};
  });
  std::vector<std::string> ids;
  for (int i = 0; i < 10; ++i) {
    ids.push_back(fmt::format("t{}", i));
    if (auto sp = rig.session.spawn("done", ids.back(), Json::object()).get(); !sp.ok)
      return Error{fmt::format("stopped-awaits: spawn: {}", sp.content)};
  }
  // The first answer may carry notifications of their stops; the rest are alike.
  rig.session.await_all(ids).get();
  auto expected = rig.session.await_all(ids).get();
  if (!expected.ok || !expected.content.ends_with("\"pending\":[]}"))
    return Error{fmt::format("stopped-awaits: first await: {}", expected.content)};
  auto t0 = Clock::now();
  for (long i = 0; i < n; ++i)
    if (auto r = rig.session.await_all(ids).get(); r.content != expected.content)
      return Error{fmt::format("stopped-awaits: {}", r.content)};
  return us_since(t0, n);
}

struct Path {
  const char* name;
  const char* what;
  long default_n;
  std::function<Result<double>(long)> run;
};

const std::vector<Path>& paths() {
  static const std::vector<Path> all = {
    {"await-cycle", "W3's turn cycle at 170 ids without actors (the hub and the JSON)", 500, await_cycle},
    {"await-rest", "W3's cycle as its driver runs it: the rest awaited after each stop (rounds of 170 ids)", 500,
     await_rest},
    {"stops", "W3's cycle through the actors, function tools ended one at a time (whole rounds of 170)", 340, stops},
    {"stops-ahead", "W3's tail through the actors: each stop heard before the rest is awaited again (rounds of 169)",
     338, stops_ahead},
    {"look", "W5's apply + fetch on an echoing function tool (embedding API)", 3000, look},
    {"oneshot", "W1's one-shot call, a function tool ready at once (embedding API)", 2000, oneshot},
    {"stopped-awaits", "W7's rate: await all of ten handles long stopped (embedding API)", 5000, stopped_awaits},
  };
  return all;
}

} // namespace

std::string counted_path_names() {
  std::string out;
  for (auto& p : paths())
    out += fmt::format("  {:<14} {} (default --n {})\n", p.name, p.what, p.default_n);
  return out;
}

Result<double> run_counted_path(const std::string& name, long n) {
  for (auto& p : paths())
    if (name == p.name)
      return p.run(n > 0 ? n : p.default_n);
  std::string known;
  for (auto& p : paths())
    known += fmt::format("{}{}", known.empty() ? "" : ", ", p.name);
  return Error{fmt::format("unknown path `{}`; expected one of {}", name, known)};
}

} // namespace jp::bench
