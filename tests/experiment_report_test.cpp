// The experiment report: its figures from events (a --json log, a stored
// conversation), repeats as min/median/max, and the CLI's `run --report`, the
// transcript's table and `jp-actors report`, which must agree with the events.
#define CAF_SUITE experiment_report
#include <caf/test/unit_test.hpp>

#include <fmt/format.h>
#include <fstream>
#include <map>
#include <set>

#include "cli_run.hpp"
#include "messages/json.hpp"
#include "runtime/store/experiment_report.hpp"
#include "temp_dir.hpp"
#include "contains.hpp"

using namespace jp;
using namespace jp::testing;

namespace {

/// An event of `kind` at `ms` past 12:00:00.000 on a fixed day, with `fields`.
Json at(int ms, const char* kind, JsonObject fields = {}) {
  auto e = Json::object().set("event", kind).set("time", fmt::format("2026-11-23T12:00:{:02}.{:03}Z", ms / 1000, ms % 1000));
  for (auto& [k, v] : fields)
    e.set(k, v);
  return e;
}

const AgentFigures* find_agent(const ExperimentReport& r, const std::string& path) {
  for (auto& a : r.agents)
    if (a.agent == path)
      return &a;
  return nullptr;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

/// A script: `main` spawns two sleeps and awaits them, then a foreach of three
/// scripted workers (each runs one shell), two at a time; a call that fails.
const char* const kScript = R"(
[experiment]
name = "report"

[[agents]]
name = "main"
  [[agents.steps]]
  [[agents.steps.calls]]
  tool = "shell"
  arguments = { action = "spawn", id = "a", command = "sleep 0.05" }
  [[agents.steps.calls]]
  tool = "shell"
  arguments = { action = "spawn", id = "b", command = "sleep 0.05" }
  [[agents.steps.calls]]
  tool = "await"
  arguments = { all = ["a", "b"], timeout_secs = 30 }
  [[agents.steps]]
  [[agents.steps.calls]]
  tool = "foreach"
  arguments = { elements = ["x", "y", "z"], prompt = "{{element}}", max_concurrent = 2, script = "worker" }
  [[agents.steps.calls]]
  tool = "shell"
  arguments = { action = "fetch", id = "nope" }

[[subagents]]
name = "worker"
  [[subagents.steps]]
  [[subagents.steps.calls]]
  tool = "shell"
  arguments = { command = "echo {{prompt}}" }
)";

} // namespace

