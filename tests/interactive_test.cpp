// Interactive programs end to end: the jp-actors binary runs scripts against real
// git, bc, bash and less on pseudo-terminals, and a control-channel tool.
#define CAF_SUITE interactive
#include <caf/test/unit_test.hpp>

#include <csignal>
#include <fmt/format.h>
#include <string>
#include <vector>

#include "cli_run.hpp"
#include "messages/json.hpp"
#include "temp_dir.hpp"
#include "contains.hpp"

using namespace jp;
using namespace jp::testing;

namespace {

/// The tool_result events of a run, in the order they came.
std::vector<Json> tool_results(const std::string& out) {
  std::vector<Json> found;
  for (auto& e : events(out))
    if (auto* ev = e.find("event"); ev && ev->as_string() == "tool_result")
      found.push_back(e);
  return found;
}

/// A stateful response's JSON.
Json response(const Json& result) {
  CAF_REQUIRE(result.find("ok")->as_bool());
  auto j = Json::parse(result.find("content")->as_string());
  CAF_REQUIRE(j.ok());
  return *j;
}

std::string field(const Json& j, std::string_view key) {
  auto* v = j.find(key);
  return v && v->is_string() ? v->as_string() : std::string();
}

/// Runs a shell command for the test's own set-up and checks; its stdout.
std::string sh(const std::string& command) {
  std::string out;
  if (auto* p = ::popen(command.c_str(), "r")) {
    char buf[4096];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, p)) > 0)
      out.append(buf, n);
    CAF_REQUIRE_EQUAL(::pclose(p), 0);
  }
  return out;
}

/// Runs `script` with `config`, the looks of `tools` waiting up to 20 s by default (not
/// 1 s): each such look ends once its program waits for input or exits, which a slow,
/// loaded machine may take longer than a second to reach.
Run run_script(const temp_dir& ws, const std::string& config, const std::string& script,
               std::initializer_list<std::string_view> tools = {}) {
  std::string waits;
  for (auto tool : tools)
    waits += fmt::format(" --cfg conversation.tools.{}.wait_ms=20000", tool);
  return cli_in(ws.path.string(),
                fmt::format("--config {0}/{1}{3} run {2} --json", JP_SOURCE_DIR, config, script, waits));
}

} // namespace

CAF_TEST(git add --patch stages exactly the hunk answered yes) {
  temp_dir ws;
  auto repo = (ws.path / "repo").string();
  sh(fmt::format("mkdir '{0}' && cd '{0}' && git init -q && seq 1 30 > f.txt && git add f.txt && "
                 "git -c user.name=t -c user.email=t@example.com commit -qm init && "
                 "sed -i 's/^2$/two/; s/^28$/twenty-eight/' f.txt",
                 repo));
  ws.write("stage.toml", R"([[agents]]
name = "main"
  [[agents.steps]]
  [[agents.steps.calls]]
  tool = "git_stage"
  arguments = { action = "spawn", id = "s", repo = "repo" }
  [[agents.steps]]
  [[agents.steps.calls]]
  tool = "git_stage"
  arguments = { action = "apply", id = "s", input = "y\n" }
  [[agents.steps]]
  [[agents.steps.calls]]
  tool = "git_stage"
  arguments = { action = "fetch", id = "s" }
  [[agents.steps]]
  [[agents.steps.calls]]
  tool = "git_stage"
  arguments = { action = "apply", id = "s", input = "n\n" }
  [[agents.steps.calls]]
  tool = "await"
  arguments = { all = ["s"], timeout_secs = 20 }
)");
  auto r = run_script(ws, "examples/interactive.toml", (ws.path / "stage.toml").string(), {"git_stage"});
  CAF_REQUIRE_EQUAL(r.status, 0);
  auto results = tool_results(r.stdout_text);
  CAF_REQUIRE_EQUAL(results.size(), 5u);
  // spawn: the first hunk and git's question, as plain text.
  auto spawned = response(results[0]);
  CAF_CHECK_EQUAL(field(spawned, "state"), "waiting");
  CAF_CHECK(contains(field(spawned, "content"), "-2\n+two\n"));
  CAF_CHECK(!contains(field(spawned, "content"), "\x1b"));
  CAF_REQUIRE(spawned.find("question"));
  CAF_CHECK(field(*spawned.find("question"), "text").starts_with("(1/2) Stage this hunk"));
  // y: the answer shows the second hunk.
  auto second = response(results[1]);
  CAF_CHECK(contains(field(second, "content"), "+twenty-eight"));
  CAF_REQUIRE(second.find("question"));
  CAF_CHECK(field(*second.find("question"), "text").starts_with("(2/2) Stage this hunk"));
  // A fetch in between finds it still waiting on the same question.
  auto again = response(results[2]);
  CAF_CHECK_EQUAL(field(again, "state"), "waiting");
  CAF_REQUIRE(again.find("question"));
  CAF_CHECK(field(*again.find("question"), "text").starts_with("(2/2)"));
  // n: git ends.
  auto awaited = response(results[4]);
  CAF_REQUIRE_EQUAL(awaited.find("completed")->as_array().size(), 1u);
  CAF_CHECK_EQUAL(field(awaited.find("completed")->as_array()[0], "state"), "stopped");
  auto staged = sh(fmt::format("cd '{}' && git diff --cached", repo));
  CAF_CHECK(contains(staged, "+two"));
  CAF_CHECK(!contains(staged, "twenty-eight"));
  CAF_CHECK(contains(sh(fmt::format("cd '{}' && git diff", repo)), "+twenty-eight"));
}

