// End to end: the jp-actors binary on the example scripts, as a user runs it.
#define CAF_SUITE cli
#include <caf/test/unit_test.hpp>

#include <array>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <fcntl.h>
#include <fstream>
#include <regex>
#include <thread>
#include <unistd.h>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <fmt/format.h>
#include <map>
#include <set>
#include <sstream>
#include <poll.h>
#include <pty.h>
#include <tuple>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "messages/json.hpp"
#include "runtime/process/controlling_terminal.hpp"
#include "cli_run.hpp"
#include "owned_children.hpp"
#include "child_wait.hpp"
#include "contains.hpp"
#include "file_contents.hpp"
#include "marked_processes.hpp"
#include "other_user.hpp"
#include "raise_limits.hpp"
#include "temp_dir.hpp"
#include "terminal_io.hpp"

using namespace jp;

namespace {

using testing::contains;
using testing::Run;
using testing::cli;
using testing::cli_in;
using testing::events;
using testing::disown_child;
using testing::own_child;
using testing::reap_child;

// The tool_result of (step, index), its content parsed when it is JSON.
struct Results {
  std::map<std::pair<int64_t, int64_t>, Json> by_call;
  const Json& at(int64_t step, int64_t index) {
    auto it = by_call.find({step, index});
    CAF_REQUIRE(it != by_call.end());
    return it->second;
  }
  Json content(int64_t step, int64_t index) {
    auto c = Json::parse(at(step, index).find("content")->as_string());
    CAF_REQUIRE(c.ok());
    return *c;
  }
};

std::vector<std::string> ids(const Json& list) {
  std::vector<std::string> out;
  for (auto& x : list.as_array())
    out.push_back(x.find("id")->as_string());
  return out;
}

using strings = std::vector<std::string>;

} // namespace

CAF_TEST(quickstart JSONL events) {
  auto r = cli("run examples/quickstart.toml --json");
  CAF_REQUIRE_EQUAL(r.status, 0);
  auto evs = events(r.stdout_text);
  Results res;
  size_t calls = 0;
  const Json* turn_end = nullptr;
  const Json* run_end = nullptr;
  std::map<int64_t, std::string> said; // each step's text, by step
  for (auto& e : evs) {
    auto kind = e.find("event")->as_string();
    if (kind == "response")
      said[e.find("step")->as_int()] = e.find("text")->as_string();
    if (kind == "tool_call")
      ++calls;
    else if (kind == "tool_result")
      res.by_call[{e.find("step")->as_int(), e.find("index")->as_int()}] = e;
    else if (kind == "turn_end")
      turn_end = &e;
    else if (kind == "run_end")
      run_end = &e;
  }
  CAF_CHECK_EQUAL(calls, res.by_call.size());
  // What the agent said is in the events too, as the transcript's "step N: TEXT".
  CAF_CHECK_EQUAL(said[1], "Build and test in parallel, then wait for both.");
  CAF_CHECK_EQUAL(said[2], "Race two searches and take the first answer.");
  // Step 1: spawn, spawn, await all -- one batch.
  CAF_CHECK_EQUAL(res.content(1, 0).dump(), R"({"id":"build","state":"running"})");
  auto all = res.content(1, 2);
  CAF_CHECK_EQUAL(ids(*all.find("completed")), strings({"build", "test"}));
  CAF_CHECK_EQUAL(all.find("completed")->as_array()[0].find("result")->as_string(), "built\n");
  CAF_CHECK(all.find("timed_out") == nullptr);
  // Step 2: the race.
  auto any = res.content(2, 2);
  CAF_CHECK_EQUAL(ids(*any.find("completed")), strings({"fast"}));
  CAF_CHECK_EQUAL(ids(*any.find("pending")), strings({"slow"}));
  // Step 3: the timeout returns the current state.
  auto to = res.content(3, 0);
  CAF_CHECK_EQUAL(to.find("timed_out")->as_bool(), true);
  CAF_CHECK_EQUAL(ids(*to.find("pending")), strings({"slow"}));
  // Step 4: abort.
  auto ab = res.content(4, 0);
  CAF_CHECK_EQUAL(ab.find("state")->as_string(), "stopped");
  CAF_CHECK(ab.find("error") != nullptr);
  // Step 5: unknown id.
  CAF_CHECK_EQUAL(res.at(5, 0).find("ok")->as_bool(), false);
  CAF_CHECK_EQUAL(res.at(5, 0).find("content")->as_string(), "Handle `typo` not found: the handles are `slow`, `fast`, `test`, `build`");
  // Step 6: one-shot, plain content.
  CAF_CHECK_EQUAL(res.at(6, 0).find("content")->as_string(), "one-shot\nLinux\n");
  // Turn end: the watcher was aborted by its policy.
  CAF_REQUIRE(turn_end != nullptr);
  CAF_CHECK_EQUAL(turn_end->find("handles")->dump(),
                  R"([{"id":"watch","tool":"shell","policy":"abort","state":"stopped"}])");
  CAF_REQUIRE(run_end != nullptr);
  CAF_CHECK_EQUAL(run_end->find("handles_left")->as_int(), 0);
  CAF_CHECK_EQUAL(run_end->find("agents")->as_int(), 1);
}

CAF_TEST(quickstart transcript is readable) {
  auto r = cli("run examples/quickstart.toml");
  CAF_CHECK_EQUAL(r.status, 0);
  CAF_CHECK(r.out.find("[main] step 1: Build and test in parallel") != std::string::npos);
  CAF_CHECK(r.out.find("ERROR") != std::string::npos); // the unknown id
  CAF_CHECK(r.out.find("turn end: `watch` (shell) was still running: aborted") != std::string::npos);
}

CAF_TEST(the shell gives git no editor to wait for unless the call names one) {
  // git commit without -m waited forever for an editor that had no terminal.
  ::setenv("GIT_EDITOR", "vim", 1); // the user's, for their terminal
  auto plain = cli(R"(call shell '{"command":"printf %s \"$GIT_EDITOR\""}')");
  ::unsetenv("GIT_EDITOR");
  CAF_CHECK_EQUAL(plain.out, "true\n"); // call ends what it prints with a newline
  auto named = cli(R"(call shell '{"command":"printf %s \"$GIT_EDITOR\"","env":{"GIT_EDITOR":"ed"}}')");
  CAF_CHECK_EQUAL(named.out, "ed\n");
}

CAF_TEST(call prints content; an error result exits non-zero with a reason) {
  auto ok = cli(R"(call shell '{"command":"echo hi"}')");
  CAF_CHECK_EQUAL(ok.status, 0);
  CAF_CHECK_EQUAL(ok.out, "hi\n");
  auto bad = cli(R"(call shell '{"command":"echo boom >&2; exit 3"}')");
  CAF_CHECK_NOT_EQUAL(bad.status, 0);
  CAF_CHECK(bad.out.find("exit status 3") != std::string::npos);
  CAF_CHECK(bad.out.find("boom") != std::string::npos);
  // A handle a call spawned ends with it, and the user is told.
  auto spawned = cli(R"(call shell '{"action":"spawn","id":"srv","command":"sleep 100","wait_ms":0}')");
  CAF_CHECK_EQUAL(spawned.status, 0);
  CAF_CHECK(contains(spawned.stdout_text, R"({"id":"srv","state":"running"})"));
  CAF_CHECK(contains(spawned.out, "jp-actors: note: handle `srv` (shell) was aborted as the call ended"));
  CAF_CHECK(!contains(ok.out, "note:"));
  // A call without action runs to its end: nothing could fetch it as a handle.
  auto long_one = cli(R"(--cfg conversation.tools.shell.background_after_secs=0.2 call shell '{"command":"sleep 0.6; echo done"}')");
  CAF_CHECK_EQUAL(long_one.status, 0);
  CAF_CHECK_EQUAL(long_one.out, "done\n");
  auto unknown = cli(R"(call nosuchtool '{}')");
  CAF_CHECK_NOT_EQUAL(unknown.status, 0);
  CAF_CHECK(unknown.out.find("Unknown tool `nosuchtool`") != std::string::npos);
  // An empty name is no tool either (a turn's call without one drives a handle by id).
  auto unnamed = cli(R"(call '' '{}')");
  CAF_CHECK_NOT_EQUAL(unnamed.status, 0);
  CAF_CHECK(contains(unnamed.out, "Unknown tool ``; available tools: "));
  CAF_CHECK(!contains(unnamed.out, "Handle"));
  auto args = cli(R"(call shell '{"cmd":"x"}')");
  CAF_CHECK_NOT_EQUAL(args.status, 0);
  CAF_CHECK(args.out.find("command") != std::string::npos);
  // A key no parameter has is named, by await and describe_tools too.
  auto await_typo = cli(R"(call await '{"al":["x"]}')");
  CAF_CHECK_NOT_EQUAL(await_typo.status, 0);
  CAF_CHECK(await_typo.out.find("unknown parameter `al` (allowed: `any`, `all`, `timeout_secs`)") != std::string::npos);
  auto describe_typo = cli(R"(call describe_tools '{"tool":["shell"]}')");
  CAF_CHECK_NOT_EQUAL(describe_typo.status, 0);
  CAF_CHECK(describe_typo.out.find("unknown parameter `tool` (allowed: `tools`)") != std::string::npos);
  // A NUL in the caller's key goes to a pipe as it came, and the message goes on past it.
  auto nul = cli(R"(call await '{"a\u0000l":["x"]}')");
  CAF_CHECK_NOT_EQUAL(nul.status, 0);
  CAF_CHECK(contains(nul.out, std::string("unknown parameter `a\0l` (allowed: `any`, `all`, `timeout_secs`)", 63)));
}

CAF_TEST(tool limits from config bound what a call runs and a tool stopped by one is told which) {
  auto files = cli(R"(--cfg runtime.tool_limits.open_files=64 call shell '{"command":"ulimit -n; ulimit -n 4096 2>/dev/null || echo held"}')");
  CAF_CHECK_EQUAL(files.status, 0);
  // (Held unless the tool has CAP_SYS_RESOURCE, which lets any process raise it.)
  CAF_CHECK_EQUAL(files.out, jp::testing::may_raise_hard_limits() ? "64\n" : "64\nheld\n");
  auto cpu = cli(R"(--cfg runtime.tool_limits.cpu_secs=1 call shell '{"command":"while :; do :; done"}')");
  CAF_CHECK_NOT_EQUAL(cpu.status, 0);
  CAF_CHECK(contains(cpu.out, "killed by signal 24 (SIGXCPU): it used up its CPU time limit"));
  // A shell whose command the limit stopped exits 128 + 24: the limit is named too.
  auto inner = cli(R"(--cfg runtime.tool_limits.cpu_secs=1 call shell '{"command":"bash -c \"while :; do :; done\"; exit $?"}')");
  CAF_CHECK_NOT_EQUAL(inner.status, 0);
  CAF_CHECK(contains(inner.out, "exit status 152 (128 + 24, SIGXCPU: a process of it may have used up its CPU time limit)"));
  auto size = cli(R"(--cfg runtime.tool_limits.file_size_mb=1 call shell '{"command":"head -c 2M /dev/zero > big; exit $?"}')");
  CAF_CHECK(contains(size.out, "exit status 153 (128 + 25, SIGXFSZ: a process of it may have written past its file "
                               "size limit)"));
  // Without the limit set, 152 is only an exit status.
  auto plain = cli(R"(call shell '{"command":"exit 152"}')");
  CAF_CHECK(contains(plain.out, "exit status 152"));
  CAF_CHECK(!contains(plain.out, "SIGXCPU"));
}

CAF_TEST(a run short of threads for its user says which limit and does not abort) {
  // CAF's actor system, then the control socket, aborted the process ("terminate
  // called without an active exception") when a thread of theirs could not start.
  // A user nobody else runs as: the task limit counts each of the user's processes
  // and threads. Not as another user: the limit would count the user's other tasks
  // (the test beside this one), which come and go.
  if (::geteuid() != 0) {
    CAF_MESSAGE("skipped: needs root, to run the CLI as a user whose tasks are its own");
    return;
  }
  testing::other_user_area area(65533);
  auto ws = area.make_dir("ws", true);
  auto state = area.make_dir("state", true);
  area.dir.write("echo.toml", "[[agents]]\nname = \"main\"\n  [[agents.steps]]\n  [[agents.steps.calls]]\n"
                              "  tool = \"shell\"\n  arguments = { command = \"echo hi\" }\n");
  ::chmod((area.dir.path / "echo.toml").c_str(), 0644);
  auto home = area.make_dir("home", true);
  auto runtime = area.make_dir("runtime", true); // the control socket's, which starts threads too
  // `run`, and `nodes ls`, whose system has the network's threads too (a node that is
  // not there: its connection is refused at once).
  for (auto* command : {"run '{}/echo.toml'", "--cfg nodes.gone.address='\"127.0.0.1:9\"' nodes ls"})
    for (int limit : {4, 6, 8, 9, 10, 11, 12}) {
      // Leaks are not looked for: LeakSanitizer's own task would not start.
      auto r = testing::run_command(fmt::format(
        "cd '{}' && {}prlimit --nproc={} env HOME='{}' XDG_CONFIG_HOME='{}/config' XDG_STATE_HOME='{}' "
        "XDG_RUNTIME_DIR='{}' ASAN_OPTIONS=detect_leaks=0 '{}' --workspace '{}' --cfg runtime.worker_threads=1 {}",
        ws, area.drop(), limit, home, home, state, runtime, area.binary(), ws,
        fmt::format(fmt::runtime(command), area.dir.path.string())));
      CAF_MESSAGE(command << " under ulimit -u " << limit << ": exit " << r.status);
      CAF_CHECK(r.status == 0 || r.status == 1);
      CAF_CHECK(!contains(r.out, "terminate called"));
      if (limit == 4) // fewer tasks than either system's threads: refused, saying so
        CAF_CHECK(contains(r.out, "ulimit -u: 4"));
      if (r.status == 1 && !contains(r.out, "ulimit -u: " + std::to_string(limit)) && !contains(r.out, "gone"))
        CAF_FAIL("exit 1 without the limit said:\n" << r.out);
    }
}

