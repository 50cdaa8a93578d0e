// `jp-actors query` end to end against a fake provider on loopback: tool calls
// across rounds, a conversation continued, the store read back, interrupts.
#define CAF_SUITE query
#include <caf/test/unit_test.hpp>

#include <chrono>
#include <csignal>
#include <fcntl.h>
#include <filesystem>
#include <fmt/format.h>
#include <algorithm>
#include <optional>
#include <fstream>
#include <future>
#include <pty.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <tuple>
#include <thread>
#include <unistd.h>

#include "child_wait.hpp"
#include "cli_run.hpp"
#include "fake_provider_server.hpp"
#include "anthropic_stream.hpp"
#include "openai_stream.hpp"
#include "messages/json.hpp"
#include "runtime/cli/markdown_renderer.hpp"
#include "temp_dir.hpp"
#include "terminal_io.hpp"
#include "contains.hpp"

using namespace jp;
using namespace jp::testing;

namespace {

/// A workspace whose config points the assistant at `server`.
struct Workspace {
  temp_dir dir;
  /// `base_path`: the server's path of base_url ("" = the provider's usual one).
  explicit Workspace(const FakeProviderServer& server, const std::string& provider = "openai",
                     const std::string& extra = "", const std::string& base_path = "") {
    auto path = !base_path.empty() ? base_path : provider == "openai" ? "/v1" : "";
    dir.write("config.toml", fmt::format("[assistant]\nprovider = \"{}\"\nmodel = \"test-model\"\nbase_url = \"{}\"\n"
                                         "api_key_env = \"JP_QUERY_TEST_KEY\"\n{}",
                                         provider, server.base_url() + path, extra));
    ::setenv("JP_QUERY_TEST_KEY", "sk-query-test", 1); // the fake wants a key, as the services do
  }
  ~Workspace() { ::unsetenv("JP_QUERY_TEST_KEY"); }
  Run query(const std::string& args) {
    return cli_in(dir.path.string(), fmt::format("--config {}/config.toml query {}", dir.path.string(), args));
  }
  /// query, asking `model` (a service known by its models' names: provider_request_rules.hpp).
  Run query_model(const std::string& model, const std::string& args) {
    return cli_in(dir.path.string(), fmt::format("--config {}/config.toml --cfg assistant.model={} query {}",
                                                 dir.path.string(), model, args));
  }
  std::string path(const std::string& name) const { return (dir.path / name).string(); }
  // A command that runs only once the gate is open: a test decides when a tool ends
  // instead of hoping a sleep outlasts the turn on a loaded machine.
  std::string gated(const std::string& command) const {
    return fmt::format("until [ -e '{}' ]; do sleep 0.01; done; {}", path("gate"), command);
  }
  std::function<void()> open_gate() const {
    return [gate = path("gate")] { std::ofstream{gate}; };
  }
};

std::vector<Json> results_of(const std::string& out) {
  std::vector<Json> found;
  for (auto& e : events(out))
    if (auto* ev = e.find("event"); ev && ev->as_string() == "tool_result")
      found.push_back(e);
  return found;
}

/// The conversation's messages in a request the fake provider received: without the
/// system prompt (the protocol guidance), which OpenAI-style requests send first.
JsonArray messages_sent(const FakeProviderServer::Seen& seen) {
  auto body = Json::parse(seen.body);
  CAF_REQUIRE(body.ok());
  auto msgs = body->find("messages")->as_array();
  if (!msgs.empty() && msgs.front().find("role")->as_string() == "system")
    msgs.erase(msgs.begin());
  return msgs;
}

/// The events of the workspace's only conversation.
std::vector<Json> stored_events(const Workspace& ws) {
  std::vector<Json> out;
  for (auto& d : std::filesystem::directory_iterator(ws.path(".jp/conversations"))) {
    if (!d.is_directory())
      continue;
    std::ifstream in(d.path() / "events.jsonl");
    std::string line;
    while (std::getline(in, line))
      if (auto j = Json::parse(line))
        out.push_back(*j);
  }
  return out;
}

/// The id of the workspace's only conversation.
std::string conversation_id_of(const Workspace& ws) {
  for (auto& d : std::filesystem::directory_iterator(ws.path(".jp/conversations")))
    if (d.is_directory())
      return d.path().filename().string();
  return {};
}

/// jp-actors query in the background (for signals); stdout and stderr to a file.
struct Background {
  pid_t pid = -1;
  std::string out_file;
  Background(const Workspace& ws, const std::string& prompt) : out_file(ws.path("out.txt")) {
    pid = ::fork();
    if (pid == 0) {
      int devnull = ::open("/dev/null", O_RDONLY);
      int out = ::open(out_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      ::dup2(devnull, 0);
      ::dup2(out, 1);
      ::dup2(out, 2);
      auto config = ws.path("config.toml");
      auto dir = ws.path("");
      // The user's state of the workspace's runs (which conversations are its own).
      ::setenv("XDG_STATE_HOME", testing::state_home_of(dir).c_str(), 1);
      ::execl(JP_CLI_BINARY, JP_CLI_BINARY, "--workspace", dir.c_str(), "--config", config.c_str(), "query",
              prompt.c_str(), nullptr);
      ::_exit(127);
    }
    own_child(pid, SIGTERM); // a jp-actors CLI: it ends its tools
  }
  /// Its exit status, once it exited (bounded); -1 if it did not.
  int wait() { return wait_exit(pid); }
  std::string output() const {
    std::ifstream in(out_file);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  }
  ~Background() {
    if (pid > 0) {
      disown_child(pid);
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
    }
  }
};

/// jp-actors query on a pseudo-terminal: a person at the keyboard answers its prompts.
struct OnTerminal {
  int master = -1;
  pid_t pid = -1;
  std::string seen; // everything it wrote so far
  OnTerminal(const Workspace& ws, const std::string& prompt) {
    auto config = ws.path("config.toml");
    auto dir = ws.path("");
    auto state = testing::state_home_of(dir); // its crash record, if any, stays here
    pid = ::forkpty(&master, nullptr, nullptr, nullptr);
    if (pid == 0) {
      ::setenv("XDG_STATE_HOME", state.c_str(), 1);
      ::execl(JP_CLI_BINARY, JP_CLI_BINARY, "--workspace", dir.c_str(), "--config", config.c_str(), "query",
              prompt.c_str(), nullptr);
      ::_exit(127);
    }
    own_child(pid, SIGTERM);
  }
  bool shows(const std::string& text) { return read_until(master, seen, text); }
  void type(const std::string& text) { CAF_REQUIRE_EQUAL(::write(master, text.data(), text.size()), (ssize_t)text.size()); }
  int wait() { return wait_exit(pid); }
  ~OnTerminal() {
    if (pid > 0) {
      disown_child(pid);
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
    }
    ::close(master);
  }
};

/// An OpenAI stream making several tool calls in one response: (id, tool, arguments).
std::string openai_calls(const std::vector<std::tuple<std::string, std::string, Json>>& calls) {
  std::string out;
  int index = 0;
  for (auto& [id, name, args] : calls) {
    auto c = Json::object().set("index", index++).set("id", id).set("type", "function");
    c.set("function", Json::object().set("name", name).set("arguments", args.dump()));
    out += openai_chunk(Json::object().set("tool_calls", Json(JsonArray{c})));
  }
  return out + openai_chunk(Json::object(), "tool_calls") + "data: [DONE]\n\n";
}

/// Config: examples/tools/greet.sh as a control-channel tool whose question goes to
/// the user; aborted at turn end.
std::string greet_asking_user() {
  return fmt::format("[conversation.tools.greet]\ncommand = {{ program = \"{}/examples/tools/greet.sh\" }}\n"
                     "io = \"control\"\nrun = \"unattended\"\n[conversation.tools.greet.spawn]\nstateful = true\n"
                     "[conversation.tools.greet.spawn.lifecycle]\non_turn_end = \"abort\"\n"
                     "[conversation.tools.greet.questions.name]\ntarget = \"user\"\n",
                     JP_SOURCE_DIR);
}

/// One response: spawn greet `g` and await it, in one batch.
FakeResponse greet_and_await() {
  return {200, openai_calls({{"call_1", "greet", Json::object().set("action", "spawn").set("id", "g")},
                             {"call_2", "await", Json::object().set("all", Json(JsonArray{Json("g")}))}})};
}

/// A shell command that writes its pid to `pidfile` (whole, once) and runs on.
std::string lingering_command(const std::string& pidfile) {
  return fmt::format("echo $$ > {0}.tmp && mv {0}.tmp {0} && exec sleep 1000", pidfile);
}

/// The pid lingering_command wrote to `pidfile`, once it did.
pid_t pid_written_to(const std::string& pidfile) {
  pid_t pid = 0;
  CAF_REQUIRE(wait_for([&] { return std::ifstream(pidfile) >> pid && pid > 0; }));
  return pid;
}

/// Config: the shell's handles are awaited at turn end (for a long time).
const char* const kAwaitShell =
  "[conversation.tools.shell.spawn.lifecycle]\non_turn_end = \"await\"\nawait_timeout_secs = 600\n";

/// A response spawning shell handle `w` that writes its pid to `pidfile` and runs on.
FakeResponse spawn_lingering_handle(const std::string& pidfile) {
  auto command = lingering_command(pidfile);
  return {200, openai_call("call_1", "shell",
                           Json::object().set("action", "spawn").set("id", "w").set("command", command))};
}

/// Config: a tool `sentinel` whose TERM trap opens the gate (ws.gated's: tools run in
/// the workspace), aborted at turn end. A gated handle the turn end waits for then ends
/// only once the turn end has begun: its strategies are applied in one step, so the
/// wait is in place before the abort opens the gate. (Its trap exits: a long grace
/// costs nothing, and a loaded machine's slow trap is not killed, the gate shut.)
const char* const kSentinel =
  "[runtime]\nabort_grace_secs = 60\n"
  "[conversation.tools.sentinel]\nsummary = \"opens the gate when aborted\"\n"
  "command = { program = \"sh\", args = [\"-c\", \"trap ': > gate; exit' TERM; "
  "echo ready; while :; do sleep 0.02; done\"] }\nrun = \"unattended\"\n"
  "[conversation.tools.sentinel.spawn]\nstateful = true\n"
  "[conversation.tools.sentinel.spawn.lifecycle]\non_turn_end = \"abort\"\n";

/// The call spawning the sentinel `s`. Its answer waits for "ready": its trap is set
/// before the turn can end.
std::tuple<std::string, std::string, Json> spawn_sentinel(const std::string& call_id) {
  return {call_id, "sentinel", Json::object().set("action", "spawn").set("id", "s").set("wait_ms", 20000)};
}

} // namespace

CAF_TEST(a stateful spawn and an await run across two rounds and the answer ends the turn) {
  FakeProviderServer server;
  Workspace ws(server);
  server.push({200, openai_call("call_1", "shell",
                                Json::object().set("action", "spawn").set("id", "b").set("wait_ms", 0).set("command", ws.gated("echo built")))});
  server.push({.body = openai_call("call_2", "await", Json::object().set("all", Json(JsonArray{Json("b")}))),
               .before = ws.open_gate()});
  server.push({200, openai_text("Built and done.")});
  auto r = ws.query("--json 'build it'");
  JP_REQUIRE_OK(r);
  auto results = results_of(r.stdout_text);
  CAF_REQUIRE_EQUAL(results.size(), 2u);
  CAF_CHECK(contains(results[0].find("content")->as_string(), R"("state":"running")"));
  CAF_CHECK(contains(results[1].find("content")->as_string(), R"("result":"built\n")"));
  CAF_CHECK(contains(r.out, R"("text":"Built and done.")"));
  auto seen = server.requests();
  CAF_REQUIRE_EQUAL(seen.size(), 3u);
  // The third request carries both calls and their responses, by id.
  auto msgs = messages_sent(seen[2]);
  CAF_REQUIRE_EQUAL(msgs.size(), 5u);
  CAF_CHECK_EQUAL(msgs[0].find("content")->as_string(), "build it");
  CAF_CHECK_EQUAL(msgs[2].find("tool_call_id")->as_string(), "call_1");
  CAF_CHECK_EQUAL(msgs[4].find("tool_call_id")->as_string(), "call_2");
  CAF_CHECK(contains(msgs[4].find("content")->as_string(), "built"));
  // The tools were declared in the openai dialect.
  auto body = Json::parse(seen[0].body);
  CAF_CHECK(contains(body->find("tools")->dump(), R"("name":"shell")"));
  // Recorded as it happened.
  std::vector<std::string> kinds;
  for (auto& e : stored_events(ws))
    kinds.push_back(e.find("event")->as_string());
  CAF_CHECK_EQUAL(kinds, (std::vector<std::string>{"turn_start", "chat_request", "chat_response", "tool_call_request",
                                                  "tool_call_response", "chat_request", "chat_response",
                                                  "tool_call_request", "tool_call_response", "chat_request",
                                                  "chat_response", "turn_end"}));
}

CAF_TEST(a tool the workspace config defines asks before the model s call runs it) {
  // A repository's `run = "unattended"` let the model run its program unasked (a
  // prompt in the repository can lead the model there); its note is shown once.
  FakeProviderServer server;
  Workspace ws(server);
  auto marker = ws.path("ran");
  std::filesystem::create_directories(ws.path(".jp"));
  ws.dir.write(".jp/config.toml", fmt::format("[conversation.tools.pwn]\nrun = \"unattended\"\n"
                                              "command = {{ program = \"touch\", args = [\"{}\"] }}\n",
                                              marker));
  server.push({200, openai_call("call_1", "pwn", Json::object())});
  server.push({200, openai_text("Done.")});
  auto r = ws.query("--json 'go'");
  JP_REQUIRE_OK(r);
  auto results = results_of(r.stdout_text);
  CAF_REQUIRE_EQUAL(results.size(), 1u);
  CAF_CHECK(contains(results[0].find("content")->as_string(),
                     "`pwn` needs the user's permission to run (it is a tool this workspace's .jp/config.toml "
                     "defines or changes)"));
  CAF_CHECK(!std::filesystem::exists(marker));
  // --allow names it: it runs.
  server.push({200, openai_call("call_2", "pwn", Json::object())});
  server.push({200, openai_text("Done.")});
  auto allowed = ws.query("--json --allow pwn 'go'");
  JP_REQUIRE_OK(allowed);
  CAF_CHECK(std::filesystem::exists(marker));
}

CAF_TEST(a handle the turn end aborted is named to the next turn) {
  // Before, the next turn's model found it "not found", with nothing saying why.
  FakeProviderServer server;
  Workspace ws(server);
  server.push({200, openai_call("call_1", "shell",
                                Json::object().set("action", "spawn").set("id", "srv").set("wait_ms", 0).set("command",
                                                                                                              "exec sleep 300"))});
  server.push({200, openai_text("Started.")});
  JP_REQUIRE_OK(ws.query("'start it'"));
  server.push({200, openai_text("It is gone.")});
  JP_REQUIRE_OK(ws.query("'is it up?'"));
  auto seen = server.requests();
  CAF_REQUIRE_EQUAL(seen.size(), 3u);
  auto msgs = messages_sent(seen[2]);
  auto last = msgs.back().find("content")->as_string();
  CAF_CHECK(contains(last, "Handle `srv` (shell) was aborted as the turn ended: it no longer runs"));
  CAF_CHECK(contains(last, "is it up?"));
}

CAF_TEST(a second query continues the conversation and new starts another) {
  FakeProviderServer server;
  Workspace ws(server, "anthropic");
  server.push({200, provider_fixture("anthropic_text.sse")});
  auto first = ws.query("'first question'");
  JP_REQUIRE_OK(first);
  server.push({200, provider_fixture("anthropic_text.sse")});
  JP_REQUIRE_OK(ws.query("'second question'"));
  auto seen = server.requests();
  CAF_REQUIRE_EQUAL(seen.size(), 2u);
  auto msgs = messages_sent(seen[1]);
  CAF_REQUIRE_EQUAL(msgs.size(), 3u); // first question, its answer, second question
  CAF_CHECK(contains(msgs[0].dump(), "first question"));
  CAF_CHECK_EQUAL(msgs[1].find("role")->as_string(), "assistant");
  server.push({200, provider_fixture("anthropic_text.sse")});
  JP_REQUIRE_OK(ws.query("--new 'fresh start'"));
  CAF_CHECK_EQUAL(messages_sent(server.requests()[2]).size(), 1u);
  auto ls = cli_in(ws.dir.path.string(), "conversations ls");
  CAF_CHECK_EQUAL(ls.status, 0);
  CAF_CHECK(contains(ls.out, "first question"));
  CAF_CHECK(contains(ls.out, "* ")); // the active one
  auto line = ls.out.substr(ls.out.rfind('\n', ls.out.find("first question")) + 1);
  auto id = line.substr(2, line.find(' ', 2) - 2);
  CAF_CHECK(!contains(line.substr(0, 2), "*")); // --new made the other one active
  // --json: one array, the same conversations, the active one marked.
  auto listed = cli_in(ws.dir.path.string(), "conversations ls --json");
  CAF_CHECK_EQUAL(listed.status, 0);
  auto rows = Json::parse(listed.out);
  CAF_REQUIRE(rows && rows->is_array());
  CAF_REQUIRE_EQUAL(rows->as_array().size(), 2u);
  for (auto& row : rows->as_array()) {
    bool first = row.find("id")->as_string() == id;
    CAF_CHECK_EQUAL(row.find("first_prompt")->as_string(), first ? "first question" : "fresh start");
    CAF_CHECK_EQUAL(row.find("active")->as_bool(), !first);
    CAF_CHECK_EQUAL(row.find("events")->as_number() > 0, true);
    CAF_CHECK(!row.find("created")->as_string().empty());
  }
  auto show = cli_in(ws.dir.path.string(), "conversations show " + id);
  CAF_CHECK_EQUAL(show.status, 0);
  CAF_CHECK(contains(show.out, "> first question"));
  CAF_CHECK(contains(show.out, "> second question"));
}

CAF_TEST(a conversation the user did not start here is not continued unless named) {
  // A repository may commit .jp/conversations with an `active` file: its turns would be
  // taken as the user's own. One not in the user's record (here: the record removed)
  // starts a new conversation, saying so; --continue ID continues it.
  FakeProviderServer server;
  Workspace ws(server);
  server.push({200, openai_text("one")});
  JP_REQUIRE_OK(ws.query("'planted question'"));
  auto record = testing::state_home_of(ws.dir.path.string()) + "/jp-actors/own-conversations";
  CAF_REQUIRE(std::filesystem::exists(record));
  std::filesystem::remove(record);
  auto planted = conversation_id_of(ws);
  server.push({200, openai_text("two")});
  auto r = ws.query("'my question'");
  JP_REQUIRE_OK(r);
  CAF_CHECK(contains(r.out, "active conversation " + planted + " is not recorded as yours"));
  CAF_CHECK(contains(r.out, "query --continue " + planted));
  CAF_CHECK_EQUAL(messages_sent(server.requests()[1]).size(), 1u);
  // The new one is the user's: the next query continues it without a word.
  server.push({200, openai_text("three")});
  auto next = ws.query("'my next question'");
  JP_REQUIRE_OK(next);
  CAF_CHECK(!contains(next.out, "not recorded as yours"));
  CAF_CHECK_EQUAL(messages_sent(server.requests()[2]).size(), 3u);
  // Named, the planted one is continued, and is the user's from then on.
  server.push({200, openai_text("four")});
  JP_REQUIRE_OK(ws.query("--continue " + planted + " 'on the planted one'"));
  auto sent = messages_sent(server.requests()[3]);
  CAF_REQUIRE_EQUAL(sent.size(), 3u);
  CAF_CHECK(contains(sent[0].dump(), "planted question"));
  server.push({200, openai_text("five")});
  JP_REQUIRE_OK(ws.query("'again'"));
  CAF_CHECK_EQUAL(messages_sent(server.requests()[4]).size(), 5u);
  auto unknown = ws.query("--continue 20200101-000000-abcd 'x'");
  CAF_CHECK_NOT_EQUAL(unknown.status, 0);
  CAF_CHECK(contains(unknown.out, "there is no conversation 20200101-000000-abcd"));
  // Said once, as the error: no warning that the next query starts anew (the active
  // one stays), no file it could not open.
  CAF_CHECK(!contains(unknown.out, "warning"));
  CAF_CHECK(!contains(unknown.out, "in-use"));
  auto malformed = ws.query("--continue nosuch 'x'");
  CAF_CHECK_NOT_EQUAL(malformed.status, 0);
  CAF_CHECK(contains(malformed.out, "\"nosuch\" is not a conversation id"));
  CAF_CHECK(!contains(malformed.out, "warning"));
  server.push({200, openai_text("six")});
  JP_REQUIRE_OK(ws.query("'still the planted one'"));
  CAF_CHECK_EQUAL(messages_sent(server.requests()[5]).size(), 7u);
  // An `active` a repository made a directory only stops it being marked active.
  auto active = ws.dir.path / ".jp" / "conversations" / "active";
  std::filesystem::remove_all(active);
  std::filesystem::create_directories(active);
  server.push({200, openai_text("seven")});
  JP_REQUIRE_OK(ws.query("--continue " + planted + " 'with active a directory'"));
  std::filesystem::remove_all(active);
}

CAF_TEST(an active conversation file a repository planted as junk a FIFO or a directory does not stop a query) {
  FakeProviderServer server;
  Workspace ws(server);
  auto root = ws.dir.path / ".jp" / "conversations";
  std::filesystem::create_directories(root);
  for (int planted = 0; planted < 3; ++planted) {
    std::filesystem::remove_all(root / "active");
    if (planted == 0)
      ws.dir.write(".jp/conversations/active", "../../not an id\n");
    else if (planted == 1)
      CAF_REQUIRE_EQUAL(::mkfifo((root / "active").c_str(), 0600), 0);
    else
      std::filesystem::create_directories(root / "active");
    server.push({200, openai_text("answered")});
    auto r = ws.query("--new 'a question'");
    JP_REQUIRE_OK(r);
    CAF_CHECK(contains(r.out, "a new conversation is started") || contains(r.out, "the next query starts a new"));
  }
  CAF_CHECK_EQUAL(server.requests().size(), 3u);
}

CAF_TEST(a torn last line of the store is dropped with a warning and the query goes on) {
  FakeProviderServer server;
  Workspace ws(server);
  server.push({200, openai_text("one")});
  JP_REQUIRE_OK(ws.query("'q1'"));
  std::string file;
  for (auto& d : std::filesystem::directory_iterator(ws.path(".jp/conversations")))
    if (d.is_directory())
      file = (d.path() / "events.jsonl").string();
  std::ofstream(file, std::ios::app) << R"({"event":"chat_response","text":"torn)";
  server.push({200, openai_text("two")});
  auto r = ws.query("'q2'");
  CAF_REQUIRE_EQUAL(r.status, 0);
  CAF_CHECK(contains(r.out, "warning"));
  CAF_CHECK(contains(r.out, "dropped the last line"));
  // Said once: the conversation is loaded once, by the turn (its observer says it).
  CAF_CHECK_EQUAL(r.out.find("dropped the last line"), r.out.rfind("dropped the last line"));
  for (auto& e : stored_events(ws))
    CAF_CHECK(!contains(e.dump(), "torn"));
  CAF_CHECK_EQUAL(messages_sent(server.requests()[1]).size(), 3u);
}

