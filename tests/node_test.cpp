// Nodes end to end (DESIGN.md "Nodes"): a `jp-actors node` and a client `jp-actors
// run` in separate processes on loopback. Remote and local handles in one await;
// apply and abort on a remote handle; the token; the node's own permissions; a node
// killed (its handles stop, transient) and a client killed (the node aborts its
// handles). Every process a test starts is killed by its end.
#define CAF_SUITE node
#include <caf/test/unit_test.hpp>

#include <arpa/inet.h>
#include <atomic>
#include <filesystem>
#include <fcntl.h>
#include <fmt/format.h>
#include <fstream>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <jp/jp.hpp>
#include <sstream>
#include <thread>
#include <signal.h>
#include <string>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <caf/all.hpp>
#include <caf/io/middleman.hpp>

#include "actors/interfaces.hpp"
#include "actors/node_stopping.hpp"
#include "messages/error_category.hpp"
#include "runtime/actor_config.hpp"
#include "runtime/node/node_address.hpp"
#include "runtime/node/node_heartbeat.hpp"
#include "runtime/node/node_token.hpp"
#include "runtime/node/port_listener_owner.hpp"
#include "cli_run.hpp"
#include "marked_processes.hpp"
#include "child_wait.hpp"
#include "other_user.hpp"
#include "owned_children.hpp"
#include "scoped_env.hpp"
#include "temp_dir.hpp"
#include "contains.hpp"

using namespace jp;
using namespace jp::testing;

namespace {

std::string read_file(const std::string& path);

/// A child in its own session, stdout and stderr to `out_path`; killed (its whole
/// group) by the end of the test.

struct Child {
  pid_t pid = -1;
  std::string outp;
  Child(const std::vector<std::string>& argv, const std::string& state_home, const std::string& out_path)
      : outp(out_path) {
    pid = ::fork();
    if (pid == 0) {
      ::setsid();
      int devnull = ::open("/dev/null", O_RDONLY);
      int out = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
      ::dup2(devnull, 0);
      ::dup2(out, 1);
      ::dup2(out, 2);
      exec_child(argv, state_home);
    }
    own_child(-pid, SIGTERM); // a jp-actors node: it ends its tools
  }
  ~Child() { end_cli(pid); }
  void kill9() {
    disown_child(pid);
    ::kill(-pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
    pid = -1;
  }
  /// Its exit status, or -1 when it has not ended within 60 s (it is then left to the
  /// destructor, which kills it): a bound against a hang, on a loaded machine too.
  int wait() {
    int st = 0;
    for (int i = 0; i < 6000; ++i) {
      if (::waitpid(pid, &st, WNOHANG) == pid) {
        disown_child(pid);
        pid = -1;
        return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    CAF_ERROR("still running after 60 s; it said:\n" << read_file(outp));
    return -1;
  }
};

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

/// Whether `path` came to hold `text` within 60 s (a child's output, read as it grows).
bool said_within(const std::string& path, const std::string& text) {
  for (int i = 0; i < 6000; ++i) {
    if (read_file(path).find(text) != std::string::npos)
      return true;
    ::usleep(10000);
  }
  return false;
}

/// Certificates for mutual TLS, made by the openssl command in `dir`: `ca(name)` a
/// CA, `cert(name, ca)` a key and certificate it signs (EC keys: quick to make).
struct Pki {
  std::string dir;
  void run(const std::string& cmd) const {
    auto r = run_command(fmt::format("cd '{}' && {} 2>&1", dir, cmd));
    if (r.status != 0)
      CAF_FAIL("openssl failed: " << cmd << "\n" << r.out);
  }
  void ca(const std::string& name) const {
    run(fmt::format("openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout {0}.key "
                    "-out {0}.pem -days 1 -subj /CN={0}",
                    name));
  }
  /// `names`: its subjectAltName ("IP:127.0.0.1", what a node's names), if any.
  void cert(const std::string& name, const std::string& ca, const std::string& names = "") const {
    if (!names.empty())
      std::ofstream(dir + "/" + name + ".ext") << "subjectAltName = " << names << "\n";
    run(fmt::format("openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout {0}.key -out "
                    "{0}.csr -subj /CN={0} && openssl x509 -req -in {0}.csr -CA {1}.pem -CAkey {1}.key "
                    "-CAcreateserial -out {0}.pem -days 1{2}",
                    name, ca, names.empty() ? "" : fmt::format(" -extfile {}.ext", name)));
  }
  std::string tls(const std::string& name, const std::string& ca) const {
    return fmt::format("certificate = \"{0}/{1}.pem\"\nkey = \"{0}/{1}.key\"\nca = \"{0}/{2}.pem\"\n", dir, name, ca);
  }
  /// CA `ca`, `node` for 127.0.0.1 and `client`, both signed by it: what most TLS tests need.
  void node_and_client() const {
    ca("ca");
    cert("node", "ca", "IP:127.0.0.1");
    cert("client", "ca");
  }
};

/// A node in its own workspace, and a client workspace that reaches it as `box`.
struct fixture {
  temp_dir dir;
  std::string state;          // both: the same user, so the same token
  std::string node_ws, client_ws;
  std::unique_ptr<Child> node;
  std::string address;

  fixture() {
    state = (dir.path / "state").string();
    node_ws = (dir.path / "node").string();
    client_ws = (dir.path / "client").string();
    std::filesystem::create_directories(node_ws);
    std::filesystem::create_directories(client_ws);
    node_toml = R"(
[runtime]
abort_grace_secs = 0.2
[conversation.tools.far]
summary = "Runs a script on the node"
command = { program = "/bin/sh", args = ["-c", "{{tool.arguments.script}}"] }
run = "unattended"
spawn.stateful = true
parameters.script = { type = "string", required = true }
[conversation.tools.asky]
summary = "Asks first"
command = { program = "true" }
run = "ask"
spawn.stateful = true
[conversation.tools.term]
summary = "Runs on a terminal on the node"
command = { program = "/bin/sh", args = ["-c", "echo on a terminal; exec sleep 300"] }
io = "pty"
run = "unattended"
spawn.stateful = true
[conversation.tools.ctl]
summary = "Asks on its control channel, then says what it got"
command = { program = "/bin/sh", args = ["-c", "echo before; echo '{\"type\":\"waiting\",\"question\":{\"id\":\"go\",\"text\":\"Go?\",\"answer_type\":{\"type\":\"boolean\"}}}' >&3; read a; echo \"got $a\""] }
io = "control"
run = "unattended"
spawn.stateful = true
[conversation.tools.guarded]
summary = "Runs, but its abort asks"
command = { program = "sleep", args = ["300"] }
run = "unattended"
spawn.stateful = true
spawn.permissions.abort = "ask"
)";
  }
  std::string node_toml;
  std::vector<std::string> node_args; // after `node --listen ADDRESS`

  /// Starts a node over TLS with `pki`'s `node` and `ca` on 127.0.0.1.
  bool start_tls_node(const Pki& pki) {
    node_toml += "[node.tls]\n" + pki.tls("node", "ca");
    return start_node();
  }

  /// Starts the node on `listen`; false if it did not say where it listens.
  bool start_node(const std::string& listen = "127.0.0.1:0") {
    dir.write("node.toml", node_toml);
    auto out = (dir.path / "node.out").string();
    // A node started before wrote here too: its "listening on" must not be taken for
    // this one's (the child truncates the file only once it runs).
    std::filesystem::remove(out);
    std::vector<std::string> argv{JP_CLI_BINARY, "--workspace", node_ws, "--config", (dir.path / "node.toml").string(),
                                  "node", "--listen", listen};
    argv.insert(argv.end(), node_args.begin(), node_args.end());
    node = std::make_unique<Child>(argv, state, out);
    // Its first line says where; bounded only against a hang.
    for (int i = 0; i < 6000; ++i) {
      auto text = read_file(out);
      if (auto at = text.find("listening on "); at != std::string::npos && text.find('\n', at) != std::string::npos) {
        address = text.substr(at + 13, text.find('\n', at) - at - 13);
        return true;
      }
      if (text.find("jp-actors: node:") != std::string::npos)
        CAF_FAIL("the node did not start: " << text);
      ::usleep(10000);
    }
    return false;
  }

  /// `tls`: the [nodes.box.tls] table's keys ("": none).
  std::string client_config(const std::string& tls = "") const {
    return fmt::format(R"(
[nodes.box]
address = "{}"
[conversation.tools.far]
summary = "Runs a script on the node"
node = "box"
run = "unattended"
spawn.stateful = true
parameters.script = {{ type = "string", required = true }}
[conversation.tools.asky]
summary = "Asks first, on the node"
node = "box"
run = "unattended"
spawn.stateful = true
[conversation.tools.term]
summary = "Runs on a terminal on the node"
node = "box"
run = "unattended"
spawn.stateful = true
[conversation.tools.guarded]
summary = "Runs on the node, its abort asks there"
node = "box"
run = "unattended"
spawn.stateful = true
spawn.lifecycle.on_turn_end = "abort"
{}
)",
                       address, tls.empty() ? "" : "[nodes.box.tls]\n" + tls);
  }

  std::string client_tls;       // [nodes.box.tls] of the clients this test runs
  std::string client_heartbeat; // their [node] table, if any
  std::string client_tools;     // tables of tools of their own test, if any

  /// examples/tools/confirm.sh (it asks with needs_input unless JP_TOOL_ANSWERS holds
  /// the answer) as tool `confirm` on the node, and here as the node's: `node_keys`
  /// and `client_keys` end each side's table.
  void confirm_on_node(const std::string& node_keys, const std::string& client_keys) {
    node_toml += fmt::format("[conversation.tools.confirm]\nsummary = \"Asks first\"\n"
                             "command = {{ program = \"{}/examples/tools/confirm.sh\" }}\nrun = \"unattended\"\n{}",
                             JP_SOURCE_DIR, node_keys);
    client_tools = "[conversation.tools.confirm]\nsummary = \"Asks first, on the node\"\nnode = \"box\"\n"
                   "run = \"unattended\"\n" + client_keys;
  }

  std::vector<std::string> client_argv(const std::string& script) {
    dir.write("client.toml", client_config(client_tls) + client_heartbeat + client_tools);
    dir.write("script.toml", script);
    return {JP_CLI_BINARY, "--workspace", client_ws, "--config", (dir.path / "client.toml").string(), "run",
            "--json", (dir.path / "script.toml").string()};
  }

  /// Runs the client to its end, with `state_home` as its user's state (and `env`,
  /// NAME=VALUE ..., added).
  Run client(const std::string& script, const std::string& state_home = "", const std::string& env = "") {
    auto argv = client_argv(script);
    std::string cmd = fmt::format("{} XDG_STATE_HOME='{}'", env, state_home.empty() ? state : state_home);
    for (auto& a : argv)
      cmd += " '" + a + "'";
    return run_command(cmd);
  }
};

/// What handle `id` showed: the content of the look at (step, look) -- its spawn or an
/// apply -- then its result in the await at (step, awaited).
std::string said_by(const ResultsByCall& res, int64_t step, int64_t look, int64_t awaited, const std::string& id,
                    const std::string& agent = "main") {
  std::string said;
  if (auto j = Json::parse(content(res, agent, step, look)); j && j->find("content"))
    said = j->find("content")->as_string();
  auto all = Json::parse(content(res, agent, step, awaited));
  if (!all || !all->find("completed"))
    CAF_FAIL("no await result at step " << step << ": " << content(res, "main", step, awaited));
  for (auto& e : all->find("completed")->as_array())
    if (e.find("id")->as_string() == id && e.find("result"))
      said += e.find("result")->as_string();
  return said;
}



/// An IPv4 address of this machine's other than loopback ("" if it has none).
std::string first_own_ipv4() {
  ifaddrs* all = nullptr;
  if (::getifaddrs(&all) != 0)
    return "";
  std::string found;
  for (auto* i = all; i && found.empty(); i = i->ifa_next)
    if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET) {
      auto& in = reinterpret_cast<sockaddr_in&>(*i->ifa_addr);
      char text[INET_ADDRSTRLEN] = {};
      if ((ntohl(in.sin_addr.s_addr) >> 24) != 127 && ::inet_ntop(AF_INET, &in.sin_addr, text, sizeof text))
        found = text;
    }
  ::freeifaddrs(all);
  return found;
}

std::string one_step(const std::string& calls);
std::string call(const std::string& tool, const std::string& args);

/// A script that spawns handle `s` on the node, a marked sleep that runs until
/// killed, and awaits it.
std::string remote_sleep(const marked_sleep& sleeper) {
  return one_step(call("far", fmt::format(R"({{ action = "spawn", id = "s", script = "exec {} 300", wait_ms = 0 }})",
                                          sleeper.program.string()))
                  + call("await", R"({ all = ["s"], timeout_secs = 120 })"));
}

std::string one_step(const std::string& calls) {
  return "[[agents]]\nname = \"main\"\n  [[agents.steps]]\n" + calls;
}

std::string call(const std::string& tool, const std::string& args) {
  return fmt::format("  [[agents.steps.calls]]\n  tool = \"{}\"\n  arguments = {}\n", tool, args);
}

} // namespace

