// Sub-agents as handles, run as a user runs them: scripted experiments whose agents
// spawn scripted sub-agents (examples/subagents.toml and scripts written here).
#define CAF_SUITE subagent

#include <caf/test/unit_test.hpp>

#include <csignal>
#include <pty.h>
#include <sys/wait.h>
#include <fstream>
#include <map>
#include <set>

#include "cli_run.hpp"
#include "messages/json.hpp"
#include "temp_dir.hpp"
#include "contains.hpp"
#include "file_contents.hpp"
#include "terminal_io.hpp"

using namespace jp;
using namespace jp::testing;

namespace {

/// Runs `script_text` (written to a file in a fresh workspace) with --json; `options`
/// go before `run`, `run_options` after it.
Run run_script_text(const std::string& script_text, const std::string& options = "",
                    const std::string& run_options = "") {
  temp_dir ws;
  ws.write("script.toml", script_text);
  return cli_in(ws.path.string(),
                fmt::format("{} run {} {}/script.toml --json", options, run_options, ws.path.string()));
}

/// A scripted sub-agent `holder` whose shell handle `long` writes its pid to
/// `pidfile` and sleeps; the sub-agent awaits it (so it holds a process until aborted).
std::string holder_subagent(const std::string& pidfile) {
  return fmt::format(R"(
[[subagents]]
name = "holder"
  [[subagents.steps]]
  [[subagents.steps.calls]]
  tool = "shell"
  arguments = {{ action = "spawn", id = "long", command = "echo $$ > '{0}.tmp'; mv '{0}.tmp' '{0}'; exec sleep 600" }}
  [[subagents.steps.calls]]
  tool = "await"
  arguments = {{ all = ["long"] }}
)",
                     pidfile);
}

/// main spawns the `holder` sub-agent `w`, waits until its process started, aborts
/// it, then runs `last_call` (a TOML inline call: tool and arguments).
std::string abort_holder_script(const std::string& pidfile, const std::string& last_call) {
  return fmt::format(R"(
[[agents]]
name = "main"
  [[agents.steps]]
  [[agents.steps.calls]]
  tool = "agent"
  arguments = {{ action = "spawn", id = "w", prompt = "x", script = "holder" }}
  [[agents.steps]]
  [[agents.steps.calls]]
  tool = "shell"
  arguments = {{ command = "until [ -s '{0}' ]; do sleep 0.01; done; echo started" }}
  [[agents.steps]]
  [[agents.steps.calls]]
  tool = "agent"
  arguments = {{ action = "abort", id = "w" }}
  [[agents.steps]]
  [[agents.steps.calls]]
  {1}
{2})",
                     pidfile, last_call, holder_subagent(pidfile));
}

/// Options giving examples/confirm.toml's tool `clean` (it asks "Delete the build
/// directory?"), found from any workspace.
std::string confirm_config() {
  return fmt::format("--config {0}/examples/confirm.toml "
                     "--cfg 'conversation.tools.clean.command={{program=\"{0}/examples/tools/confirm.sh\"}}'",
                     JP_SOURCE_DIR);
}

/// Options giving a tool `clean` that asks "Delete the build directory?" (by exiting
/// with needs_input) and runs without asking for permission.
std::string unattended_clean_config() {
  return fmt::format("--cfg 'conversation.tools.clean.command={{program=\"{}/examples/tools/confirm.sh\"}}' "
                     "--cfg conversation.tools.clean.run=\\\"unattended\\\"",
                     JP_SOURCE_DIR);
}

/// examples/subagents.toml as its header says to run it, no terminal on stdin.
Run run_subagents_example() {
  return cli(fmt::format("{} run {}/examples/subagents.toml --json", confirm_config(), JP_SOURCE_DIR));
}

} // namespace