CAF_TEST(figures come from the events of a json log) {
  ReportBuilder b;
  b.add(at(0, "turn_start", {{"agent", "main"}}));
  b.add(at(10, "model_round", {{"agent", "main"}, {"step", 1}, {"elapsed_ms", 10.0}, {"tokens_in", 100}, {"tokens_out", 7}}));
  b.add(at(10, "tool_call", {{"agent", "main"}, {"tool", "shell"}, {"arguments", Json::object().set("action", "spawn")}}));
  b.add(at(10, "tool_call", {{"agent", "main"}, {"tool", "await"}, {"arguments", Json::object()}}));
  // Two calls from 10 to 40 and from 20 to 50: 40 ms with a tool running.
  b.add(at(40, "tool_result", {{"agent", "main"}, {"tool", "shell"}, {"ok", true}, {"elapsed_ms", 30.0}}));
  b.add(at(50, "tool_result", {{"agent", "main"}, {"tool", "await"}, {"ok", false}, {"elapsed_ms", 30.0}}));
  b.add(at(52, "turn_start", {{"agent", "main/w"}}));
  b.add(at(55, "model_round", {{"agent", "main/w"}, {"step", 1}, {"elapsed_ms", 3.0}}));
  b.add(at(60, "turn_end", {{"agent", "main/w"}, {"error", "it failed"}, {"handles_spawned", 0}, {"peak_handles", 0}}));
  b.add(at(70, "model_round", {{"agent", "main"}, {"step", 2}, {"elapsed_ms", 20.0}, {"tokens_in", 150}, {"tokens_out", 3}}));
  b.add(at(80, "turn_end", {{"agent", "main"}, {"handles_spawned", 4}, {"peak_handles", 3}}));
  b.add(at(81, "run_end", {{"agents", 1}, {"elapsed_ms", 81.5}}));
  auto runs = b.reports();
  CAF_REQUIRE_EQUAL(runs.size(), 1u);
  auto& r = runs.front();
  CAF_REQUIRE_EQUAL(r.agents.size(), 2u);
  auto& m = r.agents[0];
  CAF_CHECK_EQUAL(m.agent, "main");
  CAF_CHECK_EQUAL(m.wall_ms, 80.0);
  CAF_CHECK_EQUAL(m.model_ms, 30.0);
  CAF_CHECK_EQUAL(m.tools_ms, 40.0);
  CAF_CHECK_EQUAL(m.round_trips, 2);
  CAF_CHECK_EQUAL(m.tool_calls, 2);
  CAF_CHECK((m.calls_by_tool == std::map<std::string, int64_t>{{"await", 1}, {"shell", 1}}));
  CAF_CHECK_EQUAL(m.handles_spawned, 4);
  CAF_CHECK_EQUAL(m.peak_handles, 3);
  CAF_CHECK_EQUAL(m.tokens_in, 250);
  CAF_CHECK_EQUAL(m.tokens_out, 10);
  CAF_CHECK_EQUAL(m.errors, 1);
  auto& w = r.agents[1];
  CAF_CHECK_EQUAL(w.agent, "main/w");
  CAF_CHECK_EQUAL(w.wall_ms, 8.0);
  CAF_CHECK_EQUAL(w.tokens_in, -1); // not reported: unknown, not 0
  CAF_CHECK_EQUAL(w.errors, 1);     // its turn failed
  CAF_CHECK_EQUAL(r.total.wall_ms, 81.5);
  CAF_CHECK_EQUAL(r.total.round_trips, 3);
  CAF_CHECK_EQUAL(r.total.errors, 2);
  CAF_CHECK_EQUAL(r.total.tokens_in, 250);
  CAF_CHECK_EQUAL(r.total.peak_handles, -1); // per agent only
  // JSON leaves out what is unknown; the table shows it as "-".
  auto j = report_json(r);
  CAF_CHECK(j.find("agents")->as_array()[1].find("tokens_in") == nullptr);
  CAF_CHECK_EQUAL(j.find("total")->find("tool_calls")->as_int(), 2);
  auto table = report_table(r);
  CAF_CHECK(contains(table, "calls by tool"));
  CAF_CHECK(contains(table, "await 1, shell 1"));
}

CAF_TEST(figures a log could not have come from count as unknown) {
  // A log is anyone's file: 1e308 ms showed as `inf` in the table.
  ReportBuilder b;
  b.add(at(0, "turn_start", {{"agent", "main"}}));
  b.add(at(10, "model_round", {{"agent", "main"}, {"step", 1}, {"elapsed_ms", 1e308}, {"tokens_in", 1e300}}));
  b.add(at(20, "turn_end", {{"agent", "main"}}));
  b.add(at(21, "run_end", {{"agents", 1}, {"elapsed_ms", 1e308}}));
  auto runs = b.reports();
  CAF_REQUIRE_EQUAL(runs.size(), 1u);
  auto& m = runs.front().agents[0];
  CAF_CHECK_EQUAL(m.model_ms, 0.0);
  CAF_CHECK_EQUAL(m.tokens_in, -1);
  CAF_CHECK(!contains(report_table(runs.front()), "inf"));
}

CAF_TEST(an agent s tool time is never more than its wall time a turn within one ms included) {
  // Stamps are to the ms, a call's elapsed_ms finer: a sub-agent's whole turn within
  // one ms had a wall of 0 and its call's 0.4 ms as its tools'.
  ReportBuilder b;
  b.add(at(0, "turn_start", {{"agent", "main"}}));
  b.add(at(7, "turn_start", {{"agent", "main/w"}}));
  b.add(at(7, "tool_call", {{"agent", "main/w"}, {"tool", "shell"}, {"arguments", Json::object()}}));
  b.add(at(7, "tool_result", {{"agent", "main/w"}, {"tool", "shell"}, {"ok", true}, {"elapsed_ms", 0.4}}));
  b.add(at(7, "turn_end", {{"agent", "main/w"}, {"handles_spawned", 0}, {"peak_handles", 0}}));
  b.add(at(9, "turn_end", {{"agent", "main"}, {"handles_spawned", 0}, {"peak_handles", 0}}));
  b.add(at(9, "run_end", {{"agents", 1}, {"elapsed_ms", 9.0}}));
  auto runs = b.reports();
  CAF_REQUIRE_EQUAL(runs.size(), 1u);
  auto* w = find_agent(runs.front(), "main/w");
  CAF_REQUIRE(w != nullptr);
  CAF_CHECK_EQUAL(w->wall_ms, 0.0);
  CAF_CHECK_EQUAL(w->tools_ms, 0.0);
}

