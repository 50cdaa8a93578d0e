// A tool's processes that leave its group -- `setsid`, a double fork into a new
// session, `set -m` job control -- are still killed by an abort, by jp-actors' exit
// (a terminate signal, or the end of a run) and by the next start's sweep after a
// SIGKILL (issue 12, point 7).
#define CAF_SUITE escape
#include <caf/test/unit_test.hpp>

#include <chrono>
#include <csignal>
#include <fmt/format.h>
#include <fstream>
#include <future>
#include <memory>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <thread>

#include "child_wait.hpp"
#include "cli_run.hpp"
#include "marked_processes.hpp"
#include "messages/json.hpp"
#include "runtime/cli/signal_shutdown.hpp"
#include "runtime/process/controlling_terminal.hpp"
#include "runtime/process/io_thread.hpp"
#include "runtime/process/kept_daemons.hpp"
#include "runtime/process/process.hpp"
#include "runtime/process/tool_mark.hpp"
#include "temp_dir.hpp"

using namespace jp;
using namespace jp::testing;
using namespace std::chrono_literals;

namespace {

/// Shell commands that each start one marked sleep outside their own process group,
/// and then `tail` (what the command does next: keep running, or end).
std::vector<std::string> escapes(const marked_sleep& s, const std::string& tail) {
  auto prog = s.program.string();
  return {
    fmt::format("setsid {} 300 & {}", prog, tail),                    // a new session
    fmt::format("(setsid {} 300 &); {}", prog, tail),                 // double fork into one
    fmt::format("bash -c 'set -m; {} 300 & {}'", prog, tail),         // a job of its own group
  };
}

/// A script with one handle per command, and an await of them all.
void write_script(const std::filesystem::path& file, const std::vector<std::string>& commands) {
  std::ofstream out(file);
  out << "[[agents]]\nname = \"a\"\n  [[agents.steps]]\n";
  std::string ids;
  for (size_t i = 0; i < commands.size(); ++i) {
    out << fmt::format("  [[agents.steps.calls]]\n  tool = \"shell\"\n"
                       "  arguments = {{ action = \"spawn\", id = \"e{}\", wait_ms = 0, command = '''{}''' }}\n",
                       i, commands[i]);
    ids += fmt::format("{}\"e{}\"", i ? ", " : "", i);
  }
  out << "  [[agents.steps.calls]]\n  tool = \"await\"\n  arguments = { all = [" << ids << "] }\n";
}

/// jp-actors running the escapes, each tool then staying on; returns once all run.
pid_t start_escaping_run(const temp_dir& ws, const marked_sleep& sleeper) {
  write_script(ws.path / "escape.toml", escapes(sleeper, fmt::format("exec {} 300", sleeper.program.string())));
  pid_t cli_pid = start_cli(state_home_of(ws.path.string()),
                            {"--workspace", ws.path.string(), "run", (ws.path / "escape.toml").string()});
  CAF_REQUIRE(cli_pid > 0);
  CAF_CHECK_EQUAL(sleeper.wait_alive(6), 6u); // each tool: its escape and itself
  return cli_pid;
}

} // namespace

CAF_TEST(an abort kills what left the tools group or session) {
  temp_dir dir;
  marked_sleep sleeper(dir.path);
  IoThread io;
  std::vector<std::shared_ptr<Process>> handles;
  for (auto& cmd : escapes(sleeper, fmt::format("exec {} 300", sleeper.program.string()))) {
    auto p = spawn_process(io, SpawnSpec{.argv = {"/bin/sh", "-c", cmd}}, ProcessEvents{});
    CAF_REQUIRE(p.ok());
    handles.push_back(*p);
  }
  // Each handle: its escaped sleep and its own (the leader, exec'd).
  CAF_REQUIRE_EQUAL(sleeper.wait_alive(6), 6u);
  for (auto& h : handles) {
    auto gone = std::make_shared<std::promise<void>>();
    auto done = gone->get_future();
    h->terminate(100ms, [gone] { gone->set_value(); });
    CAF_CHECK(done.wait_for(30s) == std::future_status::ready);
  }
  // on_gone waited for them: nothing is left (the bounded wait only absorbs /proc lag).
  CAF_CHECK_EQUAL(sleeper.wait_none(), 0u);
}