CAF_TEST(a command whose standard descriptors are closed writes no warning into its own files) {
  // `<&- >&- 2>&-`: the signal pipe took fds 0 and 2, and what went to stderr (a failed
  // call's reason) was read as a signal: exit 234 (128 + 'j'), not the call's 1.
  testing::temp_dir ws;
  auto call = [&](const std::string& command, const std::string& redirect) {
    return testing::run_command(fmt::format(
      R"(cd '{}' && XDG_STATE_HOME='{}' '{}' --workspace '{}' call shell '{{"command":"{}"}}' {})", ws.path.string(),
      testing::state_home_of(ws.path.string()), JP_CLI_BINARY, ws.path.string(), command, redirect));
  };
  CAF_CHECK_EQUAL(call("exit 3", "<&- >&- 2>&-").status, 1);
  CAF_CHECK_EQUAL(call("exit 0", "<&- >&- 2>&-").status, 0);
  auto r = call("echo hi; exit 3", "<&- 2>&-");
  CAF_CHECK_EQUAL(r.status, 1);
  CAF_CHECK(r.stdout_text.starts_with("hi\n"));
}

CAF_TEST(version prints the version and a command s help names the global options) {
  auto v = cli("--version");
  CAF_CHECK_EQUAL(v.status, 0);
  CAF_CHECK(std::regex_search(v.out, std::regex("^[0-9]+\\.[0-9]+\\.[0-9]+\n$")));
  for (auto command : {"run --help", "handles ls --help", "query --help"}) {
    auto h = cli(command);
    CAF_CHECK_EQUAL(h.status, 0);
    CAF_CHECK(contains(h.out, "--config FILE, --cfg key=value, --workspace DIR"));
  }
}

CAF_TEST(a misspelt command and options that mean nothing where given are named) {
  auto bogus = cli("bogus");
  CAF_CHECK_EQUAL(bogus.status, 2);
  CAF_CHECK(bogus.out.find("unknown command `bogus`; expected one of: run, report, call") != std::string::npos);
  auto nested = cli("conversations lss");
  CAF_CHECK_EQUAL(nested.status, 2);
  CAF_CHECK(nested.out.find("unknown command `lss` for conversations; expected one of: ls, show") != std::string::npos);
  // An option unknown, or one without the option it goes with: a usage error, 2.
  auto unknown_option = cli("run examples/quickstart.toml --bogus");
  CAF_CHECK_EQUAL(unknown_option.status, 2);
  CAF_CHECK(contains(unknown_option.out, "--bogus"));
  // A command's option before the command: where it goes.
  auto before = cli("--provider scripted query hi");
  CAF_CHECK_EQUAL(before.status, 2);
  CAF_CHECK(contains(before.out, "--provider is an option of `query`: give it after the command"));
  // The command typed is named when the option is one of its own (`run` has it too).
  auto allow_before = cli("--allow far mcp");
  CAF_CHECK_EQUAL(allow_before.status, 2);
  CAF_CHECK(contains(allow_before.out, "--allow is an option of `mcp`: give it after the command (jp-actors mcp "
                                       "--allow ...)"));
  // A nested command's option is found where it is, and named with its path.
  auto pid_before = cli("--pid 3 handles abort x");
  CAF_CHECK_EQUAL(pid_before.status, 2);
  CAF_CHECK(contains(pid_before.out, "--pid is an option of `handles abort`: give it after the command (jp-actors "
                                     "handles abort --pid ...)"));
  // After the command, it is none of that command's.
  auto json_after = cli("nodes ls --json");
  CAF_CHECK_EQUAL(json_after.status, 2);
  CAF_CHECK(contains(json_after.out, "`nodes ls` has no option --json (jp-actors nodes ls --help lists its options)"));
  CAF_CHECK(!contains(json_after.out, "option of `run`"));
  auto bad_dialect = cli("tools --schema --dialect bogus");
  CAF_CHECK_EQUAL(bad_dialect.status, 2);
  CAF_CHECK(contains(bad_dialect.out, "--dialect: unknown schema dialect \"bogus\" (expected one of openai"));
  auto dialect_alone = cli("tools --dialect gemini");
  CAF_CHECK_EQUAL(dialect_alone.status, 2);
  CAF_CHECK(contains(dialect_alone.out, "--dialect requires --schema"));
  auto unasked = cli(R"(call --allow shell shell '{"command":"true"}')");
  CAF_CHECK_NOT_EQUAL(unasked.status, 0);
  CAF_CHECK(unasked.out.find("--allow shell applies with --ask") != std::string::npos);
  auto nosuch = cli(R"(call --ask --allow nosuch shell '{"command":"true"}')");
  CAF_CHECK_NOT_EQUAL(nosuch.status, 0);
  CAF_CHECK(nosuch.out.find("--allow nosuch: no such tool (the tools: ") != std::string::npos);
  // `mcp` names the tools it serves: not those that start sub-agents.
  auto not_served = cli("mcp --allow agent </dev/null");
  CAF_CHECK_NOT_EQUAL(not_served.status, 0);
  CAF_CHECK(contains(not_served.out, "--allow agent: no such tool (the tools: "));
  CAF_CHECK(!contains(not_served.out, "foreach"));
  auto idle = cli("mcp --session-idle-secs 5 </dev/null");
  CAF_CHECK_NOT_EQUAL(idle.status, 0);
  CAF_CHECK(idle.out.find("--session-idle-secs applies with --listen") != std::string::npos);
  // An unknown option where an argument goes is named, not the argument; a prompt
  // that starts with - is told where it goes.
  auto before_script = cli("run --bogus");
  CAF_CHECK_EQUAL(before_script.status, 2);
  CAF_CHECK(contains(before_script.out, "`run` has no option --bogus (jp-actors run --help lists its options)\n"));
  auto dash_prompt = cli("query '-x is broken' </dev/null");
  CAF_CHECK_EQUAL(dash_prompt.status, 2);
  CAF_CHECK(contains(dash_prompt.out, "`query` has no option -x (jp-actors query --help lists its options); an "
                                      "argument that starts with - goes after --: jp-actors query -- '-x is broken'"));
  auto short_option = cli("run -x examples/quickstart.toml");
  CAF_CHECK_EQUAL(short_option.status, 2);
  CAF_CHECK(contains(short_option.out, "`run` has no option -x"));
  auto nobodys = cli("--bogus tools");
  CAF_CHECK_EQUAL(nobodys.status, 2);
  CAF_CHECK(contains(nobodys.out, "no command has an option --bogus (jp-actors --help lists the options before a "
                                  "command)"));
  // An empty value is refused, not taken as none given (no report written, a server
  // on stdio); a number of seconds is a number.
  auto empty_report = cli("run examples/quickstart.toml --report ''");
  CAF_CHECK_EQUAL(empty_report.status, 2);
  CAF_CHECK(contains(empty_report.out, "--report: needs a value; it was given an empty one"));
  auto empty_listen = cli("mcp --listen '' </dev/null");
  CAF_CHECK_EQUAL(empty_listen.status, 2);
  CAF_CHECK(contains(empty_listen.out, "--listen: needs a value; it was given an empty one"));
  // So is an empty script path or handle id (": cannot read", "no running handle ``").
  for (auto [command, named] :
       {std::pair{"run ''", "SCRIPT"}, std::pair{"report ''", "EVENTS"}, std::pair{"handles abort ''", "ID"}}) {
    auto empty = cli(command);
    CAF_CHECK_EQUAL(empty.status, 2);
    CAF_CHECK(contains(empty.out, std::string(named) + ": needs a value; it was given an empty one"));
  }
  auto nan_idle = cli("mcp --listen 0 --session-idle-secs nan </dev/null");
  CAF_CHECK_EQUAL(nan_idle.status, 2);
  CAF_CHECK(contains(nan_idle.out, "--session-idle-secs: nan is no number of seconds from 0.001 to 604800"));
  auto tiny_idle = cli("mcp --listen 0 --session-idle-secs 0.0005 </dev/null"); // 0 ms would be never
  CAF_CHECK_EQUAL(tiny_idle.status, 2);
  CAF_CHECK(contains(tiny_idle.out, "0.0005 is no number of seconds from 0.001 to 604800 (a week), or 0 (never)"));
  auto no_pid = cli("handles abort x --pid -5");
  CAF_CHECK_EQUAL(no_pid.status, 2);
  CAF_CHECK(contains(no_pid.out, "--pid: -5 is no process id (a number from 1 up"));
  auto provider = cli("query --provider foo hello </dev/null");
  CAF_CHECK_NOT_EQUAL(provider.status, 0);
  CAF_CHECK(provider.out.find("--provider foo: assistant.provider: expected one of") != std::string::npos);
}

CAF_TEST(shell spawn answers in one call when the command is quick and takes wait_ms) {
  // Its look ends with its exit, not with its output gone quiet a while before it.
  auto quick = cli(R"(--cfg conversation.tools.shell.settle_ms=10000 call shell '{"action":"spawn","id":"x","command":"echo hi"}')");
  CAF_CHECK_EQUAL(quick.status, 0);
  CAF_CHECK_EQUAL(quick.out, "{\"id\":\"x\",\"state\":\"stopped\",\"result\":\"hi\\n\"}\n");
  // A long one answers running once the bound (1 s) passes; the call's end aborts it.
  auto slow = cli(R"(call shell '{"action":"spawn","id":"x","command":"exec sleep 30"}')");
  CAF_CHECK_EQUAL(slow.status, 0);
  CAF_CHECK_EQUAL(slow.stdout_text, "{\"id\":\"x\",\"state\":\"running\"}\n");
  auto now = cli(R"(call shell '{"action":"spawn","id":"x","command":"exec sleep 30","wait_ms":0}')");
  CAF_CHECK_EQUAL(now.status, 0);
  CAF_CHECK_EQUAL(now.stdout_text, "{\"id\":\"x\",\"state\":\"running\"}\n");
  auto bad = cli(R"(call shell '{"action":"spawn","id":"x","command":"true","wait_ms":-5}')");
  CAF_CHECK_NOT_EQUAL(bad.status, 0);
  CAF_CHECK(bad.out.find("`wait_ms` must be") != std::string::npos);
}

CAF_TEST(arguments never reach a shell unless the tool asks for one) {
  // `echo` as a local tool: the argument with ; and $() is one argv element.
  auto r = cli(R"(--cfg 'conversation.tools.say.command={program="echo",args=["{{tool.arguments.text}}"]}' )"
               R"(--cfg 'conversation.tools.say.parameters.text={type="string",required=true}' )"
               R"x(call say '{"text":"a; echo INJECTED $(id)"}')x");
  CAF_CHECK_EQUAL(r.status, 0);
  CAF_CHECK_EQUAL(r.out, "a; echo INJECTED $(id)\n");
}

CAF_TEST(tools lists and prints schemas per dialect) {
  auto list = cli("tools");
  CAF_CHECK_EQUAL(list.status, 0);
  CAF_CHECK(list.out.find("shell") != std::string::npos);
  for (auto d : {"openai", "anthropic", "gemini"}) {
    auto s = cli(fmt::format("tools --schema --dialect {}", d));
    CAF_CHECK_EQUAL(s.status, 0);
    auto j = Json::parse(s.out);
    CAF_REQUIRE(j.ok());
    CAF_CHECK(j->is_array());
    if (std::string(d) == "gemini")
      CAF_CHECK(s.out.find("oneOf") == std::string::npos && s.out.find("anyOf") == std::string::npos);
  }
  // A long name (an MCP server's server__tool) widens the name column for every line.
  auto wide = cli(R"(--cfg 'conversation.tools.a_rather_long_tool_name.command={program="true"}' tools)");
  CAF_CHECK_EQUAL(wide.status, 0);
  std::set<size_t> kind_at;
  std::istringstream lines(wide.out);
  for (std::string line; std::getline(lines, line);)
    if (auto at = std::min(line.find(" one-shot "), line.find(" stateful ")); at != std::string::npos)
      kind_at.insert(at);
  CAF_CHECK_EQUAL(kind_at.size(), 1u);
  CAF_CHECK(contains(wide.out, "a_rather_long_tool_name one-shot"));
  // A tool whose run is "skip" is listed saying the model is not offered it.
  auto skipped = cli("--cfg conversation.tools.shell.run=skip tools");
  CAF_CHECK_EQUAL(skipped.status, 0);
  CAF_CHECK(contains(skipped.out, "builtin  (not offered: run = \"skip\") Run a shell command"));
  CAF_CHECK(!contains(list.out, "not offered"));
  // Its spawn let through, it is offered (the schema has it): the list said it was not.
  auto spawned = cli("--cfg conversation.tools.shell.run=skip --cfg conversation.tools.shell.spawn.permissions.spawn="
                     "unattended tools");
  CAF_CHECK_EQUAL(spawned.status, 0);
  CAF_CHECK(contains(spawned.out, "builtin  Run a shell command"));
  auto bad = cli("tools --schema --dialect cohere");
  CAF_CHECK_NOT_EQUAL(bad.status, 0);
  CAF_CHECK(bad.out.find("openai") != std::string::npos);
}