CAF_TEST(figures come from the events of a stored conversation) {
  ReportBuilder b;
  b.add(at(0, "turn_start", {{"prompt", "go"}, {"model", "m"}}));
  b.add(at(1, "chat_request", {{"model", "m"}}));
  b.add(at(21, "chat_response", {{"text", ""}, {"finish_reason", "tool_calls"}, {"tokens_in", 100}, {"tokens_out", 7}}));
  b.add(at(21, "tool_call_request", {{"id", "c1"}, {"name", "shell"}, {"arguments", Json::object().set("action", "spawn")}}));
  b.add(at(25, "tool_call_response", {{"id", "c1"}, {"name", "shell"}, {"ok", true}}));
  b.add(at(25, "chat_request", {{"model", "m"}}));
  b.add(at(35, "chat_response", {{"text", "done"}, {"finish_reason", "stop"}, {"tokens_in", 120}, {"tokens_out", 3}}));
  b.add(at(40, "turn_end", {{"handles", Json::array()}}));
  auto runs = b.reports();
  CAF_REQUIRE_EQUAL(runs.size(), 1u);
  auto* a = find_agent(runs.front(), "assistant");
  CAF_REQUIRE(a != nullptr);
  CAF_CHECK_EQUAL(a->wall_ms, 40.0);
  CAF_CHECK_EQUAL(a->model_ms, 30.0);
  CAF_CHECK_EQUAL(a->tools_ms, 4.0);
  CAF_CHECK_EQUAL(a->round_trips, 2);
  CAF_CHECK_EQUAL(a->handles_spawned, 1);
  CAF_CHECK_EQUAL(a->peak_handles, -1); // a conversation does not say
  CAF_CHECK_EQUAL(a->tokens_in, 220);       // the usage its responses recorded
  CAF_CHECK_EQUAL(a->tokens_out, 10);
  CAF_CHECK_EQUAL(runs.front().total.wall_ms, 40.0);
}

CAF_TEST(a stored conversation s total wall time is its turns not the time between them) {
  ReportBuilder b;
  b.add(at(0, "turn_start", {{"prompt", "one"}, {"model", "m"}}));
  b.add(at(10, "turn_end", {{"handles", Json::array()}}));
  // Later (50 s here; hours in use), the next question.
  b.add(at(50000, "turn_start", {{"prompt", "two"}, {"model", "m"}}));
  b.add(at(50006, "turn_end", {{"handles", Json::array()}}));
  auto runs = b.reports();
  CAF_REQUIRE_EQUAL(runs.size(), 1u);
  CAF_CHECK_EQUAL(find_agent(runs.front(), "assistant")->wall_ms, 16.0);
  CAF_CHECK_EQUAL(runs.front().total.wall_ms, 16.0);
}