CAF_TEST(sub-agents and a process spawned in one batch are awaited together) {
  auto r = run_subagents_example();
  JP_REQUIRE_OK(r);
  auto res = results_of(r);
  // The spawns answer at once, as handles.
  CAF_CHECK(contains(content(res, "main", 1, 0), R"("id":"w1","state":"running")"));
  // w2's tool asks: the first await returns with it waiting on that question (the
  // others may or may not be done by then)...
  auto first = Json::parse(content(res, "main", 1, 3));
  CAF_REQUIRE(first.ok());
  std::string w2;
  for (auto& p : first->find("pending")->as_array())
    if (p.find("id")->as_string() == "w2")
      w2 = p.dump();
  CAF_CHECK(contains(w2, R"("state":"waiting")"));
  CAF_CHECK(contains(w2, "Delete the build directory?"));
  // ...the parent answers with apply, and the next await has every result.
  CAF_CHECK(contains(content(res, "main", 2, 0), R"({"id":"w2","state":")"));
  auto awaited = Json::parse(content(res, "main", 2, 1));
  CAF_REQUIRE(awaited.ok());
  std::map<std::string, std::string> results;
  for (auto& c : awaited->find("completed")->as_array())
    results[c.find("id")->as_string()] = c.find("result")->as_string();
  CAF_CHECK_EQUAL(results["w1"], "done with alpha");
  CAF_CHECK_EQUAL(results["w2"], "asked, answered, done with beta");
  CAF_CHECK_EQUAL(results["sh"], "shell-done\n");
  CAF_CHECK(awaited->find("pending")->as_array().empty());
  // Each sub-agent's own calls are logged under its path, with its prompt in place.
  CAF_CHECK_EQUAL(content(res, "main/w1", 1, 0), "worked on alpha\n");
  CAF_CHECK_EQUAL(content(res, "main/w2", 1, 0), "deleted (pretend)");
}

CAF_TEST(a blocking sub-agent returns what it yields and its turn ends there) {
  auto r = run_subagents_example();
  JP_REQUIRE_OK(r);
  auto res = results_of(r);
  CAF_CHECK_EQUAL(content(res, "main", 3, 0), "yielded gamma");
  CAF_CHECK(!contains(r.stdout_text, "never said"));
  // Then its foreach: every element's result, in element order.
  CAF_CHECK(contains(content(res, "main", 4, 1),
                     R"([{\"element\":\"one\",\"result\":\"done with item one\"},{\"element\":\"two\")"));
  CAF_CHECK(contains(r.stdout_text, R"("handles_left":0)"));
}

CAF_TEST(aborting a sub-agent ends the processes it started) {
  temp_dir ws;
  auto pidfile = (ws.path / "pid").string();
  auto script = abort_holder_script(
    pidfile, fmt::format("tool = \"shell\"\n  arguments = {{ command = \"if kill -0 $(cat '{}') 2>/dev/null; then echo "
                         "alive; else echo gone; fi\" }}",
                         pidfile));
  ws.write("script.toml", script);
  auto r = cli_in(ws.path.string(), fmt::format("run {}/script.toml --json", ws.path.string()));
  JP_REQUIRE_OK(r);
  auto res = results_of(r);
  auto aborted = content(res, "main", 3, 0);
  CAF_CHECK(contains(aborted, R"("state":"stopped")"));
  CAF_CHECK(contains(aborted, "aborted"));
  // Its process was gone (killed and reaped) by the time the abort answered.
  CAF_CHECK_EQUAL(content(res, "main", 4, 0), "gone\n");
  std::ifstream in(pidfile);
  pid_t pid = 0;
  in >> pid;
  CAF_REQUIRE(pid > 1);
  // Gone, or a zombie of nobody: the run ended and reaped what it started.
  CAF_CHECK(::kill(pid, 0) == -1);
}

CAF_TEST(a sub-agent aborted on a terminal leaves the terminal asking for its parent) {
  temp_dir ws;
  auto pidfile = (ws.path / "pid").string();
  ws.write("tools.toml", "[conversation.tools.hello]\nsummary = \"says hello\"\n"
                         "command = { program = \"echo\", args = [\"hello from the tool\"] }\nrun = \"ask\"\n");
  ws.write("script.toml", abort_holder_script(pidfile, "tool = \"hello\"\n  arguments = { }"));
  // On a terminal: the sub-agent's turn ends with the abort; its parent still asks
  // there (the abort once cancelled the terminal for good: the permission was
  // refused unasked).
  int master = -1;
  auto dir = ws.path.string();
  auto config = (ws.path / "tools.toml").string();
  auto script = (ws.path / "script.toml").string();
  auto state = state_home_of(dir);
  pid_t pid = ::forkpty(&master, nullptr, nullptr, nullptr);
  if (pid == 0) {
    ::setenv("XDG_STATE_HOME", state.c_str(), 1);
    ::execl(JP_CLI_BINARY, JP_CLI_BINARY, "--workspace", dir.c_str(), "--config", config.c_str(), "run",
            script.c_str(), "--ask", "--allow", "agent", "--allow", "shell", nullptr);
    ::_exit(127);
  }
  std::string seen;
  bool asked = read_until(master, seen, "Allow?");
  if (asked)
    CAF_CHECK_EQUAL(::write(master, "y\n", 2), 2);
  CAF_CHECK(asked);
  CAF_CHECK(read_until(master, seen, "hello from the tool"));
  int status = 0;
  ::kill(pid, asked ? 0 : SIGKILL);
  ::waitpid(pid, &status, 0);
  ::close(master);
  if (!asked)
    CAF_FAIL("no permission prompt on the terminal:\n" << seen);
  CAF_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

CAF_TEST(a sub-agent deeper than max_depth is refused naming the limit) {
  auto r = run_script_text(R"(
[[agents]]
name = "main"
  [[agents.steps]]
  [[agents.steps.calls]]
  tool = "agent"
  arguments = { prompt = "go", script = "nester" }

[[subagents]]
name = "nester"
  [[subagents.steps]]
  [[subagents.steps.calls]]
  tool = "agent"
  arguments = { prompt = "deeper", script = "nester" }
)",
                           "--cfg agents.max_depth=2");
  JP_REQUIRE_OK(r);
  auto res = results_of(r);
  // main/#1 is depth 1, its sub-agent depth 2; that one's spawn would be depth 3.
  bool refused = false;
  for (auto& [key, e] : res)
    if (!e.find("ok")->as_bool() && contains(e.find("content")->as_string(), "[agents] max_depth = 2"))
      refused = true;
  CAF_CHECK(refused);
}

CAF_TEST(a sub-agent gets only the tools it is given and errors name what is wrong) {
  // Sub-agents given the same tools share one config (#1 and #3); #2's are others.
  auto r = run_script_text(R"(
[[agents]]
name = "main"
  [[agents.steps]]
  [[agents.steps.calls]]
  tool = "agent"
  arguments = { prompt = "go", script = "awaiter", tools = ["shell"] }
  [[agents.steps.calls]]
  tool = "agent"
  arguments = { prompt = "go", script = "awaiter", tools = ["await"] }
  [[agents.steps.calls]]
  tool = "agent"
  arguments = { prompt = "go", script = "awaiter", tools = ["shell"] }
  [[agents.steps.calls]]
  tool = "agent"
  arguments = { prompt = "go", script = "awaiter", tools = [] }
  [[agents.steps.calls]]
  tool = "agent"
  arguments = { prompt = "go", script = "awaiter", tools = ["rm_rf"] }
  [[agents.steps.calls]]
  tool = "agent"
  arguments = { prompt = "go" }

[[subagents]]
name = "awaiter"
  [[subagents.steps]]
  [[subagents.steps.calls]]
  tool = "await"
  arguments = { all = ["x"] }
)");
  JP_REQUIRE_OK(r);
  auto res = results_of(r);
  // Narrowed to shell: await comes with it, as the way to wait for its handles.
  CAF_CHECK(contains(content(res, "main/#1", 1, 0), "Handle `x` not found"));
  CAF_CHECK(contains(content(res, "main/#2", 1, 0), "Handle `x` not found"));
  CAF_CHECK(contains(content(res, "main/#3", 1, 0), "Handle `x` not found"));
  // Given none: it has none (not all of its parent's), its call fails, its turn goes on.
  CAF_CHECK(contains(content(res, "main/#4", 1, 0), "Unknown tool `await`; available tools: yield_to_parent"));
  CAF_CHECK(contains(content(res, "main", 1, 4), "`tools` names `rm_rf`, which is not one of your tools"));
  CAF_CHECK(contains(content(res, "main", 1, 5), "give `script` naming one (`awaiter`)"));
}

CAF_TEST(outside an agent loop the agent tool says why it cannot run) {
  auto r = cli(R"(call agent '{"prompt":"hi"}')");
  CAF_CHECK_NOT_EQUAL(r.status, 0);
  CAF_CHECK(contains(r.out, "`agent` cannot run here: its sub-agents run only in an agent loop"));
  // Nor is one fetched or aborted (the text said none could be started).
  auto fetch = cli(R"(call agent '{"action":"fetch","id":"f"}')");
  CAF_CHECK_NOT_EQUAL(fetch.status, 0);
  CAF_CHECK(contains(fetch.out, "none can be started, fetched or aborted"));
}

CAF_TEST(a script names its subagents once) {
  auto r = run_script_text(R"(
[[agents]]
name = "main"
[[subagents]]
name = "w"
[[subagents]]
name = "w"
)");
  CAF_CHECK_NOT_EQUAL(r.status, 0);
  CAF_CHECK(contains(r.out, "two [[subagents]] are named `w`"));
}

namespace {

/// A scripted sub-agent `holder` that stays live: it awaits a shell handle sleeping
/// 600 s (its turn end, or its parent's, ends it).
constexpr const char* kSleepingHolder = R"(
[[subagents]]
name = "holder"
  [[subagents.steps]]
  [[subagents.steps.calls]]
  tool = "shell"
  arguments = { action = "spawn", id = "long", command = "exec sleep 600" }
  [[subagents.steps.calls]]
  tool = "await"
  arguments = { all = ["long"] }
)";

} // namespace