/// A client of the node at `address` (its token in `state`) that opens a session by
/// hand, to send it what `jp-actors run` would not, or not yet.
struct RawSession {
  NodeServerConfig network;
  RuntimeActorConfig cfg{1, &network};
  caf::actor_system sys{cfg};
  caf::scoped_actor self{sys};
  caf::actor session;
  node_session_actor typed;
  std::string key;

  RawSession(const std::string& address, const std::string& state) {
    auto addr = parse_node_address(address, "address");
    CAF_REQUIRE(addr.ok());
    auto token = read_file(state + "/jp-actors/node-token");
    while (!token.empty() && token.back() == '\n')
      token.pop_back();
    auto gate = sys.middleman().remote_actor<node_gate_actor>(addr->host, addr->port);
    CAF_REQUIRE(gate);
    self->request(*gate, std::chrono::seconds(30), open_atom::value, token, caf::actor_cast<caf::actor>(self), 1.0,
                  5.0)
      .receive([&](caf::actor& s, std::string& k) { session = s, key = k; },
               [&](caf::error& err) { CAF_FAIL("open: " << error_text(err)); });
    CAF_REQUIRE(session && key.size() >= 32);
    typed = caf::actor_cast<node_session_actor>(session);
  }

  /// The handle `id`'s fetch: its report, or the error's text.
  std::pair<HandleReport, std::string> fetch(const std::string& id) {
    std::pair<HandleReport, std::string> out;
    self->request(typed, std::chrono::seconds(30), fetch_atom::value, key, id, LookOptions{})
      .receive([&](HandleReport& r) { out.first = std::move(r); }, [&](caf::error& err) { out.second = error_text(err); });
    return out;
  }
};

CAF_TEST_FIXTURE_SCOPE(node_tests, fixture)

CAF_TEST(a remote handle and a local one are awaited together and driven like local ones) {
  CAF_REQUIRE(start_node());
  auto script = one_step(call("far", R"({ action = "spawn", id = "r", script = "echo remote; pwd", wait_ms = 0 })")
                         + call("shell", R"({ action = "spawn", id = "l", command = "echo local", wait_ms = 0 })")
                         + call("await", R"({ all = ["r", "l"], timeout_secs = 60 })"))
                + "  [[agents.steps]]\n"
                + call("far", R"({ action = "spawn", id = "cat", script = "read x; echo got $x", wait_ms = 0 })")
                + call("far", R"({ action = "apply", id = "cat", input = "hello\n" })")
                + call("await", R"({ all = ["cat"], timeout_secs = 60 })")
                + "  [[agents.steps]]\n"
                + call("far", R"({ action = "spawn", id = "long", script = "exec sleep 300", wait_ms = 0 })")
                + call("await", R"({ any = ["long"], timeout_secs = 0 })")
                + call("far", R"({ action = "abort", id = "long" })");
  auto r = client(script);
  JP_REQUIRE_OK(r);
  auto res = results_of(r);
  auto spawned = Json::parse(content(res, "main", 1, 0));
  CAF_REQUIRE(spawned.ok());
  CAF_CHECK_EQUAL(spawned->find("node")->as_string(), "box");
  // The remote one ran in the node's workspace, the local one here. What a handle
  // printed is in its looks and its result together (a look takes what came so far).
  CAF_CHECK_EQUAL(said_by(res, 1, 0, 2, "r"), "remote\n" + node_ws + "\n");
  CAF_CHECK_EQUAL(said_by(res, 1, 1, 2, "l"), "local\n");
  CAF_CHECK_EQUAL(said_by(res, 2, 1, 2, "cat"), "got hello\n");
  // The await result names the node of the remote one only.
  CAF_CHECK(contains(content(res, "main", 1, 2), R"("id":"r","state":"stopped","result":)"));
  auto awaited = Json::parse(content(res, "main", 1, 2));
  CAF_REQUIRE(awaited.ok());
  for (auto& e : awaited->find("completed")->as_array())
    CAF_CHECK_EQUAL(e.find("node") ? e.find("node")->as_string() : "", e.find("id")->as_string() == "r" ? "box" : "");
  // Still running, it is pending, and named with its node too.
  CAF_CHECK(contains(content(res, "main", 3, 1), R"("pending":[{"id":"long","state":"running","node":"box"}])"));
  auto aborted = content(res, "main", 3, 2);
  CAF_CHECK(contains(aborted, R"("state":"stopped")"));
  CAF_CHECK(contains(aborted, "aborted"));
}

CAF_TEST(an await after an apply to a remote handle that asked waits for what the input does) {
  // The apply's answer said running; the registry here still held the question the
  // node's update had told it, and the next await answered at once with it.
  CAF_REQUIRE(start_node());
  auto script = one_step(call("far", R"({ action = "spawn", id = "r", script = "echo asking; read x; echo got=$x; sleep 1; echo bye", wait_ms = 0 })"))
                + "  [[agents.steps]]\n" + call("await", R"({ all = ["r"], timeout_secs = 60 })")
                + "  [[agents.steps]]\n" + call("far", R"({ action = "apply", id = "r", input = "hello\n" })")
                + "  [[agents.steps]]\n" + call("await", R"({ all = ["r"], timeout_secs = 60 })");
  auto r = client(script);
  JP_REQUIRE_OK(r);
  auto res = results_of(r);
  CAF_CHECK(contains(content(res, "main", 2, 0), R"("state":"waiting")")); // its question, nobody else answers
  auto awaited = content(res, "main", 4, 0);
  CAF_CHECK(contains(awaited, R"("id":"r","state":"stopped")"));
  CAF_CHECK(contains(awaited, "got=hello"));
}

CAF_TEST(a node s terminal tool shows its screen to the spawn that asks) {
  // The terminal is the node's: the client's config knows nothing of it.
  CAF_REQUIRE(start_node());
  auto r = client(one_step(call("term", R"({ action = "spawn", id = "t", screen = true, wait_ms = 5000 })"))
                  + "  [[agents.steps]]\n" + call("term", R"({ action = "abort", id = "t" })"));
  JP_REQUIRE_OK(r);
  auto spawned = content(results_of(r), "main", 1, 0);
  CAF_CHECK(contains(spawned, R"("screen":{)"));
  CAF_CHECK(contains(spawned, "on a terminal"));
}

CAF_TEST(a sub-agent reaches the node as its parent does) {
  CAF_REQUIRE(start_node());
  // The sub-agent spawns on the node and awaits there; its parent awaits it.
  auto script = one_step(call("agent", R"({ action = "spawn", id = "sub", prompt = "p", script = "remote" })")
                         + call("await", R"({ all = ["sub"], timeout_secs = 60 })"))
                + R"(
[[subagents]]
name = "remote"
  [[subagents.steps]]
  [[subagents.steps.calls]]
  tool = "far"
  arguments = { action = "spawn", id = "r", script = "echo from the sub-agent; pwd", wait_ms = 0 }
  [[subagents.steps.calls]]
  tool = "await"
  arguments = { all = ["r"], timeout_secs = 60 }
)";
  auto r = client(script);
  JP_REQUIRE_OK(r);
  auto res = results_of(r);
  // What it printed is in its spawn's look and its result together.
  CAF_CHECK_EQUAL(said_by(res, 1, 0, 1, "r", "main/sub"), "from the sub-agent\n" + node_ws + "\n");
  CAF_CHECK(contains(content(res, "main/sub", 1, 1), R"("node":"box")"));
  CAF_CHECK(contains(content(res, "main", 1, 1), R"("id":"sub","state":"stopped")"));
}

CAF_TEST(a program embedding jp-actors reaches the node through its session) {
  CAF_REQUIRE(start_node());
  auto config = jp::config_from_toml(client_config(), "client config");
  CAF_REQUIRE(config.ok());
  config->workspace = client_ws;
  scoped_env state_home("XDG_STATE_HOME", state); // the node token, as the node's user
  jp::Runtime rt(std::move(*config));
  auto session = rt.session();
  auto spawned = session.spawn("far", "e", *Json::parse(R"({"script":"echo embedded; exec sleep 300"})"), 20000).get();
  CAF_CHECK(spawned.ok);
  CAF_CHECK(contains(spawned.content, R"("node":"box")"));
  CAF_CHECK(contains(spawned.content, "embedded"));
  auto aborted = session.abort("e").get();
  CAF_CHECK(contains(aborted.content, R"("state":"stopped")"));
  CAF_CHECK(contains(aborted.content, "aborted"));
}