CAF_TEST(bad scripts and bad config name what is wrong) {
  auto missing = cli("run /nonexistent/script.toml");
  CAF_CHECK_NOT_EQUAL(missing.status, 0);
  CAF_CHECK(missing.out.find("/nonexistent/script.toml") != std::string::npos);
  auto cfg = cli("--cfg runtime.abort_grace_secs='\"soon\"' tools");
  CAF_CHECK_NOT_EQUAL(cfg.status, 0);
  CAF_CHECK(cfg.out.find("abort_grace_secs") != std::string::npos);
}

namespace {

std::string confirm_tool() {
  return fmt::format("--cfg 'conversation.tools.clean.command={{program=\"{}/examples/tools/confirm.sh\"}}' ",
                     JP_SOURCE_DIR);
}

// Dead, or a zombie nobody reaped yet: either way no longer running.
bool process_dead(pid_t pid) {
  if (::kill(pid, 0) == -1 && errno == ESRCH)
    return true;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  std::getline(stat, line);
  auto close = line.rfind(')');
  return close != std::string::npos && close + 2 < line.size() && line[close + 2] == 'Z';
}

} // namespace

CAF_TEST(a question of a one-shot tool is answered from config and the tool re-run) {
  auto yes = cli(confirm_tool() + "--cfg conversation.tools.clean.questions.proceed.answer=true call clean");
  CAF_CHECK_EQUAL(yes.status, 0);
  CAF_CHECK_EQUAL(yes.out, "deleted (pretend)\n");
  auto no = cli(confirm_tool() + "--cfg conversation.tools.clean.questions.proceed.answer=false call clean");
  CAF_CHECK_EQUAL(no.out, "kept the build directory\n");
}

CAF_TEST(a configured answer a one-shot tool does not take fails the call naming the question) {
  // Checked against the question's answer_type before the tool is run again with it.
  auto wrong = cli(confirm_tool() + R"(--cfg 'conversation.tools.clean.questions.proceed.answer="yes"' call clean)");
  CAF_CHECK_NOT_EQUAL(wrong.status, 0);
  CAF_CHECK(testing::contains(wrong.out, "clean: conversation.tools.clean.questions.proceed.answer is not an answer the tool "
                                "takes: question `proceed` (\"Delete the build directory?\") takes true or false; "
                                "got \"yes\""));
  CAF_CHECK(!testing::contains(wrong.out, "kept the build directory")); // not run again with it
  // As checked, the answer goes in JP_TOOL_ANSWERS: "true" is the boolean true.
  auto text = cli(confirm_tool() + R"(--cfg 'conversation.tools.clean.questions.proceed.answer="true"' call clean)");
  CAF_CHECK_EQUAL(text.status, 0);
  CAF_CHECK_EQUAL(text.out, "deleted (pretend)\n");
}

CAF_TEST(a handle that exits asking a question is told what answers it) {
  // confirm.sh spawned: it prints its question and exits. Configured or not, only a
  // call without `action` runs it again with an answer; the advice says which applies.
  testing::temp_dir dir;
  std::ofstream(dir.path / "spawn.toml") << R"([[agents]]
name = "main"
  [[agents.steps]]
  [[agents.steps.calls]]
  tool = "clean"
  arguments = { action = "spawn", id = "c" }
  [[agents.steps.calls]]
  tool = "await"
  arguments = { all = ["c"] }
)";
  auto spawned = confirm_tool() + "--cfg conversation.tools.clean.run=\\\"unattended\\\" "
                                  "--cfg conversation.tools.clean.spawn.stateful=true ";
  auto run = fmt::format("run {} --json", (dir.path / "spawn.toml").string());
  auto configured = cli(spawned + "--cfg conversation.tools.clean.questions.proceed.answer=true " + run);
  CAF_CHECK(testing::contains(configured.stdout_text, "(question `proceed`) and exited; a handle is not run again "
                                                      "with its configured answer (questions.proceed.answer): call "
                                                      "the tool without `action`, which runs it again with that "
                                                      "answer"));
  CAF_CHECK(!testing::contains(configured.stdout_text, "or configure questions.proceed.answer"));
  auto unconfigured = cli(spawned + run);
  CAF_CHECK(testing::contains(unconfigured.stdout_text, "(question `proceed`) and exited; call the tool without "
                                                        "`action` to have the question answered, or configure "
                                                        "questions.proceed.answer"));
}

CAF_TEST(a failed call says its first line on stderr and the rest on stdout once each) {
  auto r = cli("--cfg 'conversation.tools.x={command={program=\"sh\",args=[\"-c\",\"echo its output; echo its "
               "complaint >&2; exit 3\"]},run=\"unattended\"}' call x");
  CAF_CHECK_EQUAL(r.status, 1);
  CAF_CHECK(testing::contains(r.out, "jp-actors: x failed: exit status 3"));
  CAF_CHECK_EQUAL(r.out.find("exit status 3"), r.out.rfind("exit status 3"));
  CAF_CHECK(testing::contains(r.stdout_text, "its output"));
  // Its stderr once: in its output, not again as the error's trace.
  CAF_CHECK(testing::contains(r.stdout_text, "its complaint"));
  CAF_CHECK_EQUAL(r.stdout_text.find("its complaint"), r.stdout_text.rfind("its complaint"));
}

CAF_TEST(without a terminal and no configured answer the call fails naming the question) {
  auto r = cli(confirm_tool() + "call clean");
  CAF_CHECK_NOT_EQUAL(r.status, 0);
  CAF_CHECK(r.out.find("Delete the build directory?") != std::string::npos);
  CAF_CHECK(r.out.find("conversation.tools.clean.questions.proceed.answer") != std::string::npos);
}

CAF_TEST(a terminate signal to jp-actors kills every process group it started) {
  // Any signal whose default action ends a process: SIGUSR1 or SIGALRM (a stray
  // `kill -USR1`, an alarm) ended jp-actors at once, every tool left running.
  for (int sig : {SIGTERM, SIGUSR1, SIGALRM}) {
    char tmpl[] = "/tmp/jp-actors-sig-XXXXXX";
    std::filesystem::path dir = ::mkdtemp(tmpl);
    auto pidfile = dir / "pid";
    auto script = dir / "hang.toml";
    std::ofstream(script) << fmt::format(R"([[agents]]
name = "a"
  [[agents.steps]]
  [[agents.steps.calls]]
  tool = "shell"
  arguments = {{ action = "spawn", id = "sleeper", command = "echo $$ > {}.tmp; mv {}.tmp {}; exec sleep 1000" }}
  [[agents.steps.calls]]
  tool = "await"
  arguments = {{ all = ["sleeper"] }}
)",
                                         pidfile.string(), pidfile.string(), pidfile.string());
    pid_t cli_pid = ::fork();
    if (cli_pid == 0) {
      int devnull = ::open("/dev/null", O_RDWR);
      ::dup2(devnull, 0);
      ::dup2(devnull, 1);
      ::execl(JP_CLI_BINARY, JP_CLI_BINARY, "--workspace", dir.c_str(), "run", script.c_str(), nullptr);
      ::_exit(127);
    }
    CAF_REQUIRE(cli_pid > 0);
    own_child(cli_pid, SIGTERM);
    pid_t child = 0;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (child == 0 && std::chrono::steady_clock::now() < deadline) {
      std::ifstream in(pidfile);
      if (!(in >> child))
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    ::kill(cli_pid, sig);
    int status = 0;
    reap_child(cli_pid, &status);
    CAF_CHECK_EQUAL(WIFSIGNALED(status) ? WTERMSIG(status) : -1, sig);
    CAF_REQUIRE(child > 0);
    while (!process_dead(child) && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    CAF_CHECK(process_dead(child));
    if (!process_dead(child))
      ::kill(-child, SIGKILL);
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
}

namespace {

/// jp-actors with `args` in workspace `ws`, in its own group (no signal meant for the
/// runner reaches it), stdin /dev/null, stdout to `out` (none: /dev/null) and, with
/// `with_stderr`, stderr too; owned (ended should a check end the runner).
pid_t start_cli_with(const std::filesystem::path& ws, const std::vector<std::string>& cli_args,
                     const std::filesystem::path& out, bool with_stderr = true) {
  pid_t pid = ::fork();
  if (pid == 0) {
    ::setpgid(0, 0);
    int devnull = ::open("/dev/null", O_RDWR);
    int fd = out.empty() ? devnull : ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    ::dup2(devnull, 0);
    ::dup2(fd, 1);
    if (with_stderr)
      ::dup2(fd, 2);
    std::vector<std::string> args = {JP_CLI_BINARY, "--workspace", ws.string()};
    args.insert(args.end(), cli_args.begin(), cli_args.end());
    std::vector<char*> argv;
    for (auto& a : args)
      argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(JP_CLI_BINARY, argv.data());
    ::_exit(127);
  }
  if (pid > 0)
    own_child(pid, SIGTERM);
  return pid;
}

/// `jp-actors run SCRIPT FLAGS...` so (stderr left as it is).
pid_t start_run(const std::filesystem::path& ws, const std::filesystem::path& script,
                std::vector<std::string> flags = {}, const std::filesystem::path& out = {}) {
  std::vector<std::string> args = {"run", script.string()};
  args.insert(args.end(), flags.begin(), flags.end()); // run's own (--json) and global ones
  return start_cli_with(ws, args, out, false);
}

/// The pid in `file` once it is there (bounded); 0 if it never came.
pid_t pid_from(const std::filesystem::path& file) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (std::chrono::steady_clock::now() < deadline) {
    std::ifstream in(file);
    pid_t p = 0;
    if (in >> p && p > 0)
      return p;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return 0;
}

/// A script whose one handle runs `command` (in TOML's literal quotes) until the await
/// of the same batch is done.
void write_held_script(const std::filesystem::path& file, const std::string& command) {
  std::ofstream(file) << "[[agents]]\nname = \"a\"\n  [[agents.steps]]\n  [[agents.steps.calls]]\n"
                         "  tool = \"shell\"\n  arguments = { action = \"spawn\", id = \"t\", wait_ms = 0, "
                         "command = '''" << command << "''' }\n  [[agents.steps.calls]]\n  tool = \"await\"\n"
                         "  arguments = { all = [\"t\"] }\n";
}

} // namespace

CAF_TEST(a terminate signal gives the tools a TERM and the grace before a KILL) {
  testing::temp_dir ws;
  auto dir = ws.path.string();
  // It cleans up on TERM (writes a marker), then exits.
  write_held_script(ws.path / "trap.toml",
                    fmt::format("trap 'echo cleaned > {0}/marker.tmp; mv {0}/marker.tmp {0}/marker; exit 0' TERM; "
                                "sleep 1000 & echo $! > {0}/child.tmp; mv {0}/child.tmp {0}/child; "
                                "echo $$ > {0}/pid.tmp; mv {0}/pid.tmp {0}/pid; wait",
                                dir));
  // A grace no loaded machine runs out of: the run ends once the tool has exited.
  pid_t cli_pid = start_run(ws.path, ws.path / "trap.toml", {"--cfg", "runtime.abort_grace_secs=60"});
  CAF_REQUIRE(cli_pid > 0);
  pid_t tool = pid_from(ws.path / "pid");
  pid_t child = pid_from(ws.path / "child");
  CAF_REQUIRE(tool > 0 && child > 0);
  ::kill(cli_pid, SIGTERM);
  int status = 0;
  reap_child(cli_pid, &status);
  CAF_CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM);
  CAF_CHECK(ws.has("marker")); // it had its grace
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  for (auto p : {tool, child}) {
    while (!process_dead(p) && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    CAF_CHECK(process_dead(p));
    ::kill(p, SIGKILL); // whatever the checks said, nothing outlives the test
  }
}

CAF_TEST(ctrl-backslash kills the tools at once and jp-actors dies of SIGQUIT) {
  // By SIGQUIT's default action jp-actors died and left its tools running.
  testing::temp_dir ws;
  auto dir = ws.path.string();
  // It notes each TERM it gets and runs on (its sleeps die of theirs).
  write_held_script(ws.path / "held.toml",
                    fmt::format("trap 'echo > {0}/term' TERM; echo $$ > {0}/pid.tmp; mv {0}/pid.tmp {0}/pid; "
                                "while :; do sleep 1; done",
                                dir));
  // A grace far past the bounded waits below: only no grace at all passes. No core
  // dump of the child in the runner's directory (the limit is inherited, then put back).
  std::vector<std::string> long_grace = {"--cfg", "runtime.abort_grace_secs=60"};
  rlimit core{};
  ::getrlimit(RLIMIT_CORE, &core);
  auto saved = core;
  core.rlim_cur = 0;
  ::setrlimit(RLIMIT_CORE, &core);
  // At once, and within a terminate signal's grace too: it was taken as a second
  // signal there, which still waited up to 5 s to write, and died of the first.
  for (bool in_grace : {false, true}) {
    std::filesystem::remove(ws.path / "pid");
    std::filesystem::remove(ws.path / "term");
    pid_t cli_pid = start_run(ws.path, ws.path / "held.toml", long_grace);
    CAF_REQUIRE(cli_pid > 0);
    pid_t tool = pid_from(ws.path / "pid");
    CAF_REQUIRE(tool > 0);
    if (in_grace) {
      ::kill(cli_pid, SIGTERM);
      CAF_REQUIRE(testing::wait_for([&] { return ws.has("term"); })); // its grace has begun
    }
    ::kill(cli_pid, SIGQUIT);
    CAF_CHECK_EQUAL(testing::wait_exit(cli_pid), 128 + SIGQUIT); // bounded: 20 s
    CAF_CHECK(testing::wait_for([&] { return process_dead(tool); }));
    testing::end_cli(cli_pid);
    ::kill(-tool, SIGKILL); // whatever the checks said, nothing outlives the test
  }
  // Nothing written: the script ran on while its tools died (its next step was tried,
  // its end told) and its --report was written as of a whole run.
  std::filesystem::remove(ws.path / "pid");
  {
    std::ofstream(ws.path / "held.toml", std::ios::app) << "  [[agents.steps]]\n  [[agents.steps.calls]]\n"
                                                            "  tool = \"shell\"\n"
                                                            "  arguments = { command = \"echo next-step\" }\n";
  }
  auto out = ws.path / "out.txt";
  auto report = ws.path / "report.json";
  std::vector<std::string> reporting = {"--report", report.string()};
  pid_t cli_pid = start_run(ws.path, ws.path / "held.toml", reporting, out);
  CAF_REQUIRE(cli_pid > 0);
  pid_t tool = pid_from(ws.path / "pid");
  CAF_REQUIRE(tool > 0);
  ::kill(cli_pid, SIGQUIT);
  CAF_CHECK_EQUAL(testing::wait_exit(cli_pid), 128 + SIGQUIT);
  testing::end_cli(cli_pid);
  ::kill(-tool, SIGKILL);
  CAF_CHECK(!std::filesystem::exists(report));
  auto said = testing::contents(out.string());
  CAF_CHECK(!contains(said, "next-step"));
  CAF_CHECK(!contains(said, "turn end"));
  CAF_CHECK(!contains(said, "\ndone:"));
  ::setrlimit(RLIMIT_CORE, &saved);
}

namespace {

/// The signals `pid`'s /proc status lists under `field` (SigIgn, SigCgt).
std::set<int> signal_set(pid_t pid, const std::string& field) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  std::set<int> out;
  while (std::getline(in, line))
    if (line.starts_with(field + ":")) {
      auto mask = std::stoull(line.substr(field.size() + 1), nullptr, 16);
      for (int sig = 1; sig <= 64; ++sig)
        if (mask & (1ull << (sig - 1)))
          out.insert(sig);
    }
  return out;
}

} // namespace

CAF_TEST(a hangup that jp-actors was started ignoring stays ignored as under nohup) {
  testing::temp_dir ws;
  auto dir = ws.path.string();
  write_held_script(ws.path / "held.toml",
                    fmt::format("echo $$ > {0}/pid.tmp; mv {0}/pid.tmp {0}/pid; exec sleep 1000", dir));
  auto previous = std::signal(SIGHUP, SIG_IGN); // what nohup does, inherited by the fork
  pid_t cli_pid = start_run(ws.path, ws.path / "held.toml");
  std::signal(SIGHUP, previous);
  CAF_REQUIRE(cli_pid > 0);
  pid_t tool = pid_from(ws.path / "pid"); // the handlers are in place by the first spawn
  CAF_REQUIRE(tool > 0);
  auto ignored = signal_set(cli_pid, "SigIgn");
  auto caught = signal_set(cli_pid, "SigCgt");
  CAF_CHECK(ignored.contains(SIGHUP)); // it was caught: a closed terminal ended a nohup'd run
  for (int sig : {SIGINT, SIGTERM, SIGQUIT})
    CAF_CHECK(caught.contains(sig));
  ::kill(cli_pid, SIGTERM);
  int status = 0;
  reap_child(cli_pid, &status);
  CAF_CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM);
  CAF_CHECK(testing::wait_for([&] { return process_dead(tool); }));
  ::kill(-tool, SIGKILL);
}