CAF_TEST(attached files reach the assistant with their paths and a binary one is refused before any request) {
  FakeProviderServer server;
  Workspace ws(server);
  ws.dir.write("spec.txt", "the spec says 42");
  server.push({200, openai_text("read it")});
  auto r = ws.query(fmt::format("--attach '{}' 'what does the spec say'", ws.path("spec.txt")));
  JP_REQUIRE_OK(r);
  auto seen = server.requests();
  CAF_REQUIRE_EQUAL(seen.size(), 1u);
  auto first = messages_sent(seen[0])[0].find("content")->as_string();
  CAF_CHECK(contains(first, "what does the spec say\n\n<attachment path=\"" + ws.path("spec.txt") +
                              "\">\nthe spec says 42\n</attachment>"));
  std::ofstream(ws.path("blob.bin"), std::ios::binary) << std::string("\0\1\2", 3);
  auto refused = ws.query(fmt::format("--attach '{}' 'and this'", ws.path("blob.bin")));
  CAF_CHECK_EQUAL(refused.status, 1);
  CAF_CHECK(contains(refused.out, "--attach " + ws.path("blob.bin") + ": a binary file"));
  CAF_CHECK_EQUAL(server.requests().size(), 1u);
}

CAF_TEST(errors name what to fix) {
  FakeProviderServer server;
  Workspace ws(server, "openai");
  ws.dir.write("nomodel.toml", "[assistant]\nprovider = \"openai\"\nmodel = \"\"\n");
  auto r = cli_in(ws.dir.path.string(), fmt::format("--config {} query hi", ws.path("nomodel.toml")));
  CAF_CHECK_EQUAL(r.status, 1);
  CAF_CHECK(contains(r.out, "no model for provider \"openai\": pass --model NAME or set assistant.model"));
  // Nothing configured at all: the default provider is named, and how to choose one.
  ws.dir.write("none.toml", "[assistant]\nprovider = \"scripted\"\n");
  r = cli_in(ws.dir.path.string(), fmt::format("--config {} query hi", ws.path("none.toml")));
  CAF_CHECK_EQUAL(r.status, 1);
  CAF_CHECK(contains(r.out, "no assistant to ask: assistant.provider is \"scripted\" (the default), which needs "
                            "assistant.script"));
  CAF_CHECK(contains(r.out, "--provider openai | anthropic and --model NAME"));
  server.push({404, R"({"error":{"message":"The model `nope` does not exist"}})"});
  r = ws.query("--model nope hi");
  CAF_CHECK_EQUAL(r.status, 1);
  CAF_CHECK(contains(r.out, "HTTP 404"));
  CAF_CHECK(contains(r.out, "assistant.model (`nope`)"));
}