CAF_TEST(a node refuses a client without its token and a tool that would ask) {
  CAF_REQUIRE(start_node());
  auto spawn = one_step(call("far", R"({ action = "spawn", id = "r", script = "echo hi", wait_ms = 0 })"));
  // Another user's state: a token of its own, not the node's.
  auto other = (dir.path / "other").string();
  std::filesystem::create_directories(other + "/jp-actors");
  ::chmod(other.c_str(), 0700);
  ::chmod((other + "/jp-actors").c_str(), 0700);
  {
    std::ofstream(other + "/jp-actors/node-token") << std::string(64, 'a');
  }
  ::chmod((other + "/jp-actors/node-token").c_str(), 0600);
  auto refused = client(spawn, other);
  JP_REQUIRE_OK(refused);
  auto said = content(results_of(refused), "main", 1, 0);
  CAF_CHECK(contains(said, "the token does not match"));
  // The node's log says so too.
  CAF_CHECK(said_within((dir.path / "node.out").string(),
                        "jp-actors node: refused the session of a client whose token does not match the node's"));
  // No token at all: it says where one comes from, and that a TLS node takes none.
  auto none = client(spawn, (dir.path / "nobody").string());
  JP_REQUIRE_OK(none);
  CAF_CHECK(contains(content(results_of(none), "main", 1, 0),
                     "a node started as this user on loopback without TLS makes it; a node with [node.tls] takes "
                     "none: give its client [nodes.NAME.tls] instead"));
  // A token that is a link is refused as one, not as a file missing.
  auto linked = (dir.path / "linked").string();
  std::filesystem::create_directories(linked + "/jp-actors");
  ::chmod(linked.c_str(), 0700);
  ::chmod((linked + "/jp-actors").c_str(), 0700);
  std::filesystem::create_symlink(other + "/jp-actors/node-token", linked + "/jp-actors/node-token");
  auto link_refused = client(spawn, linked);
  JP_REQUIRE_OK(link_refused);
  CAF_CHECK(contains(content(results_of(link_refused), "main", 1, 0),
                     "/jp-actors/node-token is a symbolic link, which is refused: remove it"));
  auto asked = client(one_step(call("asky", R"({ action = "spawn", id = "a" })")));
  JP_REQUIRE_OK(asked);
  // Refused before anything ran, as a spawn refused here is: the call failed (it was
  // a stopped handle with ok:true), its words the node's.
  CAF_CHECK(!ok(results_of(asked), "main", 1, 0));
  CAF_CHECK(contains(content(results_of(asked), "main", 1, 0),
                     "its conversation.tools.asky.run is \"ask\" (as its config says, or by default)"));
  // Each action under its own permission: the node's config makes this abort ask.
  auto guarded = client(one_step(call("guarded", R"({ action = "spawn", id = "g", wait_ms = 0 })") +
                                 call("guarded", R"({ action = "abort", id = "g" })")));
  JP_REQUIRE_OK(guarded);
  CAF_CHECK(contains(content(results_of(guarded), "main", 1, 0), R"("state":"running")"));
  CAF_CHECK(contains(content(results_of(guarded), "main", 1, 1),
                     "this node does not let clients abort `guarded`: its config says "
                     "conversation.tools.guarded.spawn.permissions.abort = \"ask\""));
}

CAF_TEST(a node runs the tools its workspace config defines and those that ask only when allow names them) {
  // Someone's repository, served by the node: its tool runs unattended as it says.
  std::filesystem::create_directories(node_ws + "/.jp");
  dir.write("node/.jp/config.toml", R"(
[conversation.tools.repo]
summary = "The repository's own"
command = { program = "/bin/sh", args = ["-c", "echo the repository ran this"] }
run = "unattended"
)");
  client_tools = R"(
[conversation.tools.repo]
summary = "Runs on the node"
node = "box"
run = "unattended"
)";
  // (asky's `true` may still run as the turn ends: its turn-end answer is given.)
  auto script = one_step(call("repo", "{}") + call("asky", R"({ action = "spawn", id = "a" })")) +
                "[agents.on_turn_end]\na = \"abort\"\n";
  CAF_REQUIRE(start_node());
  auto refused = client(script);
  JP_REQUIRE_OK(refused);
  CAF_CHECK(contains(content(results_of(refused), "main", 1, 0),
                     "this node does not run `repo` for clients: the node's workspace config (.jp/config.toml, "
                     "someone's repository) defines or changes it, and a node runs such a tool only when "
                     "`jp-actors node --allow repo` names it"));
  CAF_CHECK(!contains(content(results_of(refused), "main", 1, 0), "the repository ran this"));
  CAF_CHECK(contains(content(results_of(refused), "main", 1, 1), "start the node with --allow asky"));
  // The node's stderr names what the workspace's config sets, as run does.
  CAF_CHECK(contains(read_file((dir.path / "node.out").string()), "it sets: tool `repo` (runs `/bin/sh -c echo the repository ran this`, unattended)"));
  node.reset();
  node_args = {"--allow", "repo", "--allow", "asky"};
  CAF_REQUIRE(start_node());
  auto allowed = client(script);
  JP_REQUIRE_OK(allowed);
  CAF_CHECK(contains(content(results_of(allowed), "main", 1, 0), "the repository ran this"));
  CAF_CHECK(!contains(content(results_of(allowed), "main", 1, 1), "this node does not"));
}

CAF_TEST(a node whose own config sends a tool to a node runs it itself) {
  // One config for the client and the node (one user's, on one machine): a tool's
  // `node` is the client's to follow. On the node it runs there (its launch was
  // empty: "cannot start a process: empty command").
  auto at = node_toml.find("summary = \"Runs a script on the node\"\n");
  CAF_REQUIRE(at != std::string::npos);
  node_toml.insert(at, "node = \"box\"\n");
  node_toml += "[nodes.box]\naddress = \"127.0.0.1:9\"\n";
  CAF_REQUIRE(start_node());
  auto r = client(one_step(call("far", R"({ action = "spawn", id = "r", script = "echo ran here", wait_ms = 0 })")
                           + call("await", R"({ all = ["r"], timeout_secs = 60 })")));
  JP_REQUIRE_OK(r);
  auto res = results_of(r);
  CAF_CHECK_EQUAL(said_by(res, 1, 0, 1, "r"), "ran here\n");
}

CAF_TEST(a node on loopback closes another user s connection at once and serves this user s) {
  // Before any token: CAF delivers its own messages (an exit that kills the gate or
  // a session) from whoever is connected.
  if (::geteuid() != 0) {
    CAF_MESSAGE("not root: no other user to connect as");
    return;
  }
  CAF_REQUIRE(start_node());
  auto port = address.substr(address.rfind(':') + 1);
  // The node speaks first (CAF's handshake): a byte read, or none from a connection
  // closed at its accept.
  auto first_bytes = [&](const std::string& as) {
    return run_command(fmt::format("{} timeout 20 bash -c 'exec 3<>/dev/tcp/127.0.0.1/{}; head -c 1 <&3 | wc -c'",
                                   as, port))
      .stdout_text;
  };
  CAF_CHECK_EQUAL(first_bytes(""), "1\n");
  CAF_CHECK_EQUAL(first_bytes("setpriv --reuid=65534 --regid=65534 --clear-groups"), "0\n");
  // From one of this machine's own addresses to 127.0.0.1: accepted on loopback, its
  // other end is on this machine all the same.
  if (auto own = first_own_ipv4(); own.empty()) {
    CAF_MESSAGE("no address of this machine's but loopback: that way in is not tried");
  } else {
    auto bound = run_command(fmt::format(
      "setpriv --reuid=65534 --regid=65534 --clear-groups timeout 20 perl -MIO::Socket::INET -e "
      "'my $s = IO::Socket::INET->new(LocalAddr => $ARGV[0], PeerAddr => \"127.0.0.1:$ARGV[1]\") or die \"$!\\n\"; "
      "my $n = sysread($s, my $b, 1); print \"$n\\n\"' {} {}",
      own, port));
    CAF_CHECK_EQUAL(bound.out, "0\n");
  }
  CAF_CHECK(contains(read_file((dir.path / "node.out").string()),
                     "jp-actors node: refused a connection from 127.0.0.1 (uid 65534): a node on loopback serves "
                     "this user's clients only"));
  // And it serves on.
  auto r = client(one_step(call("far", R"({ script = "echo still here" })")));
  JP_REQUIRE_OK(r);
  CAF_CHECK_EQUAL(content(results_of(r), "main", 1, 0), "still here\n");
}

CAF_TEST(a one shot call of a node s tool that asks gets the answer given here) {
  // The client's config answers its question; the node's tool reads it on stdin.
  client_tools = "[conversation.tools.ctl]\nsummary = \"Asks, on the node\"\nnode = \"box\"\nrun = \"unattended\"\n"
                 "spawn.stateful = true\nquestions.go.answer = true\n";
  CAF_REQUIRE(start_node());
  auto r = client(one_step(call("ctl", "{ }")));
  JP_REQUIRE_OK(r);
  CAF_CHECK_EQUAL(content(results_of(r), "main", 1, 0), "before\ngot true\n");
}

CAF_TEST(a one shot call of a node s tool that reads its stdin gets the answer given here) {
  // Its read is its question (id "input"); the client's config answers it.
  node_toml += R"([conversation.tools.reader]
summary = "Reads a line"
command = { program = "/bin/sh", args = ["-c", "echo asking; read x; echo got=$x"] }
io = "control"
run = "unattended"
spawn.stateful = true
)";
  client_tools = "[conversation.tools.reader]\nsummary = \"Reads, on the node\"\nnode = \"box\"\nrun = \"unattended\"\n"
                 "spawn.stateful = true\nquestions.input.answer = \"zz\"\n";
  CAF_REQUIRE(start_node());
  auto r = client(one_step(call("reader", "{ }")));
  JP_REQUIRE_OK(r);
  CAF_CHECK_EQUAL(content(results_of(r), "main", 1, 0), "asking\ngot=\"zz\"\n");
}

CAF_TEST(a one shot call of a node s pipe tool finds its stdin ended as a local one does) {
  // It had a pipe there: `cat` was a question ("waiting for input") nobody answered.
  CAF_REQUIRE(start_node());
  auto r = client(one_step(call("far", R"({ script = "cat; echo remote-ok" })")));
  JP_REQUIRE_OK(r);
  CAF_CHECK_EQUAL(content(results_of(r), "main", 1, 0), "remote-ok\n");
}

CAF_TEST(a node s tool that asks by exiting gets the answer the node s config gives) {
  confirm_on_node("questions.proceed.answer = true\n", "");
  CAF_REQUIRE(start_node());
  auto r = client(one_step(call("confirm", "{ }")));
  JP_REQUIRE_OK(r);
  CAF_CHECK_EQUAL(content(results_of(r), "main", 1, 0), "deleted (pretend)");
}

CAF_TEST(a node s tool that asks by exiting is run again there with the answer given here) {
  // The node's config does not answer it, the client's does. It failed saying it
  // asked: the node made its exit a handle's failure, and took no answer from the client.
  confirm_on_node("", "questions.proceed.answer = true\n");
  CAF_REQUIRE(start_node());
  auto r = client(one_step(call("confirm", "{ }")));
  JP_REQUIRE_OK(r);
  CAF_CHECK_EQUAL(content(results_of(r), "main", 1, 0), "deleted (pretend)");
}