CAF_TEST(a call ended by ctrl-c says it was interrupted not only that its tool got SIGTERM) {
  testing::temp_dir ws;
  auto dir = ws.path.string();
  auto call = Json::object().set("command", fmt::format("echo $$ > {0}/pid.tmp; mv {0}/pid.tmp {0}/pid; exec sleep 600",
                                                        dir));
  pid_t cli_pid = start_cli_with(ws.path, {"call", "shell", call.dump()}, ws.path / "said");
  CAF_REQUIRE(cli_pid > 0);
  pid_t tool = pid_from(ws.path / "pid");
  CAF_REQUIRE(tool > 0);
  ::kill(cli_pid, SIGINT);
  CAF_CHECK_EQUAL(testing::wait_exit(cli_pid), 128 + SIGINT);
  testing::end_cli(cli_pid);
  std::ifstream said_file(ws.path / "said");
  std::string said((std::istreambuf_iterator<char>(said_file)), std::istreambuf_iterator<char>());
  CAF_CHECK(testing::contains(said, "jp-actors: shell was interrupted (Ctrl-C): "));
  CAF_CHECK(process_dead(tool));
  ::kill(tool, SIGKILL);
}

CAF_TEST(ctrl-c while tools waits for an MCP server to start stops the server) {
  // `tools` starts each server to ask it for its tools: one that never answers is
  // stopped by Ctrl-C as a call's tool is, not left running with no owner.
  testing::temp_dir ws;
  auto dir = ws.path.string();
  ws.write("servers.toml", fmt::format("[mcp.servers.mute]\n"
                                       "command = [\"sh\", \"-c\", \"echo $$ > {0}/pid.tmp; mv {0}/pid.tmp {0}/pid; "
                                       "exec sleep 600\"]\n"
                                       "start_timeout_secs = 600\n",
                                       dir));
  pid_t cli_pid = start_cli_with(ws.path, {"--config", (ws.path / "servers.toml").string(), "tools"}, ws.path / "said");
  CAF_REQUIRE(cli_pid > 0);
  pid_t server = pid_from(ws.path / "pid");
  if (server > 0)
    own_child(-server, SIGKILL); // killed here should a check end the test
  CAF_REQUIRE(server > 0);
  ::kill(cli_pid, SIGINT);
  CAF_CHECK_EQUAL(testing::wait_exit(cli_pid), 128 + SIGINT);
  testing::end_cli(cli_pid);
  bool gone = ::kill(-server, 0) == -1 && errno == ESRCH;
  CAF_CHECK(gone);
  if (!gone)
    ::kill(-server, SIGKILL);
  disown_child(-server);
  // Its start was stopped: not blamed on the TERM that jp-actors sent it.
  CAF_CHECK(contains(ws.read("said"), "MCP server `mute`: its start was stopped, as jp-actors is ending"));
  CAF_CHECK(!contains(ws.read("said"), "SIGTERM"));
}