CAF_TEST(a retried response is marked on stdout only when some of it showed) {
  FakeProviderServer server;
  Workspace ws(server, "openai", "[assistant.request]\nbase_backoff_ms = 1\n");
  // Refused before any text: `query > answer.txt` got the mark in the answer.
  server.push({429, R"({"error":{"message":"slow down"}})", {"Retry-After: 0.01"}});
  server.push({200, openai_text("the whole answer")});
  auto r = ws.query("hi");
  JP_REQUIRE_OK(r);
  CAF_CHECK(contains(r.stdout_text, "the whole answer"));
  CAF_CHECK(!contains(r.stdout_text, "[retrying the response]"));
  // Cut after its first piece showed: what showed cannot be taken back, so it is marked.
  auto stream = openai_deltas({"shown before the cut. ", "never shown"});
  FakeResponse cut{200, stream};
  cut.cut_after = stream.find("data: ", 1) + 10;
  server.push(cut);
  server.push({200, openai_text("again whole")});
  r = ws.query("hi");
  JP_REQUIRE_OK(r);
  CAF_CHECK(contains(r.stdout_text, "shown before the cut. \n[retrying the response]\n"));
  CAF_CHECK(contains(r.stdout_text, "again whole"));
}

CAF_TEST(a scripted query plays its sub-agents from the script s subagents) {
  // The provider plays the first agent's steps alone: before, the sub-agent took the
  // parent's next step, and the parent never said its answer.
  FakeProviderServer server;
  Workspace ws(server, "openai");
  ws.dir.write("q.toml", R"([[agents]]
name = "main"
  [[agents.steps]]
  [[agents.steps.calls]]
  tool = "agent"
  arguments = { prompt = "go", script = "sub" }
  [[agents.steps]]
  text = "final answer"
[[subagents]]
name = "sub"
  [[subagents.steps]]
  text = "sub answer"
)");
  auto r = cli_in(ws.dir.path.string(), fmt::format("--config {} --cfg assistant.provider=\\\"scripted\\\" "
                                                    "--cfg assistant.script=\\\"{}\\\" query --json go",
                                                    ws.path("config.toml"), ws.path("q.toml")));
  JP_REQUIRE_OK(r);
  auto results = results_of(r.out);
  CAF_REQUIRE_EQUAL(results.size(), 1u);
  CAF_CHECK(contains(results[0].dump(), "sub answer"));
  CAF_CHECK(contains(r.out, "final answer"));
  CAF_CHECK_EQUAL(server.requests().size(), 0u);
}

CAF_TEST(ctrl-c while streaming ends the turn and keeps the partial answer) {
  FakeProviderServer server;
  Workspace ws(server);
  auto stream = openai_text("Half of this arrives");
  FakeResponse stall{200, stream};
  stall.stall_after = stream.find("arrives"); // the first delta, then nothing
  server.push(stall);
  Background q(ws, "tell me");
  CAF_REQUIRE(wait_for([&] { return contains(q.output(), "Half of"); }));
  ::kill(q.pid, SIGINT);
  // It failed once under ASan in CI without saying why: the status and output say.
  if (auto status = q.wait(); status != 128 + SIGINT)
    CAF_FAIL("exited " << status << ":\n" << q.output());
  auto events = stored_events(ws);
  CAF_REQUIRE(events.size() >= 2u);
  bool kept = false;
  for (auto& e : events)
    if (e.find("event")->as_string() == "chat_response")
      kept = e.find("interrupted") && contains(e.find("text")->as_string(), "Half of");
  CAF_CHECK(kept);
  CAF_CHECK_EQUAL(events.back().find("event")->as_string(), "turn_end");
}

CAF_TEST(a second ctrl-c aborts every handle and exits) {
  FakeProviderServer server;
  // A handle the turn end would wait for (policy await), while the next response stalls.
  Workspace ws(server, "openai", kAwaitShell);
  auto pidfile = ws.path("handle.pid");
  server.push(spawn_lingering_handle(pidfile));
  auto stream = openai_text("waiting");
  FakeResponse stall{200, stream};
  stall.stall_after = 0;
  server.push(stall);
  Background q(ws, "start it");
  auto handle = pid_written_to(pidfile);
  CAF_REQUIRE(wait_for([&] { return server.requests().size() == 2u; }));
  ::kill(q.pid, SIGINT); // ends the turn: the turn end now waits for `w`
  CAF_REQUIRE(wait_for([&] { return contains(q.output(), "interrupted: ending the turn"); }));
  ::kill(q.pid, SIGINT); // within 2 s: abort everything
  // Interrupted, as after one Ctrl-C (it exited 1, as a failure).
  CAF_CHECK_EQUAL(q.wait(), 128 + SIGINT);
  CAF_CHECK(contains(q.output(), "turn end: interrupted twice: every handle was aborted"));
  // Its log names what it aborted, once (it said "no handle left running").
  CAF_CHECK(contains(q.output(), "turn end: `w` (shell) was still running: aborted"));
  CAF_CHECK(!contains(q.output(), "no handle left running"));
  CAF_CHECK(!contains(q.output(), "turn end: interrupted\n"));
  CAF_CHECK(wait_for([&] { return ::kill(handle, 0) != 0; }));
  // The next turn hears that `w` was aborted, as after one interrupt (it was not told).
  bool told = false;
  for (auto& e : stored_events(ws))
    told = told || (e.find("event")->as_string() == "system_notification" &&
                    contains(e.dump(), "Handle `w` (shell) was aborted as the turn ended"));
  CAF_CHECK(told);
}

CAF_TEST(an interrupted turn keeps the responses of calls that ran and says which were cut) {
  FakeProviderServer server;
  // `w` is waited for at turn end; the await in the same batch never answers.
  Workspace ws(server, "openai", kAwaitShell);
  auto pidfile = ws.path("handle.pid");
  // One response, two calls: the spawn (answers `running`) and an await on it.
  auto command = lingering_command(pidfile);
  server.push({200, openai_calls({{"call_1", "shell", Json::object().set("action", "spawn").set("id", "w").set("command", command)},
                                  {"call_2", "await", Json::object().set("all", Json(JsonArray{Json("w")}))}})});
  Background q(ws, "start and wait");
  auto handle = pid_written_to(pidfile);
  auto response_of = [&](const std::string& id) -> std::optional<std::string> {
    for (auto& e : stored_events(ws))
      if (e.find("event")->as_string() == "tool_call_response" && e.find("id")->as_string() == id)
        return e.find("content")->as_string();
    return std::nullopt;
  };
  // The spawn's answer is recorded as it comes, while the await still waits.
  CAF_REQUIRE(wait_for([&] { return response_of("call_1").has_value(); }));
  CAF_CHECK(!response_of("call_2"));
  ::kill(q.pid, SIGINT); // ends the turn: the turn end waits for `w`
  CAF_REQUIRE(wait_for([&] { return contains(q.output(), "interrupted: ending the turn"); }));
  ::kill(q.pid, SIGINT); // aborts everything: the pending await must not hang the exit
  CAF_CHECK_EQUAL(q.wait(), 128 + SIGINT);
  CAF_CHECK(wait_for([&] { return ::kill(handle, 0) != 0; }));
  // The spawn ran and said so; the await is marked as cut, not as "not run".
  CAF_CHECK(contains(response_of("call_1").value_or(""), R"("state":"running")"));
  auto cut = response_of("call_2").value_or("");
  CAF_CHECK(contains(cut, "interrupted: the turn ended while this call ran"));
  // The next turn replays exactly that to the model.
  server.push({200, openai_text("Understood.")});
  auto next = ws.query("'what happened?'");
  JP_REQUIRE_OK(next); // failed once in CI's ASan run under load: it says why if it does again
  auto msgs = messages_sent(server.requests().back());
  std::string replayed;
  for (auto& m : msgs)
    if (m.find("role")->as_string() == "tool")
      replayed += m.find("tool_call_id")->as_string() + ": " + m.find("content")->as_string() + "\n";
  CAF_CHECK(contains(replayed, R"(call_1: {"id":"w","state":"running")"));
  CAF_CHECK(contains(replayed, "call_2: interrupted"));
  CAF_CHECK(!contains(replayed, "not run"));
}

