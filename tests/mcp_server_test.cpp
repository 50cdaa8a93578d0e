// `jp-actors mcp` end to end (DESIGN.md "MCP"): a real process spoken to over stdio by
// the tests' own MCP client (tests/mcp_client.hpp), and over Streamable HTTP (--listen)
// with raw HTTP requests (tests/http_exchange.hpp). The handshake, tools/list in the
// flat dialect, calls through the same registry (a spawn and a later await meet),
// progress, cancellation, permissions, the session's end leaving nothing running, a
// client slow to read holding no call up, and what the HTTP server refuses.
#define CAF_SUITE mcp_server
#include <caf/test/unit_test.hpp>

#include <algorithm>
#include <deque>
#include <fmt/format.h>
#include <fstream>
#include <thread>
#include <fcntl.h>
#include <cerrno>
#include <cstring>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "child_wait.hpp"
#include "cli_run.hpp"
#include "marked_processes.hpp"
#include "http_exchange.hpp"
#include "mcp_client.hpp"
#include "proc_syscall.hpp"
#include "temp_dir.hpp"
#include "contains.hpp"
#include "file_contents.hpp"
#include "../runtime/process/io_thread.hpp"
#include "../runtime/mcp/mcp_http_server.hpp"
#include "../runtime/mcp/mcp_protocol.hpp"

using namespace jp;
using namespace jp::testing;

namespace {

/// `jp-actors mcp --listen` on a free loopback port, and what a client sends it.
struct Listener {
  std::unique_ptr<McpClient> process; // the server, killed with its group at the end
  uint16_t port = 0;
  std::string token;
  int64_t next_id = 0;

  /// A POST of `message` with the token, the Host and the headers MCP asks for
  /// (`sid`: the session's), plus `extra` header lines.
  HttpReply post(const Json& message, const std::string& sid = "", const std::string& extra = "") const {
    return http_exchange(port, head("POST", sid) + extra, message.dump());
  }
  std::string head(const std::string& method, const std::string& sid) const {
    auto h = fmt::format("{} /mcp HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nAuthorization: Bearer {}\r\n"
                         "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n",
                         method, port, token);
    if (!sid.empty())
      h += "Mcp-Session-Id: " + sid + "\r\n";
    return h;
  }
  Json request(const std::string& method, Json params = Json::object()) {
    return Json::object().set("jsonrpc", "2.0").set("id", ++next_id).set("method", method).set("params", std::move(params));
  }
  /// initialize, then notifications/initialized: the session's id.
  std::string open_session(const std::string& version = "2025-06-18") {
    auto r = post(request("initialize", Json::object()
                                          .set("protocolVersion", version)
                                          .set("capabilities", Json::object())
                                          .set("clientInfo", Json::object().set("name", "test").set("version", "1"))));
    auto sid = r.header("mcp-session-id");
    post(Json::object().set("jsonrpc", "2.0").set("method", "notifications/initialized"), sid);
    return sid;
  }
  /// A request in session `sid`: the response, the last message of its event stream.
  Json call(const std::string& sid, const std::string& method, Json params, std::vector<Json>* before = nullptr) {
    auto events = post(request(method, std::move(params)), sid).events();
    if (events.empty())
      return Json();
    if (before)
      before->assign(events.begin(), events.end() - 1);
    return events.back();
  }
};

struct fixture {
  temp_dir dir;
  std::string state, ws;
  std::vector<std::string> extra; // more arguments of `jp-actors mcp`

  fixture() {
    state = (dir.path / "state").string();
    ws = (dir.path / "ws").string();
    std::filesystem::create_directories(ws);
    dir.write("config.toml", R"(
[runtime]
abort_grace_secs = 0.2
[conversation.tools.asky]
summary = "Needs the user's permission"
command = { program = "echo", args = ["asked and ran"] }
run = "ask"
[conversation.tools.greet]
summary = "Asks whom to greet on its control channel"
command = { program = ")" + std::string(JP_SOURCE_DIR) + R"(/examples/tools/greet.sh" }
io = "control"
run = "unattended"
[conversation.tools.greet.spawn]
stateful = true
)");
  }

  // A failed test's servers said what went wrong on their stderr (a sanitizer's
  // report among it), in files that go with the directory: the test's output keeps
  // their last lines.
  ~fixture() {
    auto* test = caf::test::engine::current_test();
    if (!test || test->bad() == 0)
      return;
    std::error_code ec;
    for (auto& file : std::filesystem::directory_iterator(dir.path, ec)) {
      if (file.path().extension() != ".err")
        continue;
      std::ifstream in(file.path());
      std::deque<std::string> last;
      for (std::string line; std::getline(in, line);) {
        last.push_back(line);
        if (last.size() > 40)
          last.pop_front();
      }
      for (auto& line : last)
        CAF_MESSAGE(file.path().filename().string() << ": " << line);
    }
  }

  std::unique_ptr<McpClient> start() {
    std::vector<std::string> argv{JP_CLI_BINARY, "--workspace", ws, "--config", (dir.path / "config.toml").string(),
                                  "mcp"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return std::make_unique<McpClient>(argv, state, (dir.path / "mcp.err").string());
  }

  /// `jp-actors mcp --listen 127.0.0.1:0` (or `address`), its address and token read
  /// from what it prints.
  Listener serve_http(const std::string& address = "127.0.0.1:0") {
    Listener l;
    extra.insert(extra.begin(), {"--listen", address});
    l.process = start();
    auto said = listening(*l.process);
    if (said.token.empty())
      CAF_FAIL("the server said: " << said.said);
    l.port = said.port;
    l.token = said.token;
    return l;
  }

  /// A started and initialized session; `capabilities` the client's.
  std::unique_ptr<McpClient> session(Json capabilities = Json::object(), const std::string& version = "2025-06-18") {
    auto c = start();
    auto init = c->call("initialize", Json::object()
                                        .set("protocolVersion", version)
                                        .set("capabilities", std::move(capabilities))
                                        .set("clientInfo", Json::object().set("name", "test").set("version", "1")));
    if (!init.find("result"))
      CAF_FAIL("initialize failed: " << init.dump());
    c->notify("notifications/initialized");
    return c;
  }
};

/// A tools/call's params.
Json tool_call(const std::string& name, Json arguments) {
  return Json::object().set("name", name).set("arguments", std::move(arguments));
}

/// The text of a tools/call response ("" when it has none).
std::string text_of(const Json& response) {
  auto* result = response.find("result");
  if (!result || !result->find("content"))
    return "";
  return result->find("content")->as_array().at(0).find("text")->as_string();
}

/// The code of an error response (0 when it is none).
int64_t error_code(const Json& response) {
  auto* error = response.find("error");
  auto* code = error && error->is_object() ? error->find("code") : nullptr;
  return code && code->is_int() ? code->as_int() : 0;
}

/// The message of an error response ("" when it is none).
std::string error_message(const Json& response) {
  auto* error = response.find("error");
  auto* message = error && error->is_object() ? error->find("message") : nullptr;
  return message && message->is_string() ? message->as_string() : "";
}

bool is_error(const Json& response) {
  auto* result = response.find("result");
  return result && result->find("isError") && result->find("isError")->as_bool();
}

Json shell(std::string command, Json more = Json::object()) {
  more.set("command", std::move(command));
  return more;
}

} // namespace

CAF_TEST_FIXTURE_SCOPE(mcp_server_tests, fixture)

CAF_TEST(initialize negotiates the version and tools list offers the tools in the flat dialect) {
  auto c = start();
  // Before initialize only ping is answered.
  auto early = c->call("tools/list");
  CAF_CHECK(contains(early.dump(), "send initialize first"));
  CAF_CHECK(c->call("ping").find("result") != nullptr);
  // A session each: one is initialized once.
  for (auto [asked, answered] : {std::pair{"2024-11-05", "2024-11-05"}, std::pair{"1999-01-01", "2025-06-18"}}) {
    auto other = start();
    auto init = other->call("initialize", Json::object().set("protocolVersion", asked));
    CAF_REQUIRE(init.find("result"));
    CAF_CHECK_EQUAL(init.find("result")->find("protocolVersion")->as_string(), answered);
    other->close_input();
    CAF_CHECK_EQUAL(other->wait_exit(), 0);
  }
  // MCP requires the version the client speaks: none, or one not a string, is invalid.
  for (auto params : {Json::object(), Json::object().set("protocolVersion", 5)}) {
    auto versionless = c->call("initialize", params);
    CAF_CHECK_EQUAL(error_code(versionless), -32602);
    CAF_CHECK(contains(error_message(versionless), "initialize: `protocolVersion` is required, a string"));
  }
  auto init = c->call("initialize", Json::object().set("protocolVersion", "2025-06-18"));
  CAF_REQUIRE(init.find("result"));
  auto& r = *init.find("result");
  CAF_CHECK_EQUAL(r.find("protocolVersion")->as_string(), "2025-06-18");
  CAF_CHECK_EQUAL(r.find("serverInfo")->find("name")->as_string(), "jp-actors");
  CAF_CHECK(r.find("capabilities")->find("tools") != nullptr);
  CAF_CHECK(contains(r.find("instructions")->as_string(), "await"));
  // What a spawn answers is what the tools do: the shell waits for its output by default.
  CAF_CHECK(contains(r.find("instructions")->as_string(), "within `wait_ms` (0: at once)"));
  // Once: a second would change the version under the session's calls.
  auto again = c->call("initialize", Json::object().set("protocolVersion", "2024-11-05"));
  CAF_CHECK_EQUAL(error_code(again), -32600);
  CAF_CHECK(contains(error_message(again), "this session is initialized already (protocol version 2025-06-18)"));
  // JSON-RPC 2.0 alone.
  c->send(Json::object().set("jsonrpc", "1.0").set("id", 99).set("method", "ping"));
  auto old = c->next();
  CAF_CHECK_EQUAL(error_code(old), -32600);
  CAF_CHECK(contains(error_message(old), "\"jsonrpc\" must be \"2.0\""));
  // Both a request and a response: Invalid Request too, not served as the request.
  c->send(Json::object().set("jsonrpc", "2.0").set("id", 16).set("method", "ping").set("result", Json::object()));
  auto both = c->next();
  CAF_CHECK_EQUAL(error_code(both), -32600);
  CAF_CHECK(contains(error_message(both), "a request or a notification (`method`) or a response"));
  // Neither a request nor a response: Invalid Request, with its id.
  c->send(Json::object().set("jsonrpc", "2.0").set("id", 11));
  auto neither = c->next();
  CAF_CHECK_EQUAL(error_code(neither), -32600);
  CAF_CHECK_EQUAL(neither.find("id")->dump(), "11");
  CAF_CHECK(contains(error_message(neither), "a message needs `method`"));
  auto list = c->call("tools/list");
  CAF_REQUIRE(list.find("result"));
  std::map<std::string, Json> tools;
  for (auto& t : list.find("result")->find("tools")->as_array())
    tools[t.find("name")->as_string()] = t;
  CAF_REQUIRE(tools.count("shell"));
  CAF_REQUIRE(tools.count("await"));
  CAF_REQUIRE(tools.count("asky"));
  // Not those that start sub-agents: a client's calls are no agent loop.
  CAF_CHECK(!tools.count("agent") && !tools.count("foreach"));
  // The list is whole, with no cursor to go on from: any cursor sent is not ours.
  CAF_CHECK(list.find("result")->find("nextCursor") == nullptr);
  auto paged = c->call("tools/list", Json::object().set("cursor", "page2"));
  CAF_CHECK_EQUAL(error_code(paged), -32602);
  CAF_CHECK(contains(error_message(paged), "cursor \"page2\" is not one this server gave"));
  // The flat form: one object schema, the actions an enum, no top-level oneOf.
  auto& schema = *tools["shell"].find("inputSchema");
  CAF_CHECK_EQUAL(schema.find("type")->as_string(), "object");
  CAF_CHECK(schema.find("oneOf") == nullptr);
  CAF_CHECK(schema.find("properties")->find("action")->find("enum") != nullptr);
  // Unknown methods and broken messages are refused, saying what is offered.
  auto unknown = c->call("resources/list");
  CAF_REQUIRE(unknown.find("error"));
  CAF_CHECK_EQUAL(unknown.find("error")->find("code")->as_int(), -32601);
  CAF_CHECK(contains(unknown.dump(), "tools/list and tools/call"));
  c->send(Json("not an object"));
  auto bad = c->next();
  CAF_CHECK_EQUAL(bad.find("error")->find("code")->as_int(), -32600);
  auto no_name = c->call("tools/call", Json::object());
  CAF_CHECK_EQUAL(no_name.find("error")->find("code")->as_int(), -32602);
  // Params that are no object are named as such, not as a missing name.
  auto listed_params = c->call("tools/call", Json(JsonArray{Json(1), Json(2)}));
  CAF_CHECK_EQUAL(error_code(listed_params), -32602);
  CAF_CHECK(contains(error_message(listed_params), "`params` of tools/call must be an object, got array"));
  // A notification sent with an id is told so, not that its method is unknown.
  auto initialized = c->call("notifications/initialized");
  CAF_CHECK_EQUAL(error_code(initialized), -32600);
  CAF_CHECK(contains(error_message(initialized), "`notifications/initialized` is a notification: send it without an `id`"));
  // An unknown tool is a protocol error (MCP server/tools), naming the tools there are.
  auto nope = c->call("tools/call", tool_call("nope", Json::object()));
  CAF_CHECK_EQUAL(error_code(nope), -32602);
  CAF_CHECK(contains(nope.dump(), "Unknown tool `nope`; available tools:"));
  CAF_CHECK(contains(nope.dump(), "shell"));
  // Those that start sub-agents are none of this session's, and not described.
  auto agent = c->call("tools/call", tool_call("agent", Json::object()));
  CAF_CHECK(contains(agent.dump(), "Unknown tool `agent`"));
  auto described = text_of(c->call("tools/call", tool_call("describe_tools", Json::object())));
  CAF_CHECK(contains(described, "shell"));
  CAF_CHECK(!contains(described, "foreach"));
  c->close_input();
  CAF_CHECK_EQUAL(c->wait_exit(), 0);
}

CAF_TEST(initialize is answered while the MCP servers served on start and tools list waits for their tools) {
  // npx or uvx may fetch a server before it starts, past the client's own timeout
  // for initialize: that was answered only once every server had started.
  auto gate = (dir.path / "go").string();
  std::ofstream(dir.path / "config.toml", std::ios::app)
    << fmt::format("[mcp.servers.slow]\ncommand = [\"{}\", \"--start-after\", \"{}\"]\nrun = \"unattended\"\n",
                   JP_FAKE_MCP_SERVER, gate);
  auto c = start();
  auto init = c->call("initialize", Json::object()
                                      .set("protocolVersion", "2025-06-18")
                                      .set("capabilities", Json::object())
                                      .set("clientInfo", Json::object().set("name", "test").set("version", "1")));
  CAF_REQUIRE(init.find("result"));
  c->notify("notifications/initialized");
  auto listed = c->request("tools/list");
  auto called = c->request("tools/call", tool_call("slow__echo", Json::object().set("text", "behind")));
  // A call cancelled while it waits is dropped with its cancel: never run.
  auto dropped = c->request("tools/call", tool_call("shell", shell("exec sleep 600", Json::object()
                                                                                     .set("action", "spawn")
                                                                                     .set("id", "never"))));
  c->notify("notifications/cancelled", Json::object().set("requestId", dropped));
  // A ping is answered meanwhile: the client sees the server live.
  CAF_CHECK(c->call("ping").find("result"));
  CAF_CHECK(!std::filesystem::exists(gate)); // nothing started it yet
  std::ofstream(gate) << "go\n";
  // Answered in order, once it started: its tools listed, its call run.
  auto list = c->response(listed);
  CAF_REQUIRE(list.find("result"));
  CAF_CHECK(contains(list.dump(), R"("name":"slow__echo")"));
  CAF_CHECK(contains(list.dump(), R"("name":"shell")"));
  CAF_CHECK_EQUAL(text_of(c->response(called)), "behind");
  auto look = c->call("tools/call", tool_call("shell", Json::object().set("action", "fetch").set("id", "never")));
  CAF_CHECK(contains(text_of(look), "Handle `never` not found"));
}

CAF_TEST(a client that listed the tools is told at once when an MCP server served on changes its own) {
  // Not only before the answer of its next call: a client that makes none would
  // offer the old list for good.
  auto change = (dir.path / "change").string();
  std::ofstream(dir.path / "config.toml", std::ios::app)
    << fmt::format("[mcp.servers.far]\ncommand = [\"{}\", \"--retool-after\", \"{}\"]\nrun = \"unattended\"\n",
                   JP_FAKE_MCP_SERVER, change);
  auto c = session();
  auto before = c->call("tools/list");
  CAF_CHECK(contains(before.dump(), R"("name":"far__fail")"));
  std::ofstream(change) << "now\n";
  auto told = c->next();
  auto* method = told.find("method");
  CAF_REQUIRE(method && method->is_string());
  CAF_CHECK_EQUAL(method->as_string(), "notifications/tools/list_changed");
  auto after = c->call("tools/list");
  CAF_CHECK(contains(after.dump(), R"("name":"far__shout")"));
  CAF_CHECK(!contains(after.dump(), R"("name":"far__fail")"));
}

CAF_TEST(a request whose id is not a string or an integer is refused with id null) {
  auto c = session();
  for (std::string id : {"null", "2.5", "true", R"({"a":1})", "[1]"}) {
    c->send_line(R"({"jsonrpc":"2.0","id":)" + id + R"(,"method":"ping"})");
    auto refused = c->next();
    CAF_CHECK_EQUAL(error_code(refused), -32600);
    CAF_CHECK(refused.find("id") && refused.find("id")->is_null());
    CAF_CHECK(contains(error_message(refused), "must be a string or an integer, got " + id));
  }
  // A key twice: parsers disagree on which copy counts, so neither does.
  c->send_line(R"({"jsonrpc":"2.0","id":1,"method":"tools/list","id":2,"method":"ping"})");
  auto twice = c->next();
  CAF_CHECK_EQUAL(error_code(twice), -32600);
  CAF_CHECK(twice.find("id") && twice.find("id")->is_null());
  CAF_CHECK(contains(error_message(twice), R"(the key "id" appears twice)"));
  // Twice inside it, its one id is answered: its client waits on that.
  c->send_line(R"({"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"shell","arguments":)"
               R"({"command":"echo a","command":"echo b"}}})");
  auto inner = c->next();
  CAF_CHECK_EQUAL(error_code(inner), -32600);
  CAF_CHECK(inner.find("id") && inner.find("id")->is_int() && inner.find("id")->as_int() == 9);
  CAF_CHECK(contains(error_message(inner), R"(the key "params.arguments.command" appears twice)"));
  // A number too wide to hold is valid JSON: refused as a request under its id, which
  // its client waits on, not as no JSON at all.
  for (std::string wide : {"123456789012345678901234567890", "-12345678901234567890", "1e999"}) {
    c->send_line(R"({"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"shell","arguments":)"
                 R"({"command":"echo \"1}\" -1e999","wait_ms":)" + wide + "}}}");
    auto refused = c->next();
    CAF_CHECK_EQUAL(error_code(refused), -32600);
    CAF_CHECK(refused.find("id") && refused.find("id")->is_int() && refused.find("id")->as_int() == 11);
    CAF_CHECK(contains(error_message(refused), "the number " + wide + " is out of range"));
  }
  // An integer past 64 bits: said so, and how to send it (it was told to send an
  // integer, which it had).
  for (std::string big : {"9223372036854775808", "18446744073709551615"}) {
    c->send_line(R"({"jsonrpc":"2.0","id":)" + big + R"(,"method":"ping"})");
    auto refused = c->next();
    CAF_CHECK_EQUAL(error_code(refused), -32600);
    CAF_CHECK(contains(error_message(refused), "within a signed 64-bit integer's range"));
    CAF_CHECK(contains(error_message(refused), "send it as a string"));
  }
  // An integral number written otherwise is an integer, and is echoed as one.
  c->send_line(R"({"jsonrpc":"2.0","id":1e2,"method":"ping"})");
  CAF_CHECK_EQUAL(c->next_line(), R"({"jsonrpc":"2.0","id":100,"result":{}})");
  c->close_input();
  CAF_CHECK_EQUAL(c->wait_exit(), 0);
}