CAF_TEST(more live sub-agents than max_concurrent are refused naming the limit) {
  auto r = run_script_text(R"(
[[agents]]
name = "main"
  [[agents.steps]]
  [[agents.steps.calls]]
  tool = "agent"
  arguments = { action = "spawn", id = "first", prompt = "x", script = "holder" }
  [[agents.steps.calls]]
  tool = "agent"
  arguments = { action = "spawn", id = "second", prompt = "x", script = "holder" }
  [[agents.steps.calls]]
  tool = "await"
  arguments = { any = ["second"] }

)" + std::string(kSleepingHolder),
                           "--cfg agents.max_concurrent=1");
  JP_REQUIRE_OK(r);
  auto res = results_of(r);
  // The refused spawn is a failed call, and no handle spawned (nor live at once).
  CAF_CHECK(!ok(res, "main", 1, 1));
  CAF_CHECK(contains(content(res, "main", 1, 1), "1 sub-agents of this agent are running, the limit"));
  CAF_CHECK(contains(r.stdout_text, R"("handles_spawned":1,"peak_handles":1)"));
  auto awaited = content(res, "main", 1, 2);
  CAF_CHECK(contains(awaited, R"("id":"second","state":"stopped")"));
  CAF_CHECK(contains(awaited, "1 sub-agents of this agent are running, the limit ([agents] max_concurrent = 1)"));
  // The first ran until the turn ended: its turn-end policy (abort) ended it.
  CAF_CHECK(contains(r.stdout_text, R"("id":"first","tool":"agent","policy":"abort")"));
  CAF_CHECK(contains(r.stdout_text, R"("handles_left":0)"));
}

CAF_TEST(more live sub-agents under one top-level agent than max_live are refused naming the limit) {
  // Each level's max_concurrent multiplies (8 x 8 x ...): max_live bounds the tree.
  auto r = run_script_text(R"(
[[agents]]
name = "main"
  [[agents.steps]]
  [[agents.steps.calls]]
  tool = "agent"
  arguments = { prompt = "x", script = "mid" }

[[subagents]]
name = "mid"
  [[subagents.steps]]
  [[subagents.steps.calls]]
  tool = "agent"
  arguments = { action = "spawn", id = "leaf1", prompt = "x", script = "holder" }
  [[subagents.steps.calls]]
  tool = "agent"
  arguments = { action = "spawn", id = "leaf2", prompt = "x", script = "holder" }
  [[subagents.steps.calls]]
  tool = "await"
  arguments = { any = ["leaf2"] }

)" + std::string(kSleepingHolder),
                           "--cfg agents.max_live=2");
  JP_REQUIRE_OK(r);
  auto res = results_of(r);
  // mid and leaf1 live: leaf2, one level down from mid, is the third.
  auto awaited = content(res, "main/#1", 1, 2);
  CAF_CHECK(contains(awaited, R"("id":"leaf2","state":"stopped")"));
  CAF_CHECK(contains(awaited, "2 sub-agents are running under this top-level agent, the limit ([agents] max_live = 2)"));
  CAF_CHECK(contains(r.stdout_text, R"("handles_left":0)"));
}

namespace {

/// main spawns the scripted sub-agent `w` held at a gate (its first call waits for a
/// file), fetches it, sends it a message with apply (queued: it works), opens the
/// gate, awaits it, and sends another message. `after_gate`: its steps after the
/// gated call, as TOML.
Run run_gated_subagent(const std::string& after_gate) {
  temp_dir ws;
  auto gate = (ws.path / "gate").string();
  ws.write("script.toml", fmt::format(R"(
[[agents]]
name = "main"
  [[agents.steps]]
  [[agents.steps.calls]]
  tool = "agent"
  arguments = {{ action = "spawn", id = "w", prompt = "x", script = "gated" }}
  [[agents.steps]]
  [[agents.steps.calls]]
  tool = "agent"
  arguments = {{ action = "fetch", id = "w" }}
  [[agents.steps]]
  [[agents.steps.calls]]
  tool = "agent"
  arguments = {{ action = "apply", id = "w", input = "and then?" }}
  [[agents.steps]]
  [[agents.steps.calls]]
  tool = "shell"
  arguments = {{ command = "touch '{0}'" }}
  [[agents.steps]]
  [[agents.steps.calls]]
  tool = "await"
  arguments = {{ all = ["w"] }}
  [[agents.steps]]
  [[agents.steps.calls]]
  tool = "agent"
  arguments = {{ action = "apply", id = "w", input = "again" }}

[[subagents]]
name = "gated"
  [[subagents.steps]]
  [[subagents.steps.calls]]
  tool = "shell"
  arguments = {{ command = "until [ -e '{0}' ]; do sleep 0.01; done" }}
{1}
)",
                                      gate, after_gate));
  return cli_in(ws.path.string(), fmt::format("run {}/script.toml --json", ws.path.string()));
}

size_t turns_of(const Run& r, const std::string& agent) {
  size_t turns = 0;
  for (auto& e : events(r.stdout_text))
    if (e.find("event")->as_string() == "turn_end" && e.find("agent")->as_string() == agent)
      ++turns;
  return turns;
}

} // namespace