CAF_TEST(a one-shot call cut by an interrupt says so and not only that it was killed) {
  // "aborted (killed by signal 15)" alone reads as a command that crashed, which the
  // next turn's model might run again as it was.
  FakeProviderServer server;
  Workspace ws(server);
  auto pidfile = ws.path("oneshot.pid");
  auto command = lingering_command(pidfile);
  server.push({200, openai_call("call_1", "shell", Json::object().set("command", command))});
  Background q(ws, "run it");
  pid_written_to(pidfile); // the tool runs
  ::kill(q.pid, SIGINT);
  CAF_CHECK_EQUAL(q.wait(), 128 + SIGINT);
  std::string said;
  for (auto& e : stored_events(ws))
    if (e.find("event")->as_string() == "tool_call_response")
      said = e.find("content")->as_string();
  CAF_CHECK(contains(said, "[jp-actors: interrupted: the turn was ended while this call ran, and what it ran was "
                           "ended with it]"));
  // The next turn hears of the call through its result alone: its run ("#call1")
  // was no handle the model knew.
  server.push({200, openai_text("Noted.")});
  JP_REQUIRE_OK(ws.query("'and now?'"));
  CAF_CHECK(!contains(server.requests().back().body, "#call"));
}

CAF_TEST(sigterm while a tool runs ends the query without another request) {
  // The tool's result (killed by the signal) was sent on to the provider: a paid
  // request after the user asked jp-actors to end.
  FakeProviderServer server;
  Workspace ws(server);
  auto pidfile = ws.path("term.pid");
  auto command = lingering_command(pidfile);
  server.push({200, openai_call("call_1", "shell", Json::object().set("command", command))});
  server.push({200, openai_text("should not be asked")});
  Background q(ws, "run it");
  auto child = pid_written_to(pidfile);
  ::kill(q.pid, SIGTERM);
  CAF_CHECK_EQUAL(q.wait(), 128 + SIGTERM);
  CAF_CHECK_EQUAL(server.requests().size(), 1u);
  CAF_CHECK(!contains(q.output(), "should not be asked"));
  CAF_CHECK(wait_for([&] { return ::kill(child, 0) != 0; }));
}

CAF_TEST(a conversation in use by one query is refused to another) {
  // Two at once each took the other's prompts and calls for its own history.
  FakeProviderServer server;
  Workspace ws(server);
  auto pidfile = ws.path("busy.pid");
  auto command = lingering_command(pidfile);
  server.push({200, openai_call("call_1", "shell", Json::object().set("command", command))});
  server.push({200, openai_text("Stopped.")});
  Background q(ws, "run it");
  pid_written_to(pidfile); // the tool runs
  auto second = ws.query("'me too'");
  CAF_CHECK_EQUAL(second.status, 1);
  CAF_CHECK(contains(second.out, "is in use by another jp-actors (a query still running in it); wait for it to "
                                 "end, or ask in a new conversation with --new"));
  CAF_CHECK_EQUAL(server.requests().size(), 1u); // the second asked nothing
  ::kill(q.pid, SIGINT);
  CAF_CHECK_EQUAL(q.wait(), 128 + SIGINT);
  // Once it ended, the conversation is free again.
  JP_REQUIRE_OK(ws.query("'now?'"));
}

CAF_TEST(a question routed to the user is asked on the terminal while the assistant awaits) {
  FakeProviderServer server;
  Workspace ws(server, "openai", greet_asking_user());
  server.push(greet_and_await());
  server.push({200, openai_text("Greeted.")});
  OnTerminal t(ws, "greet someone");
  CAF_REQUIRE(t.shows("Whom shall I greet?"));
  t.type("world\n");
  CAF_CHECK(t.shows("Greeted."));
  CAF_CHECK_EQUAL(t.wait(), 0);
  auto seen = server.requests();
  CAF_REQUIRE_EQUAL(seen.size(), 2u);
  auto msgs = messages_sent(seen[1]);
  CAF_CHECK(contains(msgs.back().find("content")->as_string(), R"("result":"hello, world")"));
}

CAF_TEST(ctrl-c at a question on the terminal ends the turn without hanging) {
  FakeProviderServer server;
  Workspace ws(server, "openai", greet_asking_user());
  server.push(greet_and_await());
  OnTerminal t(ws, "greet someone");
  CAF_REQUIRE(t.shows("Whom shall I greet?"));
  t.type("\x03"); // Ctrl-C: the prompt ends unanswered, the turn ends, nothing waits
  CAF_CHECK_EQUAL(t.wait(), 128 + SIGINT);
  auto events = stored_events(ws);
  CAF_REQUIRE(!events.empty());
  CAF_CHECK_EQUAL(events.back().find("event")->as_string(), "turn_end");
}

/// A stream that pauses after its first delta until the test lets it go on: a
/// person's Ctrl-C lands mid-answer without a race. On a terminal the answer is
/// rendered a markdown block at a time: a first delta that ends a paragraph and
/// starts the next is shown while the stream pauses.
struct PausedStream {
  std::string stream;
  std::shared_ptr<std::promise<void>> go = std::make_shared<std::promise<void>>();
  PausedStream(const std::string& first, const std::string& rest) : stream(openai_deltas({first, rest})) {}
  FakeResponse response() const {
    FakeResponse r{200, stream};
    r.stall_after = stream.find("data: ", 1);
    r.resume = [gone = go->get_future().share()] { gone.wait_for(std::chrono::seconds(30)); };
    return r;
  }
  ~PausedStream() {
    try {
      go->set_value(); // a failed test must not leave the server waiting
    } catch (const std::future_error&) {
    }
  }
};

/// The stored chat_response events' (text, interrupted).
std::vector<std::pair<std::string, bool>> responses_stored(const Workspace& ws) {
  std::vector<std::pair<std::string, bool>> out;
  for (auto& e : stored_events(ws))
    if (e.find("event")->as_string() == "chat_response")
      out.emplace_back(e.find("text")->as_string(), e.find("interrupted") != nullptr);
  return out;
}

CAF_TEST(ctrl-c on a terminal opens the menu and continue resumes the answer where it stopped) {
  FakeProviderServer server;
  Workspace ws(server);
  PausedStream paused("Half of this arrives first.\n\nT", "he rest follows.");
  server.push(paused.response());
  OnTerminal t(ws, "tell me");
  CAF_REQUIRE(t.shows("Half of this"));
  t.type("\x03");
  CAF_REQUIRE(t.shows("[c]ontinue"));
  t.type("c\n");
  paused.go->set_value();
  CAF_CHECK(t.shows("The rest follows."));
  CAF_CHECK_EQUAL(t.wait(), 0);
  // One request, and its answer whole: nothing was cut.
  CAF_CHECK_EQUAL(server.requests().size(), 1u);
  auto stored = responses_stored(ws);
  CAF_REQUIRE_EQUAL(stored.size(), 1u);
  CAF_CHECK_EQUAL(stored[0].first, "Half of this arrives first.\n\nThe rest follows.");
  CAF_CHECK(!stored[0].second);
}

CAF_TEST(stop at the menu ends the turn and keeps the partial answer) {
  FakeProviderServer server;
  Workspace ws(server);
  PausedStream paused("Half of this arrives.\n\nT", "he rest never does.");
  server.push(paused.response());
  OnTerminal t(ws, "tell me");
  CAF_REQUIRE(t.shows("Half of this"));
  t.type("\x03");
  CAF_REQUIRE(t.shows("[s]top the turn"));
  t.type("s\n");
  CAF_CHECK_EQUAL(t.wait(), 128 + SIGINT);
  auto stored = responses_stored(ws);
  CAF_REQUIRE_EQUAL(stored.size(), 1u);
  CAF_CHECK(contains(stored[0].first, "Half of"));
  CAF_CHECK(!contains(stored[0].first, "never does"));
  CAF_CHECK(stored[0].second);
  auto events = stored_events(ws); // named: a check must not hold a reference into a temporary
  CAF_REQUIRE(!events.empty());
  CAF_CHECK_EQUAL(events.back().find("event")->as_string(), "turn_end");
}

CAF_TEST(reply at the menu cuts the answer and the reply reaches the next request) {
  FakeProviderServer server;
  Workspace ws(server);
  // It stalls until the client goes: the reply must cut it for the next to come.
  auto stream = openai_deltas({"Here is a long answer.\n\nI", "t would go on and on."});
  FakeResponse stall{200, stream};
  stall.stall_after = stream.find("data: ", 1);
  server.push(stall);
  server.push({200, openai_text("Short, then.")});
  OnTerminal t(ws, "tell me");
  CAF_REQUIRE(t.shows("Here is a"));
  t.type("\x03");
  CAF_REQUIRE(t.shows("[r]eply"));
  t.type("r\n");
  CAF_REQUIRE(t.shows("Reply (the assistant reads this)"));
  t.type("keep it short\n");
  CAF_CHECK(t.shows("Short, then."));
  CAF_CHECK_EQUAL(t.wait(), 0);
  auto seen = server.requests();
  CAF_REQUIRE_EQUAL(seen.size(), 2u);
  // The partial answer, then the reply: the turn went on with both.
  auto msgs = messages_sent(seen[1]);
  CAF_REQUIRE_EQUAL(msgs.size(), 3u);
  CAF_CHECK_EQUAL(msgs[0].find("content")->as_string(), "tell me");
  CAF_CHECK_EQUAL(msgs[1].find("role")->as_string(), "assistant");
  CAF_CHECK(contains(msgs[1].find("content")->as_string(), "Here is a"));
  CAF_CHECK(!contains(msgs[1].find("content")->as_string(), "on and on"));
  CAF_CHECK_EQUAL(msgs[2].find("role")->as_string(), "user");
  CAF_CHECK_EQUAL(msgs[2].find("content")->as_string(), "keep it short");
  // Recorded: a later turn replays the reply in its place.
  std::vector<std::string> kinds;
  for (auto& e : stored_events(ws))
    kinds.push_back(e.find("event")->as_string());
  CAF_CHECK_EQUAL(kinds, (std::vector<std::string>{"turn_start", "chat_request", "chat_response", "user_reply",
                                                  "chat_request", "chat_response", "turn_end"}));
  server.push({200, openai_text("Yes.")});
  JP_REQUIRE_OK(ws.query("'and now?'"));
  auto replayed = messages_sent(server.requests().back());
  CAF_REQUIRE_EQUAL(replayed.size(), 5u);
  CAF_CHECK_EQUAL(replayed[2].find("content")->as_string(), "keep it short");
}