CAF_TEST(a log cut inside a turn or an interrupted turn is reported as partial) {
  ReportBuilder b;
  b.add(at(0, "turn_start", {{"agent", "lead"}}));
  b.add(at(5, "turn_start", {{"agent", "lead/w"}}));
  b.add(at(6, "turn_start", {{"agent", "other"}}));
  b.add(at(9, "turn_end", {{"agent", "other"}, {"handles", Json::array()}, {"interrupted", true}}));
  b.add(at(1000, "tool_call", {{"agent", "lead"}, {"tool", "shell"}})); // then SIGKILL: no turn_end, no run_end
  auto runs = b.reports();
  CAF_REQUIRE_EQUAL(runs.size(), 1u);
  CAF_CHECK_EQUAL(runs.front().cut_short, (std::vector<std::string>{"lead", "lead/w"}));
  CAF_CHECK(runs.front().interrupted);
  auto json = runs_report_json(runs);
  CAF_CHECK_EQUAL(json.find("cut_short")->dump(), R"(["lead","lead/w"])");
  CAF_CHECK(json.find("interrupted")->as_bool());
  auto table = runs_report_table(runs);
  CAF_CHECK(contains(table, "note: the log ends inside a turn of lead, lead/w (no turn_end): the run was killed or "
                            "its log cut short"));
  CAF_CHECK(contains(table, "note: a turn was interrupted"));
  // A whole one says nothing of the kind.
  ReportBuilder whole;
  whole.add(at(0, "turn_start", {{"agent", "lead"}}));
  whole.add(at(10, "turn_end", {{"agent", "lead"}, {"handles", Json::array()}}));
  // A sub-agent its parent aborted ends its turn "interrupted": no interrupt of the user's.
  whole.add(at(2, "turn_start", {{"agent", "lead/w"}}));
  whole.add(at(3, "turn_end", {{"agent", "lead/w"}, {"handles", Json::array()}, {"interrupted", true}}));
  whole.add(at(11, "run_end", {{"elapsed_ms", 11.0}}));
  CAF_CHECK(!contains(runs_report_table(whole.reports()), "note:"));
  CAF_CHECK(!runs_report_json(whole.reports()).find("cut_short"));
}

CAF_TEST(a repeated experiment reports min median and max of each figure) {
  ReportBuilder b;
  for (int calls : {1, 3, 2}) {
    b.add(at(0, "turn_start", {{"agent", "main"}}));
    for (int i = 0; i < calls; ++i)
      b.add(at(1, "tool_call", {{"agent", "main"}, {"tool", "shell"}, {"arguments", Json::object()}}));
    b.add(at(10 * calls, "turn_end", {{"agent", "main"}}));
    b.add(at(10 * calls, "run_end", {{"elapsed_ms", 10.0 * calls}}));
  }
  auto runs = b.reports();
  CAF_REQUIRE_EQUAL(runs.size(), 3u);
  auto j = repeated_report_json(runs);
  CAF_CHECK_EQUAL(j.find("runs")->as_int(), 3);
  auto& main = j.find("agents")->as_array().front();
  CAF_CHECK_EQUAL(main.find("agent")->as_string(), "main");
  auto* calls = main.find("tool_calls");
  CAF_REQUIRE(calls != nullptr);
  CAF_CHECK_EQUAL(calls->find("min")->as_number(), 1.0);
  CAF_CHECK_EQUAL(calls->find("median")->as_number(), 2.0);
  CAF_CHECK_EQUAL(calls->find("max")->as_number(), 3.0);
  // Calls by tool as one run's report has them, each a spread.
  CAF_CHECK_EQUAL(main.find("calls_by_tool")->dump(), R"({"shell":{"min":1.0,"median":2.0,"max":3.0}})");
  CAF_CHECK(main.find("calls.shell") == nullptr);
  CAF_CHECK_EQUAL(j.find("total")->find("wall_ms")->find("median")->as_number(), 20.0);
  CAF_CHECK(contains(repeated_report_table(runs), "20.0 [10.0–30.0]"));
}

CAF_TEST(a tool not called in a run counts as called 0 times there) {
  ReportBuilder b;
  for (int calls : {0, 0, 5}) {
    b.add(at(0, "turn_start", {{"agent", "main"}}));
    for (int i = 0; i < calls; ++i)
      b.add(at(1, "tool_call", {{"agent", "main"}, {"tool", "shell"}, {"arguments", Json::object()}}));
    b.add(at(10, "turn_end", {{"agent", "main"}}));
    b.add(at(10, "run_end", {{"elapsed_ms", 10.0}}));
  }
  auto j = repeated_report_json(b.reports());
  CAF_CHECK_EQUAL(j.find("agents")->as_array().front().find("calls_by_tool")->dump(),
                  R"({"shell":{"min":0.0,"median":0.0,"max":5.0}})");
}