CAF_TEST(the repl example computes in bc and keeps a bash session) {
  temp_dir ws;
  auto r = run_script(ws, "examples/interactive.toml", std::string(JP_SOURCE_DIR) + "/examples/repl.toml",
                      {"bc", "bash"});
  CAF_REQUIRE_EQUAL(r.status, 0);
  auto results = tool_results(r.stdout_text);
  CAF_REQUIRE_EQUAL(results.size(), 9u);
  std::vector<Json> bc, bash;
  for (auto& res : results)
    (res.find("tool")->as_string() == "bc" ? bc : bash).push_back(response(res));
  CAF_REQUIRE_EQUAL(bc.size(), 3u);
  CAF_REQUIRE_EQUAL(bash.size(), 6u);
  // bc: x = 6 * 7, then x + 1 and x * 2 in later applies.
  CAF_CHECK(contains(field(bc[1], "content"), "\n43\n"));
  CAF_CHECK(contains(field(bc[2], "content"), "\n84\n"));
  // bash: cd and a variable persist between applies.
  CAF_CHECK(contains(field(bash[2], "content"), "42 in /usr/share\n"));
  // sleep 600 runs past its wait; Ctrl-C ends it and the shell prompts again.
  CAF_CHECK_EQUAL(field(bash[3], "state"), "running");
  CAF_CHECK_EQUAL(field(bash[4], "state"), "waiting");
  CAF_CHECK(contains(field(bash[5], "content"), "still here\n"));
  auto& rows = bash[5].find("screen")->find("rows")->as_array();
  CAF_REQUIRE(rows.size() >= 2u);
  CAF_CHECK_EQUAL(rows[rows.size() - 2].as_string(), "still here");
  CAF_CHECK(contains(r.out, R"("event":"run_end")"));
  CAF_CHECK(contains(r.out, R"("handles_left":0)"));
}