CAF_TEST(reply at the menu while tools run goes with their results and the tools run on) {
  FakeProviderServer server;
  Workspace ws(server);
  auto marker = ws.path("started");
  auto command = fmt::format("touch '{}'; {}", marker, ws.gated("echo done"));
  server.push({200, openai_calls({{"call_1", "shell", Json::object().set("action", "spawn").set("id", "b").set("wait_ms", 0).set("command", command)},
                                  {"call_2", "await", Json::object().set("all", Json(JsonArray{Json("b")}))}})});
  server.push({200, openai_text("Done, and noted.")});
  OnTerminal t(ws, "build it");
  CAF_REQUIRE(wait_for([&] { return std::filesystem::exists(marker); }));
  t.type("\x03");
  CAF_REQUIRE(t.shows("while tools run"));
  t.type("r\n");
  CAF_REQUIRE(t.shows("Reply (the assistant reads this)"));
  t.type("then deploy\n");
  // Said once the loop has the reply: the await is still waiting for `b`.
  CAF_REQUIRE(t.shows("your reply goes to the assistant with the next request"));
  ws.open_gate()();
  CAF_CHECK(t.shows("Done, and noted."));
  CAF_CHECK_EQUAL(t.wait(), 0);
  // On a terminal the calls are worded by their tools' views, not the transcript's.
  CAF_CHECK(contains(t.seen, "[assistant] → shell `b` spawn $ touch"));
  CAF_CHECK(contains(t.seen, "[assistant] ⋯ shell `b` · running · "));
  CAF_CHECK(contains(t.seen, "[assistant] ✓ await · ok · "));
  CAF_CHECK(!contains(t.seen, "[assistant] ← shell"));
  auto seen = server.requests();
  CAF_REQUIRE_EQUAL(seen.size(), 2u);
  auto msgs = messages_sent(seen[1]);
  CAF_REQUIRE_EQUAL(msgs.size(), 5u);
  CAF_CHECK_EQUAL(msgs[3].find("role")->as_string(), "tool");
  CAF_CHECK(contains(msgs[3].find("content")->as_string(), "done"));
  CAF_CHECK_EQUAL(msgs[4].find("role")->as_string(), "user");
  CAF_CHECK_EQUAL(msgs[4].find("content")->as_string(), "then deploy");
}

/// `text` as a terminal shows it: the line discipline turns "\n" into "\r\n".
std::string as_on_terminal(const std::string& text) {
  std::string out;
  for (char c : text)
    out += c == '\n' ? std::string("\r\n") : std::string(1, c);
  return out;
}

CAF_TEST(an answer on a terminal is rendered markdown and NO_COLOR leaves the styles out) {
  FakeProviderServer server;
  Workspace ws(server);
  const std::string answer = "# Plan\n\nRun `make test`, then **ship** it:\n\n```sh\nmake test\n```\n\n- one\n- two\n";
  server.push({200, openai_text(answer)});
  server.push({200, openai_text(answer)});
  server.push({200, openai_text(answer)});
  {
    OnTerminal t(ws, "plan it");
    CAF_CHECK(t.shows(as_on_terminal(render_markdown(answer, true))));
    CAF_CHECK_EQUAL(t.wait(), 0);
    CAF_CHECK(contains(t.seen, "\x1b[1m"));
    CAF_CHECK(!contains(t.seen, "# Plan"));
  }
  {
    ::setenv("NO_COLOR", "1", 1); // the child inherits it
    OnTerminal t(ws, "plan it");
    ::unsetenv("NO_COLOR");
    CAF_CHECK(t.shows(as_on_terminal(render_markdown(answer, false))));
    CAF_CHECK_EQUAL(t.wait(), 0);
    CAF_CHECK(!contains(t.seen, "\x1b"));
  }
  // Not a terminal: the markdown as it came.
  auto piped = ws.query("'plan it'");
  JP_REQUIRE_OK(piped);
  CAF_CHECK(contains(piped.stdout_text, answer));
}

CAF_TEST(what a provider says shows no control bytes on a terminal and its retries on stderr neither) {
  // A proxy's or compatible server's error text: its retry line and its failure on
  // stderr carried the title change and the screen clear to the terminal.
  FakeProviderServer server;
  Workspace ws(server, "openai", "[assistant.request]\nbase_backoff_ms = 1\n");
  server.push({429, R"({"error":{"message":"slow A\u001b]0;PWNED\u0007B"}})", {"Retry-After: 0.01"}});
  server.push({400, R"({"error":{"message":"bad C\u001b[2JD"}})"});
  OnTerminal t(ws, "hi");
  CAF_CHECK(t.shows("C\xEF\xBF\xBD[2JD"));
  CAF_CHECK_EQUAL(t.wait(), 1);
  t.shows("\x01 (what is left, to the end)");
  CAF_CHECK(contains(t.seen, "slow A\xEF\xBF\xBD]0;PWNED\xEF\xBF\xBD" "B"));
  CAF_CHECK(!contains(t.seen, "\x1b]0;"));
  CAF_CHECK(!contains(t.seen, "\x1b[2J"));
}

CAF_TEST(a handle aborted from another terminal ends the await and the assistant hears who aborted it) {
  FakeProviderServer server;
  Workspace ws(server);
  // The runner's own runtime directory (tests/test_main.cpp): its control sockets.
  auto pidfile = ws.path("w.pid");
  auto command = lingering_command(pidfile);
  server.push({200, openai_calls({{"call_1", "shell", Json::object().set("action", "spawn").set("id", "w").set("wait_ms", 0).set("command", command)},
                                  {"call_2", "await", Json::object().set("all", Json(JsonArray{Json("w")}))}})});
  server.push({200, openai_text("Noted.")});
  Background q(ws, "start and wait");
  auto handle = pid_written_to(pidfile);
  auto listed = cli_in(ws.path(""), "handles ls");
  JP_REQUIRE_OK(listed);
  CAF_CHECK(contains(listed.out, fmt::format("pid {} query conversation", q.pid)));
  auto aborted = cli_in(ws.path(""), "handles abort w");
  JP_REQUIRE_OK(aborted);
  CAF_CHECK_EQUAL(q.wait(), 0);
  CAF_CHECK(::kill(handle, 0) != 0);
  auto seen = server.requests();
  CAF_REQUIRE_EQUAL(seen.size(), 2u);
  auto msgs = messages_sent(seen[1]);
  std::string said;
  for (auto& m : msgs)
    if (auto* c = m.find("content"); c && c->is_string())
      said += c->as_string() + "\n";
  CAF_CHECK(contains(said, "Handle `w` was aborted by the user (from another terminal)."));
}

CAF_TEST(the reasoning a provider streams is shown dimmed on a terminal or hidden by style) {
  FakeProviderServer server;
  auto reasoning =
    openai_chunk(Json::object().set("role", "assistant").set("reasoning_content", "Two and two make four.")) +
    openai_chunk(Json::object().set("content", "It is 4.")) + openai_chunk(Json::object(), "stop") +
                   "data: [DONE]\n\n";
  {
    Workspace ws(server);
    server.push({200, reasoning});
    server.push({200, reasoning});
    OnTerminal t(ws, "2 + 2?");
    CAF_CHECK(t.shows("\x1b[2mTwo and two make four.\x1b[0m\r\n\r\nIt is 4."));
    CAF_CHECK_EQUAL(t.wait(), 0);
    // A pipe gets the answer alone; the conversation keeps the answer alone.
    auto piped = ws.query("'2 + 2?'");
    JP_REQUIRE_OK(piped);
    CAF_CHECK(contains(piped.stdout_text, "It is 4."));
    CAF_CHECK(!contains(piped.out, "Two and two"));
    for (auto& e : stored_events(ws))
      CAF_CHECK(!contains(e.dump(), "Two and two"));
  }
  {
    Workspace ws(server, "openai", "[style]\nreasoning = \"hide\"\n");
    server.push({200, reasoning});
    OnTerminal t(ws, "2 + 2?");
    CAF_CHECK(t.shows("It is 4."));
    CAF_CHECK_EQUAL(t.wait(), 0);
    CAF_CHECK(!contains(t.seen, "Two and two"));
  }
}

namespace {

/// An OpenAI stream with one call of describe_tools (id `id`), its delta carrying
/// `extra` beside it, after `reasoning` streamed as reasoning_content.
std::string reasoned_call(const std::string& reasoning, const std::string& id, Json extra = Json::object()) {
  auto call = Json::object().set("index", 0).set("id", id).set("type", "function");
  call.set("function", Json::object().set("name", "describe_tools").set("arguments", R"({"tools":["shell"]})"));
  for (auto& [k, v] : extra.as_object())
    call.set(k, v);
  std::string out;
  if (!reasoning.empty())
    out += openai_chunk(Json::object().set("role", "assistant").set("reasoning_content", reasoning));
  return out + openai_chunk(Json::object().set("tool_calls", Json(JsonArray{call}))) +
         openai_chunk(Json::object(), "tool_calls") +
         "data: [DONE]\n\n";
}

/// An OpenAI stream that reasons, then answers `text` (DeepSeek's thinking mode).
std::string reasoned_text(const std::string& reasoning, const std::string& text) {
  return openai_chunk(Json::object().set("role", "assistant").set("reasoning_content", reasoning)) +
         openai_text(text);
}

/// The assistant message with tool calls in what `seen` sent.
Json assistant_with_calls(const FakeProviderServer::Seen& seen) {
  for (auto& m : messages_sent(seen))
    if (m.find("tool_calls"))
      return m;
  CAF_FAIL("no assistant message with tool calls was sent");
}

} // namespace

CAF_TEST(deepseek thinking mode gets each response s reasoning back in every later request) {
  FakeProviderServer server;
  Workspace ws(server);
  server.push({200, reasoned_call("I should look at the shell tool.", "call_a")});
  server.push({200, reasoned_text("It says what it does.", "It runs commands.")});
  JP_REQUIRE_OK(ws.query_model("deepseek-reasoner", "'what does shell do?'"));
  // The next turn (the conversation read back from its log) sends it too, and the
  // reasoning of the answer that ended the calls' turn (a 400 without it).
  server.push({200, openai_text("Yes.")});
  JP_REQUIRE_OK(ws.query_model("deepseek-reasoner", "'sure?'"));
  CAF_CHECK_EQUAL(server.refused(), std::vector<std::string>{});
  auto seen = server.requests();
  CAF_REQUIRE_EQUAL(seen.size(), 3u);
  for (size_t i : {1u, 2u}) {
    auto said = assistant_with_calls(seen[i]);
    CAF_REQUIRE(said.find("reasoning_content"));
    CAF_CHECK_EQUAL(said.find("reasoning_content")->as_string(), "I should look at the shell tool.");
  }
  auto sent = messages_sent(seen[2]);
  CAF_REQUIRE_EQUAL(sent.size(), 5u); // user, call, result, answer, user
  CAF_CHECK_EQUAL(sent[3].string_at("reasoning_content"), "It says what it does.");
  // Shown, not answered: the reasoning is no part of the answer the user gets.
  for (auto& m : messages_sent(seen[2]))
    if (auto* c = m.find("content"); c && c->is_string())
      CAF_CHECK(!contains(c->as_string(), "I should look"));
  // The conversation goes on with another model (OpenAI refuses fields it does not
  // know in a message): nothing of DeepSeek's goes to it.
  server.push({200, openai_text("Yes, it does.")});
  JP_REQUIRE_OK(ws.query_model("gpt-4o", "'and now?'"));
  CAF_CHECK(!contains(server.requests().back().body, "reasoning_content"));
}