CAF_TEST(a count whose median falls between two runs is shown as the json has it) {
  ReportBuilder b;
  for (int calls : {1, 2}) {
    b.add(at(0, "turn_start", {{"agent", "main"}}));
    for (int i = 0; i < calls; ++i)
      b.add(at(1, "tool_call", {{"agent", "main"}, {"tool", "shell"}, {"arguments", Json::object()}}));
    b.add(at(10, "turn_end", {{"agent", "main"}}));
    b.add(at(10, "run_end", {{"elapsed_ms", 10.0}}));
  }
  auto runs = b.reports();
  CAF_CHECK_EQUAL(repeated_report_json(runs).find("agents")->as_array().front().find("tool_calls")->find("median")->as_number(),
                  1.5);
  CAF_CHECK(contains(repeated_report_table(runs), "1.5 [1–2]"));
}

CAF_TEST(run writes the report its json log rebuilds and the figures are the events) {
  temp_dir ws;
  ws.write("script.toml", kScript);
  auto script = (ws.path / "script.toml").string();
  auto report = (ws.path / "report.json").string();
  auto r = cli_in(ws.path.string(), fmt::format("run {} --json --report {}", script, report));
  JP_REQUIRE_OK(r);
  ws.write("log.jsonl", r.stdout_text);
  // `jp-actors report` on the log says exactly what the run wrote.
  auto rebuilt = cli_in(ws.path.string(), fmt::format("report --json {}/log.jsonl", ws.path.string()));
  JP_REQUIRE_OK(rebuilt);
  auto written = Json::parse(slurp(report));
  CAF_REQUIRE(written.ok());
  auto again = Json::parse(rebuilt.stdout_text);
  CAF_REQUIRE(again.ok());
  CAF_CHECK_EQUAL(written->dump(), again->dump());
  // The figures are what the events say, counted here independently.
  std::map<std::string, int64_t> calls, failed;
  std::set<std::string> agents;
  for (auto& e : events(r.stdout_text)) {
    auto* agent = e.find("agent");
    if (!agent)
      continue;
    agents.insert(agent->as_string());
    auto kind = e.find("event")->as_string();
    calls[agent->as_string()] += kind == "tool_call";
    failed[agent->as_string()] += kind == "tool_result" && !e.find("ok")->as_bool();
  }
  auto& listed = written->find("agents")->as_array();
  CAF_CHECK_EQUAL(listed.size(), agents.size());
  CAF_CHECK_EQUAL(agents.size(), 4u); // main and its three workers
  for (auto& a : listed) {
    auto path = a.find("agent")->as_string();
    CAF_CHECK_EQUAL(a.find("tool_calls")->as_int(), calls[path]);
    CAF_CHECK_EQUAL(a.find("errors")->as_int(), failed[path]);
  }
  auto& main = listed.front();
  CAF_CHECK_EQUAL(main.find("agent")->as_string(), "main");
  CAF_CHECK_EQUAL(main.find("round_trips")->as_int(), 3); // two steps, then the end
  CAF_CHECK_EQUAL(main.find("handles_spawned")->as_int(), 2);
  CAF_CHECK_EQUAL(main.find("peak_handles")->as_int(), 2);
  CAF_CHECK_EQUAL(main.find("calls_by_tool")->dump(), R"({"await":1,"foreach":1,"shell":3})");
  CAF_CHECK_EQUAL(main.find("errors")->as_int(), 1); // the fetch of an unknown handle
  // `a` and `b` slept 50 ms while awaited: main spent at least that in tools.
  CAF_CHECK(main.find("tools_ms")->as_number() >= 50.0);
  CAF_CHECK(main.find("wall_ms")->as_number() >= main.find("tools_ms")->as_number());
}

CAF_TEST(a transcript ends with the report as a table) {
  temp_dir ws;
  ws.write("script.toml", kScript);
  auto r = cli_in(ws.path.string(), fmt::format("run {}/script.toml", ws.path.string()));
  JP_REQUIRE_OK(r);
  auto at_report = r.stdout_text.rfind("\nreport:\n");
  CAF_REQUIRE(at_report != std::string::npos);
  auto table = r.stdout_text.substr(at_report);
  CAF_CHECK(contains(table, "agent"));
  CAF_CHECK(contains(table, "wall ms"));
  CAF_CHECK(contains(table, "\nmain "));
  CAF_CHECK(contains(table, "\ntotal "));
  CAF_CHECK(contains(table, "await 1, foreach 1, shell 3"));
}