CAF_TEST(less renders its screen and pages with a named key) {
  temp_dir ws;
  sh(fmt::format("seq 1 100 | sed 's/^/line /' > '{}'", (ws.path / "lines.txt").string()));
  ws.write("page.toml", R"([[agents]]
name = "main"
  [[agents.steps]]
  [[agents.steps.calls]]
  tool = "pager"
  arguments = { action = "spawn", id = "p", file = "lines.txt" }
  [[agents.steps]]
  [[agents.steps.calls]]
  tool = "pager"
  arguments = { action = "fetch", id = "p", screen = true }
  [[agents.steps]]
  [[agents.steps.calls]]
  tool = "pager"
  arguments = { action = "apply", id = "p", input = { keys = ["PageDown"] }, screen = true }
  [[agents.steps]]
  [[agents.steps.calls]]
  tool = "pager"
  arguments = { action = "apply", id = "p", input = "q" }
)");
  auto r = run_script(ws, "tests/scripts/pager_config.toml", (ws.path / "page.toml").string(), {"pager"});
  CAF_REQUIRE_EQUAL(r.status, 0);
  auto results = tool_results(r.stdout_text);
  CAF_REQUIRE_EQUAL(results.size(), 4u);
  auto rows_of = [](const Json& j) {
    std::vector<std::string> rows;
    for (auto& row : j.find("screen")->find("rows")->as_array())
      rows.push_back(row.as_string());
    return rows;
  };
  auto first = response(results[1]);
  std::vector<std::string> expected;
  for (int i = 1; i <= 9; ++i)
    expected.push_back(fmt::format("line {}", i));
  expected.push_back("lines.txt");
  CAF_CHECK_EQUAL(rows_of(first), expected);
  CAF_CHECK_EQUAL(first.find("screen")->find("size")->dump(), R"({"rows":10,"cols":40})");
  auto paged = response(results[2]);
  expected.clear();
  for (int i = 10; i <= 18; ++i)
    expected.push_back(fmt::format("line {}", i));
  expected.push_back(":");
  CAF_CHECK_EQUAL(rows_of(paged), expected);
  CAF_CHECK_EQUAL(field(response(results[3]), "state"), "stopped");
}

CAF_TEST(a screen is held to the output cap with the rows near the cursor kept) {
  temp_dir ws;
  sh(fmt::format("seq 1 100 | sed 's/^/a longer line /' > '{}'", (ws.path / "lines.txt").string()));
  ws.write("page.toml", R"([[agents]]
name = "main"
  [[agents.steps]]
  [[agents.steps.calls]]
  tool = "pager"
  arguments = { action = "spawn", id = "p", file = "lines.txt" }
  [[agents.steps]]
  [[agents.steps.calls]]
  tool = "pager"
  arguments = { action = "fetch", id = "p", screen = true }
  [[agents.steps]]
  [[agents.steps.calls]]
  tool = "pager"
  arguments = { action = "apply", id = "p", input = "q" }
)");
  auto r = cli_in(ws.path.string(), fmt::format("--config {0}/tests/scripts/pager_config.toml --cfg "
                                                "runtime.output_cap_bytes=64 --cfg conversation.tools.pager.wait_ms=20000 "
                                                "run {1} --json",
                                                JP_SOURCE_DIR, (ws.path / "page.toml").string()));
  CAF_REQUIRE_EQUAL(r.status, 0);
  auto results = tool_results(r.stdout_text);
  CAF_REQUIRE_EQUAL(results.size(), 3u);
  auto fetched = response(results[1]);
  auto& screen = *fetched.find("screen");
  std::vector<std::string> rows;
  size_t bytes = 0;
  for (auto& row : screen.find("rows")->as_array()) {
    rows.push_back(row.as_string());
    bytes += rows.back().size();
  }
  // Ten rows, the prompt on the last with the cursor: the rows above it kept while
  // they fit, the first ones empty and counted.
  CAF_REQUIRE_EQUAL(rows.size(), 10u);
  CAF_CHECK_EQUAL(rows[9], "lines.txt");
  CAF_CHECK_EQUAL(rows[8], "a longer line 9");
  CAF_CHECK_EQUAL(rows[0], "");
  CAF_CHECK(bytes <= 64u);
  CAF_REQUIRE(screen.find("omitted_bytes"));
  CAF_CHECK_EQUAL(screen.find("omitted_bytes")->as_int() + static_cast<int64_t>(bytes), 9 * 15 + 9);
}

CAF_TEST(a control channel tool waits with its question and stops with the answer) {
  temp_dir ws;
  // The example's config names its tool relative to the repository: here, absolutely.
  ws.write("greet.toml", fmt::format("[conversation.tools.greet]\ncommand = {{ program = \"{}/examples/tools/greet.sh\" }}\n",
                                     JP_SOURCE_DIR));
  auto r = cli_in(ws.path.string(), fmt::format("--config {0}/examples/greet.toml --config {1}/greet.toml "
                                                "run {0}/examples/greet_script.toml --json",
                                                JP_SOURCE_DIR, ws.path.string()));
  CAF_REQUIRE_EQUAL(r.status, 0);
  auto results = tool_results(r.stdout_text);
  CAF_REQUIRE_EQUAL(results.size(), 4u);
  auto waiting = response(results[1]).find("pending")->as_array();
  CAF_REQUIRE_EQUAL(waiting.size(), 1u);
  CAF_CHECK_EQUAL(field(waiting[0], "state"), "waiting");
  auto done = response(results[3]).find("completed")->as_array();
  CAF_REQUIRE_EQUAL(done.size(), 1u);
  CAF_CHECK_EQUAL(field(done[0], "result"), "hello, world");
}