CAF_TEST(a node s tool that asks again what the node s config answers is not run again from here) {
  // It had the node's answer and asked all the same: the client's answer would be
  // set aside for the node's at every run (16 rounds, or a person asked 16 times).
  node_toml += R"([conversation.tools.stubborn]
summary = "Asks whatever it is told"
command = { program = "/bin/sh", args = ["-c", "echo '{\"type\":\"needs_input\",\"question\":{\"id\":\"proceed\",\"text\":\"Sure?\",\"answer_type\":{\"type\":\"boolean\"}}}'"] }
run = "unattended"
questions.proceed.answer = true
)";
  client_tools = "[conversation.tools.stubborn]\nsummary = \"Asks, on the node\"\nnode = \"box\"\nrun = \"unattended\"\n"
                 "questions.proceed.answer = true\n";
  CAF_REQUIRE(start_node());
  auto r = client(one_step(call("stubborn", "{ }")));
  JP_REQUIRE_OK(r);
  auto said = content(results_of(r), "main", 1, 0);
  CAF_CHECK(contains(said, "(question `proceed`) and exited"));
  CAF_CHECK(!contains(said, "rounds of questions"));
}

CAF_TEST(a node s tool handle that exits asking is still told what its caller can do) {
  // Spawned as a handle, it is not run again (a one-shot call is): still said as of a
  // local handle, not taken for a question the call can answer.
  confirm_on_node("spawn.stateful = true\n", "spawn.stateful = true\n");
  CAF_REQUIRE(start_node());
  auto r = client(one_step(call("confirm", R"({ action = "spawn", id = "c", wait_ms = 0 })") +
                            call("await", R"({ all = ["c"] })")));
  JP_REQUIRE_OK(r);
  auto said = content(results_of(r), "main", 1, 1);
  CAF_CHECK(contains(said, "handle `c` asked"));
  CAF_CHECK(contains(said, "(question `proceed`) and exited; call the tool without `action`"));
}

CAF_TEST(a node lost while its session is opened is said so at once and not waited for) {
  CAF_REQUIRE(start_node()); // makes this user's token, which the client shows
  // A gate of this node protocol that exits at the first open, not answering it.
  auto out = (dir.path / "vanishing.out").string();
  Child gate({JP_VANISHING_GATE}, state, out);
  std::string at;
  for (int i = 0; i < 6000 && at.empty(); ++i) {
    auto text = read_file(out);
    if (auto p = text.find("listening on "); p != std::string::npos && text.find('\n', p) != std::string::npos)
      at = text.substr(p + 13, text.find('\n', p) - p - 13);
    else
      ::usleep(10000);
  }
  CAF_REQUIRE(!at.empty());
  address = at;
  auto r = client(one_step(call("far", R"({ action = "spawn", id = "r", script = "echo never", wait_ms = 0 })")));
  JP_REQUIRE_OK(r);
  auto said = content(results_of(r), "main", 1, 0);
  CAF_CHECK(contains(said, "node `box` was lost while a session was opened there"));
  CAF_CHECK(contains(said, R"("transient":true)"));
}

CAF_TEST(a spawn on a node whose fetch is refused is answered with its own look) {
  // The spawn's look (its wait_ms) is part of the spawn: a refused fetch must not make
  // a spawn that started its process report an error.
  node_toml += R"(
[conversation.tools.nofetch]
summary = "Runs, but clients may not fetch it"
command = { program = "sleep", args = ["300"] }
run = "unattended"
spawn.stateful = true
spawn.permissions.fetch = "skip"
)";
  CAF_REQUIRE(start_node());
  client_tools = R"(
[conversation.tools.nofetch]
summary = "Runs on the node, not fetched"
node = "box"
run = "unattended"
spawn.stateful = true
)";
  auto r = client(one_step(call("nofetch", R"({ action = "spawn", id = "n", wait_ms = 0 })") +
                           call("nofetch", R"({ action = "fetch", id = "n" })") +
                           call("nofetch", R"({ action = "abort", id = "n" })")));
  JP_REQUIRE_OK(r);
  auto res = results_of(r);
  CAF_CHECK(contains(content(res, "main", 1, 0), R"("state":"running")"));
  CAF_CHECK(contains(content(res, "main", 1, 1), "this node does not let clients fetch `nofetch`"));
  CAF_CHECK(contains(content(res, "main", 1, 2), "signal 15"));
}

CAF_TEST(a node session answers only messages with its key and its registry never reaches a peer) {
  // CAF delivers a peer's message to any actor of the node whose handle crossed the
  // wire, by its id, token or not: the session must refuse one without its key, and
  // the registry behind it (which starts whatever argv it is given) must never be
  // the sender of anything a peer gets.
  CAF_REQUIRE(start_node());
  RawSession raw(address, state);
  auto& self = raw.self;
  auto& session = raw.session;
  auto& key = raw.key;
  auto typed = raw.typed;
  auto me = caf::actor_cast<caf::actor>(self);
  auto args = std::string(R"({"script":"echo hi"})");
  // Without the key: refused, and nothing runs.
  for (auto wrong : {std::string(), std::string(key.size(), '0')}) {
    self->request(typed, std::chrono::seconds(30), spawn_atom::value, wrong, std::string("x"), std::string("far"), args,
                  std::string(), me)
      .receive([&](HandleReport&) { CAF_FAIL("spawned without the session's key"); },
               [&](caf::error& err) { CAF_CHECK(contains(error_text(err), "does not carry the session's key")); });
    self->request(typed, std::chrono::seconds(30), list_atom::value, wrong)
      .receive([&](std::vector<HandleSummary>&) { CAF_FAIL("listed without the session's key"); },
               [&](caf::error& err) { CAF_CHECK(contains(error_text(err), "does not carry the session's key")); });
  }
  // Answers that are not an object of answers by question id: refused, nothing runs.
  self->request(typed, std::chrono::seconds(30), spawn_atom::value, key, std::string("x"), std::string("far"), args,
                std::string("[true]"), me)
    .receive([&](HandleReport&) { CAF_FAIL("spawned with answers that are not an object"); },
             [&](caf::error& err) { CAF_CHECK(contains(error_text(err), "far: the answers are not a JSON object")); });
  // With it: every answer and the watch's news come from the session itself.
  auto from_session = [&] { return caf::actor_cast<caf::actor_addr>(self->current_sender()) == session.address(); };
  std::string said; // its output: some may come with the spawn's own look already
  self->request(typed, std::chrono::seconds(30), spawn_atom::value, key, std::string("r"), std::string("far"), args,
                std::string(), me)
    .receive(
      [&](HandleReport& r) {
        CAF_CHECK(from_session());
        said = r.state.content;
      },
      [&](caf::error& err) { CAF_FAIL("spawn: " << error_text(err)); });
  bool stopped = false;
  while (!stopped)
    self->receive(
      [&](update_atom, HandleStatus& s) {
        CAF_CHECK(from_session());
        stopped = s.state.stopped();
      },
      caf::after(std::chrono::seconds(30)) >> [&] { CAF_FAIL("no update of the handle's stop"); });
  self->request(typed, std::chrono::seconds(30), fetch_atom::value, key, std::string("r"), LookOptions{})
    .receive(
      [&](HandleReport& r) {
        CAF_CHECK(from_session());
        CAF_CHECK(contains(said + r.state.content, "hi"));
      },
      [&](caf::error& err) { CAF_FAIL("fetch: " << error_text(err)); });
  self->request(typed, std::chrono::seconds(30), list_atom::value, key)
    .receive([&](std::vector<HandleSummary>&) { CAF_CHECK(from_session()); },
             [&](caf::error& err) { CAF_FAIL("list: " << error_text(err)); });
  // An abort sent right behind its spawn is checked against its tool too (here it
  // asks, so it is refused), not let through while the spawn is unanswered.
  auto spawned = self->request(typed, std::chrono::seconds(30), spawn_atom::value, key, std::string("g"),
                               std::string("guarded"), std::string("{}"), std::string(), me);
  auto aborted = self->request(typed, std::chrono::seconds(30), abort_atom::value, key, std::string("g"));
  spawned.receive([&](HandleReport& r) { CAF_CHECK(!r.state.stopped()); },
                  [&](caf::error& err) { CAF_FAIL("spawn: " << error_text(err)); });
  aborted.receive([&](HandleReport&) { CAF_FAIL("aborted although the node's config says it asks"); },
                  [&](caf::error& err) {
                    auto why = error_text(err);
                    CAF_CHECK(contains(why, "is still starting on this node") ||
                              contains(why, "does not let clients abort `guarded`"));
                  });
  // A second spawn of an id is answered with its refusal, whether the first is still
  // starting or not (the refusal once went to nobody: its caller waited for good).
  auto once = self->request(typed, std::chrono::seconds(30), spawn_atom::value, key, std::string("twice"),
                            std::string("guarded"), std::string("{}"), std::string(), me);
  auto again = self->request(typed, std::chrono::seconds(30), spawn_atom::value, key, std::string("twice"),
                             std::string("guarded"), std::string("{}"), std::string(), me);
  once.receive([&](HandleReport&) {}, [&](caf::error& err) { CAF_FAIL("spawn: " << error_text(err)); });
  again.receive([&](HandleReport&) { CAF_FAIL("spawned twice"); },
                [&](caf::error& err) {
                  auto why = error_text(err);
                  CAF_CHECK(contains(why, "is still starting on this node") || contains(why, "already exists"));
                });
}

CAF_TEST(a node session keeps nothing of a handle once its client s remote handle is gone and it stopped) {
  // Every one-shot call of a client is a handle there: kept, a long session's calls
  // (their output with them) would pile up in the node for as long as it lasts.
  CAF_REQUIRE(start_node());
  RawSession raw(address, state);
  auto args = std::string(R"({"script":"echo hi"})");
  for (auto id : {std::string("done"), std::string("running")}) {
    auto remote = raw.sys.spawn([] { return caf::behavior{[](update_atom, const HandleStatus&) {}}; });
    auto script = id == "done" ? args : std::string(R"({"script":"exec sleep 300"})");
    raw.self->request(raw.typed, std::chrono::seconds(30), spawn_atom::value, raw.key, id, std::string("far"), script,
                      std::string(), remote)
      .receive([](HandleReport&) {}, [&](caf::error& err) { CAF_FAIL("spawn: " << error_text(err)); });
    if (id == "done") { // stopped, and still there to fetch while its remote handle lives
      auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
      auto r = raw.fetch(id);
      while (r.second.empty() && !r.first.state.stopped() && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        r = raw.fetch(id);
      }
      CAF_REQUIRE(r.first.state.stopped());
      CAF_CHECK(r.first.state.ok);
    }
    raw.self->send_exit(remote, caf::exit_reason::user_shutdown);
    // The session hears of its end on its own: asked until it knows the id no more.
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    auto r = raw.fetch(id);
    while (r.second.empty() && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      r = raw.fetch(id);
    }
    if (!contains(r.second, "not found"))
      CAF_MESSAGE(id << ": " << (r.second.empty() ? r.first.state.content : r.second));
    CAF_CHECK(contains(r.second, "not found"));
  }
}