CAF_TEST(a second terminate signal cuts the grace short) {
  // Ctrl-C's as well: its first stops the script's turn, which then waits for the tool.
  for (int sig : {SIGTERM, SIGINT}) {
    testing::temp_dir ws;
    auto dir = ws.path.string();
    // It notes TERM and runs on; the grace is far longer than the test may take.
    write_held_script(ws.path / "deaf.toml",
                      fmt::format("trap 'echo > {0}/termed' TERM; echo $$ > {0}/pid.tmp; mv {0}/pid.tmp {0}/pid; "
                                  "while :; do sleep 0.05; done",
                                  dir));
    pid_t cli_pid = start_run(ws.path, ws.path / "deaf.toml",
                              {"--json", "--report", (ws.path / "r.json").string(), "--cfg",
                               "runtime.abort_grace_secs=3600"},
                              ws.path / "out");
    CAF_REQUIRE(cli_pid > 0);
    pid_t tool = pid_from(ws.path / "pid");
    CAF_REQUIRE(tool > 0);
    ::kill(cli_pid, sig);
    // The second only once the first was acted on (two pending signals are one).
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (!ws.has("termed") && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    CAF_CHECK(ws.has("termed"));
    ::kill(cli_pid, sig);
    // Within 20 s, not the hour of grace; else it and its tool are killed here.
    CAF_CHECK_EQUAL(testing::wait_exit(cli_pid), 128 + sig);
    if (cli_pid > 0) {
      ::kill(cli_pid, SIGKILL);
      reap_child(cli_pid);
    }
    while (!process_dead(tool) && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    CAF_CHECK(process_dead(tool));
    ::kill(-tool, SIGKILL);
    // Its tool killed at once, the run still ended its turn and wrote what it writes.
    auto out = ws.read("out");
    CAF_CHECK(contains(out, R"("event":"turn_end")"));
    CAF_CHECK(contains(out, R"("interrupted":true)"));
    auto report = Json::parse(ws.read("r.json"));
    CAF_CHECK(report.ok() && report->is_object());
  }
}

CAF_TEST(a script given as a named pipe is read once its writer comes) {
  // mkfifo, then a program writes the script: read before, it would be empty.
  testing::temp_dir ws;
  auto fifo = ws.path / "script.toml";
  CAF_REQUIRE_EQUAL(::mkfifo(fifo.c_str(), 0600), 0);
  pid_t cli_pid = start_run(ws.path, fifo, {"--json"}, ws.path / "out");
  CAF_REQUIRE(cli_pid > 0);
  // Opened for writing once the run has it open for reading (ENXIO until then).
  int fd = -1;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while ((fd = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC)) < 0 && errno == ENXIO &&
         std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  CAF_REQUIRE(fd >= 0);
  std::string script = "[[agents]]\nname = \"a\"\n  [[agents.steps]]\n  [[agents.steps.calls]]\n"
                       "  tool = \"shell\"\n  arguments = { command = \"echo fifo-ran\" }\n";
  CAF_CHECK_EQUAL(::write(fd, script.data(), script.size()), static_cast<ssize_t>(script.size()));
  ::close(fd);
  CAF_CHECK_EQUAL(testing::wait_exit(cli_pid), 0);
  testing::end_cli(cli_pid);
  CAF_CHECK(contains(ws.read("out"), "fifo-ran"));
}

CAF_TEST(ctrl-c stops a script at once and its turn ends interrupted) {
  for (bool json : {true, false}) {
    CAF_MESSAGE((json ? "--json" : "transcript"));
    testing::temp_dir ws;
    // Step 1's tool says it runs (its pid, its group's id) and sleeps; step 2 must
    // never be tried.
    auto ready = ws.path / "ready";
    CAF_REQUIRE_EQUAL(::mkfifo(ready.c_str(), 0600), 0);
    ws.write("steps.toml", fmt::format(R"([[agents]]
name = "a"
  [[agents.steps]]
  [[agents.steps.calls]]
  tool = "shell"
  arguments = {{ action = "spawn", id = "t", wait_ms = 0, command = "echo $$ > {}; exec sleep 1000" }}
  [[agents.steps.calls]]
  tool = "shell"
  arguments = {{ action = "spawn", id = "d", wait_ms = 0, command = "echo $$ > {}.tmp; mv {}.tmp {}; exec sleep 1000" }}
  [[agents.steps.calls]]
  tool = "await"
  arguments = {{ all = ["t"] }}
  [[agents.steps]]
  text = "Later."
  [[agents.steps.calls]]
  tool = "shell"
  arguments = {{ command = "echo later" }}
)",
                                       ready.string(), (ws.path / "d").string(), (ws.path / "d").string(),
                                       (ws.path / "d").string()));
    // Open before the tool writes (its open waits for a reader); read with a bound.
    int fifo = ::open(ready.c_str(), O_RDONLY | O_NONBLOCK);
    CAF_REQUIRE(fifo >= 0);
    auto flags = json ? std::vector<std::string>{"--json"} : std::vector<std::string>{};
    pid_t cli_pid = start_run(ws.path, ws.path / "steps.toml", flags, ws.path / "out");
    CAF_REQUIRE(cli_pid > 0);
    std::string line;
    bool up = testing::read_until(fifo, line, "\n");
    ::close(fifo);
    pid_t group = up ? std::atoi(line.c_str()) : 0;
    if (group > 0)
      own_child(-group, SIGKILL); // killed here should a check end the runner
    CAF_REQUIRE(group > 0);
    pid_t other = pid_from(ws.path / "d");
    if (other > 0)
      own_child(-other, SIGKILL);
    CAF_REQUIRE(other > 0);
    ::kill(cli_pid, SIGINT);
    CAF_CHECK_EQUAL(testing::wait_exit(cli_pid), 128 + SIGINT);
    testing::end_cli(cli_pid); // should it still run
    // Nothing of the tool's is left: its group was reaped.
    bool gone = ::kill(-group, 0) == -1 && errno == ESRCH;
    CAF_CHECK(gone);
    if (!gone)
      ::kill(-group, SIGKILL);
    disown_child(-group);
    std::ifstream written(ws.path / "out");
    std::string out((std::istreambuf_iterator<char>(written)), std::istreambuf_iterator<char>());
    CAF_CHECK(out.find("is ending") == std::string::npos);
    CAF_CHECK(out.find("later") == std::string::npos && out.find("Later") == std::string::npos);
    // The shutdown's SIGTERM to every group, before a handle's own abort: an abort
    // too, never the tool's own failure ("failed: killed by signal 15").
    for (auto at = out.find("killed by signal"); at != std::string::npos; at = out.find("killed by signal", at + 1))
      CAF_CHECK(out.rfind("aborted (", at) != std::string::npos && out.rfind("aborted (", at) + 9 == at);
    bool other_gone = ::kill(-other, 0) == -1 && errno == ESRCH;
    CAF_CHECK(other_gone);
    if (!other_gone)
      ::kill(-other, SIGKILL);
    disown_child(-other);
    if (!json) {
      if (out.find("[a] turn end: interrupted\n") == std::string::npos)
        CAF_FAIL("no interrupted turn end in:\n" << out);
      continue;
    }
    const Json* turn_end = nullptr;
    auto evs = events(out);
    for (auto& e : evs) {
      if (e.find("event")->as_string() == "tool_call")
        CAF_CHECK_EQUAL(e.find("step")->as_int(), 1);
      if (e.find("event")->as_string() == "turn_end")
        turn_end = &e;
    }
    if (!turn_end)
      CAF_FAIL("no turn_end in:\n" << out);
    auto* interrupted = turn_end->find("interrupted");
    CAF_CHECK(interrupted && interrupted->as_bool());
  }
}

CAF_TEST(after jp-actors is killed the next start kills every process it left) {
  testing::temp_dir sweep;
  auto dir = sweep.path;
  // Three handles, two with grandchildren; each process writes its pid to a file.
  auto spawn = [&](const std::string& id, int grandchildren) {
    std::string cmd;
    for (int i = 0; i < grandchildren; ++i)
      cmd += fmt::format("sleep 300 & echo $! > {}/{}.g{}; ", dir.string(), id, i);
    // Builtins only (no `mv`): the sweep counts exactly these processes, and an
    // external command still exiting after its work would be one more.
    cmd += fmt::format("echo $$ > {0}/{1}.pid; {2}", dir.string(), id, grandchildren > 0 ? "wait" : "exec sleep 300");
    return fmt::format("  [[agents.steps.calls]]\n  tool = \"shell\"\n"
                       "  arguments = {{ action = \"spawn\", id = \"{}\", command = \"{}\" }}\n",
                       id, cmd);
  };
  std::ofstream(dir / "hold.toml") << "[[agents]]\nname = \"a\"\n  [[agents.steps]]\n" << spawn("h1", 2)
                                   << spawn("h2", 1) << spawn("h3", 0)
                                   << "  [[agents.steps.calls]]\n  tool = \"await\"\n"
                                      "  arguments = { all = [\"h1\", \"h2\", \"h3\"] }\n";
  pid_t cli_pid = ::fork();
  if (cli_pid == 0) {
    int devnull = ::open("/dev/null", O_RDWR);
    ::dup2(devnull, 0);
    ::dup2(devnull, 1);
    ::setenv("XDG_STATE_HOME", testing::state_home_of(dir.string()).c_str(), 1); // as cli_in's next run
    ::execl(JP_CLI_BINARY, JP_CLI_BINARY, "--workspace", dir.c_str(), "run", (dir / "hold.toml").c_str(),
            nullptr);
    ::_exit(127);
  }
  CAF_REQUIRE(cli_pid > 0);
  own_child(cli_pid, SIGTERM);
  // Every process's pid, once the three handles are up (bounded wait).
  std::vector<pid_t> pids;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  const std::vector<std::string> files = {"h1.pid", "h1.g0", "h1.g1", "h2.pid", "h2.g0", "h3.pid"};
  while (pids.size() < files.size() && std::chrono::steady_clock::now() < deadline) {
    pids.clear();
    for (auto& f : files) {
      std::ifstream in(dir / f);
      pid_t p = 0;
      if (in >> p && p > 0)
        pids.push_back(p);
    }
    if (pids.size() < files.size())
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ::kill(cli_pid, SIGKILL); // no chance to clean up
  reap_child(cli_pid);
  for (auto p : pids) // orphans now: killed here if a check below ends the runner
    own_child(p, SIGKILL);
  CAF_REQUIRE_EQUAL(pids.size(), files.size());
  for (auto p : pids)
    CAF_CHECK(!process_dead(p)); // orphaned, still running
  auto next = cli_in(dir.string(), "tools");
  CAF_CHECK_EQUAL(next.status, 0);
  CAF_CHECK(next.out.find(fmt::format("cleaned up after jp-actors (pid {})", cli_pid)) != std::string::npos);
  // All six killed: in their recorded groups, or -- when the kill came before the
  // record had a group's line, as under load -- by the owner's mark on each process.
  std::smatch m;
  static const std::regex killed(R"(killed \d+ process groups? \((\d+) process(?:es)?\)(?: and (\d+) process(?:es)? of its tools outside them)?)");
  if (!std::regex_search(next.out, m, killed))
    CAF_FAIL("the next start said:\n" << next.out);
  CAF_CHECK_EQUAL(std::stoi(m[1]) + (m[2].matched ? std::stoi(m[2]) : 0), 6);
  for (auto p : pids) {
    while (!process_dead(p) && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    CAF_CHECK(process_dead(p));
  }
  for (auto p : pids) { // whatever the checks said, nothing outlives the test
    ::kill(p, SIGKILL);
    disown_child(p);
  }
}

/// The tool_result events of a run, by tool name (each tool called once).
struct ToolResults {
  std::map<std::string, Json> by_tool;
  explicit ToolResults(const std::string& out) {
    for (auto& e : events(out))
      if (auto* ev = e.find("event"); ev && ev->as_string() == "tool_result")
        by_tool[e.find("tool")->as_string()] = e;
  }
  bool ok(const std::string& tool) {
    CAF_REQUIRE(by_tool.count(tool) == 1);
    return by_tool[tool].find("ok")->as_bool();
  }
  std::string content(const std::string& tool) {
    CAF_REQUIRE(by_tool.count(tool) == 1);
    return by_tool[tool].find("content")->as_string();
  }
};

std::string permissions_run(const std::string& flags) {
  return fmt::format("--config {0}/tests/scripts/permissions_config.toml run "
                     "{0}/tests/scripts/permissions.toml --json {1}",
                     JP_SOURCE_DIR, flags);
}

CAF_TEST(with ask and no terminal asked-for tools are refused and nothing runs) {
  testing::temp_dir ws;
  auto r = cli_in(ws.path.string(), permissions_run("--ask"));
  CAF_REQUIRE_EQUAL(r.status, 0);
  ToolResults res(r.stdout_text);
  CAF_CHECK(!res.ok("marker"));
  CAF_CHECK(res.content("marker").find("Allow it with --allow marker") != std::string::npos);
  CAF_CHECK(!res.ok("never"));
  CAF_CHECK(res.content("never").find("run = \"skip\"") != std::string::npos);
  // A refused spawn releases its reservation: the await of the same batch ends.
  CAF_CHECK(!res.ok("holder"));
  CAF_CHECK(res.content("await").find("\"state\":\"stopped\"") != std::string::npos);
  CAF_CHECK(!ws.has("marked"));
  CAF_CHECK(!ws.has("never"));
  CAF_CHECK(!ws.has("held"));
}

CAF_TEST(allowed tools run; without ask a script is the users own) {
  testing::temp_dir allowed;
  auto r = cli_in(allowed.path.string(), permissions_run("--ask --allow marker --allow holder"));
  CAF_REQUIRE_EQUAL(r.status, 0);
  ToolResults res(r.stdout_text);
  CAF_CHECK(res.ok("marker"));
  CAF_CHECK(res.ok("holder"));
  CAF_CHECK(!res.ok("never")); // skip is not lifted by --allow
  CAF_CHECK(allowed.has("marked"));
  CAF_CHECK(allowed.has("held"));
  CAF_CHECK(!allowed.has("never"));
  testing::temp_dir trusted;
  r = cli_in(trusted.path.string(), permissions_run(""));
  CAF_REQUIRE_EQUAL(r.status, 0);
  CAF_CHECK(trusted.has("marked"));
  CAF_CHECK(trusted.has("never"));
}

CAF_TEST(each allow takes one tool and leaves the positionals after it alone) {
  auto asky = std::string(R"(--cfg 'conversation.tools.asky.command={program="echo",args=["ran"]}' )"
                          R"(--cfg conversation.tools.asky.run=ask )");
  auto r = cli(asky + R"(call --ask --allow asky asky '{}')");
  CAF_CHECK_EQUAL(r.status, 0);
  CAF_CHECK_EQUAL(r.out, "ran\n");
  // Repeated, each one names a tool; the tool and its arguments still follow.
  r = cli(asky + R"(call --ask --allow shell --allow asky asky '{}')");
  CAF_CHECK_EQUAL(r.status, 0);
  CAF_CHECK_EQUAL(r.out, "ran\n");
  // Without --allow the tool is asked for and refused (no terminal): the flag mattered.
  r = cli(asky + R"(call --ask asky '{}')");
  CAF_CHECK_NOT_EQUAL(r.status, 0);
  CAF_CHECK(r.out.find("--allow asky") != std::string::npos);
}

CAF_TEST(turn end applies the strategy of each tool - abort or await or inquire) {
  auto r = cli(fmt::format("--config {0}/tests/scripts/turn_end_config.toml run {0}/tests/scripts/turn_end.toml --json",
                           JP_SOURCE_DIR));
  CAF_REQUIRE_EQUAL(r.status, 0);
  Json turn_end, run_end, waited;
  for (auto& e : events(r.stdout_text)) {
    auto kind = e.find("event")->as_string();
    if (kind == "turn_end")
      turn_end = e;
    else if (kind == "run_end")
      run_end = e;
    else if (kind == "tool_result" && e.find("tool")->as_string() == "await")
      waited = e;
  }
  // The wait the inquiry chose is told as an await, taking the time the turn's end
  // took (the report's tools ms), not none.
  CAF_REQUIRE(waited.is_object());
  CAF_CHECK_GREATER(waited.find("elapsed_ms")->as_number(), 0.0);
  CAF_REQUIRE(turn_end.is_object());
  CAF_CHECK_EQUAL(turn_end.find("handles")->dump(),
                  R"([{"id":"a1","tool":"asked","policy":"inquire:wait","state":"stopped","result":"waited\n"},)"
                  R"({"id":"a2","tool":"asked","policy":"inquire:abort","state":"stopped"},)"
                  R"({"id":"j","tool":"job","policy":"await","state":"stopped","result":"finished\n"},)"
                  R"({"id":"s","tool":"stubborn","policy":"await","state":"stopped",)"
                  R"x("error":"aborted as the turn ended: still running after its await_timeout_secs (0.3 s) (aborted (killed by signal 15 (SIGTERM)))"},)x"
                  R"({"id":"sh","tool":"shell","policy":"abort","state":"stopped"}])");
  CAF_REQUIRE(run_end.is_object());
  CAF_CHECK_EQUAL(run_end.find("handles_left")->as_int(), 0);
}

CAF_TEST(a one-shot shell call still running after background_after_secs goes on as a handle) {
  // A server run without `action` held the turn up for good.
  testing::temp_dir scripts;
  testing::marked_sleep sleeper(scripts.path);
  std::ofstream(scripts.path / "bg.toml") << fmt::format(R"([[agents]]
name = "main"
  [[agents.steps]]
  [[agents.steps.calls]]
  tool = "shell"
  arguments = {{ command = "echo serving; exec {} 300" }}
  [[agents.steps]]
  [[agents.steps.calls]]
  tool = "shell"
  arguments = {{ action = "fetch", id = "shell-1" }}
)", sleeper.program.string());
  // With news of new output on: none of a one-shot run's (its id is no handle's).
  // 3 s: the run has printed `serving` by then, on a loaded machine too.
  auto r = cli(fmt::format("--cfg conversation.tools.shell.background_after_secs=3 "
                           "--cfg conversation.tools.shell.spawn.notifications.on_content=true run {} --json",
                           (scripts.path / "bg.toml").string()));
  CAF_CHECK_EQUAL(r.status, 0);
  auto results = results_of(r);
  Json turn_end;
  for (auto& e : events(r.stdout_text))
    if (e.find("event")->as_string() == "turn_end")
      turn_end = e;
  CAF_REQUIRE_EQUAL(results.size(), 2u);
  auto first = Json::parse(testing::content(results, "main", 1, 0));
  CAF_REQUIRE(first.ok());
  CAF_CHECK_EQUAL(first->string_at("id"), "shell-1");
  CAF_CHECK_EQUAL(first->string_at("state"), "running");
  CAF_CHECK(testing::contains(first->string_at("content"), "serving\n[jp-actors: still running after 3 s, so it goes on in "
                                                  "the background as handle `shell-1`"));
  // A handle like any: fetched, and aborted at the turn's end by the shell's policy.
  CAF_CHECK(results.at({"main", 2, 0}).find("ok")->as_bool());
  CAF_CHECK(testing::contains(testing::content(results, "main", 2, 0), R"("state":"running")"));
  CAF_REQUIRE(turn_end.is_object());
  CAF_CHECK(testing::contains(turn_end.find("handles")->dump(), R"("id":"shell-1","tool":"shell","policy":"abort")"));
  CAF_CHECK(!testing::contains(r.stdout_text, "#call"));
  CAF_CHECK_EQUAL(sleeper.wait_none(), 0u);
}

CAF_TEST(a shell spawn with tty runs on a terminal of its own whose prompts are typed into) {
  // sudo's and ssh's password prompts read a terminal; a pipe has none.
  testing::temp_dir scripts;
  std::ofstream(scripts.path / "tty.toml") << R"([[agents]]
name = "main"
  [[agents.steps]]
  [[agents.steps.calls]]
  tool = "shell"
  arguments = { action = "spawn", id = "t", tty = true, wait_ms = 20000, command = "[ -t 0 ] && echo on-a-tty; read -p 'Password: ' -s pw; echo; echo got ${#pw} chars" }
  [[agents.steps]]
  [[agents.steps.calls]]
  tool = "shell"
  arguments = { action = "apply", id = "t", input = "secret\n", wait_ms = 20000 }
  [[agents.steps]]
  [[agents.steps.calls]]
  tool = "shell"
  arguments = { tty = true, command = "echo hi" }
)";
  auto r = cli(fmt::format("run {} --json", (scripts.path / "tty.toml").string()));
  auto results = results_of(r);
  CAF_REQUIRE_EQUAL(results.size(), 3u);
  auto spawned = Json::parse(testing::content(results, "main", 1, 0));
  CAF_REQUIRE(spawned.ok());
  CAF_CHECK_EQUAL(spawned->string_at("content"), "on-a-tty\nPassword: ");
  CAF_CHECK(testing::contains(testing::content(results, "main", 2, 0), "got 6 chars"));
  // Without a handle nothing could type into it: refused before anyone is asked.
  CAF_CHECK(!results.at({"main", 3, 0}).find("ok")->as_bool());
  CAF_CHECK(testing::contains(testing::content(results, "main", 3, 0), "`shell`: `tty` is for a handle: call it "
                                                                       "with {\"action\": \"spawn\""));
  // The shell's configured size is its terminal's.
  std::ofstream(scripts.path / "size.toml") << R"([[agents]]
name = "main"
  [[agents.steps]]
  [[agents.steps.calls]]
  tool = "shell"
  arguments = { action = "spawn", id = "s", tty = true, wait_ms = 20000, command = "stty size" }
)";
  auto sized = cli(fmt::format("--cfg conversation.tools.shell.rows=50 --cfg conversation.tools.shell.cols=132 "
                               "run {} --json",
                               (scripts.path / "size.toml").string()));
  CAF_CHECK(testing::contains(sized.stdout_text, R"(\"result\":\"50 132\\n\")"));
  // A size given with the spawn is the terminal's from the start, not a resize after it.
  std::ofstream(scripts.path / "spawn_size.toml") << R"([[agents]]
name = "main"
  [[agents.steps]]
  [[agents.steps.calls]]
  tool = "shell"
  arguments = { action = "spawn", id = "s", tty = true, wait_ms = 20000, rows = 10, cols = 30, command = "stty size" }
)";
  auto spawn_sized = cli(fmt::format("run {} --json", (scripts.path / "spawn_size.toml").string()));
  CAF_CHECK(testing::contains(spawn_sized.stdout_text, R"(\"result\":\"10 30\\n\")"));
  // So for a tool on a terminal of its own (io = "pty"), whose size came only after.
  std::ofstream(scripts.path / "sz.toml") << R"([conversation.tools.sz]
summary = "Its terminal's size"
command = { program = "stty", args = ["size"] }
io = "pty"
run = "unattended"
spawn.stateful = true
)";
  std::ofstream(scripts.path / "pty_size.toml") << R"([[agents]]