CAF_TEST(an anthropic server that thinks gets each response s thinking back before its calls) {
  // DeepSeek's Anthropic API: its thinking blocks were shown and dropped, and the
  // request after the calls was refused (HTTP 400).
  FakeProviderServer server;
  Workspace ws(server, "anthropic");
  auto thinking = Json::object().set("type", "thinking").set("thinking", "").set("signature", "");
  auto message = Json::object().set("id", "msg_t").set("type", "message").set("role", "assistant")
                   .set("model", "deepseek-v4-pro").set("content", Json::array())
                   .set("usage", Json::object().set("input_tokens", 10).set("output_tokens", 1));
  auto use = Json::object().set("type", "tool_use").set("id", "toolu_1").set("name", "describe_tools")
               .set("input", Json::object());
  auto delta = [](int index, Json d) {
    return anthropic_event(Json::object().set("type", "content_block_delta").set("index", index).set("delta", d));
  };
  auto block = [](int index, Json b) {
    return anthropic_event(Json::object().set("type", "content_block_start").set("index", index).set("content_block", b));
  };
  auto stop = [](int index) { return anthropic_event(Json::object().set("type", "content_block_stop").set("index", index)); };
  server.push({200, anthropic_event(Json::object().set("type", "message_start").set("message", message)) +
                      block(0, thinking) +
                      delta(0, Json::object().set("type", "thinking_delta").set("thinking", "Look at the ")) +
                      delta(0, Json::object().set("type", "thinking_delta").set("thinking", "tools.")) +
                      delta(0, Json::object().set("type", "signature_delta").set("signature", "c2ln")) + stop(0) +
                      block(1, use) +
                      delta(1, Json::object().set("type", "input_json_delta").set("partial_json", R"({"tools":["shell"]})")) +
                      stop(1) +
                      anthropic_event(Json::object().set("type", "message_delta")
                                        .set("delta", Json::object().set("stop_reason", "tool_use"))
                                        .set("usage", Json::object().set("output_tokens", 5))) +
                      anthropic_event(Json::object().set("type", "message_stop"))});
  server.push({200, provider_fixture("anthropic_text.sse")});
  JP_REQUIRE_OK(ws.query_model("deepseek-v4-pro", "'what does shell do?'"));
  CAF_CHECK_EQUAL(server.refused(), std::vector<std::string>{});
  auto seen = server.requests();
  CAF_REQUIRE_EQUAL(seen.size(), 2u);
  auto said = messages_sent(seen[1]).at(1);
  CAF_CHECK_EQUAL(said.find("content")->as_array().at(0).dump(),
                  R"({"type":"thinking","thinking":"Look at the tools.","signature":"c2ln"})");
  // Another model is sent none of it.
  server.push({200, provider_fixture("anthropic_text.sse")});
  JP_REQUIRE_OK(ws.query_model("claude-sonnet-4-5", "'and now?'"));
  CAF_CHECK(!contains(server.requests().back().body, "c2ln"));
}

CAF_TEST(gemini 3 gets each call s thought signature back with it) {
  FakeProviderServer server;
  Workspace ws(server);
  auto extra = Json::object().set(
    "extra_content", Json::object().set("google", Json::object().set("thought_signature", "c2lnbmF0dXJl")));
  server.push({200, reasoned_call("", "call_g", extra)});
  server.push({200, openai_text("It runs commands.")});
  JP_REQUIRE_OK(ws.query_model("gemini-3-flash-preview", "'what does shell do?'"));
  server.push({200, openai_text("Yes.")});
  JP_REQUIRE_OK(ws.query_model("gemini-3-flash-preview", "'sure?'"));
  CAF_CHECK_EQUAL(server.refused(), std::vector<std::string>{});
  auto seen = server.requests();
  CAF_REQUIRE_EQUAL(seen.size(), 3u);
  for (size_t i : {1u, 2u}) {
    auto call = assistant_with_calls(seen[i]).find("tool_calls")->as_array().at(0);
    CAF_CHECK_EQUAL(call.find("extra_content")->dump(), R"({"google":{"thought_signature":"c2lnbmF0dXJl"}})");
  }
}

CAF_TEST(openrouter gets a gemini 3 response s merged reasoning_details back with its tool calls in every later request) {
  FakeProviderServer server; // refuses a Gemini 3 tool loop without them, as OpenRouter does
  Workspace ws(server, "openai", "", "/api/v1");
  // Its reasoning text in two pieces of one entry, and its thought signature beside
  // the call: one entry each.
  server.push({200, provider_fixture("openrouter_gemini3_reasoning_details.sse")});
  server.push({200, openai_text("It runs commands.")});
  JP_REQUIRE_OK(ws.query_model("google/gemini-3-pro-preview", "'what does shell do?'"));
  // The next turn (the conversation read back from its log) sends them too.
  server.push({200, openai_text("Yes.")});
  JP_REQUIRE_OK(ws.query_model("google/gemini-3-pro-preview", "'sure?'"));
  CAF_CHECK_EQUAL(server.refused(), std::vector<std::string>{});
  auto seen = server.requests();
  CAF_REQUIRE_EQUAL(seen.size(), 3u);
  CAF_CHECK_EQUAL(seen[0].path, "/api/v1/chat/completions");
  for (size_t i : {1u, 2u}) {
    auto said = assistant_with_calls(seen[i]);
    CAF_CHECK_EQUAL(said.find("tool_calls")->as_array().at(0).string_at("id"), "tool_describe_tools_Kq2bW7");
    CAF_REQUIRE(said.find("reasoning_details"));
    CAF_CHECK_EQUAL(said.find("reasoning_details")->dump(),
                    R"json([{"type":"reasoning.text","text":"**Choosing the tool**\n\nThe user asks what the shell )json"
                    R"json(tool does. Describing it will tell me.","format":"google-gemini-v1","index":0},)json"
                    R"json({"id":"tool_describe_tools_Kq2bW7","format":"google-gemini-v1","index":0,)json"
                    R"json("type":"reasoning.encrypted","data":"CiQBjz1rX2Zha2UtdGhvdWdodC1zaWduYXR1cmUtZm9yLXRlc3Rz"}])json");
  }
  // Another model is not sent another's reasoning: OpenRouter refuses it for Gemini 3,
  // and the user reads why, in OpenRouter's and Google's words.
  auto other = ws.query_model("google/gemini-3-flash-preview", "'and now?'");
  CAF_CHECK_NOT_EQUAL(other.status, 0);
  CAF_CHECK(!contains(server.requests().back().body, "reasoning_details"));
  CAF_CHECK(contains(other.out, "HTTP 400"));
  CAF_CHECK(contains(other.out, "Provider returned error: Gemini models require OpenRouter reasoning details to be "
                                "preserved in each request."));
}

CAF_TEST(an azure deployment gets its api version and the key in api-key and no tool or log sees the key) {
  FakeProviderServer server; // refuses what Azure refuses: no api-version, Authorization, no api-key
  Workspace ws(server, "openai", "api_version = \"2024-10-21\"\n", "/openai/deployments/gpt-4o-prod");
  struct Key {
    Key() { ::setenv("JP_QUERY_TEST_KEY", "azure-key-5f3e9d17", 1); }
    ~Key() { ::unsetenv("JP_QUERY_TEST_KEY"); }
  } key;
  server.push({200, openai_call("call_1", "shell", Json::object().set("command", "env"))});
  server.push({200, openai_text("That is the environment.")});
  auto r = ws.query("--json 'show the environment'");
  JP_REQUIRE_OK(r);
  CAF_CHECK_EQUAL(server.refused(), std::vector<std::string>{});
  auto seen = server.requests();
  CAF_REQUIRE_EQUAL(seen.size(), 2u);
  for (auto& s : seen) {
    CAF_CHECK_EQUAL(s.path, "/openai/deployments/gpt-4o-prod/chat/completions");
    CAF_CHECK_EQUAL(s.query, "api-version=2024-10-21");
    CAF_CHECK_EQUAL(s.headers["api-key"], "azure-key-5f3e9d17");
    CAF_CHECK(!s.headers.count("authorization"));
  }
  // The tool ran `env`; its output went to the assistant without the key.
  auto results = results_of(r.stdout_text);
  CAF_REQUIRE_EQUAL(results.size(), 1u);
  CAF_CHECK(contains(results[0].find("content")->as_string(), "PATH="));
  CAF_CHECK(!contains(seen[1].body, "azure-key-5f3e9d17"));
  CAF_CHECK(!contains(seen[1].body, "JP_QUERY_TEST_KEY"));
  CAF_CHECK(!contains(r.out, "azure-key-5f3e9d17"));
  for (auto& e : stored_events(ws))
    CAF_CHECK(!contains(e.dump(), "azure-key-5f3e9d17"));
}

CAF_TEST(conversations show keeps a tool s lines as the live transcript does) {
  // They were run together on one line, cut at 200 bytes.
  FakeProviderServer server;
  Workspace ws(server);
  server.push({200, openai_calls({{"call_1", "shell", Json::object().set("command", "printf 'one\\ntwo\\n'")}})});
  server.push({200, openai_text("Two lines.")});
  JP_REQUIRE_OK(ws.query("'print two lines'"));
  auto shown = cli_in(ws.dir.path.string(), fmt::format("--config {} conversations show {}", ws.path("config.toml"),
                                                        conversation_id_of(ws)));
  JP_REQUIRE_OK(shown);
  if (!contains(shown.stdout_text, "← shell: one\n    two\n"))
    CAF_FAIL("the result's lines not kept in:\n" << shown.stdout_text);
  // An older record's result names no tool: shown without one (it showed "← : ").
  const std::string old_id = "20250101-000000-abcd";
  std::filesystem::create_directories(ws.path(".jp/conversations/" + old_id));
  std::ofstream(ws.path(".jp/conversations/" + old_id + "/events.jsonl"))
    << R"({"event":"turn_start","time":"2025-01-01T00:00:00.000Z","prompt":"old"})" "\n"
    << R"({"event":"tool_call_response","time":"2025-01-01T00:00:01.000Z","id":"c1","ok":true,"content":"it ran"})" "\n";
  auto old = cli_in(ws.dir.path.string(), fmt::format("--config {} conversations show {}", ws.path("config.toml"), old_id));
  JP_REQUIRE_OK(old);
  if (!contains(old.stdout_text, "← it ran\n"))
    CAF_FAIL("an older result shown as:\n" << old.stdout_text);
}

CAF_TEST(mistral is asked without stream_options and gets ids of nine letters and digits) {
  FakeProviderServer server;
  Workspace ws(server);
  // Its own call id (9 alphanumerics), and one it sends twice: ours then.
  server.push({200, openai_calls({{"abcDEF123", "describe_tools", Json::object().set("tools", JsonArray{Json("shell")})},
                                  {"abcDEF123", "describe_tools", Json::object().set("tools", JsonArray{Json("await")})}})});
  server.push({200, openai_text("They run commands and wait.")});
  JP_REQUIRE_OK(ws.query_model("mistral-large-latest", "'what do shell and await do?'"));
  // The first request was refused for stream_options (Mistral's 422), the rest went.
  auto refused = server.refused();
  CAF_REQUIRE_EQUAL(refused.size(), 1u);
  CAF_CHECK(contains(refused[0], "stream_options"));
  auto seen = server.requests();
  CAF_REQUIRE_EQUAL(seen.size(), 3u);
  auto calls = assistant_with_calls(seen[2]).find("tool_calls")->as_array();
  CAF_REQUIRE_EQUAL(calls.size(), 2u);
  CAF_CHECK_EQUAL(calls[0].find("id")->as_string(), "abcDEF123");
  CAF_CHECK_EQUAL(calls[1].find("id")->as_string(), "jp0000000");
}