CAF_TEST(a tools exit kills and names what it left running outside its group or session) {
  // `timeout 300 srv &` (timeout leads a group of its own), setsid, a double fork:
  // what the command left in the background dies with it and is named, as what it
  // left in its own group is; else the model is told nothing was left, and it runs
  // on until jp-actors ends.
  temp_dir dir;
  marked_sleep sleeper(dir.path);
  auto go = dir.path / "go";
  IoThread io;
  // Each tool ends only once told to: by then every escape has left its group (the
  // sleep runs only after its setsid, or its job's own group).
  auto tail = fmt::format("while [ ! -e {} ]; do sleep 0.01; done; exit 0", go.string());
  std::vector<std::shared_ptr<Process>> handles;
  std::vector<std::future<ExitInfo>> exits;
  for (auto& cmd : escapes(sleeper, tail)) {
    auto told = std::make_shared<std::promise<ExitInfo>>();
    exits.push_back(told->get_future());
    auto p = spawn_process(io, SpawnSpec{.argv = {"/bin/sh", "-c", cmd}},
                           ProcessEvents{.on_exit = [told](const ExitInfo& e) { told->set_value(e); }});
    CAF_REQUIRE(p.ok());
    handles.push_back(*p);
  }
  CAF_REQUIRE_EQUAL(sleeper.wait_alive(3), 3u);
  std::ofstream(go).flush();
  for (auto& exit : exits) {
    CAF_REQUIRE(exit.wait_for(30s) == std::future_status::ready);
    auto info = exit.get();
    CAF_CHECK_EQUAL(info.code, 0);
    CAF_CHECK_EQUAL(info.left_running, 1u);
    CAF_REQUIRE_EQUAL(info.left_commands.size(), 1u);
    CAF_CHECK(info.left_commands[0].find(sleeper.token + " 300") != std::string::npos);
  }
  // Told once they were gone: none runs now (no wait).
  CAF_CHECK_EQUAL(sleeper.alive().size(), 0u);
}

CAF_TEST(a daemon is named by a whole argument or its last part after a slash) {
  std::vector<std::string> names{"sccache", "org.gradle.launcher.daemon.bootstrap.GradleDaemon"};
  CAF_CHECK(names_daemon(names, {"sccache"}));
  CAF_CHECK(names_daemon(names, {"/usr/bin/sccache"}));
  CAF_CHECK(names_daemon(names, {"java", "-cp", "a.jar", "org.gradle.launcher.daemon.bootstrap.GradleDaemon", "8.5"}));
  // Not a path that only passes through it, nor a longer name.
  CAF_CHECK(!names_daemon(names, {"/bin/sh", "/home/u/src/sccache/build.sh"}));
  CAF_CHECK(!names_daemon(names, {"sccache-dist"}));
  CAF_CHECK(!names_daemon(names, {"/usr/bin/xsccache"}));
  CAF_CHECK(!names_daemon({}, {"sccache"}));
}