name = "main"
  [[agents.steps]]
  [[agents.steps.calls]]
  tool = "sz"
  arguments = { action = "spawn", id = "s", wait_ms = 20000, rows = 10, cols = 30 }
)";
  auto pty_sized = cli(fmt::format("--config {} run {} --json", (scripts.path / "sz.toml").string(),
                                   (scripts.path / "pty_size.toml").string()));
  CAF_CHECK(testing::contains(pty_sized.stdout_text, R"(\"result\":\"10 30\\n\")"));
  // Its schema says so: tty for a spawn only, screen and a size for its looks.
  auto schema = cli("tools --schema --dialect json-schema");
  auto tools = Json::parse(schema.stdout_text);
  CAF_REQUIRE(tools.ok());
  for (auto& t : tools->as_array()) {
    if (t.string_at("name") != "shell")
      continue;
    auto text = t.dump();
    CAF_CHECK(testing::contains(text, R"("screen")"));
    for (auto& branch : t.find("parameters")->find("oneOf")->as_array())
      if (branch.find("not")) // the branch without `action`
        CAF_CHECK(branch.find("properties")->find("tty") == nullptr);
  }
}

CAF_TEST(an inquiry without an answer fails the run naming the handle and leaves nothing running) {
  testing::temp_dir inquiry;
  auto dir = inquiry.path;
  testing::marked_sleep sleeper(dir);
  auto unanswered = fmt::format(R"([[agents]]
name = "main"
  [[agents.steps]]
  [[agents.steps.calls]]
  tool = "asked"
  arguments = {{ action = "spawn", id = "pending", script = "exec {} 300" }}
)", sleeper.program.string());
  std::ofstream(dir / "unanswered.toml") << unanswered;
  auto r = cli(fmt::format("--config {}/tests/scripts/turn_end_config.toml run {} --json", JP_SOURCE_DIR,
                           (dir / "unanswered.toml").string()));
  CAF_CHECK_NOT_EQUAL(r.status, 0);
  CAF_CHECK(r.out.find("handle `pending` (asked) was still running when the turn ended") != std::string::npos);
  CAF_CHECK(r.out.find("[agents.on_turn_end] has no answer for it") != std::string::npos);
  CAF_CHECK(r.out.find("\"handles_left\":0") != std::string::npos);
  // The log still says how the turn ended: the handle aborted, and why.
  bool turn_end = false;
  for (auto& e : events(r.stdout_text))
    if (e.find("event")->as_string() == "turn_end") {
      turn_end = true;
      CAF_CHECK_EQUAL(e.find("handles")->as_array().at(0).find("policy")->as_string(), "inquire:abort");
      CAF_CHECK(e.find("error")->as_string().find("has no answer for it") != std::string::npos);
    }
  CAF_CHECK(turn_end);
  CAF_CHECK_EQUAL(sleeper.wait_none(), 0u); // not only said: nothing runs
  // Repeated, the failed run is the last: the error says so.
  std::ofstream(dir / "repeated.toml") << "[experiment]\nrepeat = 3\n" << unanswered;
  r = cli(fmt::format("--config {}/tests/scripts/turn_end_config.toml run {}", JP_SOURCE_DIR,
                      (dir / "repeated.toml").string()));
  CAF_CHECK_NOT_EQUAL(r.status, 0);
  CAF_CHECK(r.out.find("(run 1 of 3: the 2 runs after it were not started; the report is of that run)") !=
            std::string::npos);
  CAF_CHECK(r.out.find("run 2 of 3") == std::string::npos);
  CAF_CHECK_EQUAL(sleeper.wait_none(), 0u);
  // A sub-agent's answers are its [[subagents]] entry's: the error names that table.
  std::ofstream(dir / "sub.toml") << fmt::format(R"([[agents]]
name = "main"
  [[agents.steps]]
  [[agents.steps.calls]]
  tool = "agent"
  arguments = {{ prompt = "go", script = "leaver" }}
[[subagents]]
name = "leaver"
  [[subagents.steps]]
  [[subagents.steps.calls]]
  tool = "asked"
  arguments = {{ action = "spawn", id = "inner", script = "exec {} 300" }}
)", sleeper.program.string());
  r = cli(fmt::format("--config {}/tests/scripts/turn_end_config.toml run {} --json", JP_SOURCE_DIR,
                      (dir / "sub.toml").string()));
  CAF_CHECK(r.out.find("handle `inner` (asked) was still running when the turn ended") != std::string::npos);
  CAF_CHECK(r.out.find("[subagents.on_turn_end] of `leaver` has no answer for it") != std::string::npos);
  // It fails the run too, as an agent's own does, naming the sub-agent.
  CAF_CHECK_NOT_EQUAL(r.status, 0);
  CAF_CHECK(testing::contains(r.out, "sub-agent main/"));
  CAF_CHECK_EQUAL(sleeper.wait_none(), 0u);
  // One answer missing aborts the handles answered too: said, not left to the labels.
  std::ofstream(dir / "one_missing.toml") << fmt::format(R"([[agents]]
name = "main"
  [agents.on_turn_end]
  answered = "wait"
  [[agents.steps]]
  [[agents.steps.calls]]
  tool = "asked"
  arguments = {{ action = "spawn", id = "answered", script = "exec {0} 300" }}
  [[agents.steps.calls]]
  tool = "asked"
  arguments = {{ action = "spawn", id = "pending", script = "exec {0} 300" }}
)", sleeper.program.string());
  r = cli(fmt::format("--config {}/tests/scripts/turn_end_config.toml run {}", JP_SOURCE_DIR,
                      (dir / "one_missing.toml").string()));
  CAF_CHECK_NOT_EQUAL(r.status, 0);
  CAF_CHECK(testing::contains(r.out, "add pending = \"wait\" or \"abort\" (it was aborted, and so was every other "
                                     "handle asked about, whatever its answer)"));
  CAF_CHECK_EQUAL(sleeper.wait_none(), 0u);
}

CAF_TEST(a question with target assistant is answered from the script) {
  auto r = cli(confirm_tool() + "--cfg conversation.tools.clean.run=\\\"unattended\\\" "
               "--cfg conversation.tools.clean.questions.proceed.target=assistant " +
               fmt::format("run {}/tests/scripts/assistant_answers.toml --json", JP_SOURCE_DIR));
  std::map<std::string, Json> by_agent;
  for (auto& e : events(r.stdout_text))
    if (e.find("event")->as_string() == "tool_result")
      by_agent[e.find("agent")->as_string()] = e;
  CAF_REQUIRE_EQUAL(by_agent.size(), 2u);
  CAF_CHECK(by_agent["answers"].find("ok")->as_bool());
  CAF_CHECK_EQUAL(by_agent["answers"].find("content")->as_string(), "deleted (pretend)");
  CAF_CHECK(!by_agent["silent"].find("ok")->as_bool());
  CAF_CHECK(by_agent["silent"].find("content")->as_string().find(
              "question `proceed`, target = \"assistant\") and the assistant gave no answer") !=
            std::string::npos);
  CAF_CHECK_EQUAL(r.status, 0); // a tool error is the assistant's to read, not the run's failure
}

CAF_TEST(edge cases of batches and await end without hanging) {
  auto r = cli(fmt::format("run {}/tests/scripts/edge_cases.toml --json", JP_SOURCE_DIR));
  CAF_REQUIRE_EQUAL(r.status, 0);
  std::map<std::tuple<std::string, int64_t, int64_t>, Json> res;
  for (auto& e : events(r.stdout_text))
    if (e.find("event")->as_string() == "tool_result")
      res[{e.find("agent")->as_string(), e.find("step")->as_int(), e.find("index")->as_int()}] = e;
  auto content = [&](std::string agent, int64_t step, int64_t index) {
    return res.at({agent, step, index}).find("content")->as_string();
  };
  auto ok = [&](std::string agent, int64_t step, int64_t index) {
    return res.at({agent, step, index}).find("ok")->as_bool();
  };
  CAF_CHECK(!ok("edges/#1", 1, 0));
  CAF_CHECK(content("edges/#1", 1, 0).find("Unknown tool `shell`") != std::string::npos);
  auto typo = Json::parse(content("edges/#1", 1, 1));
  CAF_REQUIRE(typo.ok());
  CAF_CHECK_EQUAL(typo->find("completed")->as_array().size(), 1u);
  CAF_CHECK(!ok("edges", 2, 0) && !ok("edges", 2, 1));
  CAF_CHECK_EQUAL(content("edges", 2, 0), "Batch rejected: handle id `dup` is spawned twice in one batch");
  CAF_CHECK_EQUAL(content("edges", 3, 0), "At least one handle ID required: `all` or `any`, an array of ids");
  auto quick = Json::parse(content("edges", 3, 2));
  CAF_REQUIRE(quick.ok());
  CAF_CHECK(quick->find("timed_out") == nullptr);
  CAF_CHECK_EQUAL(quick->find("completed")->as_array()[0].find("result")->as_string(), "quick\n");
  auto other = Json::parse(content("other", 1, 1));
  CAF_REQUIRE(other.ok());
  CAF_CHECK_EQUAL(other->find("completed")->as_array()[0].find("result")->as_string(), "other\n");
}

CAF_TEST(a handle not started for want of file descriptors is told as transient) {
  // Other tools' ends give them back: the model may retry (it read transient false).
  testing::temp_dir ws;
  std::string calls;
  for (int i = 0; i < 40; ++i)
    calls += fmt::format("  [[agents.steps.calls]]\n  tool = \"shell\"\n  arguments = {{ action = \"spawn\", id = \"h{}\", "
                         "wait_ms = 0, command = \"exec sleep 30\" }}\n",
                         i);
  ws.write("many.toml", "[[agents]]\nname = \"main\"\n  [[agents.steps]]\n" + calls);
  auto r = testing::run_command(fmt::format("ulimit -n 64; cd '{}' && XDG_STATE_HOME='{}' '{}' --workspace '{}' run '{}' "
                                            "--json",
                                            JP_SOURCE_DIR, testing::state_home_of(ws.path.string()), JP_CLI_BINARY,
                                            ws.path.string(), (ws.path / "many.toml").string()));
  CAF_CHECK(contains(r.out, "Too many open files"));
  CAF_CHECK(contains(r.out, R"(\"transient\":true)"));
}

CAF_TEST(a spill file past the file size limit is said incomplete and jp-actors lives) {
  // SIGXFSZ killed jp-actors at its spill file's 100 KiB (ulimit -f 100), leaving
  // its tools running and saying nothing.
  testing::temp_dir ws;
  auto r = testing::run_command(fmt::format("ulimit -f 100; cd '{}' && XDG_STATE_HOME='{}' '{}' --workspace '{}' call shell "
                                   "'{{\"command\":\"head -c 400000 /dev/zero | tr \\\\0 x\"}}'",
                                   JP_SOURCE_DIR, testing::state_home_of(ws.path.string()), JP_CLI_BINARY,
                                            ws.path.string()));
  CAF_CHECK_EQUAL(r.status, 0);
  CAF_CHECK(contains(r.out, "(incomplete: File too large)"));
  // Its own output to a file past the limit is said cut, and fails the run.
  auto cut = testing::run_command(fmt::format("ulimit -f 1; cd '{}' && XDG_STATE_HOME='{}' '{}' --workspace '{}' run "
                                              "examples/quickstart.toml --json > '{}'",
                                              JP_SOURCE_DIR, testing::state_home_of(ws.path.string()), JP_CLI_BINARY,
                                              ws.path.string(), (ws.path / "out.jsonl").string()));
  CAF_CHECK_EQUAL(cut.status, 1);
  CAF_CHECK(contains(cut.out, "jp-actors: its output could not all be written"));
}