CAF_TEST(an await on a program waiting at its terminal returns at once with its question) {
  // Only the assistant can type into bc, and it is blocked in the await: the
  // await answers now (it used to wait forever without a timeout).
  temp_dir ws;
  ws.write("script.toml", R"([[agents]]
name = "main"
  [[agents.steps]]
  [[agents.steps.calls]]
  tool = "bc"
  arguments = { action = "spawn", id = "calc" }
  [[agents.steps.calls]]
  tool = "await"
  arguments = { all = ["calc"] }
)");
  auto r = run_script(ws, "examples/interactive.toml", ws.path.string() + "/script.toml");
  CAF_REQUIRE_EQUAL(r.status, 0);
  auto results = tool_results(r.stdout_text);
  CAF_REQUIRE_EQUAL(results.size(), 2u);
  auto pending = response(results[1]).find("pending")->as_array();
  CAF_REQUIRE_EQUAL(pending.size(), 1u);
  CAF_CHECK_EQUAL(field(pending[0], "state"), "waiting");
  CAF_CHECK_EQUAL(field(*pending[0].find("question"), "id"), "input");
}

namespace {

/// `run --json` of ws's script.toml with examples/greet.toml, greet's question
/// (`name`) routed to the assistant: the script's [agents.questions] answers it.
Run run_greet_asking_assistant(temp_dir& ws) {
  ws.write("greet.toml", fmt::format("[conversation.tools.greet]\ncommand = {{ program = \"{}/examples/tools/greet.sh\" }}\n"
                                     "[conversation.tools.greet.questions.name]\ntarget = \"assistant\"\n",
                                     JP_SOURCE_DIR));
  return cli_in(ws.path.string(), fmt::format("--config {0}/examples/greet.toml --config {1}/greet.toml "
                                              "run {1}/script.toml --json",
                                              JP_SOURCE_DIR, ws.path.string()));
}

} // namespace

CAF_TEST(a question routed to the assistant is answered while the await waits) {
  // questions.name.target = "assistant": the inquiry backend (here the script's
  // [agents.questions]) answers it, and the await sees the tool finish.
  temp_dir ws;
  ws.write("script.toml", R"([[agents]]
name = "main"
  [[agents.steps]]
  [[agents.steps.calls]]
  tool = "greet"
  arguments = { action = "spawn", id = "g" }
  [[agents.steps.calls]]
  tool = "await"
  arguments = { all = ["g"] }
  [agents.questions]
  name = "assistant"
)");
  auto r = run_greet_asking_assistant(ws);
  CAF_REQUIRE_EQUAL(r.status, 0);
  auto results = tool_results(r.stdout_text);
  CAF_REQUIRE_EQUAL(results.size(), 2u);
  auto done = response(results[1]).find("completed")->as_array();
  CAF_REQUIRE_EQUAL(done.size(), 1u);
  CAF_CHECK_EQUAL(field(done[0], "result"), "hello, assistant");
}

CAF_TEST(a one-shot call failed on an answer its tool does not take ends with its tool) {
  // The call failed at once and the tool's end came after: the turn's end found it
  // still running and listed the run's own `#1` as a handle it aborted.
  temp_dir ws;
  ws.write("script.toml", R"([[agents]]
name = "main"
  [[agents.steps]]
  [[agents.steps.calls]]
  tool = "greet"
  arguments = {}
  [agents.questions]
  name = 42
)");
  auto r = run_greet_asking_assistant(ws);
  CAF_REQUIRE_EQUAL(r.status, 0);
  auto results = tool_results(r.stdout_text);
  CAF_REQUIRE_EQUAL(results.size(), 1u);
  CAF_CHECK(!results[0].find("ok")->as_bool());
  CAF_CHECK(contains(results[0].find("content")->as_string(), "is not an answer the tool takes"));
  CAF_CHECK(!contains(r.stdout_text, "\"#1\""));
  CAF_CHECK(contains(r.stdout_text, R"("handles":[])"));
}