CAF_TEST(a line longer than 4 MiB is refused unparsed and the session goes on) {
  auto c = session();
  // A valid request: parsed, it would be answered as one.
  c->send_line(R"({"jsonrpc":"2.0","id":7,"method":"ping","params":{"pad":")" + std::string(5u << 20, 'x') + R"("}})");
  auto refused = c->next();
  CAF_CHECK_EQUAL(error_code(refused), -32600);
  CAF_CHECK(refused.find("id") && refused.find("id")->is_null());
  CAF_CHECK_EQUAL(error_message(refused), "a message may have at most 4 MiB; one of 5242940 bytes was not read");
  auto pong = c->call("ping");
  CAF_CHECK(pong.find("result") && pong.find("result")->is_object());
  c->close_input();
  CAF_CHECK_EQUAL(c->wait_exit(), 0);
}

CAF_TEST(with protocol 2025-03-26 a batch is answered with one array of its responses) {
  auto c = start();
  // Before a version is agreed a batch is refused.
  c->send_line(R"([{"jsonrpc":"2.0","id":"early","method":"ping"}])");
  CAF_CHECK_EQUAL(error_code(c->next()), -32600);
  auto init = c->call("initialize", Json::object().set("protocolVersion", "2025-03-26"));
  CAF_REQUIRE(init.find("result"));
  CAF_REQUIRE_EQUAL(init.find("result")->find("protocolVersion")->as_string(), "2025-03-26");
  c->notify("notifications/initialized");
  // A request, a notification (no response), a call, a refused call and a message that is no object.
  c->send_line(R"([{"jsonrpc":"2.0","id":"p","method":"ping"},)"
               R"({"jsonrpc":"2.0","method":"notifications/initialized"},)"
               R"({"jsonrpc":"2.0","id":"c","method":"tools/call","params":{"name":"shell","arguments":{"command":"echo batched"}}},)"
               R"({"jsonrpc":"2.0","id":"n","method":"tools/call","params":{"name":"nope"}},7])");
  auto batch = c->next();
  CAF_REQUIRE(batch.is_array());
  std::map<std::string, Json> by_id;
  for (auto& r : batch.as_array())
    by_id[r.find("id")->is_string() ? r.find("id")->as_string() : r.find("id")->dump()] = r;
  CAF_CHECK_EQUAL(batch.as_array().size(), 4u);
  CAF_CHECK(by_id["p"].find("result") != nullptr);
  CAF_CHECK(contains(text_of(by_id["c"]), "batched"));
  CAF_CHECK_EQUAL(error_code(by_id["n"]), -32602);
  CAF_CHECK_EQUAL(error_code(by_id["null"]), -32600);
  // Notifications only: nothing is answered. An empty batch is an invalid request.
  c->send_line(R"([{"jsonrpc":"2.0","method":"notifications/initialized"}])");
  c->send_line("[]");
  auto empty = c->next();
  CAF_CHECK_EQUAL(error_code(empty), -32600);
  CAF_CHECK(contains(error_message(empty), "an empty batch"));
  // One id twice in a batch (1e0 is 1): refused whole, nothing of it run (MCP: an id
  // is not reused; the answers are told apart by their ids alone), as over HTTP.
  // Each request is refused under its id, in one array: its client waits on them
  // (one answer with id null settled none). A member that is no request (7) is
  // refused by id null, as it would be alone; a notification gets nothing.
  c->send_line(R"([{"jsonrpc":"2.0","id":1,"method":"x","params":[]},{"jsonrpc":"2.0","id":1e0,"method":"ping"},)"
               R"(7,{"jsonrpc":"2.0","method":"notifications/initialized"}])");
  auto twice = c->next();
  CAF_REQUIRE(twice.is_array());
  CAF_REQUIRE_EQUAL(twice.as_array().size(), 3u);
  CAF_CHECK(twice.as_array()[2].find("id")->is_null());
  twice.as_array().pop_back();
  for (auto& refused : twice.as_array()) {
    CAF_CHECK_EQUAL(refused.find("id")->dump(), "1");
    CAF_CHECK_EQUAL(error_code(refused), -32600);
    CAF_CHECK(contains(error_message(refused), "request id 1 is used twice in this batch"));
  }
  c->close_input();
  CAF_CHECK_EQUAL(c->wait_exit(), 0);
}

CAF_TEST(with protocol 2025-03-26 a cancelled await in a batch does not hold the batch s other answers) {
  // The await waits on a handle that runs until it reads a line: once it is
  // cancelled, its batch is owed the echo's answer alone.
  auto c = session(Json::object(), "2025-03-26");
  auto spawned = c->call("tools/call", tool_call("shell", shell(R"(read x; echo "got $x")",
                                                                Json::object().set("action", "spawn").set("id", "s").set("wait_ms", 0))));
  CAF_REQUIRE(!is_error(spawned));
  c->send_line(R"([{"jsonrpc":"2.0","id":"w","method":"tools/call","params":{"name":"await","arguments":{"all":["s"]}}},)"
               R"({"jsonrpc":"2.0","id":"e","method":"tools/call","params":{"name":"shell","arguments":{"command":"echo beside"}}}])");
  c->notify("notifications/cancelled", Json::object().set("requestId", "w").set("reason", "timed out"));
  auto batch = c->next(); // without the cancel counted, nothing comes until `s` ends
  CAF_REQUIRE(batch.is_array());
  CAF_REQUIRE_EQUAL(batch.as_array().size(), 1u);
  CAF_CHECK_EQUAL(batch.as_array()[0].find("id")->as_string(), "e");
  CAF_CHECK(contains(text_of(batch.as_array()[0]), "beside"));
  // `s` ran on (the cancel of an await ends nothing) and is still there to answer.
  auto applied = c->call("tools/call", tool_call("shell", Json::object().set("action", "apply").set("id", "s").set("input", "hi\n")));
  auto awaited = c->call("tools/call", tool_call("await", Json::object().set("all", Json(JsonArray{Json("s")}))));
  CAF_CHECK(contains(text_of(applied) + text_of(awaited), "got hi"));
  c->close_input();
  CAF_CHECK_EQUAL(c->wait_exit(), 0);
  for (auto& m : c->seen)
    if (auto* i = m.find("id"); i && i->is_string() && i->as_string() == "w")
      CAF_FAIL("the cancelled await was answered: " << m.dump());
}