CAF_TEST(a daemon its config names is left running at a tools exit and abort and ended with jp-actors) {
  // A build's server (Gradle's daemon, Bazel's) is started to outlive the build:
  // killed at each exit, every build would start it again. It is named by an
  // argument (here argv[0], by its last part); what it started is kept with it (a
  // server's workers), while one still in the group, and what else left it, are
  // still killed and named.
  temp_dir dir;
  marked_sleep daemon(dir.path), helper(dir.path), other(dir.path);
  auto name = daemon.program.filename().string();
  auto go = dir.path / "go";
  IoThread io;
  auto tail = fmt::format("while [ ! -e {} ]; do sleep 0.01; done; exit 0", go.string());
  auto told = std::make_shared<std::promise<ExitInfo>>();
  auto exit = told->get_future();
  auto cmd = fmt::format("setsid {d} 300 & (setsid sh -c '{h} 300 & wait' {n} &); {d} 300 & (setsid {o} 300 &); {t}",
                         fmt::arg("d", daemon.program.string()), fmt::arg("h", helper.program.string()),
                         fmt::arg("n", name), fmt::arg("o", other.program.string()), fmt::arg("t", tail));
  auto p = spawn_process(io, SpawnSpec{.argv = {"/bin/sh", "-c", cmd}, .daemons = {name}},
                         ProcessEvents{.on_exit = [told](const ExitInfo& e) { told->set_value(e); }});
  CAF_REQUIRE(p.ok());
  CAF_REQUIRE_EQUAL(daemon.wait_alive(2), 2u);
  CAF_REQUIRE_EQUAL(helper.wait_alive(1), 1u);
  CAF_REQUIRE_EQUAL(other.wait_alive(1), 1u);
  std::ofstream(go).flush();
  CAF_REQUIRE(exit.wait_for(30s) == std::future_status::ready);
  auto info = exit.get();
  CAF_CHECK_EQUAL(info.left_running, 2u);
  CAF_REQUIRE_EQUAL(info.left_commands.size(), 2u);
  auto named = info.left_commands[0] + " " + info.left_commands[1];
  CAF_CHECK(named.find(daemon.token) != std::string::npos); // the one in the group
  CAF_CHECK(named.find(other.token) != std::string::npos);
  CAF_CHECK_EQUAL(other.alive().size(), 0u); // told once it was gone
  CAF_CHECK_EQUAL(daemon.alive().size(), 1u);
  CAF_CHECK_EQUAL(helper.alive().size(), 1u);
  // An abort spares them too (the group's own leader, `other`, is killed).
  auto q = spawn_process(io,
                         SpawnSpec{.argv = {"/bin/sh", "-c",
                                            fmt::format("setsid {} 300 & exec {} 300", daemon.program.string(),
                                                        other.program.string())},
                                   .daemons = {name}},
                         ProcessEvents{});
  CAF_REQUIRE(q.ok());
  CAF_REQUIRE_EQUAL(daemon.wait_alive(2), 2u);
  CAF_REQUIRE_EQUAL(other.wait_alive(1), 1u);
  auto gone = std::make_shared<std::promise<void>>();
  auto done = gone->get_future();
  (*q)->terminate(100ms, [gone] { gone->set_value(); });
  CAF_REQUIRE(done.wait_for(30s) == std::future_status::ready);
  CAF_CHECK_EQUAL(other.wait_none(), 0u);
  CAF_CHECK_EQUAL(daemon.alive().size(), 2u);
  CAF_CHECK_EQUAL(helper.alive().size(), 1u);
  // jp-actors' end ends what every tool left, these too.
  kill_escaped_processes();
  CAF_CHECK_EQUAL(daemon.wait_none(), 0u);
  CAF_CHECK_EQUAL(helper.wait_none(), 0u);
}

CAF_TEST(an abort kills a tool that moved itself into another group of our session) {
  // Without a terminal a tool leads only its own group, in our session, and may join
  // another group of it (here this test's own): its group is then empty, and the
  // tool is reached by its pid. With one, it leads its own session and cannot.
  if (has_controlling_terminal()) {
    CAF_MESSAGE("skipped: this test runs with a terminal, so its tools lead their own sessions");
    return;
  }
  temp_dir dir;
  marked_sleep sleeper(dir.path);
  IoThread io;
  auto cmd = fmt::format("exec perl -e 'setpgrp(0, getpgrp(getppid())) or die \"setpgrp: $!\"; exec @ARGV' {} 300",
                         sleeper.program.string());
  auto p = spawn_process(io, SpawnSpec{.argv = {"/bin/sh", "-c", cmd}}, ProcessEvents{});
  CAF_REQUIRE(p.ok());
  CAF_REQUIRE_EQUAL(sleeper.wait_alive(1), 1u);
  CAF_CHECK_EQUAL(::getpgid((*p)->pid()), ::getpgrp()); // it left its own group for ours
  auto gone = std::make_shared<std::promise<void>>();
  auto done = gone->get_future();
  (*p)->terminate(100ms, [gone] { gone->set_value(); });
  CAF_CHECK(done.wait_for(30s) == std::future_status::ready);
  CAF_CHECK_EQUAL(sleeper.wait_none(), 0u);
}

CAF_TEST(a terminate signal to jp-actors kills what left the tools group or session) {
  temp_dir ws;
  marked_sleep sleeper(ws.path);
  pid_t cli_pid = start_escaping_run(ws, sleeper);
  ::kill(cli_pid, SIGTERM);
  int status = 0;
  reap_child(cli_pid, &status);
  CAF_CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM);
  CAF_CHECK_EQUAL(sleeper.wait_none(), 0u);
}