CAF_TEST(repeat runs the experiment n times and reports the spread) {
  temp_dir ws;
  ws.write("script.toml", std::string(kScript).replace(std::string(kScript).find("name = \"report\""), 15,
                                                       "name = \"report\"\nrepeat = 3"));
  auto report = (ws.path / "report.json").string();
  auto r = cli_in(ws.path.string(), fmt::format("run {}/script.toml --json --report {}", ws.path.string(), report));
  JP_REQUIRE_OK(r);
  size_t run_ends = 0;
  for (auto& e : events(r.stdout_text))
    run_ends += e.find("event")->as_string() == "run_end";
  CAF_CHECK_EQUAL(run_ends, 3u);
  auto j = Json::parse(slurp(report));
  CAF_REQUIRE(j.ok());
  CAF_CHECK_EQUAL(j->find("runs")->as_int(), 3);
  auto& main = j->find("agents")->as_array().front();
  auto* calls = main.find("tool_calls");
  CAF_REQUIRE(calls != nullptr);
  CAF_CHECK_EQUAL(calls->find("min")->as_number(), 5.0);
  CAF_CHECK_EQUAL(calls->find("max")->as_number(), 5.0);
  CAF_CHECK(main.find("wall_ms")->find("min")->as_number() <= main.find("wall_ms")->find("median")->as_number());
  // A report that could not be written is said before anything runs.
  auto nowhere = cli_in(ws.path.string(), fmt::format("run {}/script.toml --json --report {}/no/such/dir/r.json",
                                                      ws.path.string(), ws.path.string()));
  CAF_CHECK_EQUAL(nowhere.status, 1);
  CAF_CHECK(contains(nowhere.out, "is not a directory you may write to; nothing was run"));
  CAF_CHECK(nowhere.stdout_text.empty()); // not one event
  auto a_dir = cli_in(ws.path.string(), fmt::format("run {}/script.toml --json --report {}", ws.path.string(),
                                                    ws.path.string()));
  CAF_CHECK_EQUAL(a_dir.status, 1);
  CAF_CHECK(contains(a_dir.out, ws.path.string() + " is a directory; nothing was run"));
  // Not the script itself, however it is named (it was replaced by the report).
  auto itself = cli_in(ws.path.string(), fmt::format("run {0}/script.toml --report {0}/./script.toml",
                                                     ws.path.string()));
  CAF_CHECK_EQUAL(itself.status, 1);
  CAF_CHECK(contains(itself.out, "is the script itself, which the report would replace"));
  CAF_CHECK(contains(slurp((ws.path / "script.toml").string()), "[[agents]]"));
  // A file you may write, wherever it is, is taken (stderr: /dev is not yours).
  auto to_stderr = cli_in(ws.path.string(), fmt::format("run {}/script.toml --json --report /dev/stderr",
                                                        ws.path.string()));
  JP_REQUIRE_OK(to_stderr);
  // A repeat out of range names the key and the range.
  ws.write("bad.toml", "[experiment]\nrepeat = 0\n[[agents]]\nname = \"a\"\n");
  auto bad = cli_in(ws.path.string(), fmt::format("run {}/bad.toml", ws.path.string()));
  CAF_CHECK_EQUAL(bad.status, 1);
  CAF_CHECK(contains(bad.out, "experiment.repeat: expected a whole number of runs from 1 to 1000, got 0"));
}