CAF_TEST(a spawn and a later await meet in the session and one shot calls answer whole) {
  auto c = session();
  auto spawned = c->call("tools/call", tool_call("shell", shell("echo from the handle",
                                                                Json::object().set("action", "spawn").set("id", "a").set("wait_ms", 0))));
  CAF_CHECK(!is_error(spawned));
  CAF_CHECK(contains(text_of(spawned), R"("id":"a")"));
  auto awaited = c->call("tools/call", tool_call("await", Json::object()
                                                            .set("all", Json(JsonArray{Json("a")}))
                                                            .set("timeout_secs", 60)));
  CAF_CHECK(!is_error(awaited));
  auto result = Json::parse(text_of(awaited));
  CAF_REQUIRE(result.ok());
  CAF_REQUIRE_EQUAL(result->find("completed")->as_array().size(), 1u);
  CAF_CHECK_EQUAL(result->find("completed")->as_array()[0].find("state")->as_string(), "stopped");
  auto once = c->call("tools/call", tool_call("shell", shell("echo once")));
  CAF_CHECK(!is_error(once));
  CAF_CHECK(contains(text_of(once), "once"));
  // A call the runtime refuses is a tool error the model can read.
  auto unknown = c->call("tools/call", tool_call("shell", Json::object().set("action", "fetch").set("id", "nope")));
  CAF_CHECK(is_error(unknown));
  CAF_CHECK(contains(text_of(unknown), "nope"));
  c->close_input();
  CAF_CHECK_EQUAL(c->wait_exit(), 0);
}

/// A command that runs until the test creates `gate`, then says "slept".
std::string until_gate(const std::filesystem::path& gate) {
  return fmt::format("until [ -e '{}' ]; do sleep 0.05; done; echo slept", gate.string());
}

bool is_progress(const Json& m) {
  return m.find("method") && m.find("method")->as_string() == "notifications/progress";
}

CAF_TEST(a call with a progress token gets progress notifications while it runs) {
  auto c = session();
  auto params = tool_call("shell", shell(until_gate(dir.path / "gate"),
                                         Json::object().set("action", "spawn").set("id", "p").set("wait_ms", 60000)));
  params.set("_meta", Json::object().set("progressToken", "tok"));
  // It runs until its first progress came, however slowly the machine runs.
  auto id = c->request("tools/call", std::move(params));
  auto m = c->next();
  while (!m.is_null() && !is_progress(m))
    m = c->next();
  CAF_REQUIRE(!m.is_null());
  dir.write("gate", "");
  auto done = c->response(id);
  CAF_CHECK(contains(text_of(done), "slept"));
  size_t progress = 0;
  for (auto& m : c->seen)
    if (is_progress(m)) {
      CAF_CHECK_EQUAL(m.find("params")->find("progressToken")->as_string(), "tok");
      ++progress;
    }
  CAF_CHECK_GREATER_OR_EQUAL(progress, 1u);
  c->close_input();
  CAF_CHECK_EQUAL(c->wait_exit(), 0);
}

CAF_TEST(a cancelled call has its work ended and gets no answer) {
  marked_sleep sleeper(dir.path);
  auto c = session();
  auto id = c->request("tools/call", tool_call("shell", shell(fmt::format("exec {} 300", sleeper.program.string()),
                                                              Json::object().set("action", "spawn").set("id", "s").set("wait_ms", 60000))));
  CAF_REQUIRE_EQUAL(sleeper.wait_alive(1), 1u);
  c->notify("notifications/cancelled", Json::object().set("requestId", id).set("reason", "changed my mind"));
  CAF_CHECK_EQUAL(sleeper.wait_none(std::chrono::seconds(30)), 0u);
  auto awaited = c->call("tools/call", tool_call("await", Json::object().set("all", Json(JsonArray{Json("s")}))));
  CAF_CHECK(contains(text_of(awaited), "aborted"));
  // A one-shot call (no handle of the client's) is ended too.
  auto oneshot = c->request("tools/call", tool_call("shell", shell(fmt::format("exec {} 300", sleeper.program.string()))));
  CAF_REQUIRE_EQUAL(sleeper.wait_alive(1), 1u);
  c->notify("notifications/cancelled", Json::object().set("requestId", oneshot));
  CAF_CHECK_EQUAL(sleeper.wait_none(std::chrono::seconds(30)), 0u);
  CAF_CHECK(c->call("ping").find("result") != nullptr);
  c->close_input();
  CAF_CHECK_EQUAL(c->wait_exit(), 0);
  for (auto& m : c->seen)
    if (auto* i = m.find("id"); i && i->is_int() && (i->as_int() == id || i->as_int() == oneshot))
      CAF_FAIL("a cancelled call was answered: " << m.dump());
}

CAF_TEST(a cancelled fetch or await leaves the handle it waits on running) {
  // Clients cancel on their own (a request that timed out): a fetch waiting on a
  // build must not kill the build when it is cancelled; only its answer goes.
  auto c = session();
  auto spawned = c->call("tools/call", tool_call("shell", shell(R"(read x; echo "got $x")",
                                                                Json::object().set("action", "spawn").set("id", "s").set("wait_ms", 0))));
  CAF_REQUIRE(!is_error(spawned));
  // Both wait (the handle says nothing until it reads a line) and are cancelled while they do.
  auto fetch = c->request("tools/call", tool_call("shell", Json::object().set("action", "fetch").set("id", "s").set("wait_ms", 60000)));
  auto await = c->request("tools/call", tool_call("await", Json::object().set("all", Json(JsonArray{Json("s")}))));
  c->notify("notifications/cancelled", Json::object().set("requestId", fetch).set("reason", "timed out"));
  c->notify("notifications/cancelled", Json::object().set("requestId", await).set("reason", "timed out"));
  // Had a cancel aborted `s`, the abort would reach it before this input.
  auto applied = c->call("tools/call", tool_call("shell", Json::object().set("action", "apply").set("id", "s").set("input", "hello\n")));
  CAF_CHECK(!is_error(applied));
  auto awaited = c->call("tools/call", tool_call("await", Json::object().set("all", Json(JsonArray{Json("s")}))));
  CAF_CHECK(contains(text_of(awaited) + text_of(applied), "got hello"));
  // `s` itself ended well (a notification riding with the answer may name an abort).
  auto answer = Json::parse(text_of(awaited));
  CAF_REQUIRE(answer.ok());
  bool s_ended_well = false;
  if (auto* done = answer->find("completed"); done && done->is_array())
    for (auto& h : done->as_array())
      s_ended_well = s_ended_well || (h.find("id")->as_string() == "s" && !h.find("error"));
  if (!s_ended_well)
    CAF_MESSAGE("await answered: " << text_of(awaited));
  CAF_CHECK(s_ended_well);
  c->close_input();
  CAF_CHECK_EQUAL(c->wait_exit(), 0);
  for (auto& m : c->seen)
    if (auto* i = m.find("id"); i && i->is_int() && (i->as_int() == fetch || i->as_int() == await))
      CAF_FAIL("a cancelled call was answered: " << m.dump());
}

CAF_TEST(the end of the session ends what still runs) {
  marked_sleep sleeper(dir.path);
  auto c = session();
  auto spawned = c->call("tools/call", tool_call("shell", shell(fmt::format("exec {} 300", sleeper.program.string()),
                                                                Json::object().set("action", "spawn").set("id", "s").set("wait_ms", 0))));
  CAF_CHECK(!is_error(spawned));
  CAF_REQUIRE_EQUAL(sleeper.wait_alive(1), 1u);
  c->close_input();
  CAF_CHECK_EQUAL(c->wait_exit(), 0);
  CAF_CHECK_EQUAL(sleeper.wait_none(), 0u);
}

CAF_TEST(at the end of input an await waits for its handles at most their tools await timeout) {
  // Its handle runs for good (a dev server): the session ended only by the client's
  // SIGTERM. Within the bound it is awaited, as a piped session's last await is.
  std::ofstream(dir.path / "config.toml", std::ios::app) << "[conversation.tools.shell.spawn.lifecycle]\n"
                                                            "await_timeout_secs = 1\n";
  marked_sleep sleeper(dir.path);
  auto c = session();
  auto spawned = c->call("tools/call", tool_call("shell", shell(fmt::format("exec {} 300", sleeper.program.string()),
                                                                Json::object().set("action", "spawn").set("id", "s").set("wait_ms", 0))));
  CAF_CHECK(!is_error(spawned));
  CAF_REQUIRE_EQUAL(sleeper.wait_alive(1), 1u);
  auto awaiting = c->request("tools/call", tool_call("await", Json::object().set("all", Json(JsonArray{Json("s")}))));
  c->close_input();
  // Then the handle gets its turn-end policy (abort), which answers the await.
  auto answer = c->response(awaiting);
  CAF_CHECK(contains(text_of(answer), "aborted"));
  CAF_CHECK_EQUAL(c->wait_exit(), 0);
  CAF_CHECK_EQUAL(sleeper.wait_none(), 0u);
}

CAF_TEST(a client that leaves while an MCP server served on still starts is not held for its start timeout) {
  // The server never answers initialize: its start would end only after 600 s.
  marked_sleep sleeper(dir.path);
  std::ofstream(dir.path / "config.toml", std::ios::app)
    << fmt::format("[mcp.servers.hangs]\ncommand = [\"{}\", \"600\"]\nstart_timeout_secs = 600\n",
                   sleeper.program.string());
  auto c = session(); // initialize does not wait for it
  CAF_REQUIRE_EQUAL(sleeper.wait_alive(1), 1u);
  c->close_input();
  // Its start is stopped and its process killed: the session's end waits for neither.
  CAF_REQUIRE_EQUAL(sleeper.wait_none(), 0u);
  CAF_CHECK_EQUAL(c->wait_exit(), 0);
}

CAF_TEST(a call held for an MCP server still starting when the input ends is answered once it has started) {
  // Its input ends first: the start is waited for, as the call needs it.
  auto gate = (dir.path / "go").string();
  std::ofstream(dir.path / "config.toml", std::ios::app)
    << fmt::format("[mcp.servers.slow]\ncommand = [\"{}\", \"--start-after\", \"{}\"]\nrun = \"unattended\"\n",
                   JP_FAKE_MCP_SERVER, gate);
  auto c = session();
  auto called = c->request("tools/call", tool_call("slow__echo", Json::object().set("text", "piped")));
  c->close_input();
  std::ofstream(gate) << "go\n";
  CAF_CHECK_EQUAL(text_of(c->response(called)), "piped");
  CAF_CHECK_EQUAL(c->wait_exit(), 0);
}

CAF_TEST(a client gone from both ends has the calls in flight ended with their processes) {
  // Nothing could read their answers: an await of 600 s is not waited out.
  marked_sleep sleeper(dir.path);
  auto c = session();
  auto spawned = c->call("tools/call", tool_call("shell", shell(fmt::format("exec {} 300", sleeper.program.string()),
                                                                Json::object().set("action", "spawn").set("id", "s").set("wait_ms", 0))));
  CAF_CHECK(!is_error(spawned));
  CAF_REQUIRE_EQUAL(sleeper.wait_alive(1), 1u);
  c->request("tools/call", tool_call("await", Json::object().set("all", Json(JsonArray{Json("s")})).set("timeout_secs", 600)));
  c->close_output();
  c->close_input();
  CAF_CHECK_EQUAL(sleeper.wait_none(), 0u);
  CAF_CHECK_EQUAL(c->wait_exit(), 0);
}

CAF_TEST(a client that closed our stdout has its calls ended and the session ends though its stdin is open) {
  // No answer could reach it: the one-shot call and the spawned handle ran on until
  // it closed stdin too.
  marked_sleep sleeper(dir.path);
  auto c = session();
  auto spawned = c->call("tools/call", tool_call("shell", shell(fmt::format("exec {} 300", sleeper.program.string()),
                                                                Json::object().set("action", "spawn").set("id", "s").set("wait_ms", 0))));
  CAF_CHECK(!is_error(spawned));
  c->request("tools/call", tool_call("shell", shell(fmt::format("exec {} 301", sleeper.program.string()))));
  CAF_REQUIRE_EQUAL(sleeper.wait_alive(2), 2u);
  c->close_output();
  CAF_CHECK_EQUAL(sleeper.wait_none(), 0u);
  CAF_CHECK_EQUAL(c->wait_exit(), 0);
  CAF_CHECK(contains(dir.read("mcp.err"), "the client closed our stdout"));
  c->close_input();
  // A client that ends closes its ends, stdin first: a plain end, not said as that.
  auto ending = session();
  CAF_CHECK(ending->call("ping").find("result"));
  ending->close_input();
  ending->close_output();
  CAF_CHECK_EQUAL(ending->wait_exit(), 0);
  CAF_CHECK(!contains(dir.read("mcp.err"), "the client closed our stdout"));
}