CAF_TEST(fetch shows progress and apply queues the next message of a working sub-agent) {
  auto r = run_gated_subagent(R"(
  [[subagents.steps]]
  text = "turn one"
  end_turn = true
  [[subagents.steps]]
  text = "turn two"
)");
  JP_REQUIRE_OK(r);
  auto res = results_of(r);
  CAF_CHECK(contains(content(res, "main", 2, 0), R"("state":"running")"));
  CAF_CHECK(contains(content(res, "main", 2, 0), "[progress: "));
  CAF_CHECK(contains(content(res, "main", 3, 0), ", 1 message queued]"));
  // The queued message was its second turn: its answer ends the result, after the
  // first turn's, which no look took (it was lost behind the last).
  CAF_CHECK(contains(content(res, "main", 5, 0),
                     R"("id":"w","state":"stopped","result":"turn one\n\n[then, to the message \"and then?\":]\nturn two")"));
  CAF_CHECK_EQUAL(turns_of(r, "main/w"), 2u);
  CAF_CHECK(contains(content(res, "main", 6, 0), "Handle `w` has stopped; it takes no more input"));
}

CAF_TEST(a message queued for a sub-agent whose turn yields first is said in its result) {
  auto r = run_gated_subagent(R"(
  [[subagents.steps]]
  [[subagents.steps.calls]]
  tool = "yield_to_parent"
  arguments = { result = "yielded early" }
)");
  JP_REQUIRE_OK(r);
  auto res = results_of(r);
  CAF_CHECK(contains(content(res, "main", 3, 0), ", 1 message queued]"));
  CAF_CHECK(contains(content(res, "main", 5, 0),
                     R"("result":"yielded early\n[jp-actors: 1 message given with apply never reached it: its turn )"
                     R"(ended first (\"and then?\"); spawn a new sub-agent to go on]")"));
}

CAF_TEST(a sub-agent s steps are numbered on across its turns as its script numbers them) {
  auto r = run_script_text(R"([[agents]]
name = "main"
  [[agents.steps]]
  [[agents.steps.calls]]
  tool = "agent"
  arguments = { action = "spawn", id = "t", prompt = "go", script = "talker" }
  [[agents.steps.calls]]
  tool = "agent"
  arguments = { action = "apply", id = "t", input = "more" }
  [[agents.steps.calls]]
  tool = "await"
  arguments = { all = ["t"], timeout_secs = 60 }
[[subagents]]
name = "talker"
  [[subagents.steps]]
  [[subagents.steps.calls]]
  tool = "shell"
  arguments = { command = "echo one" }
  [[subagents.steps]]
  text = "first answer"
  end_turn = true
  [[subagents.steps]]
  [[subagents.steps.calls]]
  tool = "shell"
  arguments = { command = "echo two" }
  [[subagents.steps]]
  text = "second answer"
)");
  JP_REQUIRE_OK(r);
  CAF_CHECK_EQUAL(turns_of(r, "main/t"), 2u);
  // Its second turn's call is step 3, not a second step 1 beside the first's.
  auto res = results_of(r);
  CAF_CHECK_EQUAL(content(res, "main/t", 1, 0), "one\n");
  CAF_CHECK_EQUAL(content(res, "main/t", 3, 0), "two\n");
}

CAF_TEST(a sub-agent turn ends at max_rounds with an error naming the limit) {
  auto r = run_script_text(R"(
[[agents]]
name = "main"
  [[agents.steps]]
  [[agents.steps.calls]]
  tool = "agent"
  arguments = { prompt = "x", script = "busy" }

[[subagents]]
name = "busy"
  [[subagents.steps]]
  [[subagents.steps.calls]]
  tool = "shell"
  arguments = { command = "echo 1" }
  [[subagents.steps]]
  [[subagents.steps.calls]]
  tool = "shell"
  arguments = { command = "echo 2" }
  [[subagents.steps]]
  [[subagents.steps.calls]]
  tool = "shell"
  arguments = { command = "echo 3" }
)",
                           "--cfg agents.max_rounds=2");
  JP_REQUIRE_OK(r);
  auto res = results_of(r);
  CAF_CHECK(contains(content(res, "main", 1, 0),
                     "the turn stopped after 2 assistant responses, the limit ([agents] max_rounds = 2)"));
  CAF_CHECK(!contains(r.stdout_text, "echo 3"));
}

CAF_TEST(a question of a sub-agent makes its handle waiting and apply answers it) {
  auto r = run_script_text(R"(
[[agents]]
name = "main"
  [[agents.steps]]
  [[agents.steps.calls]]
  tool = "agent"
  arguments = { action = "spawn", id = "w", prompt = "x", script = "asker" }
  [[agents.steps.calls]]
  tool = "await"
  arguments = { all = ["w"] }
  [[agents.steps]]
  [[agents.steps.calls]]
  tool = "agent"
  arguments = { action = "apply", id = "w", input = "yes" }
  [[agents.steps]]
  [[agents.steps.calls]]
  tool = "agent"
  arguments = { action = "apply", id = "w", input = true }
  [[agents.steps]]
  [[agents.steps.calls]]
  tool = "await"
  arguments = { all = ["w"] }

[[subagents]]
name = "asker"
  [[subagents.steps]]
  [[subagents.steps.calls]]
  tool = "clean"
  arguments = {}
  [[subagents.steps]]
  text = "cleaned"
)",
                           unattended_clean_config());
  JP_REQUIRE_OK(r);
  auto res = results_of(r);
  // Nobody at a terminal: the await returns with the sub-agent waiting on its tool's question.
  auto first = content(res, "main", 1, 1);
  CAF_CHECK(contains(first, R"("id":"w","state":"waiting")"));
  CAF_CHECK(contains(first, "Delete the build directory?"));
  // An answer the question does not take is refused, and it stays asked (let through,
  // the tool's call failed inside the sub-agent, past correcting).
  auto wrong = content(res, "main", 2, 0);
  CAF_CHECK(contains(wrong, "Handle `w`: "));
  CAF_CHECK(contains(wrong, "true or false"));
  // apply answered it: the tool ran again with the answer, and the sub-agent finished.
  CAF_CHECK_EQUAL(content(res, "main/w", 1, 0), "deleted (pretend)");
  CAF_CHECK(contains(content(res, "main", 4, 0), R"("id":"w","state":"stopped","result":"cleaned")"));
}

CAF_TEST(a question of a sub-agent s own sub-agent makes its handle waiting for that parent) {
  // Its handle is its parent's to apply to: the question went past it to the handle
  // above (the grandparent's await saw it; the parent's await waited on).
  auto r = run_script_text(R"(
[[agents]]
name = "main"
  [[agents.steps]]
  [[agents.steps.calls]]
  tool = "agent"
  arguments = { action = "spawn", id = "s", prompt = "p", script = "mid" }
  [[agents.steps.calls]]
  tool = "await"
  arguments = { all = ["s"] }
[[subagents]]
name = "mid"
  [[subagents.steps]]
  [[subagents.steps.calls]]
  tool = "agent"
  arguments = { action = "spawn", id = "c", prompt = "q", script = "asker" }
  [[subagents.steps.calls]]
  tool = "await"
  arguments = { all = ["c"] }
  [[subagents.steps]]
  [[subagents.steps.calls]]
  tool = "agent"
  arguments = { action = "apply", id = "c", input = true }
  [[subagents.steps.calls]]
  tool = "await"
  arguments = { all = ["c"] }
  [[subagents.steps]]
  text = "mid done"
[[subagents]]
name = "asker"
  [[subagents.steps]]
  [[subagents.steps.calls]]
  tool = "clean"
  arguments = {}
  [[subagents.steps]]
  text = "cleaned"
)",
                           unattended_clean_config());
  JP_REQUIRE_OK(r);
  auto res = results_of(r);
  auto asked = content(res, "main/s", 1, 1);
  CAF_CHECK(contains(asked, R"("id":"c","state":"waiting")"));
  CAF_CHECK(contains(asked, "Delete the build directory?"));
  CAF_CHECK_EQUAL(content(res, "main/s/c", 1, 0), "deleted (pretend)");
  CAF_CHECK(contains(content(res, "main/s", 2, 1), R"("id":"c","state":"stopped","result":"cleaned")"));
  CAF_CHECK(contains(content(res, "main", 1, 1), R"("id":"s","state":"stopped","result":"mid done")"));
}

CAF_TEST(a question of a blocking foreach s element under a spawned sub-agent names its element) {
  // Nobody can apply to a blocking foreach: the spawned sub-agent above it waits on
  // the question, which says which element asks (the parent answered them blind).
  auto r = run_script_text(R"(
[[agents]]
name = "main"
  [[agents.steps]]
  [[agents.steps.calls]]
  tool = "agent"
  arguments = { action = "spawn", id = "s", prompt = "p", script = "mid" }
  [[agents.steps.calls]]
  tool = "await"
  arguments = { all = ["s"] }
  [[agents.steps]]
  [[agents.steps.calls]]
  tool = "agent"
  arguments = { action = "apply", id = "s", input = true }
  [[agents.steps.calls]]
  tool = "await"
  arguments = { all = ["s"] }
[[subagents]]
name = "mid"
  [[subagents.steps]]
  [[subagents.steps.calls]]
  tool = "foreach"
  arguments = { elements = ["only"], prompt = "{{element}}", script = "asker" }
  [[subagents.steps]]
  text = "mid done"
[[subagents]]
name = "asker"
  [[subagents.steps]]
  [[subagents.steps.calls]]
  tool = "clean"
  arguments = {}
)",
                           unattended_clean_config());
  JP_REQUIRE_OK(r);
  auto res = results_of(r);
  CAF_CHECK(contains(content(res, "main", 1, 1), R"("text":"[0] only: Delete the build directory?")"));
  CAF_CHECK(contains(content(res, "main", 2, 1), R"("id":"s","state":"stopped","result":"mid done")"));
}