CAF_TEST(a terminate signal gives what left a tool s group the grace too) {
  // The tool died of the TERM at once (`exec sleep`): with no group of its left, the
  // shutdown killed its setsid'd helper within milliseconds, mid-cleanup. (An MCP
  // session's handles: its program does not wait out their aborts.)
  temp_dir ws;
  auto ready = ws.path / "ready", cleaned = ws.path / "cleaned";
  auto command = fmt::format("setsid sh -c 'trap \"sleep 0.3; echo done > {}; exit 0\" TERM; touch {}; "
                             "while :; do sleep 0.01; done' </dev/null >/dev/null 2>&1 & exec sleep 1000",
                             cleaned.string(), ready.string());
  int in[2];
  CAF_REQUIRE(::pipe2(in, O_CLOEXEC) == 0);
  pid_t cli_pid = ::fork();
  if (cli_pid == 0) {
    ::setpgid(0, 0);
    ::dup2(in[0], 0);
    int devnull = ::open("/dev/null", O_RDWR);
    ::dup2(devnull, 1);
    exec_child({JP_CLI_BINARY, "--cfg", "runtime.abort_grace_secs=30", "--workspace", ws.path.string(), "mcp"},
               state_home_of(ws.path.string()));
  }
  ::close(in[0]);
  CAF_REQUIRE(cli_pid > 0);
  own_child(cli_pid, SIGKILL);
  auto call = fmt::format(R"({{"action":"spawn","id":"c","wait_ms":0,"command":{}}})", json_quote(command));
  std::string session =
    R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},)"
    R"("clientInfo":{"name":"t","version":"1"}}})" "\n"
    R"({"jsonrpc":"2.0","method":"notifications/initialized"})" "\n" +
    fmt::format(R"({{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{{"name":"shell","arguments":{}}}}})",
                call) + "\n";
  CAF_REQUIRE(::write(in[1], session.data(), session.size()) == static_cast<ssize_t>(session.size()));
  CAF_REQUIRE(testing::wait_for([&] { return std::filesystem::exists(ready); }));
  ::kill(cli_pid, SIGTERM);
  int status = 0;
  reap_child(cli_pid, &status);
  ::close(in[1]);
  CAF_CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM);
  CAF_CHECK(std::filesystem::exists(cleaned)); // its cleanup ran to its end
}