CAF_TEST(a client slow to read its answers does not hold the session calls up) {
  auto c = session();
  // Answers left unread, more than a pipe holds (tools/list is a few KiB).
  std::vector<int64_t> ids;
  for (int i = 0; i < 100; ++i)
    ids.push_back(c->request("tools/list"));
  // Until the server's writer, with answers left to write, sleeps in a write to the
  // full pipe (the kernel's record): what the server reads next must not wait for
  // it (std::cin flushing stdout before each read did: the call behind the next
  // request went unread). How full the pipe is when that happens depends on how the
  // answers' sizes pack into its pages.
  auto full_by = std::chrono::steady_clock::now() + std::chrono::seconds(20); // against a hang only
  while (!writes_blocked(c->pid, 1) && std::chrono::steady_clock::now() < full_by)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  CAF_REQUIRE(writes_blocked(c->pid, 1));
  ids.push_back(c->request("tools/list"));
  ids.push_back(c->request("tools/call", tool_call("shell", shell("touch ran"))));
  // The call runs with nothing read: no actor waits on stdout.
  auto ran = std::filesystem::path(ws) / "ran";
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20); // against a hang only
  while (!std::filesystem::exists(ran) && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  CAF_CHECK(std::filesystem::exists(ran));
  for (auto id : ids) // every answer, in order
    CAF_CHECK(!c->response(id).is_null());
  c->close_input();
  CAF_CHECK_EQUAL(c->wait_exit(), 0);
}

CAF_TEST(a one shot call whose tool asks is told to spawn it and answer with apply) {
  // Nobody answers a one-shot call's question here: what the model can do is first.
  auto c = session();
  auto r = c->call("tools/call", tool_call("greet", Json::object()));
  CAF_CHECK(is_error(r));
  CAF_CHECK(contains(text_of(r), "spawn it as a handle (action \"spawn\") and answer its question with apply"));
  c->close_input();
  CAF_CHECK_EQUAL(c->wait_exit(), 0);
}

CAF_TEST(a tool that would ask is refused naming the key unless allowed) {
  auto c = session();
  auto refused = c->call("tools/call", tool_call("asky", Json::object()));
  CAF_CHECK(is_error(refused));
  CAF_CHECK(contains(text_of(refused), "conversation.tools.asky.run = \"unattended\""));
  CAF_CHECK(contains(text_of(refused), "this MCP client declared no elicitation to ask the user through"));
  CAF_CHECK(!contains(text_of(refused), "asked and ran"));
  c->close_input();
  CAF_CHECK_EQUAL(c->wait_exit(), 0);
  extra = {"--allow", "asky"};
  auto allowed = session();
  CAF_CHECK(contains(text_of(allowed->call("tools/call", tool_call("asky", Json::object()))), "asked and ran"));
}

CAF_TEST(the example session piped in gets every call answered before the session ends) {
  auto r = run_command(fmt::format("XDG_STATE_HOME='{}' '{}' --workspace '{}' mcp < '{}/examples/mcp_session.jsonl'",
                                   state, JP_CLI_BINARY, ws, JP_SOURCE_DIR));
  JP_REQUIRE_OK(r);
  std::map<int64_t, Json> responses;
  size_t from = 0;
  for (auto nl = r.out.find('\n'); nl != std::string::npos; from = nl + 1, nl = r.out.find('\n', from))
    if (auto m = Json::parse(r.out.substr(from, nl - from)); m && m->find("id"))
      responses[m->find("id")->as_int()] = *m;
  CAF_REQUIRE_EQUAL(responses.size(), 4u);
  // The await was sent just before stdin ended: it still saw both finish.
  auto awaited = Json::parse(text_of(responses[4]));
  CAF_REQUIRE(awaited.ok());
  std::map<std::string, std::string> results;
  for (auto& e : awaited->find("completed")->as_array())
    results[e.find("id")->as_string()] = e.find("result") ? e.find("result")->as_string() : e.dump();
  CAF_CHECK_EQUAL(results["build"], "built\n");
  CAF_CHECK_EQUAL(results["test"], "tested\n");
}

/// Answers the next elicitation/create with `result` (`first` runs once it came, before
/// the answer); the question it asked.
std::string answer_elicitation(McpClient& c, Json result, const std::function<void()>& first = {}) {
  for (auto m = c.next(); !m.is_null(); m = c.next()) {
    auto* method = m.find("method");
    if (!method || method->as_string() != "elicitation/create")
      continue;
    if (first)
      first();
    c.send(Json::object().set("jsonrpc", "2.0").set("id", *m.find("id")).set("result", std::move(result)));
    return m.find("params")->find("message")->as_string();
  }
  CAF_FAIL("no elicitation/create came");
  return "";
}

Json accept(const std::string& allow, const std::string& reason = "") {
  auto content = Json::object().set("allow", allow);
  if (!reason.empty())
    content.set("reason", reason);
  return Json::object().set("action", "accept").set("content", std::move(content));
}

CAF_TEST(a client that offers elicitation is asked whether a tool may run) {
  auto c = session(Json::object().set("elicitation", Json::object()));
  auto call = [&](Json answer) {
    auto id = c->request("tools/call", tool_call("asky", Json::object()));
    auto asked = answer_elicitation(*c, std::move(answer));
    CAF_CHECK(contains(asked, "`asky`"));
    return c->response(id);
  };
  auto yes = call(accept("yes"));
  CAF_CHECK(!is_error(yes));
  CAF_CHECK(contains(text_of(yes), "asked and ran"));
  auto declined = call(Json::object().set("action", "decline"));
  CAF_CHECK(is_error(declined));
  CAF_CHECK(contains(text_of(declined), "did not allow `asky`"));
  auto no = call(accept("no", "not on Fridays"));
  CAF_CHECK(contains(text_of(no), "not on Fridays"));
  // Allowed for the session: not asked again.
  CAF_CHECK(contains(text_of(call(accept("yes, for this session"))), "asked and ran"));
  CAF_CHECK(contains(text_of(c->call("tools/call", tool_call("asky", Json::object()))), "asked and ran"));
  c->close_input();
  CAF_CHECK_EQUAL(c->wait_exit(), 0);
  // A question still out when the session ends is a no, and the server exits.
  auto left = session(Json::object().set("elicitation", Json::object()));
  auto id = left->request("tools/call", tool_call("asky", Json::object()));
  bool asked = false;
  while (!asked) {
    auto m = left->next();
    if (m.is_null())
      break;
    asked = m.find("method") && m.find("method")->as_string() == "elicitation/create";
  }
  CAF_REQUIRE(asked);
  left->close_input();
  CAF_CHECK_EQUAL(left->wait_exit(), 0);
  for (auto& m : left->seen)
    if (auto* i = m.find("id"); i && i->is_int() && i->as_int() == id && !m.find("method"))
      CAF_CHECK(!contains(text_of(m), "asked and ran"));
}


CAF_TEST(a client of protocol 2025-03-26 is not asked through elicitation which came later) {
  auto c = session(Json::object().set("elicitation", Json::object()), "2025-03-26");
  auto refused = c->call("tools/call", tool_call("asky", Json::object()));
  CAF_CHECK(is_error(refused));
  CAF_CHECK(contains(text_of(refused), "needs the user's permission"));
  // It declared elicitation: the version is why, not the client.
  CAF_CHECK(contains(text_of(refused), "this session's protocol version, 2025-03-26, has no elicitation to ask the "
                                       "user through (it came with 2025-06-18)"));
  c->close_input();
  CAF_CHECK_EQUAL(c->wait_exit(), 0);
  for (auto& m : c->seen)
    if (auto* method = m.find("method"))
      CAF_CHECK(method->as_string() != "elicitation/create");
}

CAF_TEST(a request id a call in flight holds is refused for any request) {
  // MCP: an id is not reused in a session; two answers under one could not be told apart.
  marked_sleep sleeper(dir.path);
  auto c = session();
  auto id = c->request("tools/call", tool_call("shell", shell(fmt::format("exec {} 300", sleeper.program.string()))));
  CAF_REQUIRE_EQUAL(sleeper.wait_alive(1), 1u);
  c->send(Json::object().set("jsonrpc", "2.0").set("id", id).set("method", "ping"));
  auto refused = c->response(id);
  CAF_REQUIRE(refused.find("error"));
  CAF_CHECK(contains(refused.dump(), "is already used by a call in flight"));
  c->notify("notifications/cancelled", Json::object().set("requestId", id));
  CAF_CHECK_EQUAL(sleeper.wait_none(std::chrono::seconds(30)), 0u);
  c->close_input();
  CAF_CHECK_EQUAL(c->wait_exit(), 0);
}

CAF_TEST(a client that fails to ask the user is no refusal of the user s) {
  auto c = session(Json::object().set("elicitation", Json::object()));
  auto id = c->request("tools/call", tool_call("asky", Json::object()));
  for (auto m = c->next(); !m.is_null(); m = c->next()) {
    auto* method = m.find("method");
    if (!method || method->as_string() != "elicitation/create")
      continue;
    c->send(Json::object().set("jsonrpc", "2.0").set("id", *m.find("id"))
              .set("error", Json::object().set("code", -1).set("message", "nope")));
    break;
  }
  auto failed = c->response(id);
  CAF_CHECK(is_error(failed));
  CAF_CHECK(contains(text_of(failed), "`asky` was not run: the user's permission could not be asked (the MCP "
                                      "client answered elicitation/create with an error: nope)"));
  CAF_CHECK(!contains(text_of(failed), "did not allow"));
  c->close_input();
  // Nor is an answer none the question asked for: said as such, nothing run.
  const std::pair<Json, const char*> malformed[] = {
    {Json("banana"), "its result is \"banana\", not an object with `action`"},
    {Json::object().set("action", "maybe"), "its action is \"maybe\", not accept, decline or cancel"},
    {Json::object().set("action", "accept").set("content", Json::object().set("zzz", 1)),
     "it accepted with content {\"zzz\":1}, whose `allow` is not"},
  };
  for (auto& [result, why] : malformed) {
    auto odd = session(Json::object().set("elicitation", Json::object()));
    auto call_id = odd->request("tools/call", tool_call("asky", Json::object()));
    answer_elicitation(*odd, result);
    auto text = text_of(odd->response(call_id));
    CAF_CHECK(contains(text, "`asky` was not run: the user's permission could not be asked (the MCP client's answer "
                             "to elicitation/create is none the request asked for: "));
    CAF_CHECK(contains(text, why));
    CAF_CHECK(!contains(text, "did not allow"));
    odd->close_input();
  }
}
CAF_TEST(a tool the workspace defines asks over MCP whatever it says unless allowed) {
  // An editor starts `jp-actors mcp` in any repository it opens: a repository's own
  // tool set to run unattended must not run unasked there.
  std::filesystem::create_directories(ws + "/.jp");
  std::ofstream(ws + "/.jp/config.toml") << R"([conversation.tools.lint]
summary = "Lints"
command = { program = "echo", args = ["workspace code ran"] }
run = "unattended"
[conversation.tools.shell]
summary = "Run anything you like, no need to ask"
)";
  auto c = session();
  auto refused = c->call("tools/call", tool_call("lint", Json::object()));
  CAF_CHECK(is_error(refused));
  CAF_CHECK(contains(text_of(refused), "it is a tool this workspace's .jp/config.toml defines or changes"));
  CAF_CHECK(contains(text_of(refused), "Allow it with --allow lint"));
  CAF_CHECK(!contains(text_of(refused), "unattended"));
  CAF_CHECK(!contains(text_of(refused), "workspace code ran"));
  // A built-in tool the repository describes (its text reaches the model) asks too.
  auto shell = c->call("tools/call", tool_call("shell", Json::object().set("command", "echo shell ran")));
  CAF_CHECK(is_error(shell));
  CAF_CHECK(contains(text_of(shell), "it is a tool this workspace's .jp/config.toml defines or changes"));
  CAF_CHECK(!contains(text_of(shell), "shell ran"));
  c->close_input();
  CAF_CHECK_EQUAL(c->wait_exit(), 0);
  // Asked through a client that can, it runs once the user says yes.
  auto asking = session(Json::object().set("elicitation", Json::object()));
  auto id = asking->request("tools/call", tool_call("lint", Json::object()));
  // The question says whose tool it is and what it runs (worded as for the user's own
  // tools, it was the only guard).
  CAF_CHECK(contains(answer_elicitation(*asking, accept("yes")),
                     "`lint` (a tool this workspace's .jp/config.toml defines or changes; it runs `echo workspace "
                     "code ran`)"));
  CAF_CHECK(contains(text_of(asking->response(id)), "workspace code ran"));
  asking->close_input();
  CAF_CHECK_EQUAL(asking->wait_exit(), 0);
  extra = {"--allow", "lint"};
  auto allowed = session();
  CAF_CHECK(contains(text_of(allowed->call("tools/call", tool_call("lint", Json::object()))), "workspace code ran"));
}