CAF_TEST(a node and a client of different node protocols refuse each other at the handshake saying why) {
  // A CAF program that is not this build's node protocol (here CAF's default
  // identifier, as another jp-actors version's would differ) is refused by the node...
  CAF_REQUIRE(start_node());
  auto addr = parse_node_address(address, "address");
  CAF_REQUIRE(addr.ok());
  caf::actor_system_config other_cfg;
  other_cfg.load<caf::io::middleman>();
  other_cfg.set("logger.console", caf::atom("none"));
  caf::actor_system other{other_cfg};
  auto gate = other.middleman().remote_actor<node_gate_actor>(addr->host, addr->port);
  CAF_REQUIRE(!gate);
  CAF_CHECK_EQUAL(gate.error(), caf::make_error(caf::sec::incompatible_application_ids));
  // ...and a client told of such a node says what it is, not as a node to retry.
  auto stranger = other.spawn([] { return caf::behavior{[](int) {}}; });
  auto published = other.middleman().publish(stranger, 0, "127.0.0.1");
  CAF_REQUIRE(published);
  dir.write("other.toml", "[nodes.other]\naddress = \"127.0.0.1:" + std::to_string(*published) + "\"\n");
  auto r = run_command(fmt::format("XDG_STATE_HOME='{}' '{}' --workspace '{}' --config '{}' nodes ls", state,
                                   JP_CLI_BINARY, client_ws, (dir.path / "other.toml").string()));
  CAF_CHECK_EQUAL(r.status, 1);
  if (!contains(r.out, "speaks another node protocol: what answered at that address is not a jp-actors node whose "
                       "messages this client reads"))
    CAF_FAIL("nodes ls said:\n" << r.out);
  caf::anon_send_exit(stranger, caf::exit_reason::user_shutdown);
}

CAF_TEST(a client told of a port where no node listens says it may be another program) {
  // An HTTP server answered and closed: told only as a node taking TLS. Bytes that
  // are no handshake: CAF's raw malformed_basp_message, as a failure to retry.
  CAF_REQUIRE(start_node()); // the token this client sends
  for (bool http : {true, false}) {
    int listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in at{};
    at.sin_family = AF_INET;
    at.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof at;
    CAF_REQUIRE(::bind(listener, reinterpret_cast<sockaddr*>(&at), len) == 0 && ::listen(listener, 4) == 0 &&
                ::getsockname(listener, reinterpret_cast<sockaddr*>(&at), &len) == 0);
    std::thread other([listener, http] {
      // Each connection: its answer, then held until the client closes it.
      for (int c; (c = ::accept(listener, nullptr, nullptr)) >= 0;) {
        std::string said = http ? "HTTP/1.0 400 Bad Request\r\n\r\n" : std::string(200, 'A');
        [[maybe_unused]] auto n = ::write(c, said.data(), said.size());
        char buf[256];
        while (!http && ::read(c, buf, sizeof buf) > 0) {
        }
        ::close(c);
      }
    });
    dir.write("other.toml", fmt::format("[nodes.other]\naddress = \"127.0.0.1:{}\"\n", ntohs(at.sin_port)));
    auto r = run_command(fmt::format("XDG_STATE_HOME='{}' timeout 60 '{}' --workspace '{}' --config '{}' nodes ls", state,
                                     JP_CLI_BINARY, client_ws, (dir.path / "other.toml").string()));
    ::shutdown(listener, SHUT_RDWR);
    ::close(listener);
    other.join();
    CAF_CHECK_EQUAL(r.status, 1);
    auto said = http ? "what listens there is not a jp-actors node" : "speaks another protocol: what answered at that "
                                                                      "address is not a jp-actors node";
    if (!contains(r.out, said) || contains(r.out, "transient"))
      CAF_FAIL("nodes ls said:\n" << r.out);
  }
}

CAF_TEST(a client configured with a node off loopback without TLS is refused before the token is sent) {
  auto cfg = fmt::format("[nodes.far]\naddress = \"192.0.2.1:4242\"\n[conversation.tools.x]\nnode = \"far\"\n"
                         "run = \"unattended\"\nspawn.stateful = true\n");
  dir.write("far.toml", cfg);
  auto r = cli_in(client_ws, fmt::format("--config '{}' nodes ls", (dir.path / "far.toml").string()));
  CAF_CHECK(contains(r.out, "is off loopback, and node `far` has no [nodes.far.tls]"));
  // `tools` says where it runs.
  auto listed = cli_in(client_ws, fmt::format("--config '{}' tools", (dir.path / "far.toml").string()));
  CAF_CHECK(contains(listed.out, "stateful  node.far"));
}

CAF_TEST(a node refuses to listen off loopback without mutual TLS) {
  // An address of no interface here (TEST-NET-1): were the refusal gone, it could
  // not listen anywhere either, and the command would not be left serving.
  auto r = run_command(fmt::format("XDG_STATE_HOME='{}' '{}' --workspace '{}' node --listen 192.0.2.1:0", state,
                                   JP_CLI_BINARY, node_ws));
  CAF_CHECK_EQUAL(r.status, 1);
  CAF_CHECK(contains(r.out, "off loopback a node requires mutual TLS"));
}

CAF_TEST(a node listens on a bare port of loopback as mcp does) {
  CAF_REQUIRE(start_node("0"));
  CAF_CHECK(address.starts_with("127.0.0.1:"));
}

CAF_TEST(a node whose address is in use says so) {
  CAF_REQUIRE(start_node());
  auto r = run_command(fmt::format("XDG_STATE_HOME='{}' '{}' --workspace '{}' node --listen {}", state,
                                   JP_CLI_BINARY, node_ws, address));
  CAF_CHECK_EQUAL(r.status, 1);
  if (!contains(r.out, fmt::format("cannot listen on {}: the address is in use", address)))
    CAF_FAIL("the second node said: " << r.out);
}

CAF_TEST(with mutual TLS a client certified by the CA is served and one of another CA is refused) {
  Pki pki{dir.path.string()};
  pki.node_and_client();
  pki.ca("other");
  pki.cert("stranger", "other");
  CAF_REQUIRE(start_tls_node(pki));
  auto spawn = one_step(call("far", R"({ action = "spawn", id = "r", script = "echo over tls", wait_ms = 20000 })"));
  // No token here: the certificates authenticate both sides.
  client_tls = pki.tls("client", "ca");
  auto served = client(spawn, (dir.path / "nobody").string());
  JP_REQUIRE_OK(served);
  CAF_CHECK(contains(content(results_of(served), "main", 1, 0), "over tls"));
  // It trusts the node's CA, but the node does not trust its certificate.
  client_tls = pki.tls("stranger", "ca");
  auto refused = client(spawn, (dir.path / "nobody").string());
  JP_REQUIRE_OK(refused);
  auto said = content(results_of(refused), "main", 1, 0);
  CAF_CHECK(contains(said, "node `box`"));
  CAF_CHECK(!contains(said, "over tls"));
  // Said as the configuration error it is, not as a blip worth retrying.
  CAF_CHECK(contains(said, "the TLS handshake failed"));
  CAF_CHECK(contains(said, R"("transient":false)"));
  // The node says so too, with OpenSSL's reason.
  auto node_out = (dir.path / "node.out").string();
  if (!said_within(node_out, "the client's certificate: unable to get local issuer certificate"))
    CAF_FAIL("the node did not say why it refused the client:\n" << read_file(node_out));
  CAF_CHECK(contains(read_file(node_out), "jp-actors node: refused a connection from 127.0.0.1:"));
  // That refusal alone: the client it served, gone before, was no refusal.
  std::istringstream lines(read_file(node_out));
  for (std::string line; std::getline(lines, line);)
    if (contains(line, "refused a connection") && !contains(line, "unable to get local issuer certificate"))
      CAF_ERROR("a false refusal: " << line);
  // A client that does not trust the node's CA is refused too. (Its own refusal
  // reaches CAF mostly as the node closing during the handshake, told as above; on a
  // loaded machine once as a connect that failed, told as unreachable: a clean-clone
  // CI run under ASan saw it, no rerun did. Only the refusal is checked here.)
  client_tls = pki.tls("client", "other");
  auto distrusting = client(spawn, (dir.path / "nobody").string());
  JP_REQUIRE_OK(distrusting);
  said = content(results_of(distrusting), "main", 1, 0);
  CAF_CHECK(contains(said, "node `box`"));
  CAF_CHECK(!contains(said, "over tls"));
  // Told as its own refusal, not as the node's (it said the node's log knew why).
  CAF_CHECK(contains(said, "presented a certificate this client does not accept"));
  CAF_CHECK(contains(said, "the node's certificate was refused here: ")); // OpenSSL's reason follows
  CAF_CHECK(contains(said, "[nodes.box.tls] ca must be the CA that signed the node's [node.tls] certificate"));
  CAF_CHECK(contains(said, R"("transient":false)"));
  // And the node's log says the client refused it, not that it refused the client.
  if (!said_within(node_out, "refused this node at the TLS handshake: "))
    CAF_FAIL("the node did not say the client refused it:\n" << read_file(node_out));
  // A node whose certificate the CA signed for another machine, or a client's (the
  // same CA signs both), is no proof of the node the client dialled.
  client_tls = pki.tls("client", "ca");
  pki.cert("elsewhere", "ca", "IP:10.9.9.9, DNS:elsewhere.example");
  for (auto* impostor : {"elsewhere", "client"}) {
    node.reset();
    node_toml = node_toml.substr(0, node_toml.find("[node.tls]")) + "[node.tls]\n" + pki.tls(impostor, "ca");
    CAF_REQUIRE(start_node());
    auto fooled = client(spawn, (dir.path / "nobody").string());
    JP_REQUIRE_OK(fooled);
    said = content(results_of(fooled), "main", 1, 0);
    CAF_CHECK(!contains(said, "over tls"));
    CAF_CHECK(contains(said, "presented a certificate that does not name it: the node's certificate does not "
                             "name 127.0.0.1, the address [nodes.box] dials"));
    CAF_CHECK(contains(said, "subjectAltName holds IP:127.0.0.1"));
    CAF_CHECK(contains(said, R"("transient":false)"));
  }
  // Dialled by name: a certificate naming it (DNS) is the node's; one naming only
  // the address the name resolves to is not.
  pki.cert("named", "ca", "DNS:localhost");
  for (auto* cert : {"named", "node"}) {
    node.reset();
    node_toml = node_toml.substr(0, node_toml.find("[node.tls]")) + "[node.tls]\n" + pki.tls(cert, "ca");
    CAF_REQUIRE(start_node());
    address = "localhost" + address.substr(address.rfind(':'));
    auto by_name = client(spawn, (dir.path / "nobody").string());
    JP_REQUIRE_OK(by_name);
    said = content(results_of(by_name), "main", 1, 0);
    if (std::string(cert) == "named")
      CAF_CHECK(contains(said, "over tls"));
    else
      CAF_CHECK(contains(said, "the node's certificate does not name localhost"));
  }
  // TLS settings that cannot be used are refused before anything runs.
  client_tls = "certificate = \"/nonexistent.pem\"\n";
  auto broken = client(spawn);
  CAF_CHECK_EQUAL(broken.status, 1);
  CAF_CHECK(contains(broken.out, "nodes.box.tls.certificate: cannot read /nonexistent.pem"));
}