CAF_TEST(the turn end inquiry goes to the inquiry model and a waited result comes back as a tool response) {
  FakeProviderServer server;
  Workspace ws(server, "openai",
               fmt::format("inquiry_model = \"cheap-model\"\n"
                           "[conversation.tools.shell.spawn.lifecycle]\non_turn_end = \"inquire\"\n{}",
                           kSentinel));
  // `b` ends once the turn end applies the inquiry's answer (which aborts the
  // sentinel): had it ended during the inquiry, nothing would be left to wait for.
  server.push({200, openai_calls({{"call_1", "shell", Json::object().set("action", "spawn").set("id", "b")
                                                        .set("wait_ms", 0).set("command", ws.gated("echo done"))},
                                  spawn_sentinel("call_2")})});
  server.push({200, openai_text("I will leave it running.")});
  server.push({200, openai_text(R"(Here you go: {"b": "wait"})")});
  server.push({200, openai_text("It finished.")});
  auto r = ws.query("--json 'start b'");
  JP_REQUIRE_OK(r);
  auto seen = server.requests();
  // It saw another count once under ASan in CI: the requests and the run's output say why.
  if (seen.size() != 4u) {
    std::string bodies;
    for (auto& s : seen)
      bodies += s.body.substr(0, 2000) + "\n---\n";
    CAF_FAIL(seen.size() << " requests:\n" << bodies << "output:\n" << r.out);
  }
  // The inquiry: its own request, to the cheaper model, listing the handle.
  auto inquiry = Json::parse(seen[2].body);
  CAF_CHECK_EQUAL(inquiry->find("model")->as_string(), "cheap-model");
  auto asked = inquiry->find("messages")->as_array().back().find("content")->as_string();
  CAF_CHECK(contains(asked, R"("id":"b")"));
  // It asks against a schema (one wait|abort per handle) and carries the
  // conversation's last messages: why `b` was spawned.
  CAF_CHECK(contains(asked, "JSON schema"));
  CAF_CHECK(contains(asked, R"("b":{"type":"string","enum":["wait","abort"]})"));
  CAF_CHECK(contains(asked, "[user] start b"));
  CAF_CHECK(contains(asked, "echo done"));
  CAF_CHECK(contains(asked, "[assistant] I will leave it running."));
  // OpenAI holds the answer to that schema (structured outputs).
  auto* format = inquiry->find("response_format");
  CAF_REQUIRE(format != nullptr);
  CAF_CHECK_EQUAL(format->find("type")->as_string(), "json_schema");
  CAF_CHECK(contains(format->dump(), R"("required":["b"])"));
  // The conversation's own requests are free text.
  CAF_CHECK(Json::parse(seen[0].body)->find("response_format") == nullptr);
  // The waited result is a tool response the assistant answers.
  auto msgs = messages_sent(seen[3]);
  auto& last = msgs.back();
  CAF_CHECK_EQUAL(last.find("role")->as_string(), "tool");
  CAF_CHECK(contains(last.find("content")->as_string(), R"("result":"done\n")"));
  CAF_CHECK(contains(r.out, R"("policy":"inquire:wait")"));
  // The log shows that tool response as the assistant saw it.
  bool logged = false;
  for (auto& e : events(r.stdout_text))
    if (e.find("event")->as_string() == "tool_result" && e.find("tool")->as_string() == "await")
      logged = contains(e.find("content")->as_string(), R"("result":"done\n")");
  CAF_CHECK(logged);
  std::vector<std::string> kinds;
  for (auto& e : stored_events(ws))
    kinds.push_back(e.find("event")->as_string());
  CAF_CHECK(std::find(kinds.begin(), kinds.end(), "inquiry_request") != kinds.end());
  CAF_CHECK(std::find(kinds.begin(), kinds.end(), "inquiry_response") != kinds.end());
  // The last event says how long the query took (it said 0.0 before).
  auto run_end = events(r.stdout_text).back();
  CAF_CHECK_EQUAL(run_end.find("event")->as_string(), "run_end");
  CAF_CHECK(run_end.find("elapsed_ms")->as_number() > 0);
}

CAF_TEST(results the turn end awaited reach the next turn as notifications) {
  FakeProviderServer server;
  // `late` is awaited at turn end and ends only once the turn end has begun: then it
  // aborts the sentinel, whose TERM trap opens the gate.
  Workspace ws(server, "openai",
               fmt::format("[conversation.tools.shell.spawn.lifecycle]\non_turn_end = \"await\"\n"
                           "{}", kSentinel));
  // Tools run in the workspace, where the sentinel's `gate` is ws.gated's.
  server.push({200, openai_calls({{"call_1", "shell", Json::object().set("action", "spawn").set("id", "late")
                                                        .set("wait_ms", 0).set("command", ws.gated("echo later"))},
                                  spawn_sentinel("call_2")})});
  server.push({200, openai_text("Bye for now.")});
  JP_REQUIRE_OK(ws.query("'go'"));
  server.push({200, openai_text("Noted.")});
  JP_REQUIRE_OK(ws.query("'anything new?'"));
  auto msgs = messages_sent(server.requests()[2]);
  auto text = msgs.back().find("content")->as_string();
  CAF_CHECK(contains(text, "<notifications>"));
  CAF_CHECK(contains(text, "Handle `late` (shell) finished after the turn ended: later"));
  CAF_CHECK(text.ends_with("anything new?"));
  // Delivered once: a third turn does not carry it again.
  server.push({200, openai_text("Nothing.")});
  JP_REQUIRE_OK(ws.query("'and now?'"));
  CAF_CHECK(!contains(messages_sent(server.requests()[3]).back().dump(), "<notifications>"));
}

CAF_TEST(a question whose target is the assistant is answered by the assistant as JSON) {
  FakeProviderServer server;
  Workspace ws(server, "openai",
               fmt::format("[conversation.tools.clean]\ncommand = {{ program = \"{}/examples/tools/confirm.sh\" }}\n"
                           "run = \"unattended\"\n[conversation.tools.clean.questions.proceed]\ntarget = \"assistant\"\n",
                           JP_SOURCE_DIR));
  server.push({200, openai_call("call_1", "clean", Json::object())});
  server.push({200, openai_text(R"({"inquiry_id": "proceed", "answer": true})")});
  server.push({200, openai_text("Cleaned.")});
  auto r = ws.query("--json 'clean up'");
  JP_REQUIRE_OK(r);
  auto results = results_of(r.stdout_text);
  CAF_REQUIRE_EQUAL(results.size(), 1u);
  CAF_CHECK_EQUAL(results[0].find("content")->as_string(), "deleted (pretend)");
  auto seen = server.requests();
  CAF_REQUIRE_EQUAL(seen.size(), 3u);
  auto inquiry = messages_sent(seen[1]);
  CAF_CHECK(contains(inquiry.back().dump(), "Delete the build directory?"));
}

CAF_TEST(ctrl-c while the turn end waits for a handle stops the wait) {
  FakeProviderServer server;
  Workspace ws(server, "openai", kAwaitShell);
  auto pidfile = ws.path("handle.pid");
  server.push(spawn_lingering_handle(pidfile));
  server.push({200, openai_text("Leaving it running.")});
  Background q(ws, "start it");
  auto handle = pid_written_to(pidfile);
  // The response is recorded in the same step that starts the turn end.
  CAF_REQUIRE(wait_for([&] {
    for (auto& e : stored_events(ws))
      if (e.find("event")->as_string() == "chat_response" && contains(e.dump(), "Leaving it running."))
        return true;
    return false;
  }));
  ::kill(q.pid, SIGINT);
  CAF_CHECK_EQUAL(q.wait(), 128 + SIGINT);
  CAF_CHECK(wait_for([&] { return ::kill(handle, 0) != 0; }));
  auto events = stored_events(ws);
  CAF_REQUIRE(!events.empty());
  CAF_CHECK_EQUAL(events.back().find("event")->as_string(), "turn_end");
  CAF_CHECK(events.back().find("interrupted") != nullptr);
}

CAF_TEST(each sub-agent is offered the tools it was given) {
  FakeProviderServer server;
  Workspace ws(server);
  // Three blocking agent calls, each answered by its sub-agent: given shell, all, shell.
  int call = 0;
  for (bool narrowed : {true, false, true}) {
    auto args = Json::object().set("prompt", "go");
    if (narrowed)
      args.set("tools", Json::array().push(Json("shell")));
    server.push({200, openai_call("call_" + std::to_string(++call), "agent", args)});
    server.push({200, openai_text("done")});
  }
  server.push({200, openai_text("All done.")});
  auto r = ws.query("--json 'three helpers'");
  JP_REQUIRE_OK(r);
  auto seen = server.requests();
  CAF_REQUIRE_EQUAL(seen.size(), 7u);
  auto tools = [&](size_t i) { return Json::parse(seen[i].body)->find("tools")->dump(); };
  // Narrowed to shell (the first and the third, alike; await comes with it), or all
  // of the parent's.
  for (size_t i : {1u, 5u}) {
    CAF_CHECK(contains(tools(i), R"("name":"shell")"));
    CAF_CHECK(contains(tools(i), R"("name":"yield_to_parent")"));
    CAF_CHECK(contains(tools(i), R"("name":"await")"));
    CAF_CHECK(!contains(tools(i), R"("name":"foreach")"));
  }
  CAF_CHECK(contains(tools(3), R"("name":"await")"));
  CAF_CHECK(contains(tools(3), R"("name":"foreach")"));
  CAF_CHECK(contains(tools(3), R"("name":"yield_to_parent")"));
}