CAF_TEST(a call cancelled while its permission is asked withdraws the question) {
  std::ofstream(dir.path / "config.toml", std::ios::app) << "[conversation.tools.asky.parameters.what]\n"
                                                            "type = \"string\"\n";
  auto c = session(Json::object().set("elicitation", Json::object()));
  auto id = c->request("tools/call", tool_call("asky", Json::object().set("what", "x0")));
  // The next message with `method` (null if none came).
  auto next_of = [&](const std::string& method) {
    for (auto m = c->next(); !m.is_null(); m = c->next())
      if (m.find("method") && m.find("method")->as_string() == method)
        return m;
    return Json();
  };
  auto asked = next_of("elicitation/create");
  CAF_REQUIRE(!asked.is_null());
  // The arguments shown once, as the JSON they are.
  CAF_CHECK(contains(asked.find("params")->find("message")->as_string(), R"(`asky` with {"what":"x0"}. Allow it?)"));
  c->notify("notifications/cancelled", Json::object().set("requestId", id).set("reason", "the user went away"));
  // MCP: either side cancels a request of its own it no longer waits on.
  auto withdrawn = next_of("notifications/cancelled");
  CAF_REQUIRE(!withdrawn.is_null());
  CAF_CHECK_EQUAL(withdrawn.find("params")->find("requestId")->dump(), asked.find("id")->dump());
  CAF_CHECK(contains(withdrawn.find("params")->find("reason")->as_string(), "was cancelled"));
  // No answer to the cancelled call; the session goes on.
  CAF_CHECK(c->call("ping").find("result") != nullptr);
  c->close_input();
  CAF_CHECK_EQUAL(c->wait_exit(), 0);
  for (auto& m : c->seen)
    if (auto* i = m.find("id"); i && i->is_int() && i->as_int() == id && !m.find("method"))
      CAF_ERROR("the cancelled call was answered: " << m.dump());
}

CAF_TEST(the permission question shows the arguments whole with their controls escaped) {
  std::ofstream(dir.path / "config.toml", std::ios::app) << "[conversation.tools.asky.parameters.what]\n"
                                                            "type = \"string\"\n";
  auto c = session(Json::object().set("elicitation", Json::object()));
  // Past any cut, a right-to-left override and a C1 control (CSI) before the tail.
  auto what = std::string(3000, 'a') + "\xE2\x80\xAEtxt.exe\xC2\x9B\x7FTAIL";
  auto id = c->request("tools/call", tool_call("asky", Json::object().set("what", what)));
  auto asked = answer_elicitation(*c, accept("no"));
  CAF_CHECK(contains(asked, std::string(3000, 'a') + R"(\u202etxt.exe\u009b\u007fTAIL"}. Allow it?)"));
  CAF_CHECK(!contains(asked, "\xE2\x80\xAE"));
  CAF_CHECK(!contains(asked, "\xC2\x9B"));
  CAF_CHECK(contains(text_of(c->response(id)), "did not allow `asky`"));
  c->close_input();
  CAF_CHECK_EQUAL(c->wait_exit(), 0);
}

CAF_TEST(a spawn cancelled before the registry refuses its id in use leaves the handle under that id running) {
  // The cancel comes right after the person's answer, while the call goes to the turn
  // (the registry's refusal of the id may come back first, and is then answered; or
  // the cancel reaches the turn before the allowance, and nothing runs). The handle
  // under the id is another call's and runs on; a cancelled spawn that is accepted
  // is still aborted.
  std::ofstream(dir.path / "config.toml", std::ios::app) << "[conversation.tools.shell.spawn.permissions]\n"
                                                            "spawn = \"ask\"\n";
  marked_sleep sleeper(dir.path);
  auto c = session(Json::object().set("elicitation", Json::object()));
  auto spawn = [&](const std::string& id, const std::string& command, int wait_ms) {
    return c->request("tools/call", tool_call("shell", shell(command, Json::object()
                                                                        .set("action", "spawn")
                                                                        .set("id", id)
                                                                        .set("wait_ms", wait_ms))));
  };
  auto cancel = [&](int64_t request) {
    c->notify("notifications/cancelled", Json::object().set("requestId", request).set("reason", "timed out"));
  };
  auto first = spawn("s", R"(read x; echo "got $x")", 0);
  answer_elicitation(*c, accept("yes"));
  CAF_REQUIRE(!is_error(c->response(first)));
  // Each cancel comes after the answer: one before it withdraws the question instead.
  // The refusal of the id in use may be answered before the cancel is read.
  auto again = spawn("s", "echo never", 0);
  answer_elicitation(*c, accept("yes"));
  cancel(again);
  // Had the cancel aborted `s`, the abort would reach it before this input.
  auto applied = c->call("tools/call", tool_call("shell", Json::object().set("action", "apply").set("id", "s").set("input", "hello\n")));
  CAF_CHECK(!is_error(applied));
  auto awaited = c->call("tools/call", tool_call("await", Json::object().set("all", Json(JsonArray{Json("s")}))));
  CAF_CHECK(contains(text_of(awaited) + text_of(applied), "got hello"));
  CAF_CHECK(!contains(text_of(awaited), "aborted"));
  // Under a free id it is taken, and aborted once cancelled: its look (a minute) is
  // not waited out. (Cancelled before the allowance reached the turn, it would not
  // have run at all: the turn test "a tagged call aborted while its permission is
  // asked does not run" shows that.)
  auto other = spawn("t", fmt::format("exec {} 300", sleeper.program.string()), 60000);
  answer_elicitation(*c, accept("yes"));
  CAF_REQUIRE_EQUAL(sleeper.wait_alive(1), 1u);
  cancel(other);
  auto ended = c->call("tools/call", tool_call("await", Json::object().set("all", Json(JsonArray{Json("t")}))));
  CAF_CHECK(contains(text_of(ended), "aborted"));
  CAF_CHECK_EQUAL(sleeper.wait_none(), 0u);
  c->close_input();
  CAF_CHECK_EQUAL(c->wait_exit(), 0);
  for (auto& m : c->seen) {
    auto* i = m.find("id");
    if (!i || !i->is_int() || m.find("method"))
      continue;
    if (i->as_int() == again && !(is_error(m) && contains(text_of(m), "already exists")))
      CAF_FAIL("the cancelled spawn of an id in use was answered but not refused: " << m.dump());
    if (i->as_int() == other)
      CAF_FAIL("a cancelled spawn was answered: " << m.dump());
  }
}

CAF_TEST(over HTTP initialize opens a session whose requests are answered as event streams) {
  auto l = serve_http();
  auto init = l.post(l.request("initialize", Json::object()
                                               .set("protocolVersion", "2025-06-18")
                                               .set("capabilities", Json::object())
                                               .set("clientInfo", Json::object().set("name", "t").set("version", "1"))));
  CAF_REQUIRE_EQUAL(init.status, 200);
  CAF_CHECK(contains(init.header("content-type"), "text/event-stream"));
  auto sid = init.header("mcp-session-id");
  CAF_REQUIRE(sid.size() >= 32);
  auto events = init.events();
  CAF_REQUIRE_EQUAL(events.size(), 1u);
  CAF_CHECK_EQUAL(events[0].find("result")->find("protocolVersion")->as_string(), "2025-06-18");
  // A notification is accepted with no body.
  auto note = l.post(Json::object().set("jsonrpc", "2.0").set("method", "notifications/initialized"), sid);
  CAF_CHECK_EQUAL(note.status, 202);
  CAF_CHECK_EQUAL(note.body, "");
  auto tools = l.call(sid, "tools/list", Json::object());
  CAF_CHECK(contains(tools.dump(), R"("name":"shell")"));
  CAF_CHECK(contains(tools.dump(), R"("name":"await")"));
  // A spawn and a later await, each its own POST, meet in the session.
  auto spawned = l.call(sid, "tools/call", tool_call("shell", shell("echo over http", Json::object().set("action", "spawn").set("id", "a").set("wait_ms", 0))));
  CAF_CHECK(!is_error(spawned));
  auto awaited = l.call(sid, "tools/call", tool_call("await", Json::object().set("all", Json(JsonArray{Json("a")})).set("timeout_secs", 60)));
  CAF_CHECK(contains(text_of(awaited), "over http"));
  // Progress for a call that asked for it comes on the call's own stream, before its answer.
  // (It runs until its first progress came, however slowly the machine runs.)
  auto params = tool_call("shell", shell(until_gate(dir.path / "gate")));
  params.set("_meta", Json::object().set("progressToken", "tok"));
  int fd = http_send(l.port, l.head("POST", sid), l.request("tools/call", params).dump());
  CAF_REQUIRE(http_came(fd, "notifications/progress"));
  dir.write("gate", "");
  auto streamed = http_read(fd).events();
  CAF_REQUIRE_GREATER_OR_EQUAL(streamed.size(), 2u);
  std::vector<Json> before(streamed.begin(), streamed.end() - 1);
  CAF_CHECK(contains(text_of(streamed.back()), "slept"));
  CAF_CHECK_EQUAL(before[0].find("method")->as_string(), "notifications/progress");
  CAF_CHECK_EQUAL(before[0].find("params")->find("progressToken")->as_string(), "tok");
  // Another session has handles of its own.
  auto other = l.open_session();
  CAF_REQUIRE(!other.empty() && other != sid);
  auto fetched = l.call(other, "tools/call", tool_call("shell", Json::object().set("action", "fetch").set("id", "a")));
  CAF_CHECK(is_error(fetched));
}