CAF_TEST(a node refused at the TLS handshake leaves the connections to others as they were) {
  // CAF's TLS reads OpenSSL's error queue without emptying it, on the one thread
  // that serves every node's connection: the refused handshake's errors failed the
  // next read from the node that served, and its handle was lost.
  Pki pki{dir.path.string()};
  pki.node_and_client();
  pki.cert("elsewhere", "ca", "IP:10.9.9.9");
  auto plain_toml = node_toml;
  // Another node, whose certificate names another machine: refused.
  node_toml = plain_toml + "[node.tls]\n" + pki.tls("elsewhere", "ca");
  CAF_REQUIRE(start_node());
  auto impostor = std::move(node);
  auto impostor_address = address;
  node_toml = plain_toml + "[node.tls]\n" + pki.tls("node", "ca");
  CAF_REQUIRE(start_node());
  client_tls = pki.tls("client", "ca");
  client_tools = fmt::format("[nodes.other]\naddress = \"{}\"\n[nodes.other.tls]\n{}"
                             "[conversation.tools.there]\nsummary = \"Runs a script on the other node\"\n"
                             "node = \"other\"\nrun = \"unattended\"\nspawn.stateful = true\n"
                             "parameters.script = {{ type = \"string\", required = true }}\n",
                             impostor_address, pki.tls("client", "ca"));
  // Its output comes after the refusal: read from the connection the refusal left.
  auto script = one_step(call("far", R"({ action = "spawn", id = "r", script = "read x; echo after $x", wait_ms = 0 })"))
                + "  [[agents.steps]]\n" +
                call("there", R"({ action = "spawn", id = "n", script = "echo unreached" })") +
                "  [[agents.steps]]\n" + call("far", R"({ action = "apply", id = "r", input = "refusal\n" })") +
                call("await", R"({ all = ["r"], timeout_secs = 60 })");
  auto r = client(script, (dir.path / "nobody").string());
  JP_REQUIRE_OK(r);
  auto res = results_of(r);
  CAF_CHECK(contains(content(res, "main", 2, 0), "the node's certificate does not name 127.0.0.1"));
  CAF_CHECK(contains(content(res, "main", 3, 1), "after refusal"));
  CAF_CHECK(!contains(r.out, "was lost"));
}

CAF_TEST(the node token goes only to a listener of this user s) {
  // A plain node is found by its port alone, anyone's to take while the node is down
  // (or to relay): the token, which runs any tool as this user, went to whoever held it.
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof sa;
  CAF_REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) == 0 && ::listen(fd, 1) == 0 &&
              ::getsockname(fd, reinterpret_cast<sockaddr*>(&sa), &len) == 0);
  auto port = ntohs(sa.sin_port);
  auto listeners = jp::port_listeners(port);
  CAF_REQUIRE(listeners.has_value());
  CAF_CHECK_EQUAL(*listeners, std::vector<uid_t>{::getuid()});
  CAF_CHECK(jp::token_may_go_to(port).ok());
  ::close(fd);
  auto gone = jp::token_may_go_to(port);
  CAF_CHECK_EQUAL(gone.error, fmt::format("nothing listens on port {} any more (what answered closed it): the node "
                                          "token is not sent",
                                          port));
  // Another user's node on the port the client dials. (Only root can be another
  // user here; otherwise the check above is all.)
  jp::testing::other_user_area other;
  if (other.drop().empty())
    return;
  CAF_REQUIRE(start_node()); // makes this user's token
  auto theirs_out = (dir.path / "theirs.out").string();
  auto home = other.make_dir("home", true);
  std::vector<std::string> argv{"/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                                "/usr/bin/env", "HOME=" + home, "XDG_CONFIG_HOME=" + home + "/config",
                                other.binary(), "--workspace", other.make_dir("ws", true), "node", "--listen",
                                "127.0.0.1:0"};
  Child theirs(argv, other.make_dir("state", true), theirs_out);
  std::string text;
  for (int i = 0; i < 6000 && !contains(text = read_file(theirs_out), "\n"); ++i)
    ::usleep(10000);
  if (!contains(text, "listening on "))
    CAF_FAIL("the other user's node did not start: " << text);
  auto at = text.find("listening on ") + 13;
  address = text.substr(at, text.find('\n', at) - at);
  auto r = client(one_step(call("far", R"({ action = "spawn", id = "r", script = "echo reached" })")));
  JP_REQUIRE_OK(r);
  auto said = content(results_of(r), "main", 1, 0);
  CAF_CHECK(contains(said, fmt::format("node `box`: what listens on port {} is another user's (uid 65534), not a node "
                                       "of yours: the node token, which runs tools as you, is not sent to it",
                                       address.substr(address.rfind(':') + 1))));
  CAF_CHECK(!contains(said, "reached"));
  // `nodes ls` shows it no token either.
  dir.write("ls.toml", client_config());
  auto ls = run_command(fmt::format("XDG_STATE_HOME='{}' '{}' --workspace '{}' --config '{}' nodes ls", state,
                                    JP_CLI_BINARY, client_ws, (dir.path / "ls.toml").string()));
  CAF_CHECK_EQUAL(ls.status, 1);
  CAF_CHECK(contains(ls.out, fmt::format("box  {}  (token)  refused: what listens on port {} is another user's (uid "
                                         "65534)",
                                         address, address.substr(address.rfind(':') + 1))));
}

CAF_TEST(a TLS node tells the first handshakes that failed and then every thousandth) {
  // Each bare connection (a port scan, a health check) ended at the handshake and
  // was told: off loopback anyone could fill the node's log.
  Pki pki{dir.path.string()};
  pki.node_and_client();
  CAF_REQUIRE(start_tls_node(pki));
  auto port = static_cast<uint16_t>(std::stoi(address.substr(address.rfind(':') + 1)));
  // Each sends what no TLS handshake takes, and stays open (one closed before its
  // accept is refused there, whose it was being past telling).
  std::vector<int> open_fds;
  for (int i = 0; i < 25; ++i) {
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in at{};
    at.sin_family = AF_INET;
    at.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    at.sin_port = htons(port);
    CAF_REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&at), sizeof at) == 0);
    CAF_REQUIRE(::write(fd, "GET / HTTP/1.0\r\n\r\n", 18) == 18);
    open_fds.push_back(fd);
  }
  // A client served after them: the node's one network thread met them first.
  client_tls = pki.tls("client", "ca");
  auto served = client(one_step(call("far", R"({ action = "spawn", id = "r", script = "echo over tls", wait_ms = 20000 })")),
                       (dir.path / "nobody").string());
  JP_REQUIRE_OK(served);
  CAF_CHECK(contains(content(results_of(served), "main", 1, 0), "over tls"));
  auto node_out = (dir.path / "node.out").string();
  if (!said_within(node_out, "(from now on every 1000th is told)"))
    CAF_FAIL("the node did not say it tells fewer:\n" << read_file(node_out));
  std::istringstream lines(read_file(node_out));
  int told = 0;
  for (std::string line; std::getline(lines, line);)
    told += contains(line, "at the TLS handshake");
  CAF_CHECK_EQUAL(told, 20);
  for (int fd : open_fds)
    ::close(fd);
}

CAF_TEST(a TLS handshake left unanswered is closed on either side after its deadline) {
  // CAF's TLS called the handshake again each time the socket could be written: a
  // silent peer held a core of the node's for as long as it liked, and a client's
  // exit waited for a silent node for good.
  Pki pki{dir.path.string()};
  pki.node_and_client();
  CAF_REQUIRE(start_tls_node(pki));
  auto loopback = [](uint16_t port) {
    sockaddr_in at{};
    at.sin_family = AF_INET;
    at.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    at.sin_port = htons(port);
    return at;
  };
  // A connection to the node that never speaks.
  int bare = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  auto node_at = loopback(static_cast<uint16_t>(std::stoi(address.substr(address.rfind(':') + 1))));
  CAF_REQUIRE(::connect(bare, reinterpret_cast<sockaddr*>(&node_at), sizeof node_at) == 0);
  // A "node" that takes the connection and never speaks.
  int silent = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  auto silent_at = loopback(0);
  socklen_t len = sizeof silent_at;
  CAF_REQUIRE(::bind(silent, reinterpret_cast<sockaddr*>(&silent_at), sizeof silent_at) == 0 &&
              ::listen(silent, 4) == 0 && ::getsockname(silent, reinterpret_cast<sockaddr*>(&silent_at), &len) == 0);
  struct Closer {
    int a, b;
    ~Closer() {
      ::close(a);
      ::close(b);
    }
  } closer{bare, silent};
  address = "127.0.0.1:" + std::to_string(ntohs(silent_at.sin_port));
  client_tls = pki.tls("client", "ca");
  // Under LeakSanitizer the client ends leak-checked but for this: CAF 0.17 leaves the
  // broker of a connection still in its TLS handshake as it ends (objects of CAF's
  // own holding each other; the client used to hang there instead).
  auto r = client(one_step(call("far", R"({ action = "spawn", id = "r", script = "echo hi" })")),
                  (dir.path / "nobody").string(), "ASAN_OPTIONS=\"${ASAN_OPTIONS}:detect_leaks=0\"");
  JP_REQUIRE_OK(r); // it ended
  auto said = content(results_of(r), "main", 1, 0);
  // CAF's own connection timeout ([node] timeout_secs, 5) told it first; ours closed
  // the connection, which its end waited for.
  CAF_CHECK(contains(said, "node `box` (" + address + ") did not answer"));
  CAF_CHECK(contains(said, R"("transient":true)"));
  // The node closed the silent connection, and says so once.
  auto node_out = (dir.path / "node.out").string();
  if (!said_within(node_out, "jp-actors node: closed a connection from 127.0.0.1:"))
    CAF_FAIL("the node did not close the silent connection:\n" << read_file(node_out));
  char byte;
  CAF_CHECK(::read(bare, &byte, 1) <= 0); // its end, or a reset
  std::istringstream lines(read_file(node_out));
  int told = 0;
  for (std::string line; std::getline(lines, line);)
    told += contains(line, "no TLS handshake within 10 s (what connected sent nothing, or too little)");
  CAF_CHECK_EQUAL(told, 1);
}

CAF_TEST(a TLS client of a node without TLS is told so and not as transient) {
  Pki pki{dir.path.string()};
  pki.ca("ca");
  pki.cert("client", "ca");
  CAF_REQUIRE(start_node());
  client_tls = pki.tls("client", "ca");
  auto r = client(one_step(call("far", R"({ action = "spawn", id = "r", script = "echo hi" })")));
  JP_REQUIRE_OK(r);
  auto said = content(results_of(r), "main", 1, 0);
  CAF_CHECK(contains(said, "node `box`"));
  CAF_CHECK(contains(said, "the TLS handshake failed. Likely the node has no TLS"));
  CAF_CHECK(contains(said, R"("transient":false)"));
}