namespace {

/// A shell script that writes a line to `terms` per TERM it gets, makes `ready`, and
/// ends by itself 50 sleeps after its first TERM: a second TERM has that long to
/// show, and no grace's end (30 s here) need come to end it.
std::string counts_terms(const std::filesystem::path& terms, const std::filesystem::path& ready) {
  return fmt::format("trap \"echo t >> {0}\" TERM; touch {1}; n=0; "
                     "while [ $n -lt 50 ]; do sleep 0.01; if [ -s {0} ]; then n=$((n+1)); fi; done",
                     terms.string(), ready.string());
}

/// What `terms` holds (a line per TERM a tool counted) once `script` ran until
/// `ready` was made and jp-actors ended by SIGTERM.
std::string terms_after_terminate(const temp_dir& ws, const std::filesystem::path& script,
                                  const std::filesystem::path& ready, const std::filesystem::path& terms) {
  pid_t cli_pid = start_cli(state_home_of(ws.path.string()), {"--cfg", "runtime.abort_grace_secs=30", "--workspace",
                                                              ws.path.string(), "run", script.string()});
  CAF_REQUIRE(cli_pid > 0);
  CAF_REQUIRE(testing::wait_for([&] { return std::filesystem::exists(ready); }));
  ::kill(cli_pid, SIGTERM);
  reap_child(cli_pid);
  std::ifstream in(terms);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

} // namespace

CAF_TEST(a terminate signal reaches a jp-actors run as a tool once and its tools get their TERM) {
  // The outer shutdown TERMed the tool's group and then the inner jp-actors again as
  // one carrying its mark: the inner took the second as "now" and killed its tools
  // without a TERM.
  temp_dir ws;
  auto ready = ws.path / "ready", terms = ws.path / "terms";
  {
    std::ofstream inner(ws.path / "inner.toml");
    inner << fmt::format("[[agents]]\nname = \"in\"\n  [[agents.steps]]\n  [[agents.steps.calls]]\n"
                         "  tool = \"shell\"\n  arguments = {{ action = \"spawn\", id = \"t\", wait_ms = 0, "
                         "command = '''{}''' }}\n"
                         "  [[agents.steps.calls]]\n  tool = \"await\"\n  arguments = {{ all = [\"t\"] }}\n",
                         counts_terms(terms, ready));
  }
  write_script(ws.path / "outer.toml",
               {fmt::format("{} --cfg runtime.abort_grace_secs=30 --workspace {} run {} > {} 2>&1", JP_CLI_BINARY,
                            ws.path.string(), (ws.path / "inner.toml").string(), (ws.path / "inner.out").string())});
  CAF_CHECK_EQUAL(terms_after_terminate(ws, ws.path / "outer.toml", ready, terms), "t\n");
}

CAF_TEST(a terminate signal sends what left a tool s group one TERM) {
  // The program's abort of its handle TERMed the tool's setsid'd helper by its mark,
  // and the shutdown's own pass over our marks did again.
  temp_dir ws;
  auto ready = ws.path / "ready", terms = ws.path / "terms";
  write_script(ws.path / "twice.toml",
               {fmt::format("setsid sh -c '{}' </dev/null >/dev/null 2>&1 & while :; do sleep 0.01; done",
                            counts_terms(terms, ready))});
  CAF_CHECK_EQUAL(terms_after_terminate(ws, ws.path / "twice.toml", ready, terms), "t\n");
}

CAF_TEST(a crash of jp-actors kills what left the tools group or session) {
  // An exception nothing caught (std::terminate) in `run`, `call`, `mcp` or `node`:
  // the CLI's handler killed the groups only, and closed the crash record, so what
  // had left its group lived on with nothing to sweep it. A child of this test is
  // that crashing jp-actors.
  temp_dir dir;
  marked_sleep sleeper(dir.path);
  pid_t crashing = ::fork();
  CAF_REQUIRE(crashing >= 0);
  if (crashing == 0) {
    rlimit no_core{0, 0};
    ::setrlimit(RLIMIT_CORE, &no_core);
    // A fork keeps the process settings made once (this test's earlier IoThreads
    // made them) but not this one: the orphans are ours, as they are jp-actors'.
    ::prctl(PR_SET_CHILD_SUBREAPER, 1);
    IoThread io; // the CLI's order: its io thread, then the handlers
    install_crash_cleanup();
    auto escape = escapes(sleeper, fmt::format("exec {} 300", sleeper.program.string()))[0];
    auto p = spawn_process(io, SpawnSpec{.argv = {"/bin/sh", "-c", escape}}, ProcessEvents{});
    if (!p || sleeper.wait_alive(2) != 2) // it escaped, and the tool runs on
      std::_Exit(3);
    std::terminate();
  }
  int status = 0;
  reap_child(crashing, &status);
  CAF_CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT);
  CAF_CHECK_EQUAL(sleeper.wait_none(), 0u);
}

CAF_TEST(the end of a run kills what its tools left outside their group or session) {
  temp_dir ws;
  marked_sleep sleeper(ws.path);
  // The tools end at once, successfully, leaving their escapes running.
  write_script(ws.path / "escape.toml", escapes(sleeper, "exit 0"));
  auto r = cli_in(ws.path.string(), fmt::format("run {}", (ws.path / "escape.toml").string()));
  CAF_CHECK_EQUAL(r.status, 0);
  CAF_CHECK_EQUAL(sleeper.wait_none(), 0u);
}