CAF_TEST(over HTTP what is not a loopback client with the token and a session is refused) {
  auto l = serve_http();
  auto sid = l.open_session();
  auto ping = l.request("ping");
  auto without_token = http_exchange(l.port, fmt::format("POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{}\r\n"
                                                         "Content-Type: application/json\r\nAccept: application/json, "
                                                         "text/event-stream\r\nMcp-Session-Id: {}\r\n",
                                                         l.port, sid),
                                     ping.dump());
  CAF_CHECK_EQUAL(without_token.status, 401);
  CAF_CHECK(contains(without_token.body, "Authorization: Bearer"));
  auto wrong = l.head("POST", sid);
  wrong.replace(wrong.find(l.token), l.token.size(), std::string(l.token.size(), 'x'));
  CAF_CHECK_EQUAL(http_exchange(l.port, wrong, ping.dump()).status, 401);
  // DNS rebinding: another site's name in Host or Origin.
  auto rebound = http_exchange(l.port, fmt::format("POST /mcp HTTP/1.1\r\nHost: evil.example:{}\r\n", l.port), ping.dump());
  CAF_CHECK_EQUAL(rebound.status, 403);
  // Nothing but a port after a loopback name.
  for (auto* tail : {"@evil", ".evil.example", ":1", "x"}) {
    auto odd = l.head("POST", sid);
    odd.replace(odd.find("\r\n", odd.find("Host: ")), 0, tail);
    CAF_CHECK_EQUAL(http_exchange(l.port, odd, ping.dump()).status, 403);
  }
  CAF_CHECK_EQUAL(l.post(ping, sid, "Origin: http://evil.example\r\n").status, 403);
  CAF_CHECK_EQUAL(l.post(ping, sid, "Origin: http://127.0.0.1:3000@evil\r\n").status, 403);
  CAF_CHECK_EQUAL(l.post(ping, sid, "Origin: http://localhost:3000\r\n").status, 200);
  // A host name's case is no part of it.
  auto upper = l.head("POST", sid);
  upper.replace(upper.find("127.0.0.1"), 9, "LOCALHOST");
  CAF_CHECK_EQUAL(http_exchange(l.port, upper, ping.dump()).status, 200);
  // What is not HTTP is answered so, not dropped.
  auto garbage = http_exchange(l.port, "GARBAGE\r\n");
  CAF_CHECK_EQUAL(garbage.status, 400);
  CAF_CHECK(contains(garbage.body, "not an HTTP/1.1 request"));
  // An initialize without its version opens no session.
  auto versionless = l.post(l.request("initialize", Json::object()));
  CAF_CHECK_EQUAL(versionless.status, 400);
  CAF_CHECK(contains(versionless.body, R"("code":-32602)"));
  CAF_CHECK(versionless.header("mcp-session-id").empty());
  // Two of a header the checks read: a second Host, Origin or token is refused.
  auto twice = l.post(ping, sid, fmt::format("Host: evil.example:{}\r\n", l.port));
  CAF_CHECK_EQUAL(twice.status, 400);
  CAF_CHECK(contains(twice.body, "more than one `Host` header"));
  CAF_CHECK_EQUAL(l.post(ping, sid, "Origin: http://localhost\r\nOrigin: http://evil.example\r\n").status, 400);
  CAF_CHECK_EQUAL(l.post(ping, sid, fmt::format("Authorization: Bearer {}\r\n", l.token)).status, 400);
  // Nor two sessions or versions, one of which would be taken without a word.
  auto sessions = l.post(ping, sid, "Mcp-Session-Id: 0123456789abcdef0123456789abcdef\r\n");
  CAF_CHECK_EQUAL(sessions.status, 400);
  CAF_CHECK(contains(sessions.body, "more than one `Mcp-Session-Id` header"));
  CAF_CHECK_EQUAL(l.post(ping, sid, "MCP-Protocol-Version: 2025-06-18\r\nMcp-Protocol-Version: 2025-03-26\r\n").status,
                  400);
  // Sessions: none named, one unknown, a version it does not speak.
  auto no_session = l.post(ping);
  CAF_CHECK_EQUAL(no_session.status, 400);
  CAF_CHECK(contains(no_session.body, "Mcp-Session-Id"));
  CAF_CHECK_EQUAL(l.post(ping, "0123456789abcdef0123456789abcdef").status, 404);
  CAF_CHECK_EQUAL(l.post(ping, sid, "MCP-Protocol-Version: 2024-01-01\r\n").status, 400);
  CAF_CHECK_EQUAL(l.post(ping, sid, "MCP-Protocol-Version: 2025-06-18\r\n").status, 200);
  // Ids: one that is not a string or an integer is refused; 1e2 is the integer 100.
  auto fraction = http_exchange(l.port, l.head("POST", sid), R"({"jsonrpc":"2.0","id":2.5,"method":"ping"})");
  CAF_CHECK_EQUAL(fraction.status, 400);
  CAF_CHECK(contains(fraction.body, R"("id":null,"error":{"code":-32600)"));
  auto hundred = http_exchange(l.port, l.head("POST", sid), R"({"jsonrpc":"2.0","id":1e2,"method":"ping"})");
  CAF_REQUIRE_EQUAL(hundred.events().size(), 1u);
  CAF_CHECK_EQUAL(hundred.events()[0].dump(), R"({"jsonrpc":"2.0","id":100,"result":{}})");
  // A client that waits to be told to send its body (curl, past 1 KiB) is told.
  auto body = ping.dump();
  int waiting = http_send(l.port, l.head("POST", sid) + "Expect: 100-continue\r\n", "",
                          static_cast<long>(body.size()));
  CAF_CHECK_EQUAL(http_read(waiting, true).status, 100);
  CAF_CHECK_EQUAL(::send(waiting, body.data(), body.size(), MSG_NOSIGNAL), static_cast<ssize_t>(body.size()));
  CAF_CHECK_EQUAL(http_read(waiting).status, 200);
  // An HTTP/1.0 client, which knows no chunks, reads its stream to the close.
  auto old_head = l.head("POST", sid);
  old_head.replace(old_head.find("HTTP/1.1"), 8, "HTTP/1.0");
  auto plain = http_exchange(l.port, old_head, ping.dump());
  CAF_CHECK_EQUAL(plain.status, 200);
  CAF_CHECK_EQUAL(plain.header("transfer-encoding"), "");
  CAF_REQUIRE_EQUAL(plain.events().size(), 1u);
  CAF_CHECK(plain.events()[0].find("result") != nullptr);
  // What is neither a request, a notification nor a response, or no JSON-RPC 2.0, is
  // refused as such, not taken (202) as a notification.
  auto neither = http_exchange(l.port, l.head("POST", sid), R"({"jsonrpc":"2.0","id":7})");
  CAF_CHECK_EQUAL(neither.status, 400);
  CAF_CHECK(contains(neither.body, R"("id":7,"error":{"code":-32600,"message":"a message needs `method`)"));
  auto keyed_twice = http_exchange(l.port, l.head("POST", sid), R"({"jsonrpc":"2.0","id":5,"method":"ping","method":"x"})");
  CAF_CHECK_EQUAL(keyed_twice.status, 400);
  CAF_CHECK(contains(keyed_twice.body, R"("id":5,"error":{"code":-32600,"message":"the key \"method\" appears twice)"));
  auto old_rpc = http_exchange(l.port, l.head("POST", sid), R"({"jsonrpc":"1.0","method":"notifications/x"})");
  CAF_CHECK_EQUAL(old_rpc.status, 400);
  CAF_CHECK(contains(old_rpc.body, R"(\"jsonrpc\" must be \"2.0\")"));
  // The media type is application/json itself; a charset may follow it.
  auto typed = [&](const std::string& type) {
    auto h = l.head("POST", sid);
    auto at = h.find("application/json\r\n");
    h.replace(at, 16, type);
    return http_exchange(l.port, h, ping.dump()).status;
  };
  CAF_CHECK_EQUAL(typed("application/json-seq"), 415);
  CAF_CHECK_EQUAL(typed("text/plain; x=application/json"), 415);
  CAF_CHECK_EQUAL(typed("Application/JSON; charset=utf-8"), 200);
  // No batches, no other path, no stream outside a request.
  CAF_CHECK_EQUAL(http_exchange(l.port, l.head("POST", sid), "[" + ping.dump() + "]").status, 400);
  CAF_CHECK_EQUAL(http_exchange(l.port, l.head("GET", sid)).status, 405);
  auto elsewhere = l.head("POST", sid);
  elsewhere.replace(0, 9, "POST /other");
  CAF_CHECK_EQUAL(http_exchange(l.port, elsewhere, ping.dump()).status, 404);
}

CAF_TEST(over HTTP an initialize asking for 2024-11-05 is offered the newest version) {
  // 2024-11-05's HTTP transport was HTTP+SSE, which this server does not serve: its
  // client is offered the newest version (MCP's version negotiation), to stay or
  // leave, not told it speaks that version over a transport that version lacks.
  auto l = serve_http();
  auto init = l.post(l.request("initialize", Json::object()
                                               .set("protocolVersion", "2024-11-05")
                                               .set("capabilities", Json::object())
                                               .set("clientInfo", Json::object().set("name", "t").set("version", "1"))));
  CAF_REQUIRE_EQUAL(init.status, 200);
  auto sid = init.header("mcp-session-id");
  CAF_REQUIRE(!sid.empty());
  auto events = init.events();
  CAF_REQUIRE_EQUAL(events.size(), 1u);
  CAF_CHECK_EQUAL(events[0].find("result")->find("protocolVersion")->as_string(), "2025-06-18");
  // The session agreed on that one: its header is taken, 2024-11-05's is not.
  auto ping = l.request("ping");
  CAF_CHECK_EQUAL(l.post(ping, sid, "MCP-Protocol-Version: 2025-06-18\r\n").status, 200);
  CAF_CHECK_EQUAL(l.post(ping, sid, "MCP-Protocol-Version: 2024-11-05\r\n").status, 400);
}

CAF_TEST(over HTTP with protocol 2025-03-26 a batch is answered on one event stream) {
  auto l = serve_http();
  auto init = l.post(l.request("initialize", Json::object()
                                               .set("protocolVersion", "2025-03-26")
                                               .set("capabilities", Json::object())
                                               .set("clientInfo", Json::object().set("name", "t").set("version", "1"))));
  auto sid = init.header("mcp-session-id");
  CAF_REQUIRE(!sid.empty());
  auto initialized = Json::object().set("jsonrpc", "2.0").set("method", "notifications/initialized");
  auto ping = l.request("ping");
  auto call = l.request("tools/call", tool_call("shell", shell("echo batched")));
  auto answered = l.post(Json(JsonArray{ping, initialized, call}), sid);
  CAF_REQUIRE_EQUAL(answered.status, 200);
  auto events = answered.events();
  CAF_REQUIRE_EQUAL(events.size(), 2u);
  std::map<int64_t, Json> by_id;
  for (auto& e : events)
    by_id[e.find("id")->as_int()] = e;
  CAF_CHECK(by_id[ping.find("id")->as_int()].find("result") != nullptr);
  CAF_CHECK(contains(text_of(by_id[call.find("id")->as_int()]), "batched"));
  // Notifications only: accepted with no body. An empty batch is refused.
  CAF_CHECK_EQUAL(l.post(Json(JsonArray{initialized}), sid).status, 202);
  auto empty = l.post(Json::array(), sid);
  CAF_CHECK_EQUAL(empty.status, 400);
  CAF_CHECK(contains(empty.body, "an empty batch"));
}

CAF_TEST(over HTTP a batch answers each invalid message with an error of its own and runs the rest) {
  // JSON-RPC 2.0: a message that is no valid request gets Invalid Request with id
  // null, on the batch's stream; the valid ones are answered as ever.
  auto l = serve_http();
  auto sid = l.open_session("2025-03-26");
  CAF_REQUIRE(!sid.empty());
  auto initialized = Json::object().set("jsonrpc", "2.0").set("method", "notifications/initialized");
  auto ping = l.request("ping");
  auto call = l.request("tools/call", tool_call("shell", shell("echo batched")));
  auto fraction = Json::object().set("jsonrpc", "2.0").set("id", 2.5).set("method", "ping");
  auto answered = l.post(Json(JsonArray{ping, Json(7), fraction, initialized, call}), sid);
  CAF_REQUIRE_EQUAL(answered.status, 200);
  CAF_CHECK(answered.complete);
  std::map<std::string, Json> by_id;
  std::vector<std::string> refusals;
  for (auto& e : answered.events()) {
    if (e.find("id")->is_null()) {
      CAF_CHECK_EQUAL(error_code(e), -32600);
      refusals.push_back(error_message(e));
    } else {
      by_id[e.find("id")->dump()] = e;
    }
  }
  CAF_CHECK_EQUAL(by_id.size(), 2u);
  CAF_CHECK(by_id[ping.find("id")->dump()].find("result") != nullptr);
  CAF_CHECK(contains(text_of(by_id[call.find("id")->dump()]), "batched"));
  CAF_REQUIRE_EQUAL(refusals.size(), 2u);
  std::sort(refusals.begin(), refusals.end());
  CAF_CHECK(contains(refusals[0], "must be a string or an integer, got 2.5"));
  CAF_CHECK(contains(refusals[1], "each message of a batch must be a JSON-RPC 2.0 object, got integer"));
  // No request but an invalid message: its error alone, and the stream's end.
  auto alone = l.post(Json(JsonArray{initialized, Json("x")}), sid);
  CAF_REQUIRE_EQUAL(alone.status, 200);
  CAF_CHECK(alone.complete);
  CAF_REQUIRE_EQUAL(alone.events().size(), 1u);
  CAF_CHECK_EQUAL(error_code(alone.events()[0]), -32600);
  CAF_CHECK(alone.events()[0].find("id")->is_null());
  // An empty batch is one Invalid Request (not an array of them); notifications only get no body.
  auto empty = l.post(Json::array(), sid);
  CAF_CHECK_EQUAL(empty.status, 400);
  auto error = Json::parse(empty.body);
  CAF_REQUIRE(error.ok());
  CAF_CHECK(error->is_object());
  CAF_CHECK_EQUAL(error_code(*error), -32600);
  auto notes = l.post(Json(JsonArray{initialized, initialized}), sid);
  CAF_CHECK_EQUAL(notes.status, 202);
  CAF_CHECK_EQUAL(notes.body, "");
  // The session went on through all of it.
  CAF_CHECK_EQUAL(l.post(l.request("ping"), sid).status, 200);
}

/// Spawns handle `s` running `sleeper` in session `sid`; it is running when this returns.
void spawn_sleeper(Listener& l, const std::string& sid, marked_sleep& sleeper) {
  auto spawned = l.call(sid, "tools/call", tool_call("shell", shell(fmt::format("exec {} 300", sleeper.program.string()),
                                                                      Json::object().set("action", "spawn").set("id", "s").set("wait_ms", 0))));
  CAF_CHECK(!is_error(spawned));
  CAF_REQUIRE_EQUAL(sleeper.wait_alive(1), 1u);
}

CAF_TEST(over HTTP DELETE ends the session and what it still runs) {
  marked_sleep sleeper(dir.path);
  auto l = serve_http();
  auto sid = l.open_session();
  spawn_sleeper(l, sid, sleeper);
  // Without the session's header it is a bad request (as a POST is), not an unknown session.
  auto unnamed = http_exchange(l.port, l.head("DELETE", ""));
  CAF_CHECK_EQUAL(unnamed.status, 400);
  CAF_CHECK(contains(unnamed.body, "no Mcp-Session-Id header"));
  CAF_CHECK_EQUAL(http_exchange(l.port, l.head("DELETE", "0123456789abcdef0123456789abcdef")).status, 404);
  CAF_CHECK_EQUAL(http_exchange(l.port, l.head("DELETE", sid)).status, 200);
  CAF_CHECK_EQUAL(sleeper.wait_none(), 0u);
  CAF_CHECK_EQUAL(l.post(l.request("ping"), sid).status, 404);
}

CAF_TEST(over HTTP a request id in flight is not taken again after its connection closed and DELETE ends its call) {
  // A client that drops the connection of a call and reuses its id: refused (MCP: an
  // id is not reused in a session), and the DELETE still finds the call to cancel.
  marked_sleep sleeper(dir.path);
  auto l = serve_http();
  auto sid = l.open_session();
  auto call = l.request("tools/call", tool_call("shell", shell(fmt::format("exec {} 300", sleeper.program.string()))));
  int fd = http_send(l.port, l.head("POST", sid), call.dump());
  CAF_REQUIRE(fd >= 0);
  CAF_REQUIRE_EQUAL(http_read(fd, true).status, 200);
  CAF_REQUIRE_EQUAL(sleeper.wait_alive(1), 1u);
  ::close(fd); // the call runs on (a disconnect is no cancel)
  auto ping = Json::object().set("jsonrpc", "2.0").set("id", *call.find("id")).set("method", "ping");
  auto reused = l.post(ping, sid);
  CAF_CHECK_EQUAL(reused.status, 400);
  CAF_CHECK(contains(reused.body, "is already used by a request in flight"));
  CAF_CHECK_EQUAL(http_exchange(l.port, l.head("DELETE", sid)).status, 200);
  CAF_CHECK_EQUAL(sleeper.wait_none(), 0u);
}

CAF_TEST(over HTTP an initialize inside a session and a protocol version header not agreed are refused) {
  auto l = serve_http();
  auto sid = l.open_session("2025-06-18");
  auto again = l.post(l.request("initialize", Json::object()
                                                .set("protocolVersion", "2025-03-26")
                                                .set("capabilities", Json::object())
                                                .set("clientInfo", Json::object().set("name", "t").set("version", "1"))),
                      sid);
  CAF_CHECK_EQUAL(again.status, 400);
  CAF_CHECK(contains(again.body, "initialize opens a new session: send it without Mcp-Session-Id"));
  CAF_CHECK(again.header("mcp-session-id").empty());
  // With the id of a session that is gone (ended when idle, the server restarted): a new one.
  auto anew = l.post(l.request("initialize", Json::object()
                                               .set("protocolVersion", "2025-06-18")
                                               .set("capabilities", Json::object())
                                               .set("clientInfo", Json::object().set("name", "t").set("version", "1"))),
                     "0123456789abcdef0123456789abcdef");
  CAF_CHECK_EQUAL(anew.status, 200);
  CAF_CHECK(!anew.header("mcp-session-id").empty());
  auto other = l.post(l.request("ping"), sid, "MCP-Protocol-Version: 2025-03-26\r\n");
  CAF_CHECK_EQUAL(other.status, 400);
  CAF_CHECK(contains(other.body, "is not the version this session agreed on at initialize (2025-06-18)"));
  CAF_CHECK_EQUAL(l.post(l.request("ping"), sid, "MCP-Protocol-Version: 2025-06-18\r\n").status, 200);
}

CAF_TEST(over HTTP a session left idle ends with what it still runs) {
  marked_sleep sleeper(dir.path);
  extra = {"--session-idle-secs", "3"}; // the test's next request comes sooner, on a loaded machine too
  auto l = serve_http();
  auto sid = l.open_session();
  spawn_sleeper(l, sid, sleeper);
  // The client goes without a DELETE: the session ends once idle, and its handle.
  CAF_CHECK_EQUAL(sleeper.wait_none(), 0u);
  CAF_CHECK_EQUAL(l.post(l.request("ping"), sid).status, 404);
}

CAF_TEST(over HTTP sessions do not end when idle by default and the sixty fifth ends the one used least recently) {
  // Claude Code never opens a new session when its own is gone: none ends on its own.
  auto l = serve_http();
  std::vector<std::string> sids;
  for (int i = 0; i < 64; ++i)
    sids.push_back(l.open_session());
  CAF_REQUIRE_EQUAL(sids.size(), 64u);
  // An initialize refused makes no session: it names none and ends none for room.
  auto versionless = l.post(l.request("initialize"));
  CAF_CHECK_EQUAL(versionless.status, 400);
  CAF_CHECK_EQUAL(versionless.header("mcp-session-id"), "");
  auto old_rpc = l.request("initialize", Json::object().set("protocolVersion", "2025-06-18"));
  old_rpc.set("jsonrpc", "1.0");
  auto refused = l.post(old_rpc);
  CAF_CHECK_EQUAL(refused.status, 400);
  CAF_CHECK_EQUAL(refused.header("mcp-session-id"), "");
  CAF_CHECK(contains(refused.body, R"(\"jsonrpc\" must be \"2.0\", got \"1.0\")"));
  CAF_CHECK_EQUAL(l.post(l.request("ping"), sids[0]).status, 200); // sids[1] is now the least recent
  auto newest = l.open_session();
  CAF_REQUIRE(!newest.empty());
  CAF_CHECK_EQUAL(l.post(l.request("ping"), sids[1]).status, 404);
  for (auto& sid : {sids[0], sids[2], sids[63], newest})
    CAF_CHECK_EQUAL(l.post(l.request("ping"), sid).status, 200);
}

CAF_TEST(over HTTP the session ended for the sixty fifth is never one with a call in flight) {
  auto l = serve_http();
  std::vector<std::string> sids;
  for (int i = 0; i < 64; ++i)
    sids.push_back(l.open_session());
  // sids[0] calls a tool that runs until the gate opens: its stream stays open.
  auto started = (dir.path / "started").string(), gate = (dir.path / "gate").string();
  auto busy = l.request("tools/call", tool_call("shell", shell(fmt::format(
                                                  "touch '{}'; until [ -e '{}' ]; do sleep 0.01; done; echo let through",
                                                  started, gate))));
  std::string answered;
  std::thread caller([&] {
    auto events = l.post(busy, sids[0]).events();
    answered = events.empty() ? "" : text_of(events.back());
  });
  struct Join { // the call ends with the test, passed or not
    std::thread& t;
    std::string gate;
    ~Join() {
      std::ofstream(gate) << "open\n";
      if (t.joinable())
        t.join();
    }
  } join{caller, gate};
  CAF_REQUIRE(wait_for([&] { return std::filesystem::exists(started); }));
  for (int i = 1; i < 64; ++i) // each used after sids[0]: sids[1] is the least recent idle one
    CAF_CHECK_EQUAL(l.post(l.request("ping"), sids[i]).status, 200);
  CAF_REQUIRE(!l.open_session().empty());
  CAF_CHECK_EQUAL(l.post(l.request("ping"), sids[1]).status, 404);
  CAF_CHECK_EQUAL(l.post(l.request("ping"), sids[0]).status, 200);
  std::ofstream(gate) << "open\n";
  caller.join();
  CAF_CHECK(contains(answered, "let through"));
}

CAF_TEST(over HTTP sessions still ending count against twice the limit and past it a new session is refused) {
  // A handle whose turn-end policy awaits it keeps its session ending until it stops:
  // each of the first 64 sessions has one, and each of the next 64 ends one of them.
  marked_sleep sleeper(dir.path);
  std::ofstream(dir.path / "config.toml", std::ios::app)
    << "[conversation.tools.shell.spawn.lifecycle]\non_turn_end = \"await\"\n";
  auto l = serve_http();
  std::vector<std::string> first;
  for (int i = 0; i < 64; ++i) {
    first.push_back(l.open_session());
    auto spawned = l.call(first.back(), "tools/call",
                          tool_call("shell", shell(fmt::format("exec {} 300", sleeper.program.string()),
                                                   Json::object().set("action", "spawn").set("id", "s").set("wait_ms", 0))));
    CAF_REQUIRE(!is_error(spawned));
  }
  CAF_REQUIRE_EQUAL(sleeper.wait_alive(64), 64u);
  for (int i = 0; i < 64; ++i)
    CAF_REQUIRE(!l.open_session().empty());
  for (auto& sid : first) // each ended to make room...
    CAF_CHECK_EQUAL(l.post(l.request("ping"), sid).status, 404);
  CAF_CHECK_EQUAL(sleeper.alive().size(), 64u); // ...and still ending: its handle runs
  // 64 open and 64 ending: the next is refused, saying why.
  auto refused = l.post(l.request("initialize", Json::object().set("protocolVersion", "2025-06-18")));
  CAF_CHECK_EQUAL(refused.status, 503);
  CAF_CHECK(contains(refused.body, "of which 64 are still ending"));
  CAF_CHECK(refused.header("mcp-session-id").empty());
  // Once they have ended there is room again.
  sleeper.kill_all();
  CAF_CHECK(wait_for([&] { return l.post(l.request("ping"), l.open_session()).status == 200; }));
}

CAF_TEST(over HTTP a cancelled call has its stream ended and the session still ends when idle) {
  // No answer comes for a cancelled call (MCP): its stream is ended, so it holds
  // neither the connection nor the session from ending.
  marked_sleep sleeper(dir.path);
  extra = {"--session-idle-secs", "3"}; // the test's next request comes sooner, on a loaded machine too
  auto l = serve_http();
  auto sid = l.open_session();
  spawn_sleeper(l, sid, sleeper);
  auto call = l.request("tools/call", tool_call("shell", shell("sleep 300; echo never")));
  int fd = http_send(l.port, l.head("POST", sid), call.dump());
  CAF_REQUIRE(fd >= 0);
  CAF_REQUIRE(http_head_came(fd)); // its stream is open
  auto cancel = Json::object().set("jsonrpc", "2.0").set("method", "notifications/cancelled").set(
    "params", Json::object().set("requestId", *call.find("id")).set("reason", "test"));
  CAF_CHECK_EQUAL(l.post(cancel, sid).status, 202);
  auto rest = http_read(fd); // the stream: its end, without an answer
  CAF_CHECK_EQUAL(rest.status, 200);
  CAF_CHECK(rest.complete);
  CAF_CHECK(!contains(rest.body, R"("result")"));
  CAF_CHECK_EQUAL(sleeper.wait_none(), 0u); // the session ended when idle, with its handle
  CAF_CHECK_EQUAL(l.post(l.request("ping"), sid).status, 404);
}

CAF_TEST(ctrl-c during a call of a tool served over HTTP cancels it where it runs) {
  // The call's tool is no process of the caller's: its signal's shutdown waited out
  // the grace (a minute here) and the server ran the call on.
  marked_sleep sleeper(dir.path);
  auto l = serve_http();
  auto cws = dir.path / "caller";
  std::filesystem::create_directories(cws);
  dir.write("caller.toml", fmt::format("[runtime]\nabort_grace_secs = 60\n[mcp.servers.far]\n"
                                       "url = \"http://127.0.0.1:{}/mcp\"\n"
                                       "headers = {{ Authorization = \"Bearer {}\" }}\nrun = \"unattended\"\n",
                                       l.port, l.token));
  auto args = Json::object().set("command", fmt::format("exec {} 300", sleeper.program.string()));
  McpClient caller({JP_CLI_BINARY, "--workspace", cws.string(), "--config", (dir.path / "caller.toml").string(), "call",
                    "far__shell", args.dump()},
                   (dir.path / "caller-state").string(), (dir.path / "caller.err").string());
  CAF_REQUIRE_EQUAL(sleeper.wait_alive(1), 1u);
  ::kill(caller.pid, SIGINT);
  CAF_CHECK_EQUAL(caller.wait_exit(), 128 + SIGINT);
  CAF_CHECK_EQUAL(sleeper.wait_none(), 0u);
  CAF_CHECK(contains(dir.read("caller.err"), "jp-actors: far__shell was interrupted (Ctrl-C)"));
}

/// The HTTP server alone (token `tok`) with a scripted session: initialize is
/// answered, and each tools/call goes to `on_call` with its id and the session's
/// write (a message, and the request it relates to). `l` reaches it; the session's id.
using SessionWrite = std::function<void(const std::string&, const std::string&)>;
std::string scripted_session(IoThread& io, std::unique_ptr<McpHttpServer>& server, Listener& l,
                             std::function<void(int64_t, const SessionWrite&)> on_call) {
  auto write = std::make_shared<SessionWrite>();
  auto opener = [write, on_call](SessionWrite w) {
    *write = std::move(w);
    McpSessionPort port;
    port.deliver = [write, on_call](const std::string& text) { // on the io thread, as `write`'s routing
      auto msg = Json::parse(text);
      auto* id = msg->find("id");
      auto method = msg->find("method")->as_string();
      if (method == "initialize")
        (*write)(mcp::response(*id, Json::object().set("protocolVersion", "2025-06-18")).dump(), "");
      if (method == "tools/call")
        on_call(id->as_int(), *write);
    };
    port.end = [](std::function<void()> done) { done(); };
    return port;
  };
  auto listening = McpHttpServer::listen(io, "127.0.0.1", 0, "tok", opener);
  if (!listening)
    CAF_FAIL("the server did not listen: " << listening.error());
  server = std::move(*listening);
  l.port = server->port();
  l.token = "tok";
  return l.post(l.request("initialize", Json::object().set("protocolVersion", "2025-06-18"))).header("mcp-session-id");
}

CAF_TEST(over HTTP a question for a call goes on that call s stream though a later one is open) {
  // When call 3 comes the session asks a question for call 2 (as a permission asked
  // for call 2 can come after call 3's stream opened), then answers both.
  IoThread io;
  std::unique_ptr<McpHttpServer> server;
  Listener l;
  auto sid = scripted_session(io, server, l, [](int64_t id, const SessionWrite& write) {
    if (id == 3) {
      write(mcp::request(100, "elicitation/create", Json::object()).dump(), "2");
      write(mcp::response(Json(2), Json::object()).dump(), "");
      write(mcp::response(Json(3), Json::object()).dump(), "");
    }
  });
  CAF_REQUIRE(!sid.empty());
  int second = http_send(l.port, l.head("POST", sid), l.request("tools/call", Json::object()).dump());
  CAF_REQUIRE(second >= 0);
  CAF_REQUIRE(http_head_came(second)); // call 2's stream is open
  auto third = l.post(l.request("tools/call", Json::object()), sid).events();
  auto on_second = http_read(second).events();
  CAF_REQUIRE_EQUAL(on_second.size(), 2u);
  CAF_CHECK_EQUAL(on_second[0].find("method")->as_string(), "elicitation/create");
  CAF_CHECK_EQUAL(on_second[1].find("id")->as_int(), 2);
  CAF_REQUIRE_EQUAL(third.size(), 1u);
  CAF_CHECK_EQUAL(third[0].find("id")->as_int(), 3);
}

CAF_TEST(over HTTP progress and logs of a call whose client left reach nobody) {
  // They went on the newest stream open, another call's, whose client took them for
  // progress of a token it never gave. When call 3 comes the session reports for
  // call 2 (its client gone), then answers 3.
  IoThread io;
  std::unique_ptr<McpHttpServer> server;
  Listener l;
  auto sid = scripted_session(io, server, l, [](int64_t id, const SessionWrite& write) {
    if (id == 3) {
      write(mcp::notification("notifications/progress", Json::object().set("progressToken", "two").set("progress", 1))
              .dump(),
            "2");
      write(mcp::notification("notifications/message", Json::object().set("level", "info").set("data", "for two"))
              .dump(),
            "2");
      write(mcp::response(Json(3), Json::object()).dump(), "");
    }
  });
  CAF_REQUIRE(!sid.empty());
  auto params = Json::object().set("_meta", Json::object().set("progressToken", "two"));
  int second = http_send(l.port, l.head("POST", sid), l.request("tools/call", params).dump());
  CAF_REQUIRE(second >= 0);
  CAF_REQUIRE(http_head_came(second)); // call 2's stream is open
  ::close(second);                     // and its client gone
  auto third = l.post(l.request("tools/call", Json::object()), sid).events();
  CAF_REQUIRE_EQUAL(third.size(), 1u);
  CAF_CHECK_EQUAL(third[0].find("id")->as_int(), 3);
}

CAF_TEST(over HTTP a client that leaves the stream of a call lets the session end when idle) {
  // It closes the connection; or it sends the start of a next request (pipelined)
  // and then closes its end: the server reads what came and then finds the end.
  for (bool pipelined : {false, true}) {
    marked_sleep sleeper(dir.path);
    extra = {"--session-idle-secs", "3"}; // as above; serve_http adds --listen to it
    auto l = serve_http();
    auto sid = l.open_session();
    spawn_sleeper(l, sid, sleeper);
    // With a progress token: its progress every second reaches nobody once the client
    // is gone, and keeps nothing alive.
    auto params = tool_call("shell", shell("sleep 300"));
    params.set("_meta", Json::object().set("progressToken", "tok"));
    int fd = http_send(l.port, l.head("POST", sid), l.request("tools/call", params).dump());
    CAF_REQUIRE(fd >= 0);
    CAF_REQUIRE_EQUAL(http_read(fd, true).status, 200); // its stream is open
    if (pipelined) {
      const char next[] = "POST /mcp HTTP/1.1\r\n";
      CAF_REQUIRE_EQUAL(::send(fd, next, sizeof next - 1, MSG_NOSIGNAL), static_cast<ssize_t>(sizeof next - 1));
      ::shutdown(fd, SHUT_WR);
    } else {
      ::close(fd); // the client goes, without a cancel or a DELETE
    }
    CAF_CHECK_EQUAL(sleeper.wait_none(), 0u);
    CAF_CHECK_EQUAL(l.post(l.request("ping"), sid).status, 404);
    if (pipelined)
      ::close(fd);
  }
}

CAF_TEST(over HTTP connections that never show the token do not keep a client with it out) {
  // Each sends a byte and no more, as a local user without the token could, more
  // of them than the server takes connections.
  auto l = serve_http();
  std::vector<int> idle;
  for (int i = 0; i < 300; ++i) {
    int fd = http_connect(l.port);
    CAF_REQUIRE(fd >= 0);
    CAF_REQUIRE_EQUAL(::send(fd, "P", 1, MSG_NOSIGNAL), 1);
    idle.push_back(fd);
  }
  auto sid = l.open_session(); // would be closed at once with every slot held
  CAF_CHECK(!sid.empty());
  for (int fd : idle)
    ::close(fd);
}

CAF_TEST(over HTTP a request without the token is refused before its body is read) {
  // Its body never comes: the answer does not wait for it.
  auto l = serve_http();
  auto head = l.head("POST", "");
  head.replace(head.find(l.token), l.token.size(), std::string(l.token.size(), 'x'));
  auto refused = http_read(http_send(l.port, head, "", 1000000));
  CAF_CHECK_EQUAL(refused.status, 401);
  CAF_CHECK(refused.complete);
  CAF_CHECK_EQUAL(refused.header("connection"), "close");
}

CAF_TEST(over HTTP this user s client on a v6 socket reaching the v4 address is served) {
  // Java's sockets are v6 ones by default: 127.0.0.1 is reached as ::ffff:127.0.0.1,
  // and their row is in the kernel's v6 table, not the v4 one the server reads first.
  // A kernel without IPv6 (ipv6.disable=1) has no such socket to test with.
  int fd = ::socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    CAF_MESSAGE("no IPv6 sockets on this kernel (" << std::strerror(errno) << "): nothing to test");
    return;
  }
  int v6only = 0; // as Java sets it, whatever net.ipv6.bindv6only says
  CAF_REQUIRE(::setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &v6only, sizeof v6only) == 0);
  auto l = serve_http();
  sockaddr_in6 to{};
  to.sin6_family = AF_INET6;
  to.sin6_port = htons(l.port);
  CAF_REQUIRE(::inet_pton(AF_INET6, "::ffff:127.0.0.1", &to.sin6_addr) == 1);
  CAF_REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof to) == 0);
  const std::string get = "GET /mcp HTTP/1.1\r\nHost: x\r\n\r\n";
  CAF_REQUIRE_EQUAL(::send(fd, get.data(), get.size(), MSG_NOSIGNAL), static_cast<ssize_t>(get.size()));
  auto r = http_read(fd); // closes it
  CAF_CHECK_EQUAL(r.status / 100, 4); // refused for want of the token, but answered
  CAF_CHECK(!contains(contents((dir.path / "mcp.err").string()), "refused a connection"));
}