CAF_TEST(TLS files that OpenSSL cannot load are refused at start naming the file and what is wrong) {
  // CAF loads them only at a connection and throws what it cannot load: the node
  // died at its first client, the client hung.
  Pki pki{dir.path.string()};
  pki.node_and_client();
  dir.write("not.pem", "box\n"); // as /etc/hostname
  auto p = [&](const std::string& f) { return fmt::format("{}/{}", pki.dir, f); };
  auto tls = [&](const std::string& cert, const std::string& key, const std::string& ca) {
    return fmt::format("certificate = \"{}\"\nkey = \"{}\"\nca = \"{}\"\n", p(cert), p(key), p(ca));
  };
  auto base = node_toml;
  // Bounded: without the check the node serves (and dies at the first client).
  auto node_says = [&](const std::string& node_tls) {
    node_toml = base + "[node.tls]\n" + node_tls;
    dir.write("node.toml", node_toml);
    auto out = (dir.path / "bad-node.out").string();
    Child n({JP_CLI_BINARY, "--workspace", node_ws, "--config", (dir.path / "node.toml").string(), "node",
             "--listen", "127.0.0.1:0"},
            state, out);
    CAF_CHECK_EQUAL(n.wait(), 1);
    return read_file(out);
  };
  auto said = node_says(tls("node.pem", "client.key", "ca.pem"));
  CAF_CHECK(contains(said, fmt::format("node.tls.key: {} is not the key of the certificate {}", p("client.key"),
                                       p("node.pem"))));
  CAF_CHECK(!contains(said, "listening"));
  said = node_says(tls("not.pem", "node.key", "ca.pem"));
  CAF_CHECK(contains(said, fmt::format("node.tls.certificate: {} holds no PEM certificate", p("not.pem"))));
  said = node_says(tls("node.pem", "not.pem", "ca.pem"));
  CAF_CHECK(contains(said, fmt::format("node.tls.key: {} holds no PEM private key", p("not.pem"))));
  said = node_says(tls("node.pem", "node.key", "not.pem"));
  CAF_CHECK(contains(said, fmt::format("node.tls.ca: {} holds no PEM certificate", p("not.pem"))));
  // An encrypted key: OpenSSL's reasons, each once (it queues one per layer it passed).
  pki.run("openssl pkey -in node.key -aes256 -passout pass:x -out enc.key");
  said = node_says(tls("node.pem", "enc.key", "ca.pem"));
  CAF_CHECK(contains(said, "or an encrypted one"));
  CAF_CHECK_EQUAL(said.find("bad decrypt"), said.rfind("bad decrypt"));
  // Only a bounded regular file is read: a FIFO blocked the start, a device filled memory.
  CAF_REQUIRE_EQUAL(::mkfifo(p("fifo.pem").c_str(), 0600), 0);
  said = node_says(tls("node.pem", "node.key", "fifo.pem"));
  CAF_CHECK(contains(said, fmt::format("node.tls.ca: {} is not a regular file", p("fifo.pem"))));
  dir.write("huge.pem", std::string(5 << 20, 'x'));
  said = node_says(tls("node.pem", "node.key", "huge.pem"));
  CAF_CHECK(contains(said, fmt::format("node.tls.ca: {} is larger than 4 MiB", p("huge.pem"))));
  // A client's likewise, before it connects.
  node_toml = base + "[node.tls]\n" + pki.tls("node", "ca");
  CAF_REQUIRE(start_node());
  client_tls = tls("client.pem", "node.key", "ca.pem");
  auto out = (dir.path / "client.out").string();
  Child c(client_argv(one_step(call("far", R"({ action = "spawn", id = "r", script = "echo hi" })"))), state, out);
  CAF_CHECK_EQUAL(c.wait(), 1);
  CAF_CHECK(contains(read_file(out), fmt::format("nodes.box.tls.key: {} is not the key of the certificate {}",
                                                 p("node.key"), p("client.pem"))));
}

CAF_TEST(nodes ls lists each configured node reachable or not with what runs there) {
  marked_sleep sleeper(dir.path);
  CAF_REQUIRE(start_node());
  Child client_run(client_argv(remote_sleep(sleeper)), state, (dir.path / "client.out").string());
  CAF_REQUIRE_EQUAL(sleeper.wait_alive(1), 1u);
  // Nothing listens on port 1 of loopback, nor on the node's port of ::1 (it listens
  // on 127.0.0.1): each is told as nothing accepting the connection, not as CAF's
  // "ip_connect failed" or "no such host".
  auto six = "[::1]" + address.substr(address.rfind(':'));
  // A port that takes connections and never answers: told as that, not CAF's
  // "request_timeout".
  int silent = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in at{};
  at.sin_family = AF_INET;
  at.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof at;
  CAF_REQUIRE(::bind(silent, reinterpret_cast<sockaddr*>(&at), sizeof at) == 0 && ::listen(silent, 4) == 0 &&
              ::getsockname(silent, reinterpret_cast<sockaddr*>(&at), &len) == 0);
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{silent};
  dir.write("ls.toml", client_config() + "[nodes.gone]\naddress = \"127.0.0.1:1\"\n[nodes.six]\naddress = \"" +
                         six + "\"\n[nodes.silent]\naddress = \"127.0.0.1:" + std::to_string(ntohs(at.sin_port)) +
                         "\"\n");
  auto r = run_command(fmt::format("XDG_STATE_HOME='{}' '{}' --workspace '{}' --config '{}' nodes ls", state,
                                   JP_CLI_BINARY, client_ws, (dir.path / "ls.toml").string()));
  CAF_CHECK_EQUAL(r.status, 1); // three did not answer
  if (!contains(r.out, "box  " + address + "  (token)  reachable, 1 handle running\n  s  far  running  ")
      || !contains(r.out, "gone  127.0.0.1:1  (token)  unreachable: nothing accepted a connection there")
      || !contains(r.out, "six  " + six + "  (token)  unreachable: nothing accepted a connection there")
      || !contains(r.out, "(token)  unreachable: no answer in time"))
    CAF_FAIL("nodes ls said:\n" << r.out);
}

CAF_TEST(a node killed stops its remote handles with a transient error and its restart sweeps them) {
  marked_sleep sleeper(dir.path);
  CAF_REQUIRE(start_node());
  auto out = (dir.path / "client.out").string();
  // After the loss the client waits for the test to restart the node (the flag),
  // then uses it again in the same turn.
  auto flag = (dir.path / "back").string();
  auto script = remote_sleep(sleeper) + "  [[agents.steps]]\n"
                + call("shell", fmt::format(R"({{ command = "while [ ! -e '{}' ]; do sleep 0.05; done" }})", flag))
                + "  [[agents.steps]]\n"
                + call("far", R"({ action = "spawn", id = "t", script = "echo again", wait_ms = 10000 })");
  Child client_run(client_argv(script), state, out);
  CAF_REQUIRE_EQUAL(sleeper.wait_alive(1), 1u);
  node->kill9();
  CAF_REQUIRE(said_within(out, "node `box` was lost"));
  CAF_CHECK(contains(read_file(out), R"(\"transient\":true)"));
  // In words, not CAF's exit_reason(remote_link_unreachable).
  CAF_CHECK(contains(read_file(out), "node `box` was lost (the connection to it broke"));
  CAF_CHECK(!contains(read_file(out), "exit_reason"));
  // Its tool outlived it, as the client is told; the next start of the node kills it.
  CAF_CHECK(contains(read_file(out), "one that crashed leaves it running until jp-actors starts there again"));
  CAF_CHECK_EQUAL(sleeper.alive().size(), 1u);
  CAF_REQUIRE(start_node(address));
  CAF_CHECK_EQUAL(sleeper.wait_none(), 0u);
  // The next use connects again.
  std::ofstream(flag) << "";
  CAF_CHECK_EQUAL(client_run.wait(), 0);
  std::string events; // the output's JSON lines (its stderr is in the same file)
  std::istringstream lines(read_file(out));
  for (std::string line; std::getline(lines, line);)
    if (line.rfind("{\"event\"", 0) == 0)
      events += line + "\n";
  auto again = content(results_of(Run{0, "", events}), "main", 3, 0);
  if (!contains(again, R"(again\n")") || !contains(again, R"("node":"box")"))
    CAF_FAIL("after the node came back, the spawn said: " << again);
}

CAF_TEST(a node stopped by SIGTERM tells the client its handles stopped with it as transient) {
  marked_sleep sleeper(dir.path);
  CAF_REQUIRE(start_node());
  auto out = (dir.path / "client.out").string();
  Child client_run(client_argv(remote_sleep(sleeper)), state, out);
  CAF_REQUIRE_EQUAL(sleeper.wait_alive(1), 1u);
  ::kill(node->pid, SIGTERM);
  CAF_CHECK_EQUAL(node->wait(), 128 + SIGTERM);
  CAF_CHECK_EQUAL(client_run.wait(), 0);
  auto text = read_file(out);
  if (!contains(text, "the node stopped (it got a terminate signal) and ended its tools as it shut down")
      || !contains(text, R"(\"transient\":true)"))
    CAF_FAIL("the client said:\n" << text);
  CAF_CHECK_EQUAL(sleeper.alive().size(), 0u);
}

CAF_TEST(a client killed has its handles on the node aborted) {
  marked_sleep sleeper(dir.path);
  CAF_REQUIRE(start_node());
  Child client_run(client_argv(remote_sleep(sleeper)), state, (dir.path / "client.out").string());
  CAF_REQUIRE_EQUAL(sleeper.wait_alive(1), 1u);
  client_run.kill9();
  CAF_CHECK_EQUAL(sleeper.wait_none(std::chrono::seconds(30)), 0u);
}

CAF_TEST(a client killed has its handles on the node ended by their turn end policy) {
  // `waiter` is awaited at the turn's end: its client lost, it runs to its end there
  // rather than being aborted as its remote handle went down with the client.
  node_toml += R"(
[conversation.tools.waiter]
summary = "Runs a script on the node, awaited at the turn's end"
command = { program = "/bin/sh", args = ["-c", "{{tool.arguments.script}}"] }
run = "unattended"
spawn.stateful = true
spawn.lifecycle = { on_turn_end = "await", await_timeout_secs = 60 }
parameters.script = { type = "string", required = true }
)";
  client_tools = R"(
[conversation.tools.waiter]
summary = "Runs a script on the node, awaited at the turn's end"
node = "box"
run = "unattended"
spawn.stateful = true
parameters.script = { type = "string", required = true }
)";
  CAF_REQUIRE(start_node());
  auto started = dir.path / "started", finished = dir.path / "finished";
  auto script = fmt::format("touch {}; sleep 2; touch {}", started.string(), finished.string());
  Child client_run(client_argv(one_step(call("waiter", fmt::format(R"({{ action = "spawn", id = "w", script = "{}", wait_ms = 0 }})", script)) +
                                        call("await", R"({ all = ["w"], timeout_secs = 120 })"))),
                   state, (dir.path / "client.out").string());
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!std::filesystem::exists(started) && std::chrono::steady_clock::now() < deadline)
    ::usleep(5000);
  CAF_REQUIRE(std::filesystem::exists(started));
  client_run.kill9();
  while (!std::filesystem::exists(finished) && std::chrono::steady_clock::now() < deadline)
    ::usleep(5000);
  CAF_CHECK(std::filesystem::exists(finished));
}