CAF_TEST(an apply answering a sub-agent s question and an await in one batch see it answered) {
  // The batch's calls run at once: the await must not answer with the question the
  // apply beside it answers (the turn holds an await's questions of a handle while
  // an apply to it is on its way).
  auto r = run_script_text(R"(
[[agents]]
name = "main"
  [[agents.steps]]
  [[agents.steps.calls]]
  tool = "agent"
  arguments = { action = "spawn", id = "w", prompt = "x", script = "asker" }
  [[agents.steps.calls]]
  tool = "await"
  arguments = { all = ["w"] }
  [[agents.steps]]
  [[agents.steps.calls]]
  tool = "agent"
  arguments = { action = "apply", id = "w", input = true }
  [[agents.steps.calls]]
  tool = "await"
  arguments = { all = ["w"] }

[[subagents]]
name = "asker"
  [[subagents.steps]]
  [[subagents.steps.calls]]
  tool = "clean"
  arguments = {}
  [[subagents.steps]]
  text = "cleaned"
)",
                           unattended_clean_config());
  JP_REQUIRE_OK(r);
  auto res = results_of(r);
  CAF_CHECK(contains(content(res, "main", 2, 0), R"("id":"w","state":"running")"));
  CAF_CHECK(contains(content(res, "main", 2, 1), R"("id":"w","state":"stopped","result":"cleaned")"));
}

CAF_TEST(two questions a sub-agent asks at once are answered one after the other) {
  // Its two calls run at once and both ask (main waits until both tools ran, so both
  // questions are likely in before the first answer): the first is shown; once
  // answered, the second, and both calls get their answers.
  temp_dir ws;
  ws.write("tools.toml", fmt::format(R"(
[conversation.tools.clean]
summary = "asks before it cleans"
command = {{ program = "bash", args = ["-c", "mkdir -p '{0}/ran' && touch '{0}/ran/'$$ && exec '{1}/examples/tools/confirm.sh'"] }}
run = "unattended"
)",
                                     ws.path.string(), JP_SOURCE_DIR));
  ws.write("script.toml", fmt::format(R"(
[[agents]]
name = "main"
  [[agents.steps]]
  [[agents.steps.calls]]
  tool = "agent"
  arguments = {{ action = "spawn", id = "w", prompt = "x", script = "asker2" }}
  [[agents.steps.calls]]
  tool = "shell"
  arguments = {{ command = "until [ \"$(ls '{0}/ran' 2>/dev/null | wc -l)\" -ge 2 ]; do sleep 0.01; done; echo both asked" }}
  [[agents.steps]]
  [[agents.steps.calls]]
  tool = "await"
  arguments = {{ all = ["w"] }}
  [[agents.steps]]
  [[agents.steps.calls]]
  tool = "agent"
  arguments = {{ action = "apply", id = "w", input = true }}
  [[agents.steps]]
  [[agents.steps.calls]]
  tool = "await"
  arguments = {{ all = ["w"] }}
  [[agents.steps]]
  [[agents.steps.calls]]
  tool = "agent"
  arguments = {{ action = "apply", id = "w", input = true }}
  [[agents.steps]]
  [[agents.steps.calls]]
  tool = "await"
  arguments = {{ all = ["w"] }}

[[subagents]]
name = "asker2"
  [[subagents.steps]]
  [[subagents.steps.calls]]
  tool = "clean"
  arguments = {{}}
  [[subagents.steps.calls]]
  tool = "clean"
  arguments = {{}}
  [[subagents.steps]]
  text = "both cleaned"
)",
                                      ws.path.string()));
  auto r = cli_in(ws.path.string(), fmt::format("--config {0}/tools.toml run {0}/script.toml --json", ws.path.string()));
  JP_REQUIRE_OK(r);
  auto res = results_of(r);
  CAF_CHECK(contains(content(res, "main", 2, 0), R"("id":"w","state":"waiting")"));
  // The first answered, the second question is the one it waits on now.
  auto second = content(res, "main", 4, 0);
  CAF_CHECK(contains(second, R"("id":"w","state":"waiting")"));
  CAF_CHECK(contains(second, "Delete the build directory?"));
  CAF_CHECK_EQUAL(content(res, "main/w", 1, 0), "deleted (pretend)");
  CAF_CHECK_EQUAL(content(res, "main/w", 1, 1), "deleted (pretend)");
  CAF_CHECK(contains(content(res, "main", 6, 0), R"("id":"w","state":"stopped","result":"both cleaned")"));
}

CAF_TEST(a permission a sub-agent needs is not its parent to give) {
  // With --ask and no terminal, `clean` (run = "ask", the default for a local tool)
  // is refused in the sub-agent as it is at the top level: its parent may be the
  // model that wants it run. --allow lets it run.
  auto script = R"(
[[agents]]
name = "main"
  [[agents.steps]]
  [[agents.steps.calls]]
  tool = "agent"
  arguments = { action = "spawn", id = "w", prompt = "x", script = "asker" }
  [[agents.steps.calls]]
  tool = "await"
  arguments = { all = ["w"] }

[[subagents]]
name = "asker"
  [[subagents.steps]]
  [[subagents.steps.calls]]
  tool = "clean"
  arguments = {}
)";
  auto cfg = fmt::format("--cfg 'conversation.tools.clean.command={{program=\"{}/examples/tools/confirm.sh\"}}' "
                         "--cfg conversation.tools.clean.questions.proceed.answer=true",
                         JP_SOURCE_DIR);
  auto r = run_script_text(script, cfg, "--ask");
  JP_REQUIRE_OK(r);
  auto res = results_of(r);
  CAF_CHECK(contains(content(res, "main/w", 1, 0), "`clean` needs the user's permission to run (run = \"ask\") "
                                                   "and there is no terminal to ask on; nothing was run"));
  CAF_CHECK(!contains(content(res, "main", 1, 1), R"("id":"permission")"));
  r = run_script_text(script, cfg, "--ask --allow clean");
  JP_REQUIRE_OK(r);
  res = results_of(r);
  CAF_CHECK_EQUAL(content(res, "main/w", 1, 0), "deleted (pretend)");
}