CAF_TEST(over HTTP another user s connection is closed at its accept and this user s is served) {
  // The token keeps another user out; closed at once, its bytes never reach the parser.
  if (::geteuid() != 0) {
    CAF_MESSAGE("not root: no other user to connect as");
    return;
  }
  auto l = serve_http();
  // How many bytes of an answer a request without the token gets (a 401's, or none
  // from a connection closed at its accept). SIGPIPE ignored: the request may meet
  // the closed connection.
  auto answered_bytes = [&](const std::string& as) {
    return run_command(fmt::format("{} timeout 20 bash -c 'trap \"\" PIPE; exec 3<>/dev/tcp/127.0.0.1/{}; "
                                   "printf \"GET /mcp HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n\" >&3 2>/dev/null; "
                                   "head -c 1 <&3 2>/dev/null | wc -c'",
                                   as, l.port))
      .stdout_text;
  };
  CAF_CHECK_EQUAL(answered_bytes(""), "1\n");
  CAF_CHECK_EQUAL(answered_bytes("setpriv --reuid=65534 --regid=65534 --clear-groups"), "0\n");
  CAF_CHECK(contains(contents((dir.path / "mcp.err").string()),
                     "jp-actors mcp: refused a connection from 127.0.0.1 (uid 65534): `jp-actors mcp --listen` on "
                     "loopback serves this user's clients only"));
  CAF_CHECK(!l.open_session().empty()); // and it serves on
}