CAF_TEST(a node gone silent is lost after the heartbeat timeout and ends what it ran once back) {
  marked_sleep sleeper(dir.path);
  // Each side's silence is measured by the other's heartbeat: both beat often, so
  // only the stop, not a late beat on a loaded machine, outlasts the timeout.
  node_toml += "[node]\nheartbeat_secs = 0.2\n";
  CAF_REQUIRE(start_node());
  auto out = (dir.path / "client.out").string();
  client_heartbeat = "[node]\nheartbeat_secs = 0.2\ntimeout_secs = 3\n";
  Child client_run(client_argv(remote_sleep(sleeper)), state, out);
  CAF_REQUIRE_EQUAL(sleeper.wait_alive(1), 1u);
  // Stopped, the node keeps its socket open and says nothing: a silent partition.
  ::kill(node->pid, SIGSTOP);
  CAF_CHECK_EQUAL(client_run.wait(), 0);
  auto text = read_file(out);
  CAF_CHECK(contains(text, "node `box` was lost"));
  CAF_CHECK(contains(text, R"(\"transient\":true)"));
  // Back, it finds its client gone and ends the handle by its policy.
  ::kill(node->pid, SIGCONT);
  CAF_CHECK_EQUAL(sleeper.wait_none(std::chrono::seconds(30)), 0u);
}

CAF_TEST(a client gone silent has its handles on the node aborted after the timeout) {
  marked_sleep sleeper(dir.path);
  node_toml += "[node]\nheartbeat_secs = 0.2\ntimeout_secs = 3\n";
  client_heartbeat = "[node]\nheartbeat_secs = 0.2\n"; // as above
  CAF_REQUIRE(start_node());
  Child client_run(client_argv(remote_sleep(sleeper)), state, (dir.path / "client.out").string());
  CAF_REQUIRE_EQUAL(sleeper.wait_alive(1), 1u);
  ::kill(client_run.pid, SIGSTOP);
  CAF_CHECK_EQUAL(sleeper.wait_none(std::chrono::seconds(30)), 0u);
  // Going on, it hears the end's SIGTERM (stopped, it held it 20 s until a SIGKILL).
  ::kill(client_run.pid, SIGCONT);
}

CAF_TEST(a node and a client whose heartbeats the other side would time out are refused saying which) {
  // Each side's heartbeat and timeout are its own machine's config: a node beating
  // every 4 s was lost by a client timing out after 2 s at every quiet moment, each
  // loss told as transient. The session is refused instead, naming what to change.
  node_toml += "[node]\nheartbeat_secs = 4\ntimeout_secs = 10\n";
  CAF_REQUIRE(start_node());
  auto spawn = one_step(call("far", R"({ action = "spawn", id = "r", script = "echo hi", wait_ms = 0 })")
                        + call("await", R"({ all = ["r"], timeout_secs = 60 })"));
  client_heartbeat = "[node]\nheartbeat_secs = 1\ntimeout_secs = 2\n";
  auto slow_node = client(spawn);
  JP_REQUIRE_OK(slow_node);
  auto said = content(results_of(slow_node), "main", 1, 0);
  CAF_CHECK(contains(said, "the node refused the session: the node sends heartbeats every 4 s"));
  CAF_CHECK(contains(said, "client's [node] timeout_secs = 2"));
  CAF_CHECK(!contains(said, R"("transient":true)"));
  // The other way: the client beats slower than the node's timeout.
  client_heartbeat = "[node]\nheartbeat_secs = 12\ntimeout_secs = 30\n";
  auto slow_client = client(spawn);
  JP_REQUIRE_OK(slow_client);
  said = content(results_of(slow_client), "main", 1, 0);
  CAF_CHECK(contains(said, "the client sends heartbeats every 12 s"));
  CAF_CHECK(contains(said, "node's [node] timeout_secs = 10"));
  // Within each other's timeouts, the session opens.
  client_heartbeat = "[node]\nheartbeat_secs = 1\ntimeout_secs = 30\n"; // margins a loaded machine keeps
  auto fine = client(spawn);
  JP_REQUIRE_OK(fine);
  // Its output in the spawn's answer or in the await's, as it came (said_by).
  CAF_CHECK_EQUAL(said_by(results_of(fine), 1, 0, 1, "r"), "hi\n");
}

CAF_TEST_FIXTURE_SCOPE_END()

CAF_TEST(heartbeats are checked across a node and its client) {
  using jp::heartbeat_mismatch;
  CAF_CHECK_EQUAL(heartbeat_mismatch({1, 5}, {1, 5}), "");
  CAF_CHECK_EQUAL(heartbeat_mismatch({0.2, 5}, {1, 3}), "");
  CAF_CHECK(contains(heartbeat_mismatch({3, 5}, {1, 3}), "the node sends heartbeats every 3 s"));
  CAF_CHECK(contains(heartbeat_mismatch({1, 5}, {5, 10}), "the client sends heartbeats every 5 s"));
  // None sent (an embedder's system without heartbeats) is heard by no timeout ...
  CAF_CHECK(contains(heartbeat_mismatch({1, 5}, {0, 0}), "the client sends no heartbeats"));
  // ... and no timeout loses no one.
  CAF_CHECK_EQUAL(heartbeat_mismatch({0, 0}, {0, 0}), "");
}

CAF_TEST(while a node stops only a tool killed by a signal is told as stopped with it) {
  // A failure of its own, or a fetch of one that failed before, is told as it is.
  jp::NodeStopping stopping;
  auto killed = jp::ToolState::failure(jp::ToolError{"killed by signal 15 (SIGTERM)", {}, false});
  auto failed = jp::ToolState::failure(jp::ToolError{"exit status 1", {}, false});
  auto crashed = jp::ToolState::failure(jp::ToolError{"killed by signal 11 (SIGSEGV)", {}, false});
  auto trapped = jp::ToolState::failure(jp::ToolError{"exit status 143", {}, false}); // a JVM's on TERM
  CAF_CHECK_EQUAL(stopping.as_told(killed), killed); // not stopping yet
  stopping.begin();
  auto told = stopping.as_told(killed);
  CAF_CHECK(told.error.transient);
  CAF_CHECK(contains(told.error.message, "the node stopped"));
  CAF_CHECK_EQUAL(stopping.as_told(failed), failed);
  CAF_CHECK_EQUAL(stopping.as_told(crashed), crashed);
  CAF_CHECK(stopping.as_told(trapped).error.transient);
  CAF_CHECK_EQUAL(stopping.as_told(jp::ToolState::success("ok")), jp::ToolState::success("ok"));
  // A spawn refused as the node ends names the node, not the client, and is worth a retry.
  auto refused = stopping.as_told(
    jp::ToolState::failure(jp::ToolError{"not started: jp-actors is ending (it got a terminate signal)", {}, false}));
  CAF_CHECK_EQUAL(refused.error.message,
                  "not started: the node is shutting down (it got a terminate signal); use it again once it is back");
  CAF_CHECK(refused.error.transient);
}

CAF_TEST(nodes starting at once as one user all get the one token made whole) {
  // One makes it; the others find it whole, never an empty file they would call broken.
  temp_dir dir;
  scoped_env state_home("XDG_STATE_HOME", dir.path);
  constexpr int starts = 8;
  std::vector<jp::Result<std::string>> tokens(starts, jp::Error{"not run"});
  std::atomic<bool> go{false};
  std::vector<std::thread> threads;
  for (int i = 0; i < starts; ++i)
    threads.emplace_back([&, i] {
      while (!go.load())
        std::this_thread::yield();
      tokens[i] = jp::node_token(true);
    });
  go = true;
  for (auto& t : threads)
    t.join();
  CAF_REQUIRE(tokens[0].ok());
  for (auto& t : tokens) {
    CAF_CHECK_EQUAL(t.ok() ? std::string() : t.error(), "");
    CAF_CHECK(t.ok() && *t == *tokens[0]);
  }
  // Nothing but the token is left beside it.
  std::vector<std::string> names;
  for (auto& e : std::filesystem::directory_iterator(dir.path / "jp-actors"))
    names.push_back(e.path().filename().string());
  CAF_CHECK_EQUAL(names, std::vector<std::string>{"node-token"});
}

CAF_TEST(a client with no token makes no state directory for it) {
  temp_dir dir;
  auto home = dir.path / "state";
  scoped_env state_home("XDG_STATE_HOME", home);
  auto none = jp::node_token(false);
  CAF_REQUIRE(!none.ok());
  CAF_CHECK(contains(none.error(), "no node token at " + home.string() + "/jp-actors/node-token: No such file"));
  CAF_CHECK(contains(none.error(), "a node started as this user"));
  CAF_CHECK(!std::filesystem::exists(home)); // nor XDG_STATE_HOME itself
}

CAF_TEST(a token file others may read or too short says what is wrong and how to fix it) {
  // A client never makes the token: "remove it and start again" left it with none.
  temp_dir dir;
  scoped_env state_home("XDG_STATE_HOME", dir.path);
  std::filesystem::create_directories(dir.path / "jp-actors");
  std::filesystem::permissions(dir.path / "jp-actors", std::filesystem::perms::owner_all);
  dir.write("jp-actors/node-token", std::string(40, 'a'));
  ::chmod((dir.path / "jp-actors" / "node-token").c_str(), 0644);
  auto open = jp::node_token(false);
  ::chmod((dir.path / "jp-actors" / "node-token").c_str(), 0600);
  dir.write("jp-actors/node-token", "short");
  auto brief = jp::node_token(true);
  CAF_REQUIRE(!open.ok());
  CAF_CHECK(contains(open.error(), "others may read it (mode 644; chmod 600 it)"));
  CAF_CHECK(contains(open.error(), "put there a copy of the node token of the one you reach (its own node-token file)"));
  CAF_REQUIRE(!brief.ok());
  CAF_CHECK(contains(brief.error(), "it holds fewer than 32 characters; remove it and start again"));
}

CAF_TEST(a node address is read one way only and its errors say how to write it) {
  auto why = [](const std::string& text) {
    auto a = jp::parse_listen_address(text, "--listen");
    return a ? std::string("ok ") + a->host + " " + std::to_string(a->port) : a.error();
  };
  CAF_CHECK_EQUAL(why("[::1]:4243"), "ok ::1 4243");
  CAF_CHECK_EQUAL(why("127.0.0.1:0"), "ok 127.0.0.1 0");
  CAF_CHECK_EQUAL(why("4242"), "ok 127.0.0.1 4242");
  CAF_CHECK_EQUAL(why("localhost:1"), "ok localhost 1");
  CAF_CHECK(contains(why("::1:4243"), "got \"::1:4243\": an IPv6 address goes in brackets, as in [::1]:4242"));
  CAF_CHECK(contains(why("[::1]"), "got \"[::1]\": no port after the address"));
  CAF_CHECK(contains(why("[::1"), "an IPv6 address goes in brackets, [::1]"));
  CAF_CHECK(contains(why("127.1:4247"), "got \"127.1:4247\": write the IPv4 address out in four parts (127.0.0.1)"));
  CAF_CHECK(contains(why(":4250"), "no host before the port"));
}