CAF_TEST(a run tells the model what its tool left running outside its group was killed) {
  // `timeout` leads a group of its own: the tool's exit is its group's end, and the
  // model is told that what it started in the background is gone, not left to think
  // its server runs. The tool ends once timeout has forked (its setpgid comes first).
  temp_dir ws;
  marked_sleep sleeper(ws.path);
  write_script(ws.path / "timeout.toml",
               {fmt::format("timeout 300 {} 300 & while [ -z \"$(cat /proc/$!/task/$!/children)\" ]; do :; done",
                            sleeper.program.string())});
  auto r = cli_in(ws.path.string(), fmt::format("run {}", (ws.path / "timeout.toml").string()));
  CAF_CHECK_EQUAL(r.status, 0);
  if (r.out.find("the 2 processes it left running in the background were killed with it: `timeout 300 ") ==
      std::string::npos)
    CAF_FAIL("it said: " << r.out);
  CAF_CHECK(r.out.find(sleeper.token + " 300`") != std::string::npos);
  CAF_CHECK_EQUAL(sleeper.wait_none(), 0u);
}

CAF_TEST(a run leaves the daemon runtime daemons names running past its tool until the run ends) {
  // The first call's tool starts it outside its group (and waits until it leads a
  // session of its own, as a build waits for its server) and exits; the second finds
  // it still running; the run's end ends it.
  temp_dir ws;
  marked_sleep daemon(ws.path);
  auto pid_file = (ws.path / "daemon.pid").string();
  std::ofstream(ws.path / "daemon.toml")
    << fmt::format("[[agents]]\nname = \"a\"\n"
                   "  [[agents.steps]]\n  [[agents.steps.calls]]\n  tool = \"shell\"\n"
                   "  arguments = {{ command = '''setsid {} 300 & "
                   "until [ \"$(cut -d' ' -f6 /proc/$!/stat)\" = $! ]; do :; done; echo $! > {}''' }}\n"
                   "  [[agents.steps]]\n  [[agents.steps.calls]]\n  tool = \"shell\"\n"
                   "  arguments = {{ command = '''kill -0 $(cat {}) && echo daemon-runs''' }}\n",
                   daemon.program.string(), pid_file, pid_file);
  auto r = cli_in(ws.path.string(), fmt::format("--cfg 'runtime.daemons=[\"{}\"]' run {}",
                                                daemon.program.filename().string(), (ws.path / "daemon.toml").string()));
  JP_REQUIRE_OK(r);
  if (r.out.find("daemon-runs") == std::string::npos || r.out.find("killed with it") != std::string::npos)
    CAF_FAIL("it said: " << r.out);
  CAF_CHECK_EQUAL(daemon.wait_none(), 0u);
}

CAF_TEST(an abort of a jp-actors run as a tool ends the tools of that run too) {
  // The outer abort's grace ended before the inner run's: it killed the inner
  // jp-actors, whose TERM-ignoring tool carried only the inner mark and lived on
  // until the outer run ended. The inner run passes the outer mark on to its tools;
  // they get one TERM, the inner run's (a second from the outer cut their grace short).
  temp_dir ws;
  marked_sleep sleeper(ws.path);
  auto ready = ws.path / "ready", terms = ws.path / "terms";
  {
    std::ofstream inner(ws.path / "inner.toml");
    inner << fmt::format("[[agents]]\nname = \"in\"\n  [[agents.steps]]\n  [[agents.steps.calls]]\n"
                         "  tool = \"shell\"\n  arguments = {{ action = \"spawn\", id = \"deaf\", wait_ms = 0, "
                         "command = '''trap 'echo t >> {}' TERM; trap '' HUP INT; touch {}; "
                         "while :; do {} 0.01; done''' }}\n"
                         "  [[agents.steps.calls]]\n  tool = \"await\"\n  arguments = {{ all = [\"deaf\"] }}\n",
                         terms.string(), ready.string(), sleeper.program.string());
  }
  // The sleeper's token with one letter in brackets: the grep's own command line
  // does not match it.
  auto pattern = sleeper.token.substr(0, 1) + "[" + sleeper.token.substr(1, 1) + "]" + sleeper.token.substr(2);
  {
    std::ofstream outer(ws.path / "outer.toml");
    outer << fmt::format(
      "[[agents]]\nname = \"out\"\n"
      "  [[agents.steps]]\n  [[agents.steps.calls]]\n  tool = \"shell\"\n"
      "  arguments = {{ action = \"spawn\", id = \"inner\", wait_ms = 0, command = '''{} --cfg "
      "runtime.abort_grace_secs=60 --workspace {} run {} > {}/inner.out 2>&1''' }}\n"
      "  [[agents.steps]]\n  [[agents.steps.calls]]\n  tool = \"shell\"\n"
      "  arguments = {{ command = '''until [ -e {} ]; do sleep 0.01; done; echo inner-tool-runs''' }}\n"
      "  [[agents.steps]]\n  [[agents.steps.calls]]\n  tool = \"shell\"\n"
      "  arguments = {{ action = \"abort\", id = \"inner\" }}\n"
      "  [[agents.steps]]\n  [[agents.steps.calls]]\n  tool = \"shell\"\n"
      "  arguments = {{ command = '''cat {}; if grep -qs '{}' /proc/[0-9]*/cmdline; then echo LEFT; "
      "else echo NONE-LEFT; fi''' }}\n",
      JP_CLI_BINARY, ws.path.string(), (ws.path / "inner.toml").string(), ws.path.string(), ready.string(),
      terms.string(), pattern);
  }
  auto r = cli_in(ws.path.string(),
                  fmt::format("--cfg runtime.abort_grace_secs=1 run {} --json", (ws.path / "outer.toml").string()));
  JP_REQUIRE_OK(r);
  // The results' contents (the commands name both words too). The tool's one TERM
  // (the inner run's) is counted if it came within the outer's grace of 1 s, which
  // a loaded machine need not give: none is no failure, two are.
  if (r.out.find(R"("content":"inner-tool-runs\n")") == std::string::npos ||
      (r.out.find(R"("content":"t\nNONE-LEFT\n")") == std::string::npos &&
       r.out.find(R"("content":"NONE-LEFT\n")") == std::string::npos))
    CAF_FAIL("it said: " << r.out);
  CAF_CHECK_EQUAL(sleeper.wait_none(), 0u);
}