CAF_TEST(report names what it cannot read) {
  temp_dir ws;
  ws.write("bad.jsonl",
           "{\"event\":\"turn_start\",\"agent\":\"a\"}\nnot json\n{\"event\":\"turn_end\",\"agent\":\"a\"}\n");
  // A line that is no event among events is dropped with a warning, as `conversations
  // show` and the next query drop it (the whole file was refused).
  auto r = cli_in(ws.path.string(), fmt::format("report {}/bad.jsonl", ws.path.string()));
  CAF_CHECK_EQUAL(r.status, 0);
  CAF_CHECK(contains(r.out, "bad.jsonl:2: not JSON ("));
  CAF_CHECK(contains(r.out, "): dropped; the report leaves it out"));
  CAF_CHECK(contains(r.stdout_text, "total"));
  ws.write("odd.jsonl", "{\"event\":\"turn_start\",\"agent\":\"a\"}\n[1]\n{\"event\":\"turn_end\",\"agent\":\"a\"}\n");
  auto odd = cli_in(ws.path.string(), fmt::format("report {}/odd.jsonl", ws.path.string()));
  CAF_CHECK_EQUAL(odd.status, 0);
  CAF_CHECK(contains(odd.out, "odd.jsonl:2: not an event (a JSON object with \"event\"): dropped; the report leaves it out"));
  // A file of little else says so in a few lines.
  std::string noisy = "{\"event\":\"turn_start\",\"agent\":\"a\"}\n";
  for (int i = 0; i < 30; ++i)
    noisy += "noise\n";
  ws.write("noisy.jsonl", noisy + "{\"event\":\"turn_end\",\"agent\":\"a\"}\n");
  auto many = cli_in(ws.path.string(), fmt::format("report {}/noisy.jsonl", ws.path.string()));
  CAF_CHECK_EQUAL(many.status, 0);
  CAF_CHECK(contains(many.out, "noisy.jsonl: 20 more lines that are no event were dropped"));
  CAF_CHECK(contains(many.out, "noisy.jsonl:31: not JSON ("));
  // Nothing but a line that is no event: no log at all.
  ws.write("none.txt", "hello\n");
  auto none = cli_in(ws.path.string(), fmt::format("report {}/none.txt", ws.path.string()));
  CAF_CHECK_EQUAL(none.status, 1);
  CAF_CHECK(contains(none.out, "none.txt:1: not JSON"));
  // Events, none of them one a report counts: no report of zeros for a made-up agent.
  ws.write("other.jsonl", "{\"event\":\"bogus\"}\n{\"event\":\"tool_output\",\"time\":\"2026-01-01T00:00:00Z\"}\n");
  auto other = cli_in(ws.path.string(), fmt::format("report {}/other.jsonl", ws.path.string()));
  CAF_CHECK_EQUAL(other.status, 1);
  CAF_CHECK(contains(other.out, "other.jsonl holds no event a report counts (a turn, a model round, a tool call)"));
  auto missing = cli_in(ws.path.string(), fmt::format("report {}/none.jsonl", ws.path.string()));
  CAF_CHECK_EQUAL(missing.status, 1);
  CAF_CHECK(contains(missing.out, "cannot read"));
  // A last line cut short (a crash, a killed pipe) is dropped with a warning, as the
  // conversation store drops it: the rest is reported.
  ws.write("torn.jsonl", "{\"event\":\"turn_start\",\"agent\":\"a\"}\n{\"event\":\"turn_end\",\"agent\":\"a\"}\n"
                         "{\"event\":\"tool_call_resp");
  auto torn = cli_in(ws.path.string(), fmt::format("report {}/torn.jsonl", ws.path.string()));
  CAF_CHECK_EQUAL(torn.status, 0);
  CAF_CHECK(contains(torn.out, "torn.jsonl:3: dropped the last line: it has no newline"));
  // So is one a crash cut short once its newline was written (a line of a broken
  // write, a bad sector), as `conversations show` drops it.
  ws.write("cut.jsonl", "{\"event\":\"turn_start\",\"agent\":\"a\"}\n{\"event\":\"turn_end\",\"agent\":\"a\"}\n"
                        "{\"event\":\"turn_start\",\"time\":\"x\",\"prompt\":\"p2\"\n");
  auto cut = cli_in(ws.path.string(), fmt::format("report {}/cut.jsonl", ws.path.string()));
  CAF_CHECK_EQUAL(cut.status, 0);
  CAF_CHECK(contains(cut.out, "cut.jsonl:3: not JSON ("));
  CAF_CHECK(contains(cut.out, "dropped the last line (likely cut short by a crash)"));
}