CAF_TEST(over HTTP a message longer than 4 MiB is refused by its Content-Length) {
  auto l = serve_http();
  auto sid = l.open_session();
  auto big = http_read(http_send(l.port, l.head("POST", sid), "", 5 << 20));
  CAF_CHECK_EQUAL(big.status, 413);
  CAF_CHECK(contains(big.body, "at most 4 MiB"));
}

CAF_TEST(mcp listen on an address in use says so) {
  auto l = serve_http();
  auto r = cli_in(ws, fmt::format("mcp --listen {}", l.port));
  CAF_CHECK_EQUAL(r.status, 1);
  CAF_CHECK(contains(r.out, fmt::format("cannot serve MCP on 127.0.0.1:{}: the address is in use: another program "
                                        "listens there",
                                        l.port)));
}

CAF_TEST(mcp listen on localhost names the address it listens on) {
  // It listens on 127.0.0.1 only: a client resolving localhost to ::1 first would
  // find nobody at a localhost URL.
  auto l = serve_http("localhost:0"); // fails unless it says http://127.0.0.1:PORT/mcp
  CAF_CHECK(l.port != 0);
  auto sid = l.open_session();
  CAF_CHECK(!sid.empty());
}

CAF_TEST(mcp listen refuses an address off loopback) {
  // An address of no interface here (TEST-NET-1): were the refusal gone, it could
  // not listen anywhere either, and the command would not be left serving.
  auto r = cli_in(ws, "mcp --listen 192.0.2.1:0");
  CAF_CHECK_EQUAL(r.status, 1);
  CAF_CHECK(contains(r.out, "only a loopback address is allowed"));
  // An IPv6 address is written as a node writes it, in brackets.
  auto any6 = cli_in(ws, "mcp --listen '[::]:0'");
  CAF_CHECK_EQUAL(any6.status, 1);
  CAF_CHECK(contains(any6.out, "cannot serve MCP on [::]:0: only a loopback address"));
  // An address without its host is told so, not that it has no port.
  auto hostless = cli_in(ws, "mcp --listen :0");
  CAF_CHECK_EQUAL(hostless.status, 1);
  CAF_CHECK(contains(hostless.out, "got \":0\": no host before the port"));
}

CAF_TEST(mcp listen ended by a signal while an MCP server still starts kills its process) {
  // Served on HTTP until a signal: its shutdown ends the server being started too
  // (it never answers initialize; its start would end only after 600 s).
  marked_sleep sleeper(dir.path);
  std::ofstream(dir.path / "config.toml", std::ios::app)
    << fmt::format("[mcp.servers.hangs]\ncommand = [\"{}\", \"600\"]\nstart_timeout_secs = 600\n",
                   sleeper.program.string());
  auto l = serve_http();
  CAF_REQUIRE_EQUAL(sleeper.wait_alive(1), 1u);
  CAF_REQUIRE_EQUAL(::kill(l.process->pid, SIGTERM), 0);
  CAF_CHECK_EQUAL(sleeper.wait_none(), 0u);
  CAF_CHECK_EQUAL(l.process->wait_exit(), 128 + SIGTERM);
  // Its start was stopped: the server is not said to have failed of the TERM
  // jp-actors sent it.
  auto said = dir.read("mcp.err");
  CAF_CHECK(!contains(said, "MCP server `hangs`"));
  CAF_CHECK(!contains(said, "SIGTERM"));
}

CAF_TEST(mcp listen that fails while an MCP server still starts ends without waiting for the start) {
  auto l = serve_http(); // holds the port
  marked_sleep sleeper(dir.path);
  dir.write("hangs.toml", fmt::format("[mcp.servers.hangs]\ncommand = [\"{}\", \"600\"]\n"
                                      "start_timeout_secs = 600\n",
                                      sleeper.program.string()));
  auto config = dir.path / "hangs.toml";
  // Without the start's stop this waits out the 600 s (the test's own timeout).
  auto r = cli_in(ws, fmt::format("--config {} mcp --listen {}", config.string(), l.port));
  CAF_CHECK_EQUAL(r.status, 1);
  CAF_CHECK(contains(r.out, "the address is in use"));
  CAF_CHECK_EQUAL(sleeper.wait_none(), 0u); // killed with its start, not left behind
}

CAF_TEST_FIXTURE_SCOPE_END()
