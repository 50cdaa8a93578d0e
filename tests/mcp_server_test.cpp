// `jp-actors mcp` end to end (DESIGN.md "MCP"): a real process spoken to over stdio by
// the tests' own MCP client (tests/mcp_client.hpp). The handshake, tools/list in the
// flat dialect, calls through the same registry (a spawn and a later await meet),
// progress, cancellation, permissions, and the session's end leaving nothing running.
#define CAF_SUITE mcp_server
#include <caf/test/unit_test.hpp>

#include <fmt/format.h>

#include "cli_run.hpp"
#include "marked_processes.hpp"
#include "mcp_client.hpp"
#include "temp_dir.hpp"
#include "contains.hpp"

using namespace jp;
using namespace jp::testing;

namespace {

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
)");
  }

  std::unique_ptr<McpClient> start() {
    std::vector<std::string> argv{JP_CLI_BINARY, "--workspace", ws, "--config", (dir.path / "config.toml").string(),
                                  "mcp"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return std::make_unique<McpClient>(argv, state, (dir.path / "mcp.err").string());
  }

  /// A started and initialized session; `capabilities` the client's.
  std::unique_ptr<McpClient> session(Json capabilities = Json::object()) {
    auto c = start();
    auto init = c->call("initialize", Json::object()
                                        .set("protocolVersion", "2025-06-18")
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
  for (auto [asked, answered] : {std::pair{"2024-11-05", "2024-11-05"}, std::pair{"2025-06-18", "2025-06-18"},
                                 std::pair{"1999-01-01", "2025-06-18"}}) {
    auto init = c->call("initialize", Json::object().set("protocolVersion", asked));
    CAF_REQUIRE(init.find("result"));
    auto& r = *init.find("result");
    CAF_CHECK_EQUAL(r.find("protocolVersion")->as_string(), answered);
    CAF_CHECK_EQUAL(r.find("serverInfo")->find("name")->as_string(), "jp-actors");
    CAF_CHECK(r.find("capabilities")->find("tools") != nullptr);
    CAF_CHECK(contains(r.find("instructions")->as_string(), "await"));
  }
  auto list = c->call("tools/list");
  CAF_REQUIRE(list.find("result"));
  std::map<std::string, Json> tools;
  for (auto& t : list.find("result")->find("tools")->as_array())
    tools[t.find("name")->as_string()] = t;
  CAF_REQUIRE(tools.count("shell"));
  CAF_REQUIRE(tools.count("await"));
  CAF_REQUIRE(tools.count("asky"));
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
  c->close_input();
  CAF_CHECK_EQUAL(c->wait_exit(), 0);
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

CAF_TEST(a call with a progress token gets progress notifications while it runs) {
  auto c = session();
  auto params = tool_call("shell", shell("sleep 1.5; echo slept", Json::object().set("action", "spawn").set("id", "p").set("wait_ms", 60000)));
  params.set("_meta", Json::object().set("progressToken", "tok"));
  auto done = c->call("tools/call", std::move(params));
  CAF_CHECK(contains(text_of(done), "slept"));
  size_t progress = 0;
  for (auto& m : c->seen)
    if (m.find("method") && m.find("method")->as_string() == "notifications/progress") {
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

CAF_TEST(a tool that would ask is refused naming the key unless allowed) {
  auto c = session();
  auto refused = c->call("tools/call", tool_call("asky", Json::object()));
  CAF_CHECK(is_error(refused));
  CAF_CHECK(contains(text_of(refused), "conversation.tools.asky.run = \"unattended\""));
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

/// Answers the next elicitation/create with `result`; the question it asked.
std::string answer_elicitation(McpClient& c, Json result) {
  for (auto m = c.next(); !m.is_null(); m = c.next()) {
    auto* method = m.find("method");
    if (!method || method->as_string() != "elicitation/create")
      continue;
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

CAF_TEST_FIXTURE_SCOPE_END()