CAF_TEST(a handle is driven only through the tool that spawned it) {
  // `apply` of this tool is "skip": another tool's apply (the shell's, the agent's)
  // must not type into its handle either.
  auto r = run_script_text(R"(
[[agents]]
name = "main"
  [[agents.steps]]
  [[agents.steps.calls]]
  tool = "typist"
  arguments = { action = "spawn", id = "c", wait_ms = 0 }
  [[agents.steps.calls]]
  tool = "shell"
  arguments = { action = "apply", id = "c", input = "x\n" }
  [[agents.steps.calls]]
  tool = "agent"
  arguments = { action = "apply", id = "c", input = "x\n" }
  [[agents.steps.calls]]
  tool = "typist"
  arguments = { action = "apply", id = "c", input = "x\n" }
  [[agents.steps.calls]]
  tool = "shell"
  arguments = { action = "abort", id = "c" }
)",
                           "--cfg 'conversation.tools.typist={command={program=\"cat\"},run=\"unattended\","
                           "spawn={stateful=true,lifecycle={on_turn_end=\"abort\"},permissions={apply=\"skip\"}}}'",
                           "--ask");
  JP_REQUIRE_OK(r);
  auto res = results_of(r);
  CAF_CHECK(contains(content(res, "main", 1, 0), R"("state":"running")"));
  CAF_CHECK(contains(content(res, "main", 1, 1), "Handle `c` was spawned with `typist`: apply it with `typist`"));
  CAF_CHECK(contains(content(res, "main", 1, 2), "Handle `c` was spawned with `typist`: apply it with `typist`"));
  CAF_CHECK(contains(content(res, "main", 1, 3), "spawn.permissions.apply"));
  CAF_CHECK(contains(content(res, "main", 1, 4), "Handle `c` was spawned with `typist`: abort it with `typist`"));
}

CAF_TEST(a handle whose tool lacks an action is not pointed back at that tool for it) {
  // "abort it with `job`" sent the model to a tool whose abort is refused in turn.
  auto r = run_script_text(R"(
[[agents]]
name = "main"
  [[agents.steps]]
  [[agents.steps.calls]]
  tool = "job"
  arguments = { action = "spawn", id = "j", wait_ms = 0 }
  [[agents.steps.calls]]
  tool = "shell"
  arguments = { action = "abort", id = "j" }
  [[agents.steps.calls]]
  tool = "shell"
  arguments = { action = "fetch", id = "j" }
)",
                           "--cfg 'conversation.tools.job={command={program=\"cat\"},run=\"unattended\","
                           "spawn={stateful=true,actions=[\"spawn\",\"fetch\"],lifecycle={on_turn_end=\"abort\"}}}'");
  JP_REQUIRE_OK(r);
  auto res = results_of(r);
  CAF_CHECK_EQUAL(content(res, "main", 1, 1),
                  "Handle `j` was spawned with `job`, and no other tool can abort it: job: action `abort` is not "
                  "supported (actions: spawn, fetch)");
  CAF_CHECK(contains(content(res, "main", 1, 2), "Handle `j` was spawned with `job`: fetch it with `job`"));
}

CAF_TEST(foreach runs one sub-agent per element and never more than its limit at once) {
  auto r = run_script_text(R"(
[[agents]]
name = "main"
  [[agents.steps]]
  [[agents.steps.calls]]
  tool = "foreach"
  arguments = { action = "spawn", id = "items", elements = ["a", "b", "c", "d", "e"], prompt = "handle {{element}}", max_concurrent = 2, script = "worker" }
  [[agents.steps.calls]]
  tool = "await"
  arguments = { all = ["items"] }
  [[agents.steps]]
  [[agents.steps.calls]]
  tool = "foreach"
  arguments = { elements = ["x"], prompt = "{{element}}", script = "worker" }
  [[agents.steps.calls]]
  tool = "foreach"
  arguments = { elements = ["x"], prompt = "the same for all", script = "worker" }
  [[agents.steps.calls]]
  tool = "foreach"
  arguments = { elements = ["x"], prompt = "{{element}}", max_concurrent = 9, script = "worker" }

[[subagents]]
name = "worker"
  [[subagents.steps]]
  [[subagents.steps.calls]]
  tool = "shell"
  arguments = { command = "sleep 0.05; echo {{prompt}}" }
  [[subagents.steps]]
  text = "did {{prompt}} for {{element}}"
)");
  JP_REQUIRE_OK(r);
  auto res = results_of(r);
  auto awaited = Json::parse(content(res, "main", 1, 1));
  CAF_REQUIRE(awaited.ok());
  auto& done = awaited->find("completed")->as_array();
  CAF_REQUIRE_EQUAL(done.size(), 1u);
  // {{prompt}} is the element's prompt, {{element}} the element itself.
  CAF_CHECK_EQUAL(done[0].find("result")->as_string(),
                  R"([{"element":"a","result":"did handle a for a"},{"element":"b","result":"did handle b for b"},)"
                  R"({"element":"c","result":"did handle c for c"},{"element":"d","result":"did handle d for d"},)"
                  R"({"element":"e","result":"did handle e for e"}])");
  // The peak from the events: a sub-agent is live from its first event to its turn_end.
  int live = 0, peak = 0;
  std::set<std::string> seen;
  for (auto& e : events(r.stdout_text)) {
    auto agent = e.find("agent") ? e.find("agent")->as_string() : "";
    if (!agent.starts_with("main/items["))
      continue;
    if (seen.insert(agent).second)
      peak = std::max(peak, ++live);
    if (e.find("event")->as_string() == "turn_end")
      --live;
  }
  CAF_CHECK_EQUAL(seen.size(), 5u);
  CAF_CHECK(peak >= 1 && peak <= 2);
  // Blocking, and what is refused.
  CAF_CHECK_EQUAL(content(res, "main", 2, 0), R"([{"element":"x","result":"did x for x"}])");
  CAF_CHECK(contains(content(res, "main", 2, 1), "`prompt` has no {{element}}"));
  CAF_CHECK(contains(content(res, "main", 2, 2), "`max_concurrent` is 9; it must be a whole number from 1 to 8 ([agents] max_concurrent)"));
}

CAF_TEST(a foreach result past the output cap keeps each element with its tail) {
  auto r = run_script_text(R"(
[[agents]]
name = "main"
  [[agents.steps]]
  [[agents.steps.calls]]
  tool = "foreach"
  arguments = { elements = ["a", "b", "c"], prompt = "handle {{element}} as the long description of this task says, which goes on and on about what to do and what not to do, and then some more", script = "worker" }

[[subagents]]
name = "worker"
  [[subagents.steps]]
  text = "did {{prompt}}, all of it, for {{element}}"
)",
                           "--cfg runtime.output_cap_bytes=256");
  JP_REQUIRE_OK(r);
  auto res = results_of(r);
  auto report = Json::parse(content(res, "main", 1, 0));
  CAF_REQUIRE(report.ok());
  auto items = Json::parse(report->is_object() && report->find("result") ? report->find("result")->as_string()
                                                                          : content(res, "main", 1, 0));
  CAF_REQUIRE(items.ok() && items->is_array());
  CAF_REQUIRE_EQUAL(items->as_array().size(), 3u); // still one per element, still JSON
  for (auto& item : items->as_array()) {
    auto said = item.find("result")->as_string();
    CAF_CHECK(contains(said, "bytes omitted]"));
    CAF_CHECK(said.ends_with("for " + item.find("element")->as_string()));
  }
}