CAF_TEST(describe_tools explains a tool and its actions) {
  auto r = cli(R"(call describe_tools '{"tools":["shell"]}')");
  CAF_CHECK_EQUAL(r.status, 0);
  CAF_CHECK(r.out.find("## shell") != std::string::npos);
  CAF_CHECK(r.out.find("spawn|fetch|apply|abort") != std::string::npos);
  CAF_CHECK(r.out.find("- command (string, required)") != std::string::npos);
  auto bad = cli(R"(call describe_tools '{"tools":["nope"]}')");
  CAF_CHECK_NOT_EQUAL(bad.status, 0);
  CAF_CHECK(bad.out.find("unknown tool `nope`; the tools are agent, await, describe_tools, foreach, shell") !=
            std::string::npos);
  // Only what the model is offered: a tool whose run is "skip" is neither listed nor
  // described (nor await, with no stateful tool left); named twice, once; none named
  // is said so.
  auto skip = "--cfg conversation.tools.shell.run=skip --cfg conversation.tools.agent.run=skip "
              "--cfg conversation.tools.foreach.run=skip ";
  auto all = cli(std::string(skip) + R"(call describe_tools '{}')");
  CAF_CHECK_EQUAL(all.status, 0);
  CAF_CHECK(contains(all.out, "## describe_tools"));
  CAF_CHECK(!contains(all.out, "## shell"));
  CAF_CHECK(!contains(all.out, "## await"));
  auto skipped = cli(std::string(skip) + R"(call describe_tools '{"tools":["shell"]}')");
  CAF_CHECK_NOT_EQUAL(skipped.status, 0);
  CAF_CHECK(contains(skipped.out, "unknown tool `shell`; the tools are describe_tools"));
  auto named_twice = cli(R"(call describe_tools '{"tools":["shell","shell"]}')");
  CAF_CHECK_EQUAL(named_twice.status, 0);
  CAF_CHECK_NOT_EQUAL(named_twice.out.find("## shell"), std::string::npos);
  CAF_CHECK_EQUAL(named_twice.out.find("## shell"), named_twice.out.rfind("## shell"));
  auto none = cli(R"(call describe_tools '{"tools":[]}')");
  CAF_CHECK_NOT_EQUAL(none.status, 0);
  CAF_CHECK(contains(none.out, "`tools` is empty"));
  // What else a user may get wrong is named too, with what is allowed.
  auto bare = cli("");
  CAF_CHECK_EQUAL(bare.status, 2);
  CAF_CHECK(testing::contains(bare.out, "jp-actors: a command is required; expected one of: "));
  auto nodes = cli("nodes");
  CAF_CHECK(testing::contains(nodes.out, "jp-actors: a command is required for nodes; expected one of: ls"));
  // A global option given without its value takes the command as it: said so.
  auto swallowed = cli("--config tools");
  CAF_CHECK_EQUAL(swallowed.status, 2);
  CAF_CHECK(testing::contains(swallowed.out, "jp-actors: --config took `tools` as its FILE; give --config its value "
                                             "before the command (jp-actors --config FILE tools ...)"));
  CAF_CHECK(testing::contains(cli("--cfg run examples/quickstart.toml").out, "--cfg took `run` as its KEY=VALUE"));
  // A repeatable option takes one value a time, and its help says so.
  auto help = cli("--help");
  CAF_CHECK(testing::contains(help.out, "--config FILE "));
  CAF_CHECK(testing::contains(help.out, "--cfg KEY=VALUE "));
  CAF_CHECK(!testing::contains(help.out, "TEXT ..."));
  CAF_CHECK(!testing::contains(cli("query --help").out, "TEXT ..."));
  // A value's name is what its text calls it (the report's FILE showed as TEXT).
  auto run_help = cli("run --help").out;
  CAF_CHECK(testing::contains(run_help, "SCRIPT FILE REQUIRED"));
  CAF_CHECK(testing::contains(run_help, "--report FILE "));
  CAF_CHECK(testing::contains(cli("node --help").out, "--listen HOST:PORT "));
  // Not a check's own name after it (TEXT:DIALECT, INT:PID, FLOAT:SECS).
  CAF_CHECK(testing::contains(cli("tools --help").out, "--dialect DIALECT=openai "));
  CAF_CHECK(testing::contains(cli("handles abort --help").out, "--pid PID "));
  CAF_CHECK(testing::contains(cli("mcp --help").out, "--session-idle-secs SECS=0 "));
  for (auto command : {"tools --help", "handles abort --help", "mcp --help"})
    CAF_CHECK(!std::regex_search(cli(command).out, std::regex("(TEXT|INT|UINT|FLOAT):[A-Z]")));
  auto twice = cli("--cfg assistant.model=a --cfg assistant.provider=nope tools");
  CAF_CHECK(testing::contains(twice.out, "--cfg assistant.provider=nope: assistant.provider: expected one of"));
  auto no_script = cli("run /nonexistent/script.toml");
  CAF_CHECK(testing::contains(no_script.out, "/nonexistent/script.toml: cannot read: No such file or directory"));
  auto dir_script = cli("run /tmp");
  CAF_CHECK(testing::contains(dir_script.out, "/tmp: is a directory; give a script file"));
  auto dir_report = cli("report /tmp");
  CAF_CHECK(testing::contains(dir_report.out, "/tmp: is a directory; give the events file itself"));
  // A device (a repository's link to /dev/zero where a log is expected) would read
  // forever: refused, for a script too.
  for (auto command : {"report /dev/zero", "run /dev/zero"})
    CAF_CHECK(testing::contains(cli(command).out, "/dev/zero: is not a regular file (a device, a socket); give "));
}

using testing::read_until;

namespace {

/// jp-actors with `args` on a terminal: once `question` shows, types `answer` and
/// says whether `expected` then showed. The process is ended and reaped either way.
bool answered_on_terminal(std::vector<std::string> args, const std::string& question,
                          const std::string& answer, const std::string& expected) {
  // Its own state home: a run ended below by SIGKILL leaves its crash record there,
  // not in the user's (where the next run would sweep it and say so).
  testing::temp_dir state;
  int master = -1;
  pid_t pid = ::forkpty(&master, nullptr, nullptr, nullptr);
  if (pid == 0) {
    ::setenv("XDG_STATE_HOME", state.path.c_str(), 1);
    args.insert(args.begin(), JP_CLI_BINARY);
    std::vector<char*> argv;
    for (auto& a : args)
      argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(JP_CLI_BINARY, argv.data());
    ::_exit(127);
  }
  CAF_REQUIRE(pid > 0);
  own_child(pid, SIGTERM);
  std::string seen;
  bool asked = read_until(master, seen, question);
  CAF_CHECK(asked);
  bool shown = asked && ::write(master, answer.data(), answer.size()) == static_cast<ssize_t>(answer.size()) &&
               read_until(master, seen, expected);
  disown_child(pid);
  ::kill(pid, SIGKILL); // no-op when it already ended
  ::waitpid(pid, nullptr, 0);
  ::close(master);
  return shown;
}

} // namespace

CAF_TEST(on a terminal the question of a one-shot tool is put to the user) {
  testing::temp_dir ws;
  auto program = fmt::format("conversation.tools.clean.command={{program=\"{}/examples/tools/confirm.sh\"}}",
                             JP_SOURCE_DIR);
  // Its default (no) shown as prompts show it; Y as good as y.
  CAF_CHECK(answered_on_terminal({"--workspace", ws.path.string(), "--cfg", program, "call", "clean"},
                                 "Delete the build directory? [y/N]", "Y\n", "deleted (pretend)"));
  // An answer that is none of those offered is told so (it was read as a whole line).
  CAF_CHECK(answered_on_terminal({"--workspace", ws.path.string(), "--cfg", program, "call", "clean"},
                                 "Delete the build directory? [y/N]", "sure\n",
                                 "not one of y, n; type one, then Enter"));
}

namespace {

/// What a tool finds: whether /dev/tty opens for it, whether it leads its group and
/// its session; then "end".
std::string terminal_probe_call() {
  auto probe = Json::object();
  probe.set("command", "(: </dev/tty) 2>/dev/null && echo tty || echo notty; "
                       "read -r _ _ _ _ pgrp sid _ < /proc/$$/stat; [ \"$pgrp\" = $$ ] && echo group; "
                       "[ \"$sid\" = $$ ] && echo session; echo end");
  return probe.dump();
}

/// jp-actors (after `prefix`, a command that runs it) with `args` on a terminal it
/// leads the session of, until the terminal shows `until`: what it showed, and then
/// its exit status is `status`. Ended and reaped. `workspace_in`, if given, makes the
/// workspace in a temporary directory (and what is planted there) and returns it.
std::string cli_on_terminal(const std::vector<std::string>& prefix, const std::vector<std::string>& cli_args,
                            const std::string& until, int status,
                            const std::function<std::filesystem::path(const std::filesystem::path&)>& workspace_in = {}) {
  testing::temp_dir ws;
  auto state = testing::state_home_of(ws.path.string()); // no other run's crash record to sweep
  // Nor other runs' control sockets to ask (`handles ls`: another test's stopped
  // jp-actors answers late, and that is said instead).
  testing::temp_dir runtime_dir;
  auto workspace = workspace_in ? workspace_in(ws.path) : ws.path;
  std::vector<std::string> args = prefix;
  args.insert(args.end(), {JP_CLI_BINARY, "--workspace", workspace.string()});
  args.insert(args.end(), cli_args.begin(), cli_args.end());
  std::vector<char*> argv;
  for (auto& a : args)
    argv.push_back(a.data());
  argv.push_back(nullptr);
  int master = -1;
  pid_t pid = ::forkpty(&master, nullptr, nullptr, nullptr);
  if (pid == 0) {
    ::setenv("XDG_STATE_HOME", state.c_str(), 1);
    ::setenv("XDG_RUNTIME_DIR", runtime_dir.path.c_str(), 1);
    ::execvp(argv[0], argv.data());
    ::_exit(127);
  }
  CAF_REQUIRE(pid > 0);
  own_child(pid, SIGTERM);
  std::string seen;
  CAF_CHECK(read_until(master, seen, until));
  CAF_CHECK_EQUAL(testing::wait_exit(pid), status); // bounded; else ended below
  testing::end_cli(pid);
  ::close(master);
  return seen;
}

/// The same, calling the shell with `call` (the probe unless given), which ends by
/// printing "end".
std::string probe_on_terminal(const std::vector<std::string>& prefix, const std::string& call = terminal_probe_call()) {
  return cli_on_terminal(prefix, {"call", "shell", call}, "\nend\r\n", 0);
}

/// The tool kept from the terminal: its own session, which has none.
void check_kept_from_terminal(const std::string& seen) {
  bool kept = seen.find("notty\r\ngroup\r\nsession\r\nend") != std::string::npos;
  if (!kept)
    CAF_MESSAGE("the terminal showed: " << seen);
  CAF_CHECK(kept);
}

} // namespace

