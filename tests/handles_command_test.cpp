// `jp-actors handles ls` / `handles abort` (issue 19): a running `run` with two
// handles is seen and one of them aborted from another process, through the run's
// control socket in the user's runtime directory (runtime/control_socket.hpp).
#define CAF_SUITE handles_command
#include <caf/test/unit_test.hpp>

#include <sstream>

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <future>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <thread>

#include "child_wait.hpp"
#include "cli_run.hpp"
#include "contains.hpp"
#include "marked_processes.hpp"
#include "messages/json.hpp"
#include "runtime/control_socket.hpp"
#include "scoped_env.hpp"
#include "temp_dir.hpp"

using namespace jp;
using namespace jp::testing;

namespace {

/// The address of a Unix socket at `path` (a test's, well within sun_path).
sockaddr_un unix_address(const std::filesystem::path& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", path.c_str());
  return addr;
}

pid_t pid_in(const std::filesystem::path& file) {
  pid_t pid = 0;
  std::ifstream(file) >> pid;
  return pid;
}

/// One agent: `a` and `b` run until aborted (`b` would end at a gate that never
/// opens); then it awaits both.
const char* const kTwoHandles = R"([[agents]]
name = "main"
  [[agents.steps]]
  [[agents.steps.calls]]
  tool = "shell"
  arguments = { action = "spawn", id = "a", wait_ms = 0, command = "echo $$ > a.tmp && mv a.tmp a.pid && echo a is up && exec sleep 1000" }
  [[agents.steps.calls]]
  tool = "shell"
  arguments = { action = "spawn", id = "b", wait_ms = 0, command = "echo $$ > b.tmp && mv b.tmp b.pid && until [ -e gate ]; do sleep 0.01; done; echo b done" }
  [[agents.steps]]
  [[agents.steps.calls]]
  tool = "await"
  arguments = { all = ["a", "b"], timeout_secs = 600 }
)";

struct fixture {
  temp_dir ws;
  temp_dir other; // another workspace
  temp_dir runtime;
  scoped_env runtime_dir{"XDG_RUNTIME_DIR", runtime.path}; // this test's sockets alone
  pid_t run = -1;
  ~fixture() { end_cli(run); }
  std::filesystem::path control() const { return runtime.path / "jp-actors"; }
  /// The live handles of the workspace, as `handles ls --json` gives them.
  JsonArray live(const std::string& where) {
    auto r = cli_in(where, "handles ls --json");
    if (r.status != 0)
      CAF_FAIL("handles ls failed:\n" << r.out);
    auto j = Json::parse(r.stdout_text);
    if (!j || !j->is_array())
      CAF_FAIL("handles ls --json is no JSON array:\n" << r.out);
    return j->as_array();
  }
};

std::vector<std::string> ids_of(const JsonArray& handles) {
  std::vector<std::string> ids;
  for (auto& h : handles)
    ids.push_back(h.find("id")->as_string());
  std::sort(ids.begin(), ids.end());
  return ids;
}

} // namespace

CAF_TEST_FIXTURE_SCOPE(handles_command_tests, fixture)