CAF_TEST(what a sub-agent said between looks is held to the output cap) {
  temp_dir ws;
  auto gate = (ws.path / "gate").string();
  std::string longer(400, 'x');
  ws.write("script.toml", fmt::format(R"(
[[agents]]
name = "main"
  [[agents.steps]]
  [[agents.steps.calls]]
  tool = "agent"
  arguments = {{ action = "spawn", id = "w", prompt = "x", script = "talker" }}
  [[agents.steps]]
  [[agents.steps.calls]]
  tool = "agent"
  arguments = {{ action = "fetch", id = "w", wait_ms = 30000 }}
  [[agents.steps]]
  [[agents.steps.calls]]
  tool = "shell"
  arguments = {{ command = "touch '{0}'" }}
  [[agents.steps.calls]]
  tool = "await"
  arguments = {{ all = ["w"] }}

[[subagents]]
name = "talker"
  [[subagents.steps]]
  text = "start {1} end"
  [[subagents.steps.calls]]
  tool = "shell"
  arguments = {{ command = "until [ -e '{0}' ]; do sleep 0.01; done" }}
  [[subagents.steps]]
  text = "done"
)",
                                      gate, longer));
  auto r = cli_in(ws.path.string(),
                  fmt::format("--cfg runtime.output_cap_bytes=256 run {}/script.toml --json", ws.path.string()));
  JP_REQUIRE_OK(r);
  auto res = results_of(r);
  auto fetched = Json::parse(content(res, "main", 2, 0));
  CAF_REQUIRE(fetched.ok());
  auto said = fetched->find("content")->as_string();
  CAF_CHECK(!contains(said, "start"));
  CAF_CHECK(contains(said, "x end"));
  CAF_REQUIRE(fetched->find("omitted_bytes"));
  CAF_CHECK_GREATER(fetched->find("omitted_bytes")->as_int(), 0);
}

CAF_TEST(a question of a foreach element makes the foreach waiting and apply answers it) {
  auto r = run_script_text(R"(
[[agents]]
name = "main"
  [[agents.steps]]
  [[agents.steps.calls]]
  tool = "foreach"
  arguments = { action = "spawn", id = "each", elements = ["a", "b"], prompt = "{{element}}", max_concurrent = 1, script = "asker" }
  [[agents.steps.calls]]
  tool = "await"
  arguments = { all = ["each"], timeout_secs = 60 }
  [[agents.steps]]
  [[agents.steps.calls]]
  tool = "foreach"
  arguments = { action = "fetch", id = "each" }
  [[agents.steps]]
  [[agents.steps.calls]]
  tool = "foreach"
  arguments = { action = "apply", id = "each", input = true }
  [[agents.steps.calls]]
  tool = "await"
  arguments = { all = ["each"], timeout_secs = 60 }
  [[agents.steps]]
  [[agents.steps.calls]]
  tool = "foreach"
  arguments = { action = "apply", id = "each", input = true }
  [[agents.steps.calls]]
  tool = "await"
  arguments = { all = ["each"], timeout_secs = 60 }

[[subagents]]
name = "asker"
  [[subagents.steps]]
  [[subagents.steps.calls]]
  tool = "clean"
  arguments = {}
  [[subagents.steps]]
  text = "cleaned {{prompt}}"
)",
                           unattended_clean_config());
  JP_REQUIRE_OK(r);
  auto res = results_of(r);
  // Nobody at a terminal: each element's question makes the foreach wait on it, in turn.
  auto first = content(res, "main", 1, 1);
  CAF_CHECK(contains(first, R"("id":"each","state":"waiting")"));
  CAF_CHECK(contains(first, "[0] a: Delete the build directory?"));
  // A fetch shows it as the await does: waiting, with the question apply answers.
  auto fetched = content(res, "main", 2, 0);
  CAF_CHECK(contains(fetched, R"("id":"each","state":"waiting")"));
  CAF_CHECK(contains(fetched, R"("question":{"id":"proceed","text":"[0] a: Delete the build directory?")"));
  auto second = content(res, "main", 3, 1);
  CAF_CHECK(contains(second, "[1] b: Delete the build directory?"));
  auto done = content(res, "main", 4, 1);
  CAF_CHECK(contains(done, R"([{\"element\":\"a\",\"result\":\"cleaned a\"},{\"element\":\"b\",\"result\":\"cleaned b\"}])"));
}

CAF_TEST(a foreach fetch waits for news) {
  auto r = run_script_text(R"(
[[agents]]
name = "main"
  [[agents.steps]]
  [[agents.steps.calls]]
  tool = "foreach"
  arguments = { action = "spawn", id = "looked", elements = ["a"], prompt = "{{element}}", script = "asker" }
  [[agents.steps]]
  [[agents.steps.calls]]
  tool = "foreach"
  arguments = { action = "fetch", id = "looked", wait_ms = 60000 }

[[subagents]]
name = "asker"
  [[subagents.steps]]
  [[subagents.steps.calls]]
  tool = "clean"
  arguments = {}
  [[subagents.steps]]
  text = "cleaned {{prompt}}"
)",
                           unattended_clean_config());
  JP_REQUIRE_OK(r);
  // The fetch waited for the question (it answered at once, running, before).
  auto fetched = content(results_of(r), "main", 2, 0);
  CAF_CHECK(contains(fetched, R"("id":"looked","state":"waiting")"));
  CAF_CHECK(contains(fetched, "[0] a: Delete the build directory?"));
}

CAF_TEST(a sub-agent or foreach look asking for a screen is refused as it has no terminal) {
  // `screen`, `rows` and `cols` are a terminal's: answered as if not there, a model
  // was never told its look showed no screen.
  auto r = run_script_text(R"(
[[agents]]
name = "main"
  [[agents.steps]]
  [[agents.steps.calls]]
  tool = "agent"
  arguments = { action = "spawn", id = "w", prompt = "go", script = "quiet" }
  [[agents.steps.calls]]
  tool = "foreach"
  arguments = { action = "spawn", id = "each", elements = ["a"], prompt = "{{element}}", script = "quiet" }
  [[agents.steps]]
  [[agents.steps.calls]]
  tool = "agent"
  arguments = { action = "fetch", id = "w", screen = true }
  [[agents.steps.calls]]
  tool = "foreach"
  arguments = { action = "fetch", id = "each", rows = 10, cols = 40 }
  [[agents.steps.calls]]
  tool = "await"
  arguments = { all = ["w", "each"], timeout_secs = 60 }

[[subagents]]
name = "quiet"
  [[subagents.steps]]
  text = "done"
)");
  JP_REQUIRE_OK(r);
  auto res = results_of(r);
  CAF_CHECK(contains(content(res, "main", 2, 0), "Handle `w` (a sub-agent) has no terminal: `screen`, `rows` and `cols`"));
  CAF_CHECK(!ok(res, "main", 2, 0));
  CAF_CHECK(contains(content(res, "main", 2, 1), "Handle `each` (a foreach) has no terminal"));
}