CAF_TEST(a process outside jp-actors that carries a tool mark is not killed at its end) {
  // A tool can copy its mark into environments jp-actors does not own (a service
  // manager's, a terminal multiplexer's, a .envrc): what starts from there is not
  // its to kill. Here the test itself starts such a process, with the mark the
  // tool showed, while the run waits.
  temp_dir ws;
  marked_sleep sleeper(ws.path);
  auto mark_file = ws.path / "mark", go = ws.path / "go";
  write_script(ws.path / "copy.toml",
               {fmt::format("printf %s \"$JP_ACTORS_TOOL\" > {}; while [ ! -e {} ]; do sleep 0.01; done",
                            mark_file.string(), go.string())});
  pid_t cli_pid = start_cli(state_home_of(ws.path.string()),
                            {"--workspace", ws.path.string(), "run", (ws.path / "copy.toml").string()});
  CAF_REQUIRE(cli_pid > 0);
  std::string mark;
  for (auto deadline = std::chrono::steady_clock::now() + 60s;
       mark.empty() && std::chrono::steady_clock::now() < deadline; std::this_thread::sleep_for(5ms))
    std::ifstream(mark_file) >> mark;
  CAF_REQUIRE(!mark.empty());
  pid_t outsider = ::fork();
  if (outsider == 0) {
    ::setsid();
    ::setenv("JP_ACTORS_TOOL", mark.c_str(), 1);
    ::execl(sleeper.program.c_str(), sleeper.program.c_str(), "300", nullptr);
    ::_exit(127);
  }
  own_child(outsider, SIGKILL);
  CAF_REQUIRE_EQUAL(sleeper.wait_alive(1), 1u);
  std::ofstream(go).flush();
  int status = 0;
  reap_child(cli_pid, &status);
  CAF_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  CAF_CHECK_EQUAL(sleeper.alive().size(), 1u); // still running: not jp-actors' to kill
  ::kill(outsider, SIGKILL);
  reap_child(outsider);
}

CAF_TEST(after a kill signal the next start kills what the tools left outside their group or session) {
  temp_dir ws;
  marked_sleep sleeper(ws.path);
  pid_t cli_pid = start_escaping_run(ws, sleeper);
  ::kill(cli_pid, SIGKILL); // no chance to clean up
  reap_child(cli_pid);
  auto next = cli_in(ws.path.string(), "tools");
  CAF_CHECK_EQUAL(next.status, 0);
  CAF_CHECK(next.out.find("of its tools outside them") != std::string::npos);
  CAF_CHECK_EQUAL(sleeper.wait_none(), 0u);
}