CAF_TEST(a sub-agent runs on the query's provider and its answer is the agent call's result) {
  FakeProviderServer server;
  Workspace ws(server);
  // The parent calls `agent` without action (blocking): the sub-agent's request comes
  // next, then the parent's, in that order.
  server.push({200, openai_call("call_1", "agent", Json::object().set("prompt", "count the files"))});
  server.push({200, openai_text("There are 3 files.")});
  server.push({200, openai_text("The sub-agent says 3.")});
  auto r = ws.query("--json 'ask a helper'");
  JP_REQUIRE_OK(r);
  auto seen = server.requests();
  CAF_REQUIRE_EQUAL(seen.size(), 3u);
  // The sub-agent's own conversation: its prompt, the parent's model, and the tool
  // that hands a result back, which the parent is not offered.
  auto sub = Json::parse(seen[1].body);
  CAF_REQUIRE(sub.ok());
  auto sub_msgs = messages_sent(seen[1]);
  CAF_REQUIRE_EQUAL(sub_msgs.size(), 1u);
  CAF_CHECK_EQUAL(sub_msgs[0].find("content")->as_string(), "count the files");
  CAF_CHECK_EQUAL(sub->find("model")->as_string(), "test-model");
  CAF_CHECK(contains(sub->find("tools")->dump(), R"("name":"yield_to_parent")"));
  CAF_CHECK(!contains(Json::parse(seen[0].body)->find("tools")->dump(), R"("name":"yield_to_parent")"));
  // Its answer is the parent's tool response.
  auto msgs = messages_sent(seen[2]);
  CAF_CHECK_EQUAL(msgs.back().find("role")->as_string(), "tool");
  CAF_CHECK_EQUAL(msgs.back().find("content")->as_string(), "There are 3 files.");
  // A transcript (not --json) shows the sub-agent's own answer under its path.
  server.push({200, openai_call("call_2", "agent", Json::object().set("prompt", "count again"))});
  server.push({200, openai_text("Still 3 files here.")});
  server.push({200, openai_text("Same.")});
  Workspace piped(server);
  auto transcript = piped.query("'ask again'");
  JP_REQUIRE_OK(transcript);
  CAF_CHECK(contains(transcript.out, "[assistant/#1] step 1: Still 3 files here."));
  if (!contains(r.stdout_text, R"("agent":"assistant/#1")"))
    CAF_FAIL("no event of the sub-agent in:\n" << r.stdout_text);
  // ...and kept in the parent's conversation, linked by that path, in order.
  std::vector<std::string> sub_kinds;
  for (auto& e : stored_events(ws))
    if (auto* agent = e.find("agent"))
      sub_kinds.push_back(agent->as_string() + " " + e.find("event")->as_string());
  CAF_CHECK((sub_kinds == std::vector<std::string>{"assistant/#1 turn_start", "assistant/#1 chat_request",
                                                   "assistant/#1 chat_response", "assistant/#1 turn_end"}));
  // The next turn is the parent's own: the sub-agent's messages are not its history.
  server.push({200, openai_text("Still 3.")});
  JP_REQUIRE_OK(ws.query("'and now?'"));
  auto next = messages_sent(server.requests().back());
  CAF_REQUIRE_EQUAL(next.size(), 5u); // ask, call, its response, the answer, and now?
  CAF_CHECK_EQUAL(next[0].find("content")->as_string(), "ask a helper");
  CAF_CHECK_EQUAL(next[2].find("content")->as_string(), "There are 3 files.");
  CAF_CHECK_EQUAL(next[4].find("content")->as_string(), "and now?");
  // A transcript shows its lines under its path.
  auto shown = cli_in(ws.dir.path.string(), fmt::format("--config {} conversations show {}", ws.path("config.toml"),
                                                        conversation_id_of(ws)));
  JP_REQUIRE_OK(shown);
  CAF_CHECK(contains(shown.stdout_text, "[assistant/#1] > count the files"));
  CAF_CHECK(contains(shown.stdout_text, "[assistant/#1] There are 3 files."));
}

CAF_TEST(the tokens the provider reports reach the events and the report) {
  FakeProviderServer server;
  Workspace ws(server);
  // As api.openai.com streams with stream_options.include_usage: the usage in a
  // chunk of its own, after the finish_reason.
  auto stream = openai_text("Counted.");
  stream.insert(stream.rfind("data: [DONE]"),
                R"(data: {"id":"chatcmpl-test","object":"chat.completion.chunk","model":"test-model","choices":[],)"
                R"("usage":{"prompt_tokens":321,"completion_tokens":12,"total_tokens":333}})"
                "\n\n");
  server.push({200, stream});
  auto r = ws.query("--json 'count them'");
  JP_REQUIRE_OK(r);
  auto sent = Json::parse(server.requests().front().body);
  CAF_REQUIRE(sent.ok());
  CAF_CHECK_EQUAL(sent->find("stream_options")->dump(), R"({"include_usage":true})");
  std::optional<Json> round;
  for (auto& e : events(r.stdout_text))
    if (e.find("event")->as_string() == "model_round")
      round = e;
  CAF_REQUIRE(round.has_value());
  CAF_CHECK_EQUAL(round->find("tokens_in")->as_int(), 321);
  CAF_CHECK_EQUAL(round->find("tokens_out")->as_int(), 12);
  CAF_CHECK(round->find("elapsed_ms")->as_number() >= 0);
  ws.dir.write("log.jsonl", r.stdout_text);
  auto report = cli_in(ws.dir.path.string(), fmt::format("report --json {}", ws.path("log.jsonl")));
  JP_REQUIRE_OK(report);
  auto j = Json::parse(report.stdout_text);
  CAF_REQUIRE(j.ok());
  auto& assistant = j->find("agents")->as_array().front();
  CAF_CHECK_EQUAL(assistant.find("agent")->as_string(), "assistant");
  CAF_CHECK_EQUAL(assistant.find("tokens_in")->as_int(), 321);
  CAF_CHECK_EQUAL(assistant.find("tokens_out")->as_int(), 12);
  CAF_CHECK_EQUAL(assistant.find("round_trips")->as_int(), 1);
}

CAF_TEST(a response cut at the token limit runs none of its calls and says to raise assistant.max_tokens) {
  // Each dialect's own words: OpenAI finish_reason "length", Anthropic stop_reason
  // "max_tokens". The first call (touch ran) is complete, the second's arguments cut.
  // assistant.max_tokens is 0 by default: not sent to OpenAI, 4096 to Anthropic.
  for (auto [provider, fixture, text, limit] :
       {std::tuple{"openai", "openai_length_tool_calls.sse", "",
                   "assistant.max_tokens = 0, so none was sent and the model's own limit applied"},
        std::tuple{"anthropic", "anthropic_max_tokens_tool_use.sse", "I'll mark the start and begin the build.",
                   "assistant.max_tokens = 0, so 4096 was sent"}}) {
    FakeProviderServer server;
    Workspace ws(server, provider);
    server.push({200, provider_fixture(fixture)});
    auto r = ws.query("--json 'build it'");
    CAF_CHECK_EQUAL(r.status, 1);
    auto said = fmt::format("the response was cut off at the token limit ({}) before its tool calls were complete: "
                            "none of them ran (shell, shell); raise assistant.max_tokens (e.g. to 16384, up to what "
                            "the model allows) and ask again",
                            limit);
    CAF_CHECK(contains(r.out, fmt::format("jp-actors: {}\n", said)));
    CAF_CHECK(!std::filesystem::exists(ws.path("ran")));
    CAF_CHECK(results_of(r.stdout_text).empty());
    std::optional<Json> end;
    std::string response;
    for (auto& e : events(r.stdout_text)) {
      if (e.find("event")->as_string() == "turn_end")
        end = e;
      if (e.find("event")->as_string() == "response")
        response = e.find("text")->as_string();
    }
    CAF_REQUIRE(end.has_value());
    CAF_CHECK_EQUAL(end->find("error")->as_string(), said);
    CAF_CHECK_EQUAL(response, text);
    CAF_CHECK_EQUAL(server.requests().size(), 1u);
    // The conversation goes on: what was kept makes a history the provider takes.
    server.push({200, provider == std::string("openai") ? openai_text("Done.") : provider_fixture("anthropic_text.sse")});
    JP_REQUIRE_OK(ws.query("'go on'"));
    CAF_CHECK(server.refused().empty());
  }
}

CAF_TEST(a response cut at a full context window runs none of its calls and says to start a new conversation) {
  // Anthropic's stop_reason "model_context_window_exceeded": the first call (touch
  // ran) is complete, the second's arguments cut, as at the token limit.
  FakeProviderServer server;
  Workspace ws(server, "anthropic");
  server.push({200, provider_fixture("anthropic_context_window_exceeded_tool_use.sse")});
  auto r = ws.query("--json 'build it'");
  CAF_CHECK_EQUAL(r.status, 1);
  auto said = "the response was cut off because the model's context window was full (stop reason "
              "\"model_context_window_exceeded\") before its tool calls were complete: none of them ran (shell, "
              "shell); start a new conversation (or ask for a shorter answer) and ask again";
  CAF_CHECK(contains(r.out, fmt::format("jp-actors: {}\n", said)));
  CAF_CHECK(!std::filesystem::exists(ws.path("ran")));
  CAF_CHECK(results_of(r.stdout_text).empty());
  std::optional<Json> end;
  for (auto& e : events(r.stdout_text))
    if (e.find("event")->as_string() == "turn_end")
      end = e;
  CAF_REQUIRE(end.has_value());
  CAF_CHECK_EQUAL(end->find("error")->as_string(), said);
  CAF_CHECK_EQUAL(server.requests().size(), 1u);
}

CAF_TEST(a text answer cut at the token limit is shown with a line naming assistant.max_tokens) {
  FakeProviderServer server;
  Workspace ws(server, "openai", "max_tokens = 4096\n");
  server.push({200, provider_fixture("openai_length_text.sse")});
  auto r = ws.query("'list the steps'");
  CAF_CHECK_EQUAL(r.status, 1);
  CAF_CHECK(contains(r.stdout_text, "The steps are: 1. Open the file. 2. Edit"));
  CAF_CHECK(contains(r.out, "jp-actors: the response was cut off at the token limit (assistant.max_tokens = 4096): "
                            "the answer is incomplete; raise assistant.max_tokens (e.g. to 8192, up to what the model "
                            "allows) and ask again\n"));
  CAF_CHECK_EQUAL(Json::parse(server.requests().at(0).body)->find("max_tokens")->as_int(), 4096);
}

CAF_TEST(a refusal is shown as the answer or said in a line) {
  FakeProviderServer server;
  {
    // OpenAI's refusal text (structured outputs) is the answer.
    Workspace ws(server);
    server.push({200, provider_fixture("openai_refusal.sse")});
    auto r = ws.query("'do it'");
    JP_REQUIRE_OK(r);
    CAF_CHECK(contains(r.stdout_text, "I'm sorry, I can't help with that."));
  }
  {
    // Anthropic's stop_reason refusal: its text, and a line saying the provider refused.
    Workspace ws(server, "anthropic");
    server.push({200, provider_fixture("anthropic_refusal.sse")});
    auto r = ws.query("'do it'");
    CAF_CHECK_EQUAL(r.status, 1);
    CAF_CHECK(contains(r.stdout_text, "I can't help with that request."));
    CAF_CHECK(contains(r.out, "jp-actors: the provider refused to answer (stop reason \"refusal\"); rephrase the "
                              "request (this turn is left out of what the model is sent next)\n"));
  }
}

CAF_TEST(a server that refuses response_format still gets the turn end inquiry answered) {
  // DeepSeek answers structured outputs with HTTP 400: the inquiry is asked again
  // without them, and its answer applies (before, every handle was aborted).
  FakeProviderServer server;
  Workspace ws(server, "openai",
               fmt::format("[conversation.tools.shell.spawn.lifecycle]\non_turn_end = \"inquire\"\n{}", kSentinel));
  server.push({200, openai_calls({{"call_1", "shell", Json::object().set("action", "spawn").set("id", "b")
                                                        .set("wait_ms", 0).set("command", ws.gated("echo done"))},
                                  spawn_sentinel("call_2")})});
  server.push({200, openai_text("I will leave it running.")});
  server.push({400, R"({"error":{"message":"This response_format type is unavailable now","type":)"
                    R"("invalid_request_error","param":null,"code":"invalid_request_error"}})"});
  server.push({200, openai_text(R"({"b": "wait"})")});
  server.push({200, openai_text("It finished.")});
  auto r = ws.query("--json 'start b'");
  JP_REQUIRE_OK(r);
  auto seen = server.requests();
  CAF_REQUIRE_EQUAL(seen.size(), 5u);
  CAF_CHECK(Json::parse(seen[2].body)->find("response_format") != nullptr);
  CAF_CHECK(Json::parse(seen[3].body)->find("response_format") == nullptr);
  CAF_CHECK(contains(r.out, R"("policy":"inquire:wait")"));
  CAF_CHECK(contains(messages_sent(seen[4]).back().find("content")->as_string(), R"("result":"done\n")"));
  // The turn end's await is a call of ours, with an id every provider takes (Mistral:
  // nine letters and digits), and its result answers it.
  auto sent = messages_sent(seen[4]);
  CAF_CHECK(contains(sent.at(sent.size() - 2).dump(), R"("id":"jp0000000","type":"function")"));
  CAF_CHECK_EQUAL(sent.back().find("tool_call_id")->as_string(), "jp0000000");
}