CAF_TEST(aborting a foreach aborts its running sub-agents and starts no more) {
  auto r = run_script_text(R"(
[[agents]]
name = "main"
  [[agents.steps]]
  [[agents.steps.calls]]
  tool = "foreach"
  arguments = { action = "spawn", id = "items", elements = ["a", "b", "c"], prompt = "{{element}}", max_concurrent = 1, script = "holder" }
  [[agents.steps]]
  [[agents.steps.calls]]
  tool = "foreach"
  arguments = { action = "abort", id = "items" }

[[subagents]]
name = "holder"
  [[subagents.steps]]
  [[subagents.steps.calls]]
  tool = "shell"
  arguments = { action = "spawn", id = "long", command = "exec sleep 600" }
  [[subagents.steps.calls]]
  tool = "await"
  arguments = { all = ["long"] }
)");
  JP_REQUIRE_OK(r);
  auto res = results_of(r);
  auto aborted = content(res, "main", 2, 0);
  CAF_CHECK(contains(aborted, R"("state":"stopped")"));
  CAF_CHECK(contains(aborted, "not started: the foreach was aborted"));
  CAF_CHECK(!contains(r.stdout_text, "main/items[1]"));
  CAF_CHECK(contains(r.stdout_text, R"("handles_left":0)"));
}

CAF_TEST(fetch lists the live handles of a sub-agent) {
  temp_dir ws;
  auto pidfile = (ws.path / "pid").string();
  ws.write("script.toml", fmt::format(R"(
[[agents]]
name = "main"
  [[agents.steps]]
  [[agents.steps.calls]]
  tool = "agent"
  arguments = {{ action = "spawn", id = "w", prompt = "x", script = "holder" }}
  [[agents.steps]]
  [[agents.steps.calls]]
  tool = "shell"
  arguments = {{ command = "until [ -s '{0}' ]; do sleep 0.01; done" }}
  [[agents.steps]]
  [[agents.steps.calls]]
  tool = "agent"
  arguments = {{ action = "fetch", id = "w", wait_ms = 20000 }}
{1})",
                                      pidfile, holder_subagent(pidfile)));
  auto r = cli_in(ws.path.string(), fmt::format("run {}/script.toml --json", ws.path.string()));
  JP_REQUIRE_OK(r);
  auto res = results_of(r);
  // Its turn reports its handles every half second while its tools run; the look
  // waits (at most wait_ms) for that.
  CAF_CHECK(contains(content(res, "main", 3, 0), "[handle long (shell): running, "));
  CAF_CHECK(contains(r.stdout_text, R"("handles_left":0)"));
}

CAF_TEST(only a sub-agent ends its turn with yield_to_parent) {
  // A top-level agent's own tool that happens to have the name is just a tool.
  auto r = run_script_text(R"(
[[agents]]
name = "main"
  [[agents.steps]]
  [[agents.steps.calls]]
  tool = "yield_to_parent"
  arguments = {}
  [[agents.steps]]
  [[agents.steps.calls]]
  tool = "shell"
  arguments = { command = "echo still here" }
)",
                           "--cfg 'conversation.tools.yield_to_parent.command={program=\"echo\", args=[\"mine\"]}' "
                           "--cfg conversation.tools.yield_to_parent.run=\\\"unattended\\\"");
  JP_REQUIRE_OK(r);
  auto res = results_of(r);
  CAF_CHECK_EQUAL(content(res, "main", 1, 0), "mine\n");
  CAF_CHECK_EQUAL(content(res, "main", 2, 0), "still here\n");
}

CAF_TEST(a second yield_to_parent in one batch is told its result is not handed back) {
  auto r = run_script_text(R"(
[[agents]]
name = "main"
  [[agents.steps]]
  [[agents.steps.calls]]
  tool = "agent"
  arguments = { prompt = "x", script = "twice" }

[[subagents]]
name = "twice"
  [[subagents.steps]]
  [[subagents.steps.calls]]
  tool = "yield_to_parent"
  arguments = { result = "first" }
  [[subagents.steps.calls]]
  tool = "yield_to_parent"
  arguments = { result = "second" }
)");
  JP_REQUIRE_OK(r);
  auto res = results_of(r);
  CAF_CHECK_EQUAL(content(res, "main", 1, 0), "first");
  CAF_CHECK(contains(content(res, "main/#1", 1, 1), "not handed back"));
}

CAF_TEST(a blocking sub-agent whose tool asks with nobody to answer is told so and ends) {
  // Its handle is nobody's to apply to: a question waiting there held the call (and
  // the run) forever. Its own call is refused as a one-shot question is at the top.
  for (auto call : {R"(tool = "agent"
  arguments = { prompt = "p", script = "asker" })",
                    R"(tool = "foreach"
  arguments = { prompt = "{{element}}", elements = ["a"], script = "asker" })"}) {
    auto r = run_script_text(fmt::format(R"(
[[agents]]
name = "main"
  [[agents.steps]]
  [[agents.steps.calls]]
  {}
[[subagents]]
name = "asker"
  [[subagents.steps]]
  [[subagents.steps.calls]]
  tool = "clean"
  arguments = {{}}
  [[subagents.steps]]
  text = "nobody answered"
)",
                                         call),
                             confirm_config());
    JP_REQUIRE_OK(r);
    auto res = results_of(r);
    CAF_CHECK(contains(content(res, "main", 1, 0), "nobody answered"));
    CAF_CHECK(contains(r.stdout_text, "nobody here answers a one-shot call"));
    CAF_CHECK(contains(r.stdout_text, R"("handles_left":0)"));
  }
}

CAF_TEST(a sub-agent answer past the output cap keeps its head and tail and spills the whole) {
  // Its answer went to the parent whole, however long (a 2 MB prompt echoed back).
  auto answer = "HEAD" + std::string(5000, 'A') + "TAIL";
  temp_dir ws; // the spill file is in it
  ws.write("script.toml", fmt::format(R"(
[[agents]]
name = "main"
  [[agents.steps]]
  [[agents.steps.calls]]
  tool = "agent"
  arguments = {{ prompt = "p", script = "big" }}
  [[agents.steps]]
  [[agents.steps.calls]]
  tool = "agent"
  arguments = {{ action = "spawn", id = "w", prompt = "p", script = "big" }}
  [[agents.steps]]
  [[agents.steps.calls]]
  tool = "await"
  arguments = {{ all = ["w"] }}
  [[agents.steps]]
  [[agents.steps.calls]]
  tool = "agent"
  arguments = {{ action = "fetch", id = "w" }}
[[subagents]]
name = "big"
  [[subagents.steps]]
  text = "{}"
)",
                                      answer));
  auto r = cli_in(ws.path.string(),
                  fmt::format("--cfg runtime.output_cap_bytes=1024 run {}/script.toml --json", ws.path.string()));
  JP_REQUIRE_OK(r);
  auto res = results_of(r);
  auto blocking = content(res, "main", 1, 0);
  CAF_CHECK_LESS(blocking.size(), 1500u);
  CAF_CHECK(blocking.starts_with("HEAD") && contains(blocking, "bytes omitted"));
  CAF_CHECK(contains(blocking, "TAIL\n[full output: "));
  auto file = blocking.substr(blocking.find("[full output: ") + 14);
  file.pop_back(); // its ]
  CAF_CHECK(contents(file) == answer);
  auto fetched = content(res, "main", 4, 0);
  CAF_CHECK_LESS(fetched.size(), 1800u);
  CAF_CHECK(contains(fetched, R"("output_file":")"));
}