CAF_TEST(a terminal program called without action is refused saying how to spawn it) {
  temp_dir ws;
  auto r = cli_in(ws.path.string(), fmt::format("--config {}/examples/interactive.toml call bc '{{}}'", JP_SOURCE_DIR));
  CAF_CHECK_EQUAL(r.status, 1);
  CAF_CHECK(contains(r.out, "runs on a terminal"));
  CAF_CHECK(contains(r.out, R"("action": "spawn")"));
}

CAF_TEST(a pty shell aborted at turn end leaves none of its jobs) {
  temp_dir ws;
  ws.write("jobs.toml", R"([[agents]]
name = "main"
  [[agents.steps]]
  [[agents.steps.calls]]
  tool = "bash"
  arguments = { action = "spawn", id = "sh" }
  [[agents.steps]]
  [[agents.steps.calls]]
  tool = "bash"
  arguments = { action = "apply", id = "sh", input = "sleep 1000 & sleep 1001 & echo jobs=$(jobs -p | tr '\\n' ,)\n" }
)");
  auto r = run_script(ws, "examples/interactive.toml", (ws.path / "jobs.toml").string(), {"bash"});
  CAF_REQUIRE_EQUAL(r.status, 0);
  auto results = tool_results(r.stdout_text);
  CAF_REQUIRE_EQUAL(results.size(), 2u);
  auto content = field(response(results[1]), "content");
  auto at = content.rfind("jobs=");
  CAF_REQUIRE(at != std::string::npos);
  std::vector<pid_t> jobs;
  for (size_t pos = at + 5; pos < content.size() && std::isdigit(static_cast<unsigned char>(content[pos]));) {
    size_t used = 0;
    jobs.push_back(static_cast<pid_t>(std::stol(content.substr(pos), &used)));
    pos += used + 1;
  }
  CAF_REQUIRE_EQUAL(jobs.size(), 2u);
  for (pid_t job : jobs)
    CAF_CHECK(::kill(job, 0) == -1 && errno == ESRCH);
  CAF_CHECK(contains(r.out, R"("policy":"abort")"));
}

CAF_TEST(a terminal flooded with output still takes Ctrl-C and shows its screen) {
  // `yes` on a terminal: its output never stops, and the calls that follow (here
  // Ctrl-C, then a command) must still be answered, the screen showing what it
  // shows. (It kept the only actor worker: nothing else was answered.)
  temp_dir ws;
  ws.write("flood.toml", R"([[agents]]
name = "main"
  [[agents.steps]]
  [[agents.steps.calls]]
  tool = "bash"
  arguments = { action = "spawn", id = "sh" }
  [[agents.steps]]
  [[agents.steps.calls]]
  tool = "bash"
  arguments = { action = "apply", id = "sh", input = "yes 'a flood of output'\n", wait_ms = 1000 }
  [[agents.steps]]
  [[agents.steps.calls]]
  tool = "bash"
  arguments = { action = "apply", id = "sh", input = { keys = ["C-c"] } }
  [[agents.steps]]
  [[agents.steps.calls]]
  tool = "bash"
  arguments = { action = "apply", id = "sh", input = "clear; echo done=$((6*7))\n", screen = true }
)");
  auto r = run_script(ws, "examples/interactive.toml", (ws.path / "flood.toml").string(), {"bash"});
  CAF_REQUIRE_EQUAL(r.status, 0);
  auto results = tool_results(r.stdout_text);
  CAF_REQUIRE_EQUAL(results.size(), 4u);
  CAF_CHECK(contains(field(response(results[1]), "content"), "a flood of output\na flood of output\n"));
  auto last = response(results[3]);
  CAF_CHECK(contains(field(last, "content"), "done=42"));
  auto rows = last.find("screen")->find("rows")->as_array();
  CAF_REQUIRE(rows.size() >= 2u);
  CAF_CHECK_EQUAL(rows[0].as_string(), "done=42");
}