CAF_TEST(on a terminal a call shows no control bytes of what its tool printed) {
  auto call = Json::object();
  // 0x9B (octal 233) alone: CSI to a terminal reading 8-bit controls.
  call.set("command", "printf 'A\\033]0;PWNED\\007B\\n'; printf 'C\\23331mD\\n'; echo end");
  auto seen = probe_on_terminal({}, call.dump());
  // A pipe's output is read as a terminal shows it: the sequence is gone before the
  // model or the user sees it; the lone 0x9B is no character, made visible.
  CAF_CHECK(seen.find("AB\r\n") != std::string::npos);
  CAF_CHECK(seen.find("\x1b]0;") == std::string::npos);
  CAF_CHECK(seen.find("C\xEF\xBF\xBD" "31mD") != std::string::npos);
  CAF_CHECK(seen.find('\x9b') == std::string::npos);
  // Nor in a tool's summary that `tools` lists (a repository's text).
  seen = cli_on_terminal({}, {"--cfg", "conversation.tools.x={command={program=\"true\"},summary=\"s\\u001b]0;PWNED\\u0007RED\"}",
                              "tools"},
                         "RED\r\n", 0);
  CAF_CHECK(seen.find("s\xEF\xBF\xBD]0;PWNED\xEF\xBF\xBDRED") != std::string::npos);
  CAF_CHECK(seen.find("\x1b]0;") == std::string::npos);
  // Nor in what a failed call says on stderr (here its program's name), stdout elsewhere.
  seen = cli_on_terminal({"/bin/sh", "-c", "exec \"$@\" >/dev/null", "sh"},
                         {"--cfg", "conversation.tools.x.command={program=\"A\\u001b]0;PWNED\\u0007B\"}", "--cfg",
                          "conversation.tools.x.run=\"unattended\"", "call", "x"},
                         "B)\r\n", 1);
  CAF_CHECK(seen.find("A\xEF\xBF\xBD]0;PWNED\xEF\xBF\xBD" "B") != std::string::npos);
  CAF_CHECK(seen.find("\x1b]0;") == std::string::npos);
  // Nor in a report of a log (a repository's own events.jsonl) naming an agent and a
  // tool so; through a pipe the report keeps the names' bytes.
  testing::temp_dir logs;
  auto log = (logs.path / "events.jsonl").string();
  std::ofstream(log) << R"({"event":"turn_start","time":"2026-11-23T12:00:00.000Z","agent":"ag\u001b[2Jent"})" "\n"
                     << R"({"event":"tool_call","time":"2026-11-23T12:00:00.100Z","agent":"ag\u001b[2Jent","tool":"sh\u001b]52;c;eA==\u0007ell"})" "\n"
                     << R"({"event":"turn_end","time":"2026-11-23T12:00:00.200Z","agent":"ag\u001b[2Jent"})" "\n";
  seen = cli_on_terminal({}, {"report", log}, "ell", 0);
  CAF_CHECK(seen.find("ag\xEF\xBF\xBD[2Jent") != std::string::npos);
  CAF_CHECK(seen.find("sh\xEF\xBF\xBD]52;c;eA==\xEF\xBF\xBD" "ell") != std::string::npos);
  CAF_CHECK(seen.find('\x1b') == std::string::npos);
  auto piped = cli("report " + log);
  CAF_CHECK(piped.out.find("sh\x1b]52;c;eA==\x07" "ell") != std::string::npos);
  // Nor in a workspace's path (a directory cloned under a hostile name) that
  // `handles ls` names.
  seen = cli_on_terminal({}, {"handles", "ls"}, "every workspace)", 0, [](const std::filesystem::path& tmp) {
    auto ws = tmp / "ws\x1b]0;PWNED\x07x";
    std::filesystem::create_directories(ws);
    return ws;
  });
  CAF_CHECK(seen.find("ws\xEF\xBF\xBD]0;PWNED\xEF\xBF\xBDx") != std::string::npos);
  CAF_CHECK(seen.find('\x1b') == std::string::npos);
  // Nor in a conversation's time that `conversations ls` shows (the workspace's file):
  // not one, so the directory's time is shown instead.
  seen = cli_on_terminal({}, {"conversations", "ls"}, "events", 0, [](const std::filesystem::path& tmp) {
    auto dir = tmp / ".jp" / "conversations" / "20250101-000000-abcd";
    std::filesystem::create_directories(dir);
    std::ofstream(dir / "events.jsonl")
      << R"({"event":"turn_start","time":"\u001b]0;PWNED\u0007\u001b[2J","prompt":"hello"})" "\n";
    return tmp;
  });
  CAF_CHECK(seen.find("PWNED") == std::string::npos);
  CAF_CHECK(seen.find('\x1b') == std::string::npos);
  CAF_CHECK(seen.find("hello") != std::string::npos);
  // Nor in what jp-actors warns of an MCP server that did not start: its stderr (an
  // auditor's server wrote a title and colours there, and the warning passed them on).
  seen = cli_on_terminal({}, {"--cfg", "mcp.servers.f={command=[\"/bin/sh\",\"-c\",\"printf 'A\\\\033]0;PWNED\\\\007B\\\\n' >&2; exit 3\"]}",
                              "tools"},
                         "shell", 0);
  CAF_CHECK(seen.find("jp-actors: MCP server `f` exited") != std::string::npos);
  CAF_CHECK(seen.find("A\xEF\xBF\xBD]0;PWNED\xEF\xBF\xBD" "B") != std::string::npos);
  CAF_CHECK(seen.find('\x1b') == std::string::npos);
}

CAF_TEST(a tool cannot open the terminal jp-actors runs on) {
  // One with a terminal to keep from leads a session of its own (which has none);
  // without one, its own group in ours keeps it from any.
  check_kept_from_terminal(probe_on_terminal({}));
  // As this test runs (a terminal of its own or, as under CI, none).
  auto r = cli(fmt::format("call shell '{}'", terminal_probe_call()));
  CAF_CHECK_EQUAL(r.status, 0);
  CAF_CHECK_EQUAL(r.out, has_controlling_terminal() ? "notty\ngroup\nsession\nend\n" : "notty\ngroup\nend\n");
}

CAF_TEST(a tool cannot open the terminal when jp-actors session is led from outside its pid namespace) {
  // There jp-actors sees its session's id as 0 (its leader is not in its namespace):
  // it must still find its terminal and give the tool a session of its own.
  if (::system("unshare -Urpf --mount-proc true >/dev/null 2>&1") != 0) {
    CAF_MESSAGE("skipped: no pid namespace to be had here (unshare -Urpf failed)");
    return;
  }
  check_kept_from_terminal(probe_on_terminal({"unshare", "-Urpf", "--mount-proc"}));
}

namespace {

// examples/greet.toml's tool (io = "control"), its program found from any workspace.
std::string greet_tool() {
  return fmt::format("--config {0}/examples/greet.toml "
                     "--cfg 'conversation.tools.greet.command={{program=\"{0}/examples/tools/greet.sh\"}}' ",
                     JP_SOURCE_DIR);
}

} // namespace

CAF_TEST(a control tool called one-shot gets fd 3 and its question answered while it runs) {
  auto answered = cli(greet_tool() + R"(--cfg 'conversation.tools.greet.questions.name.answer="world"' call greet)");
  CAF_CHECK_EQUAL(answered.status, 0);
  CAF_CHECK_EQUAL(answered.out, "hello, world\n"); // the stopped ToolState it wrote on fd 3
  // One the question does not take is not given, on the channel nor by the turn.
  auto wrong = cli(greet_tool() + "--cfg conversation.tools.greet.questions.name.answer=3 call greet");
  CAF_CHECK_NOT_EQUAL(wrong.status, 0);
  CAF_CHECK(testing::contains(wrong.out, "greet: conversation.tools.greet.questions.name.answer is not an answer the tool "
                                "takes: question `name` (\"Whom shall I greet?\") takes a string; got 3"));
  CAF_CHECK(!testing::contains(wrong.out, "hello, 3"));
  auto unanswered = cli(greet_tool() + "call greet");
  CAF_CHECK_NOT_EQUAL(unanswered.status, 0);
  CAF_CHECK(unanswered.out.find("Whom shall I greet?") != std::string::npos);
  CAF_CHECK(unanswered.out.find("conversation.tools.greet.questions.name.answer") != std::string::npos);
  CAF_CHECK(unanswered.out.find("Bad file descriptor") == std::string::npos);
  CAF_CHECK(unanswered.out.find("was aborted as the call ended") == std::string::npos); // no handle of the user's
  // A control tool may still ask by exiting with needs_input: it is run again.
  auto rerun = cli(confirm_tool() + "--cfg conversation.tools.clean.io=control "
                                    "--cfg conversation.tools.clean.questions.proceed.answer=true call clean");
  CAF_CHECK_EQUAL(rerun.status, 0);
  CAF_CHECK_EQUAL(rerun.out, "deleted (pretend)\n");
  // On a terminal the user answers; the same process reads the answer on stdin.
  testing::temp_dir ws;
  auto config = fmt::format("{}/examples/greet.toml", JP_SOURCE_DIR);
  auto program = fmt::format("conversation.tools.greet.command={{program=\"{}/examples/tools/greet.sh\"}}",
                             JP_SOURCE_DIR);
  CAF_CHECK(answered_on_terminal({"--workspace", ws.path.string(), "--config", config, "--cfg", program, "call",
                                  "greet"},
                                 "Whom shall I greet?", "world\n", "hello, world"));
}

CAF_TEST(a control tool called one-shot that reads its stdin without asking is answered or fails the call) {
  // Nothing answered its read (its questions go on fd 3): the call hung for good.
  auto tool = fmt::format("--cfg 'conversation.tools.reader.command={{program=\"{}/tests/scripts/reads_unasked.sh\"}}' "
                          "--cfg conversation.tools.reader.io=control ",
                          JP_SOURCE_DIR);
  auto unanswered = cli(tool + "call reader");
  CAF_CHECK_NOT_EQUAL(unanswered.status, 0);
  CAF_CHECK(testing::contains(unanswered.out, "reader: the tool asks \"waiting for input\" (question `input`)"));
  CAF_CHECK(testing::contains(unanswered.out, "conversation.tools.reader.questions.input.answer"));
  // Answered as its questions are: one JSON line on its stdin.
  auto answered = cli(tool + R"(--cfg 'conversation.tools.reader.questions.input.answer="bob"' call reader)");
  CAF_CHECK_EQUAL(answered.status, 0);
  CAF_CHECK_EQUAL(answered.out, "read bob\n");
  // One that keeps a reader of its answers on stdin while it works is not waiting:
  // its work runs to its end.
  auto working = cli(fmt::format("--cfg 'conversation.tools.reader.command={{program=\"{}/tests/scripts/reads_unasked.sh\", "
                                 "args=[\"works\"]}}' --cfg conversation.tools.reader.io=control call reader",
                                 JP_SOURCE_DIR));
  CAF_CHECK_EQUAL(working.status, 0);
  CAF_CHECK_EQUAL(working.out, "worked\n");
  // Nor one whose main thread reads them while another thread works.
  auto threaded = cli("--cfg 'conversation.tools.reader.command={program=\"" JP_THREAD_READER "\"}' "
                      "--cfg conversation.tools.reader.io=control call reader");
  CAF_CHECK_EQUAL(threaded.status, 0);
  CAF_CHECK_EQUAL(threaded.out, "worked\n");
}

CAF_TEST(a one-shot tool that asks again after an answer is run once per question) {
  // Each rerun continues from the one before: the tool's config must reach the
  // third run as it reached the first (the continuation that reran it is gone by then).
  auto tool = fmt::format("--cfg 'conversation.tools.asker.command={{program=\"{}/tests/scripts/asks_twice.sh\"}}' ",
                          JP_SOURCE_DIR);
  auto both = cli(tool + R"(--cfg 'conversation.tools.asker.questions.first.answer="one"' )"
                         R"(--cfg 'conversation.tools.asker.questions.second.answer="two"' call asker)");
  CAF_CHECK_EQUAL(both.status, 0);
  CAF_CHECK_EQUAL(both.out, "one, then two\n");
  // One answered, the next not: the call fails naming the second question.
  auto half = cli(tool + R"(--cfg 'conversation.tools.asker.questions.first.answer="one"' call asker)");
  CAF_CHECK_NOT_EQUAL(half.status, 0);
  CAF_CHECK(half.out.find("conversation.tools.asker.questions.second.answer") != std::string::npos);
  // A tool that asks forever is given up on after the rounds allowed.
  auto looping = cli(fmt::format("--cfg 'conversation.tools.asker.command={{program=\"{}/tests/scripts/asks_twice.sh\", "
                                 "args=[\"loop\"]}}' ",
                                 JP_SOURCE_DIR) +
                     R"(--cfg 'conversation.tools.asker.questions.again.answer="yes"' call asker)");
  CAF_CHECK_NOT_EQUAL(looping.status, 0);
  CAF_CHECK(looping.out.find("asker: gave up after 16 rounds of questions") != std::string::npos);
}

CAF_TEST(on a terminal the permission asked for a workspace s tool says whose it is and what it runs) {
  // Worded as for your own tools, the question did not say a repository chose it.
  testing::temp_dir ws;
  std::filesystem::create_directories(ws.path / ".jp");
  ws.write(".jp/config.toml", "[conversation.tools.repo]\ncommand = { program = \"true\", args = [\"--x\"] }\n"
                              "run = \"ask\"\n");
  auto state = testing::state_home_of(ws.path.string());
  int master = -1;
  pid_t pid = ::forkpty(&master, nullptr, nullptr, nullptr);
  if (pid == 0) {
    ::setenv("XDG_STATE_HOME", state.c_str(), 1);
    ::execl(JP_CLI_BINARY, JP_CLI_BINARY, "--workspace", ws.path.c_str(), "call", "--ask", "repo", nullptr);
    ::_exit(127);
  }
  CAF_REQUIRE(pid > 0);
  own_child(pid, SIGTERM);
  std::string seen;
  CAF_CHECK(read_until(master, seen, "(a tool this workspace's .jp/config.toml defines or changes; it runs `true "
                                     "--x`)"));
  CAF_CHECK(read_until(master, seen, "[w]hy (then Enter): "));
  CAF_REQUIRE_EQUAL(::write(master, "n\n", 2), 2);
  disown_child(pid);
  ::kill(pid, SIGKILL); // no-op when it already ended
  ::waitpid(pid, nullptr, 0);
  ::close(master);
}

CAF_TEST(on a terminal permission is asked: yes for this turn and no with a reason) {
  testing::temp_dir ws;
  auto config = fmt::format("{}/tests/scripts/permissions_config.toml", JP_SOURCE_DIR);
  auto script = fmt::format("{}/tests/scripts/permissions.toml", JP_SOURCE_DIR);
  auto state = testing::state_home_of(ws.path.string()); // its crash record, if any, stays here
  int master = -1;
  pid_t pid = ::forkpty(&master, nullptr, nullptr, nullptr);
  if (pid == 0) {
    ::setenv("XDG_STATE_HOME", state.c_str(), 1);
    ::execl(JP_CLI_BINARY, JP_CLI_BINARY, "--workspace", ws.path.c_str(), "--config", config.c_str(), "run",
            script.c_str(), "--ask", nullptr);
    ::_exit(127);
  }
  CAF_REQUIRE(pid > 0);
  own_child(pid, SIGTERM);
  std::string seen;
  bool asked = read_until(master, seen, "[marker] wants to run with {}");
  CAF_CHECK(asked);
  if (asked) {
    CAF_REQUIRE_EQUAL(::write(master, "t\n", 2), 2); // yes, for this turn
    CAF_CHECK(read_until(master, seen, "[holder] wants to run"));
    CAF_CHECK(read_until(master, seen, "[w]hy (then Enter): "));
    CAF_REQUIRE_EQUAL(::write(master, "w\n", 2), 2);
    CAF_CHECK(read_until(master, seen, "Why (the assistant reads this): "));
    CAF_REQUIRE_EQUAL(::write(master, "not now\n", 8), 8);
    CAF_CHECK(read_until(master, seen, "handles left"));
  }
  // The second marker call of the turn was not asked; the denied spawn never ran.
  size_t prompts = 0;
  for (auto at = seen.find("[marker] wants to run"); at != std::string::npos;
       at = seen.find("[marker] wants to run", at + 1))
    ++prompts;
  CAF_CHECK_EQUAL(prompts, 1u);
  CAF_CHECK(seen.find("The user says: not now") != std::string::npos);
  CAF_CHECK(ws.has("marked"));
  CAF_CHECK(!ws.has("held"));
  disown_child(pid);
  ::kill(pid, SIGKILL); // no-op when it already ended
  ::waitpid(pid, nullptr, 0);
  ::close(master);
}