CAF_TEST(handles ls lists a running run and handles abort ends one of its handles) {
  ws.write("two.toml", kTwoHandles);
  auto ws_path = ws.path.string();
  run = start_cli(state_home_of(ws_path), {"--workspace", ws_path, "run", (ws.path / "two.toml").string()});
  CAF_REQUIRE(wait_for([&] { return pid_in(ws.path / "a.pid") > 0 && pid_in(ws.path / "b.pid") > 0; }));
  pid_t a = pid_in(ws.path / "a.pid");
  // Listed with who holds them.
  auto handles = live(ws_path);
  CAF_REQUIRE_EQUAL(ids_of(handles), (std::vector<std::string>{"a", "b"}));
  for (auto& h : handles) {
    CAF_CHECK_EQUAL(h.find("tool")->as_string(), "shell");
    CAF_CHECK_EQUAL(h.find("state")->as_string(), "running");
    CAF_CHECK_EQUAL(h.find("pid")->as_int(), static_cast<int64_t>(run));
    CAF_CHECK_EQUAL(h.find("command")->as_string(), "run");
    CAF_CHECK_EQUAL(h.find("agent")->as_string(), "main");
    CAF_CHECK(h.find("elapsed_secs")->is_number());
  }
  auto text = cli_in(ws_path, "handles ls");
  JP_REQUIRE_OK(text);
  CAF_CHECK(contains(text.out, fmt::format("pid {} run", run)));
  CAF_CHECK(contains(text.out, "a is up")); // its last line
  // Another workspace sees none of them, unless it asks for all.
  auto elsewhere = cli_in(other.path.string(), "handles ls");
  JP_REQUIRE_OK(elsewhere);
  CAF_CHECK(contains(elsewhere.out, "no running jp-actors holds handles in"));
  CAF_CHECK_EQUAL(ids_of(live(other.path.string())), std::vector<std::string>{});
  auto all = cli_in(other.path.string(), "handles ls --all --json");
  JP_REQUIRE_OK(all);
  CAF_CHECK(contains(all.stdout_text, ws_path));
  // The socket is the user's alone, and not in the workspace.
  struct stat dir {}, sock {};
  auto socket = control() / fmt::format("{}.sock", run);
  CAF_REQUIRE_EQUAL(::stat(control().c_str(), &dir), 0);
  CAF_REQUIRE_EQUAL(::stat(socket.c_str(), &sock), 0);
  CAF_CHECK_EQUAL(dir.st_mode & 0777, 0700u);
  CAF_CHECK_EQUAL(sock.st_mode & 0777, 0600u);
  // It says how long an abort there may take (its grace, 2 s, and 20 more): a client
  // of another config waits as long.
  auto said = ask_control_socket(socket, Json::object().set("op", "ls"));
  CAF_REQUIRE(said.ok());
  CAF_CHECK_EQUAL(said->find("abort_secs")->as_number(), 22.0);
  // An id nobody holds is refused, saying where to look.
  auto nope = cli_in(ws_path, "handles abort nope");
  CAF_CHECK_EQUAL(nope.status, 1);
  CAF_CHECK(contains(nope.out, "no running handle `nope`"));
  CAF_CHECK(contains(nope.out, "handles ls"));
  // Aborting `a` ends its process; `b` runs on.
  auto aborted = cli_in(ws_path, "handles abort a");
  JP_REQUIRE_OK(aborted);
  CAF_CHECK(contains(aborted.out, "aborted `a`"));
  // As the assistant sees a handle's end.
  CAF_CHECK(contains(aborted.out, R"(: {"id":"a","state":"stopped","error":{"message":"aborted)"));
  CAF_CHECK(wait_for([&] { return ::kill(a, 0) != 0; }));
  CAF_CHECK_EQUAL(ids_of(live(ws_path)), std::vector<std::string>{"b"});
  // Aborting the last one ends the await and so the run: the answer still comes
  // (the turn answers it, not the loop that ended), and the socket goes with the run.
  auto last = cli_in(ws_path, "handles abort b");
  JP_REQUIRE_OK(last);
  CAF_CHECK(contains(last.out, "aborted `b`"));
  CAF_CHECK_EQUAL(wait_exit(run), 0);
  CAF_CHECK(!std::filesystem::exists(socket));
}

CAF_TEST(handles ls shows what a foreach reports of itself as its last line) {
  ws.write("each.toml", R"([[agents]]
name = "main"
  [[agents.steps]]
  [[agents.steps.calls]]
  tool = "foreach"
  arguments = { action = "spawn", id = "f", prompt = "do {{element}}", elements = ["x"], script = "sleeper" }
  [[agents.steps]]
  [[agents.steps.calls]]
  tool = "await"
  arguments = { all = ["f"], timeout_secs = 600 }
[[subagents]]
name = "sleeper"
  [[subagents.steps]]
  [[subagents.steps.calls]]
  tool = "shell"
  arguments = { command = "echo $$ > s.tmp && mv s.tmp s.pid && exec sleep 1000" }
)");
  auto ws_path = ws.path.string();
  run = start_cli(state_home_of(ws_path), {"--workspace", ws_path, "run", (ws.path / "each.toml").string()});
  CAF_REQUIRE(wait_for([&] { return pid_in(ws.path / "s.pid") > 0; }));
  auto handles = live(ws_path);
  CAF_REQUIRE_EQUAL(ids_of(handles), (std::vector<std::string>{"f"}));
  CAF_CHECK_EQUAL(handles.front().find("last_line")->as_string(), "");
  CAF_CHECK_EQUAL(handles.front().find("progress")->as_string(), "0/1 done, 1 running");
  // The table shows it where the handle has no last line.
  auto text = cli_in(ws_path, "handles ls");
  JP_REQUIRE_OK(text);
  CAF_CHECK(contains(text.out, "0/1 done, 1 running"));
}

CAF_TEST(handles ls and abort reach the handles a sub-agent holds) {
  // The sub-agent `w` spawns `bg`, and so does main: the same id, two agents.
  ws.write("nested.toml", R"([[agents]]
name = "main"
  [[agents.steps]]
  [[agents.steps.calls]]
  tool = "agent"
  arguments = { action = "spawn", id = "w", prompt = "go", script = "worker" }
  [[agents.steps.calls]]
  tool = "shell"
  arguments = { action = "spawn", id = "bg", wait_ms = 0, command = "echo $$ > m.tmp && mv m.tmp m.pid && exec sleep 1000" }
  [[agents.steps]]
  [[agents.steps.calls]]
  tool = "await"
  arguments = { all = ["w", "bg"], timeout_secs = 600 }
[[subagents]]
name = "worker"
  [[subagents.steps]]
  [[subagents.steps.calls]]
  tool = "shell"
  arguments = { action = "spawn", id = "bg", wait_ms = 0, command = "echo $$ > s.tmp && mv s.tmp s.pid && exec sleep 1000" }
  [[subagents.steps]]
  [[subagents.steps.calls]]
  tool = "await"
  arguments = { all = ["bg"], timeout_secs = 600 }
)");
  auto ws_path = ws.path.string();
  run = start_cli(state_home_of(ws_path), {"--workspace", ws_path, "run", (ws.path / "nested.toml").string()});
  CAF_REQUIRE(wait_for([&] { return pid_in(ws.path / "s.pid") > 0 && pid_in(ws.path / "m.pid") > 0; }));
  pid_t inner = pid_in(ws.path / "s.pid"), outer = pid_in(ws.path / "m.pid");
  std::vector<std::string> held;
  for (auto& h : live(ws_path))
    held.push_back(h.find("agent")->as_string() + ":" + h.find("id")->as_string());
  std::sort(held.begin(), held.end());
  CAF_CHECK_EQUAL(held, (std::vector<std::string>{"main/w:bg", "main:bg", "main:w"}));
  // The table names each one's agent, as --agent takes it.
  auto table = cli_in(ws_path, "handles ls");
  JP_REQUIRE_OK(table);
  std::vector<std::string> agents; // of the rows of `bg`, from the AGENT column
  std::istringstream lines(table.out);
  size_t column = std::string::npos;
  for (std::string line; std::getline(lines, line);) {
    if (line.starts_with("ID "))
      column = line.find("AGENT");
    else if (line.starts_with("bg ") && column < line.size())
      agents.push_back(line.substr(column, line.find(' ', column) - column));
  }
  std::sort(agents.begin(), agents.end());
  CAF_CHECK_EQUAL(agents, (std::vector<std::string>{"main", "main/w"}));
  // The id two agents hold is refused without saying whose; with it, that one goes.
  auto which = cli_in(ws_path, "handles abort bg");
  CAF_CHECK_EQUAL(which.status, 1);
  CAF_CHECK(contains(which.out, "several agents hold a handle `bg` (main, main/w): say which with --agent"));
  auto aborted = cli_in(ws_path, "handles abort bg --agent main/w");
  JP_REQUIRE_OK(aborted);
  CAF_CHECK(contains(aborted.out, "aborted `bg`"));
  CAF_CHECK(wait_for([&] { return ::kill(inner, 0) != 0; }));
  CAF_CHECK_EQUAL(::kill(outer, 0), 0); // main's runs on
  // The sub-agent heard of it and ended; main's `bg` is the last.
  CAF_CHECK(wait_for([&] { return ids_of(live(ws_path)) == std::vector<std::string>{"bg"}; }));
  JP_REQUIRE_OK(cli_in(ws_path, "handles abort bg"));
  CAF_CHECK_EQUAL(wait_exit(run), 0);
}

CAF_TEST(a control directory others may enter is refused) {
  std::filesystem::create_directories(control());
  ::chmod(control().c_str(), 0755);
  auto r = cli_in(ws.path.string(), "handles ls");
  CAF_CHECK_EQUAL(r.status, 1);
  CAF_CHECK(contains(r.out, "only it may enter (mode 0700)"));
}

CAF_TEST(the control socket answers one JSON line and refuses what is not one) {
  std::string error;
  auto server = ControlServer::start([](const Json& request) { return Json::object().set("echo", request); }, error);
  CAF_REQUIRE(server != nullptr);
  CAF_CHECK_EQUAL(server->path().parent_path(), control());
  auto echoed = ask_control_socket(server->path(), Json::object().set("op", "ls"));
  CAF_REQUIRE(echoed.ok());
  CAF_CHECK_EQUAL(echoed->dump(), R"({"echo":{"op":"ls"}})");
  // Not JSON: answered with why.
  auto raw = [&](const std::string& bytes) {
    int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    auto addr = unix_address(server->path());
    CAF_REQUIRE_EQUAL(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    size_t off = 0;
    while (off < bytes.size()) {
      auto n = ::send(fd, bytes.data() + off, bytes.size() - off, MSG_NOSIGNAL);
      if (n <= 0)
        break; // the server stopped reading: what it answers is what counts
      off += static_cast<size_t>(n);
    }
    std::string in;
    char buf[4096];
    ssize_t n;
    while ((n = ::read(fd, buf, sizeof buf)) > 0)
      in.append(buf, static_cast<size_t>(n));
    ::close(fd);
    return in;
  };
  CAF_CHECK(contains(raw("not json\n"), "a request is one JSON object on one line"));
  // Past 64 KiB the request is dropped unanswered, and the server serves on.
  CAF_CHECK_EQUAL(raw(std::string(70 * 1024, ' ') + "{}\n"), "");
  CAF_CHECK(ask_control_socket(server->path(), Json::object()).ok());
  // A socket nobody listens on any more (a SIGKILLed run's) is passed over and removed.
  auto stale = control() / "1.sock";
  {
    int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    auto addr = unix_address(stale);
    CAF_REQUIRE_EQUAL(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    ::close(fd);
  }
  auto answers = ask_every_control_socket(Json::object());
  CAF_REQUIRE(answers.ok());
  CAF_CHECK_EQUAL(answers->size(), 1u);
  CAF_CHECK(!std::filesystem::exists(stale));
  // Gone with the server.
  auto path = server->path();
  server.reset();
  CAF_CHECK(!std::filesystem::exists(path));
}

CAF_TEST(a control socket client that never reads its answer holds neither the next client nor the end) {
  // An answer bigger than the socket holds (a run's many handles, a long output).
  std::string error;
  auto server = ControlServer::start(
    [](const Json& request) { return Json::object().set("big", std::string(8 << 20, 'x')).set("echo", request); },
    error);
  CAF_REQUIRE(server != nullptr);
  int stuck = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  auto addr = unix_address(server->path());
  CAF_REQUIRE_EQUAL(::connect(stuck, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  CAF_REQUIRE_EQUAL(::send(stuck, "{}\n", 3, MSG_NOSIGNAL), 3);
  // Answered once the first is dropped (its bound, 5 s, within this wait's).
  auto next = ask_control_socket(server->path(), Json::object().set("op", "ls"), 30000);
  CAF_CHECK(next.ok());
  ::close(stuck); // a server still stuck on it would go on now: the check above tells
  server.reset();
}

CAF_TEST(a control socket answers a client while another request of it waits) {
  // An abort waits out its tool's grace: a `handles ls` meanwhile went unanswered.
  std::promise<void> release, entered;
  auto released = release.get_future().share();
  std::string error;
  auto server = ControlServer::start(
    [released, &entered](const Json& request) {
      if (request.find("op") && request.find("op")->as_string() == "slow") {
        entered.set_value();
        released.wait();
      }
      return Json::object().set("echo", request);
    },
    error);
  CAF_REQUIRE(server != nullptr);
  auto slow = std::async(std::launch::async, [&] {
    return ask_control_socket(server->path(), Json::object().set("op", "slow"), 600000);
  });
  entered.get_future().wait(); // the slow one holds a thread of the server now
  // Bounded: a server answering one at a time would answer it only after `slow`.
  auto quick = ask_control_socket(server->path(), Json::object().set("op", "ls"), 10000);
  CAF_CHECK(quick.ok());
  release.set_value();
  CAF_CHECK(slow.get().ok());
  server.reset();
}

CAF_TEST(a holder that accepts no connection is said not to answer and bounds the wait) {
  // A process stopped by Ctrl-Z: its listen queue fills, and a blocking connect then
  // waited as long as it stayed stopped. Here a socket that listens and never accepts.
  std::filesystem::create_directories(control());
  ::chmod(control().c_str(), 0700);
  auto path = control() / "2.sock";
  int listener = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  auto addr = unix_address(path);
  CAF_REQUIRE_EQUAL(::bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  CAF_REQUIRE_EQUAL(::listen(listener, 0), 0);
  std::vector<int> queued; // until the queue is full
  for (int i = 0; i < 64; ++i) {
    int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
      ::close(fd);
      break;
    }
    queued.push_back(fd);
  }
  auto stuck = ask_control_socket(path, Json::object().set("op", "ls"), 1000);
  CAF_REQUIRE(!stuck.ok());
  CAF_CHECK(contains(stuck.error(), "no answer within 1 s"));
  // `handles ls` names it and does not say nobody holds handles.
  auto ls = cli_in(ws.path.string(), "handles ls");
  CAF_CHECK_EQUAL(ls.status, 1);
  CAF_CHECK(contains(ls.out, "2.sock: no answer within 5 s"));
  CAF_CHECK(contains(ls.out, "1 running jp-actors did not answer (above): any handles it holds here are not listed"));
  CAF_CHECK(!contains(ls.out, "no running jp-actors holds handles"));
  auto abort = cli_in(ws.path.string(), "handles abort x");
  CAF_CHECK_EQUAL(abort.status, 1);
  CAF_CHECK(contains(abort.out, "among those that answered; 1 did not (above)"));
  for (int fd : queued)
    ::close(fd);
  ::close(listener);
}

CAF_TEST_FIXTURE_SCOPE_END()