CAF_TEST(a long line typed to a program that reads keys is whole and not told of) {
  // readline, an editor, `stty -icanon`: the program reads the keys as they come, and
  // gets the line whole; the note said the kernel cut it.
  temp_dir ws;
  ws.write("keys.toml", fmt::format(R"([[agents]]
name = "main"
  [[agents.steps]]
  [[agents.steps.calls]]
  tool = "shell"
  arguments = {{ action = "spawn", id = "k", tty = true, command = "stty -icanon; read x; echo len=${{#x}}" }}
  [[agents.steps]]
  [[agents.steps.calls]]
  tool = "shell"
  arguments = {{ action = "apply", id = "k", input = "{0}\n" }}
  [[agents.steps.calls]]
  tool = "await"
  arguments = {{ all = ["k"] }}
)",
                                    std::string(5000, 'x')));
  auto r = run_script(ws, "examples/interactive.toml", (ws.path / "keys.toml").string());
  CAF_REQUIRE_EQUAL(r.status, 0);
  CAF_CHECK(contains(r.stdout_text, "len=5000"));
  CAF_CHECK(!contains(r.stdout_text, "bytes was typed"));
}

CAF_TEST(a Ctrl-C of its own interrupts a busy terminal program at once and drops the input it has not read) {
  // Typed behind input nobody read (a full line buffer, more queued here), it waited
  // for the program to read all of that first: `sleep` ran to its end, then `echo`.
  std::string lines;
  for (int i = 0; i < 100000; ++i)
    lines += "x\\n";
  temp_dir ws;
  ws.write("busy.toml", fmt::format(R"([[agents]]
name = "main"
  [[agents.steps]]
  [[agents.steps.calls]]
  tool = "shell"
  arguments = {{ action = "spawn", id = "b", tty = true, command = "stty -echo; echo ready; sleep 60; echo finished" }}
  [[agents.steps]]
  [[agents.steps.calls]]
  tool = "shell"
  arguments = {{ action = "apply", id = "b", input = "{0}", wait_ms = 0 }}
  [[agents.steps]]
  [[agents.steps.calls]]
  tool = "shell"
  arguments = {{ action = "apply", id = "b", input = "\u0003", wait_ms = 0 }}
  [[agents.steps.calls]]
  tool = "await"
  arguments = {{ all = ["b"], timeout_secs = 30 }}
)",
                                    lines));
  auto r = run_script(ws, "examples/interactive.toml", (ws.path / "busy.toml").string());
  CAF_REQUIRE_EQUAL(r.status, 0);
  auto results = tool_results(r.stdout_text);
  CAF_REQUIRE_EQUAL(results.size(), 4u);
  CAF_CHECK(contains(field(response(results[2]), "content"), "the Ctrl-C dropped up to "));
  auto awaited = response(results[3]).dump();
  CAF_CHECK(contains(awaited, "killed by signal 2 (SIGINT)"));
  CAF_CHECK(!contains(awaited, "finished"));
}

CAF_TEST(a prompt s line redrawn after what was typed at it reads as the screen shows it) {
  // The prompt came in one look and its redraw in the next: the move to its column
  // counted from the look's start, and the text showed "typed-teREDRAWN".
  temp_dir ws;
  ws.write("redraw.sh", "printf 'PROMPT> '; read -r x; printf '\\033[A\\r\\033[8C%s\\033[K\\n' REDRAWN; "
                        "printf 'Q2> '; read -r y\n");
  ws.write("redraw.toml", R"([[agents]]
name = "main"
  [[agents.steps]]
  [[agents.steps.calls]]
  tool = "shell"
  arguments = { action = "spawn", id = "r", tty = true, command = "bash redraw.sh" }
  [[agents.steps]]
  [[agents.steps.calls]]
  tool = "shell"
  arguments = { action = "apply", id = "r", input = "typed-text\n" }
  [[agents.steps]]
  [[agents.steps.calls]]
  tool = "shell"
  arguments = { action = "abort", id = "r" }
)");
  auto r = run_script(ws, "examples/interactive.toml", (ws.path / "redraw.toml").string(), {"shell"});
  CAF_REQUIRE_EQUAL(r.status, 0);
  auto results = tool_results(r.stdout_text);
  CAF_REQUIRE_EQUAL(results.size(), 3u);
  CAF_CHECK_EQUAL(field(response(results[0]), "content"), "PROMPT> ");
  CAF_CHECK_EQUAL(field(response(results[1]), "content"), "REDRAWN\nQ2> ");
}

CAF_TEST(a lone Esc typed is answered once the program took it as the Escape key) {
  // A program reads Esc alone as the key only when nothing follows within its escape
  // delay (vim, ncurses: a second): the look must show what it did then, not the
  // screen from before. Here the delay is 0.3 s: the look's own (1.1 s) leaves a
  // loaded machine the rest to show it.
  temp_dir ws;
  ws.write("esc.toml", R"([conversation.tools.keys]
summary = "Reads a key"
command = { program = "bash", args = ["-c", "stty -echo -icanon; echo ready; IFS= read -rsn1 k; if [ \"$k\" = $'\\e' ]; then if IFS= read -rsn1 -t 0.3 more; then echo sequence; else echo escape seen; fi; fi; sleep 30"] }
io = "pty"
run = "unattended"
spawn.stateful = true
spawn.lifecycle.on_turn_end = "abort"
)");
  ws.write("script.toml", R"([[agents]]
name = "main"
  [[agents.steps]]
  [[agents.steps.calls]]
  tool = "keys"
  arguments = { action = "spawn", id = "k", wait_ms = 20000 }
  [[agents.steps]]
  [[agents.steps.calls]]
  tool = "keys"
  arguments = { action = "apply", id = "k", input = "\u001b" }
)");
  auto r = cli_in(ws.path.string(), fmt::format("--config {0}/esc.toml run {0}/script.toml --json", ws.path.string()));
  CAF_REQUIRE_EQUAL(r.status, 0);
  auto results = tool_results(r.stdout_text);
  CAF_REQUIRE_EQUAL(results.size(), 2u);
  CAF_CHECK(contains(field(response(results[0]), "content"), "ready"));
  CAF_CHECK(contains(field(response(results[1]), "content"), "escape seen"));
}

CAF_TEST(a typed line longer than a terminal line buffer is told of) {
  // The kernel keeps 4095 bytes of a line a program reads whole, and drops the rest
  // without a word: `read` got 4095 of 5000 bytes, and nothing said so.
  temp_dir ws;
  ws.write("long.toml", fmt::format(R"([[agents]]
name = "main"
  [[agents.steps]]
  [[agents.steps.calls]]
  tool = "shell"
  arguments = {{ action = "spawn", id = "r", tty = true, command = "read x; echo len=${{#x}}; read y", wait_ms = 0 }}
  [[agents.steps.calls]]
  tool = "shell"
  arguments = {{ action = "spawn", id = "e", tty = true, command = "read x; echo len=${{#x}}", wait_ms = 0 }}
  [[agents.steps]]
  [[agents.steps.calls]]
  tool = "shell"
  arguments = {{ action = "apply", id = "r", input = "{0}\n" }}
  [[agents.steps]]
  [[agents.steps.calls]]
  tool = "shell"
  arguments = {{ action = "apply", id = "e", input = "{0}\n" }}
  [[agents.steps.calls]]
  tool = "await"
  arguments = {{ all = ["e"] }}
)",
                                   std::string(5000, 'x')));
  auto r = run_script(ws, "examples/interactive.toml", (ws.path / "long.toml").string());
  CAF_REQUIRE_EQUAL(r.status, 0);
  auto results = tool_results(r.stdout_text);
  CAF_REQUIRE_EQUAL(results.size(), 5u);
  auto note = "[jp-actors: a line of 5000 bytes was typed; a program reading whole lines from its terminal gets "
              "only the first 4095";
  // Told while it runs, and by its result when it ended with the line.
  // Before what the program printed: its answer still ends with what it shows last.
  CAF_CHECK(field(response(results[2]), "content").starts_with(note));
  CAF_CHECK(contains(r.stdout_text, "len=4095"));
  bool in_result = false;
  for (size_t i = 3; i < results.size(); ++i)
    in_result = in_result || contains(results[i].dump(), "a line of 5000 bytes was typed");
  CAF_CHECK(in_result);
}
