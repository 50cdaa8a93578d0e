// The MCP client over Streamable HTTP against a scripted server (fake_provider_server.hpp
// answers each POST with the next scripted response and keeps what it was sent): a
// server that forgets its session (HTTP 404) gets a new one, and the request again;
// one that changes its tools has them listed again, also when it says so on its own
// GET stream, between requests. And the legacy HTTP+SSE transport (transport = "sse"):
// every answer on the GET stream, POSTs where its endpoint event says, on its origin.
#define CAF_SUITE mcp_client_http
#include <caf/test/unit_test.hpp>

#include <chrono>
#include <cstdio>
#include <future>
#include <thread>
#include <unistd.h>

#include "fake_provider_server.hpp"
#include "runtime/mcp/mcp_client.hpp"
#include "runtime/mcp/mcp_url.hpp"
#include "runtime/process/io_thread.hpp"
#include "contains.hpp"

using namespace jp;
using namespace jp::testing;

namespace {

/// The answer to request `id`, as an event stream; `session`: the session it starts.
FakeResponse answer(int64_t id, Json result, const std::string& session = "") {
  FakeResponse r;
  r.body = "event: message\ndata: " +
           Json::object().set("jsonrpc", "2.0").set("id", id).set("result", std::move(result)).dump() + "\n\n";
  if (!session.empty())
    r.headers.push_back("Mcp-Session-Id: " + session);
  return r;
}

FakeResponse initialized(int64_t id, const std::string& session, const std::string& version = "2025-06-18") {
  return answer(id,
                Json::object()
                  .set("protocolVersion", version)
                  .set("capabilities", Json::object().set("tools", Json::object()))
                  .set("serverInfo", Json::object().set("name", "scripted").set("version", "1")),
                session);
}

FakeResponse accepted() { // a notification's answer
  FakeResponse r;
  r.status = 202;
  return r;
}

/// A tools/call result saying `said`.
Json text_result(const std::string& said) {
  return Json::object().set("content", Json::array().push(Json::object().set("type", "text").set("text", said)));
}

FakeResponse text(int64_t id, const std::string& said) {
  return answer(id, text_result(said));
}

FakeResponse session_not_found() {
  FakeResponse r;
  r.status = 404;
  r.body = R"({"jsonrpc":"2.0","id":null,"error":{"code":-32001,"message":"Session not found"}})";
  return r;
}

/// A server's start: initialize (session s1), notifications/initialized, tools/list
/// with one tool. Requests 1 and 2.
void script_start(FakeProviderServer& fake) {
  fake.push(initialized(1, "s1"));
  fake.push(accepted());
  fake.push(answer(2, Json::object().set(
                        "tools", Json::array().push(Json::object()
                                                      .set("name", "echo")
                                                      .set("inputSchema", Json::object().set("type", "object"))))));
}

FakeResponse redirect(const std::string& location) { // as Starlette answers a POST to /mcp
  FakeResponse r;
  r.status = 307;
  r.headers.push_back("Location: " + location);
  return r;
}

McpServerConfig server_at(FakeProviderServer& fake) {
  McpServerConfig server;
  server.name = "web";
  server.url = fake.base_url() + "/mcp";
  server.timeout_secs = 60; // against a hang only
  return server;
}

/// The fake as a legacy HTTP+SSE server: its event stream at /sse.
McpServerConfig legacy_server_at(FakeProviderServer& fake) {
  auto server = server_at(fake);
  server.url = fake.base_url() + "/sse";
  server.transport = "sse";
  return server;
}

/// Why a client of `server` did not start; "(it started)" when it did.
std::string start_error(const McpServerConfig& server) {
  IoThread io;
  auto client = jp::McpClient::start(io, server, ".");
  return client ? "(it started)" : std::string(client.error());
}

ToolState call(jp::McpClient& client) {
  std::promise<ToolState> done;
  auto state = done.get_future();
  client.call("echo", Json::object(), {}, [&done](ToolState s) { done.set_value(std::move(s)); });
  return state.get();
}

std::string method_of(const FakeProviderServer::Seen& seen) {
  auto body = Json::parse(seen.body);
  auto* m = body && body->is_object() ? body->find("method") : nullptr;
  return m && m->is_string() ? m->as_string() : "";
}

std::string header(const FakeProviderServer::Seen& seen, const std::string& name) {
  auto it = seen.headers.find(name);
  return it == seen.headers.end() ? "(none)" : it->second;
}

/// `message` as an event of a stream.
std::string event(const Json& message) {
  return "event: message\ndata: " + message.dump() + "\n\n";
}

Json notification(const std::string& method, Json params = Json::object()) {
  return Json::object().set("jsonrpc", "2.0").set("method", method).set("params", std::move(params));
}

Json tool_list(const std::string& name) {
  return Json::object().set(
    "tools", Json::array().push(Json::object().set("name", name).set("inputSchema", Json::object().set("type", "object"))));
}

/// A GET answered with `events`, held open.
FakeResponse held(const std::shared_ptr<FakeEventStream>& events, std::string first = "") {
  FakeResponse r;
  r.body = std::move(first);
  r.stream = events;
  return r;
}

/// A GET refused with 405 (a server without the stream); `asked` kept when it is.
FakeResponse no_stream(std::promise<void>& asked) {
  FakeResponse r;
  r.status = 405;
  r.before = [&asked] { asked.set_value(); };
  return r;
}

/// The legacy transport's answer to a POST: 202, the answer (`said`, each an event)
/// sent on the stream once the POST is in.
FakeResponse on_stream(const std::shared_ptr<FakeEventStream>& events, std::vector<Json> said) {
  FakeResponse r;
  r.status = 202;
  r.body = "Accepted";
  r.before = [events, said] {
    for (auto& m : said)
      events->send(event(m));
  };
  return r;
}

Json result_of(int64_t id, Json result) {
  return Json::object().set("jsonrpc", "2.0").set("id", id).set("result", std::move(result));
}

/// What the process writes to stderr while this lives goes to a file instead, for
/// the test to read. At its end stderr is back and what was caught is written there
/// too, a failed check's report among it.
class StderrCaught {
public:
  StderrCaught() : file_(std::tmpfile()), saved_(::dup(STDERR_FILENO)) {
    std::fflush(stderr);
    ::dup2(::fileno(file_), STDERR_FILENO);
  }
  ~StderrCaught() {
    std::fflush(stderr);
    ::dup2(saved_, STDERR_FILENO);
    ::close(saved_);
    auto text = said();
    std::fwrite(text.data(), 1, text.size(), stderr);
    std::fclose(file_);
  }
  StderrCaught(const StderrCaught&) = delete;
  StderrCaught& operator=(const StderrCaught&) = delete;

  /// What was written so far (read at offsets: the writes' own offset stays).
  std::string said() const {
    std::string out;
    char buf[4096];
    ssize_t n;
    while ((n = ::pread(::fileno(file_), buf, sizeof buf, static_cast<off_t>(out.size()))) > 0)
      out.append(buf, static_cast<size_t>(n));
    return out;
  }

  /// Waits until `part` was written (what a thread of the client's says, unordered
  /// with anything the fake server sees), for 30 s at most.
  bool wait_for(const std::string& part) const {
    for (int i = 0; i < 3000 && !contains(said(), part); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    return contains(said(), part);
  }

private:
  std::FILE* file_;
  int saved_;
};

} // namespace

CAF_TEST(a list change on a call s event stream has the tools listed again before the call is answered) {
  FakeProviderServer fake;
  script_start(fake);
  // Request 3, the call: its stream says the tools changed, then answers.
  auto changed = text(3, "changed");
  changed.body = "event: message\ndata: " +
                 Json::object().set("jsonrpc", "2.0").set("method", "notifications/tools/list_changed").dump() +
                 "\n\n" + changed.body;
  fake.push(changed);
  fake.push(answer(4, Json::object().set(
                        "tools", Json::array().push(Json::object()
                                                      .set("name", "shout")
                                                      .set("inputSchema", Json::object().set("type", "object"))))));
  IoThread io;
  auto client = jp::McpClient::start(io, server_at(fake), ".");
  CAF_REQUIRE(client);
  auto before = (*client)->tools();
  CAF_REQUIRE_EQUAL(before->size(), 1u);
  CAF_CHECK_EQUAL(before->front().name, "echo");
  auto r = call(**client);
  CAF_CHECK_EQUAL(r.content, "changed");
  // Answered once the new list was in: tools/list went out after the call.
  auto after = (*client)->tools();
  CAF_REQUIRE_EQUAL(after->size(), 1u);
  CAF_CHECK_EQUAL(after->front().name, "shout");
  auto seen = fake.requests();
  CAF_REQUIRE_EQUAL(seen.size(), 5u);
  CAF_CHECK_EQUAL(method_of(seen[3]), "tools/call");
  CAF_CHECK_EQUAL(method_of(seen[4]), "tools/list");
  CAF_CHECK_EQUAL(header(seen[4], "mcp-session-id"), "s1");
}

CAF_TEST(a call s event stream may hold more than a body s bound and an answer larger than a default event) {
  // A POST's stream took events of the parser's default bound (8 MiB) and 64 MiB in
  // all: an answer as large as a JSON body's or a stdio line's failed, said to be
  // worth trying again, and so did a long call whose notifications added up.
  FakeProviderServer fake;
  script_start(fake);
  std::string filler(8u << 20, 'f');
  std::string big(9u << 20, 'x');
  auto answered = text(3, big); // 7 × 8 MiB of notifications before it: 65 MiB in all
  std::string before;
  for (int i = 0; i < 7; ++i)
    before += event(notification("notifications/filler", Json::object().set("data", filler)));
  answered.body = before + answered.body;
  fake.push(answered);
  IoThread io;
  auto client = jp::McpClient::start(io, server_at(fake), ".");
  CAF_REQUIRE(client);
  auto large = call(**client);
  CAF_CHECK_EQUAL(large.error.message, "");
  CAF_CHECK_EQUAL(large.content.size(), big.size());
}

CAF_TEST(a server that forgot the session is given a new one and the call is sent again in it) {
  FakeProviderServer fake;
  script_start(fake);
  fake.push(text(3, "first"));
  fake.push(session_not_found()); // request 4: the server forgot session s1
  fake.push(initialized(5, "s2"));
  fake.push(accepted());
  fake.push(text(4, "second"));
  fake.push(text(6, "third"));
  std::vector<FakeProviderServer::Seen> seen;
  {
    IoThread io;
    auto client = jp::McpClient::start(io, server_at(fake), ".");
    CAF_REQUIRE(client);
    auto first = call(**client);
    CAF_CHECK(first.ok);
    CAF_CHECK_EQUAL(first.content, "first");
    auto second = call(**client);
    CAF_CHECK(second.ok);
    CAF_CHECK_EQUAL(second.content, "second");
    CAF_CHECK_EQUAL(second.error.message, "");
    auto third = call(**client);
    CAF_CHECK_EQUAL(third.content, "third");
    seen = fake.requests();
  }
  CAF_REQUIRE_GREATER_OR_EQUAL(seen.size(), 9u);
  CAF_CHECK_EQUAL(method_of(seen[4]), "tools/call");
  CAF_CHECK_EQUAL(header(seen[4], "mcp-session-id"), "s1");
  // A new initialize, without the dead session's id or version.
  CAF_CHECK_EQUAL(method_of(seen[5]), "initialize");
  CAF_CHECK_EQUAL(header(seen[5], "mcp-session-id"), "(none)");
  CAF_CHECK_EQUAL(header(seen[5], "mcp-protocol-version"), "(none)");
  CAF_CHECK_EQUAL(method_of(seen[6]), "notifications/initialized");
  CAF_CHECK_EQUAL(header(seen[6], "mcp-session-id"), "s2");
  // The call again, and the next one, in the new session.
  for (size_t i : {7u, 8u}) {
    CAF_CHECK_EQUAL(method_of(seen[i]), "tools/call");
    CAF_CHECK_EQUAL(header(seen[i], "mcp-session-id"), "s2");
    CAF_CHECK_EQUAL(header(seen[i], "mcp-protocol-version"), "2025-06-18");
  }
}

CAF_TEST(a call the new session does not know either fails saying so) {
  FakeProviderServer fake;
  script_start(fake);
  fake.push(session_not_found()); // request 3
  fake.push(initialized(4, "s2"));
  fake.push(accepted());
  fake.push(session_not_found()); // request 3 again
  IoThread io;
  auto client = jp::McpClient::start(io, server_at(fake), ".");
  CAF_REQUIRE(client);
  auto r = call(**client);
  CAF_CHECK(!r.ok);
  CAF_CHECK(contains(r.error.message, "no longer knows the session jp-actors had with it (HTTP 404: Session not found)"));
  CAF_CHECK(contains(r.error.message, "nor the new session jp-actors started for this request"));
  CAF_CHECK(!r.error.transient);
  CAF_CHECK_EQUAL(fake.requests().size(), 7u); // once again only, in one new session
}

CAF_TEST(a call fails naming why when no new session can be started) {
  FakeProviderServer fake;
  script_start(fake);
  fake.push(session_not_found()); // request 3
  FakeResponse refused;
  refused.status = 403;
  refused.body = R"({"jsonrpc":"2.0","id":4,"error":{"code":-32000,"message":"no more sessions"}})";
  fake.push(refused);
  IoThread io;
  auto client = jp::McpClient::start(io, server_at(fake), ".");
  CAF_REQUIRE(client);
  auto r = call(**client);
  CAF_CHECK(!r.ok);
  CAF_CHECK(contains(r.error.message, "a new session could not be started"));
  CAF_CHECK(contains(r.error.message, "HTTP 403: no more sessions"));
}

CAF_TEST(a call answered with a page or an event stream of what is no JSON-RPC says what came) {
  FakeProviderServer fake;
  script_start(fake);
  FakeResponse page; // a proxy's login page, say
  page.content_type = "text/html";
  page.body = "<html><body>Sign in</body></html>";
  fake.push(page);
  FakeResponse odd;
  odd.body = "event: message\ndata: hello\n\n";
  fake.push(odd);
  IoThread io;
  auto client = jp::McpClient::start(io, server_at(fake), ".");
  CAF_REQUIRE(client);
  auto paged = call(**client);
  CAF_CHECK(!paged.ok);
  CAF_CHECK(contains(paged.error.message, "answered HTTP 200 with a body (Content-Type `text/html`) that is no "
                                          "JSON-RPC message (MCP's answer is application/json or an event stream "
                                          "of JSON-RPC messages): \"<html><body>Sign in</body></html>\""));
  auto streamed = call(**client);
  CAF_CHECK(!streamed.ok);
  CAF_CHECK(contains(streamed.error.message, "answered HTTP 200 with an event stream holding data that is no "
                                             "JSON-RPC message"));
  CAF_CHECK(contains(streamed.error.message, R"(: "hello")"));
}

CAF_TEST(a url server answering a protocol version jp-actors does not speak does not start) {
  FakeProviderServer fake;
  fake.push(initialized(1, "s1", "1999-01-01"));
  std::vector<FakeProviderServer::Seen> seen;
  {
    IoThread io;
    auto client = jp::McpClient::start(io, server_at(fake), ".");
    CAF_REQUIRE(!client);
    CAF_CHECK(contains(client.error(), "MCP server `web` answered initialize with protocol version 1999-01-01, "
                                       "which jp-actors does not speak (it speaks 2025-06-18, 2025-03-26, "
                                       "2024-11-05)"));
    seen = fake.requests();
  }
  // Nothing went with the version it answered (its session's end neither).
  for (auto& r : seen)
    CAF_CHECK_EQUAL(header(r, "mcp-protocol-version"), "(none)");
}

CAF_TEST(a server mounted at mcp slash is followed there on its origin and asked there from then on) {
  // Starlette answers a POST to /mcp of an app mounted at /mcp/ with a 307.
  FakeProviderServer fake;
  fake.push(redirect("/mcp/"));
  script_start(fake);
  fake.push(text(3, "there"));
  std::vector<FakeProviderServer::Seen> seen;
  {
    IoThread io;
    auto client = jp::McpClient::start(io, server_at(fake), ".");
    CAF_REQUIRE(client);
    auto r = call(**client);
    CAF_CHECK_EQUAL(r.content, "there");
    seen = fake.requests();
  }
  CAF_REQUIRE_GREATER_OR_EQUAL(seen.size(), 5u);
  CAF_CHECK_EQUAL(seen[0].path, "/mcp");
  CAF_CHECK_EQUAL(method_of(seen[1]), "initialize"); // the same POST, where it was sent
  for (size_t i = 1; i < seen.size(); ++i)
    CAF_CHECK_EQUAL(seen[i].path, "/mcp/");
}

CAF_TEST(a redirect to another origin is not followed and says where it pointed) {
  // Another host would be handed the headers, a token among them.
  FakeProviderServer fake;
  fake.push(redirect("http://127.0.0.2:9/mcp"));
  IoThread io;
  auto client = jp::McpClient::start(io, server_at(fake), ".");
  CAF_REQUIRE(!client);
  CAF_CHECK(contains(client.error(), "redirected the request (HTTP 307) to `http://127.0.0.2:9/mcp`, which jp-actors "
                                     "follows only to the same scheme, host and port with 307 or 308"));
  CAF_CHECK_EQUAL(fake.requests().size(), 1u);
}

CAF_TEST(a redirect loop on one origin is told as a loop) {
  FakeProviderServer fake;
  for (int i = 0; i < 3; ++i) {
    fake.push(redirect("/a"));
    fake.push(redirect("/mcp"));
  }
  IoThread io;
  auto client = jp::McpClient::start(io, server_at(fake), ".");
  CAF_REQUIRE(!client);
  CAF_CHECK(contains(client.error(), "redirected the request 6 times over (HTTP 307, last to `/mcp`): a loop"));
  CAF_CHECK_EQUAL(fake.requests().size(), 6u);
}

CAF_TEST(a header value takes a variable of the environment and an unset one is named) {
  ::setenv("JP_TEST_MCP_TOKEN", "tok-123", 1);
  FakeProviderServer fake;
  script_start(fake);
  auto server = server_at(fake);
  server.headers["Authorization"] = "Bearer ${JP_TEST_MCP_TOKEN}";
  {
    IoThread io;
    auto client = jp::McpClient::start(io, server, ".");
    CAF_REQUIRE(client);
  }
  auto seen = fake.requests();
  CAF_REQUIRE(!seen.empty());
  CAF_CHECK_EQUAL(header(seen[0], "authorization"), "Bearer tok-123");
  ::unsetenv("JP_TEST_MCP_TOKEN");
  IoThread io;
  auto unset = jp::McpClient::start(io, server, ".");
  CAF_REQUIRE(!unset);
  CAF_CHECK_EQUAL(unset.error(), "MCP server `web`: headers.Authorization names ${JP_TEST_MCP_TOKEN}, which is not "
                                 "set in jp-actors' environment: export it, or write the value itself");
  CAF_CHECK_EQUAL(fake.requests().size(), seen.size()); // nothing sent without it
  // A value is one line: a variable holding a line break would add headers of its own.
  ::setenv("JP_TEST_MCP_TOKEN", "tok\r\nX-Injected: 1", 1);
  auto broken = jp::McpClient::start(io, server, ".");
  ::unsetenv("JP_TEST_MCP_TOKEN");
  CAF_REQUIRE(!broken);
  CAF_CHECK(contains(broken.error(), "holds a line break: a header value is one line"));
  CAF_CHECK_EQUAL(fake.requests().size(), seen.size());
}

CAF_TEST(a server that wants OAuth is named with what will reach it) {
  FakeProviderServer fake;
  FakeResponse unauthorized;
  unauthorized.status = 401;
  unauthorized.headers.push_back(R"(WWW-Authenticate: Bearer resource_metadata="https://example.com/.well-known/oauth-protected-resource")");
  unauthorized.body = R"({"error":"invalid_token"})";
  fake.push(unauthorized);
  IoThread io;
  auto client = jp::McpClient::start(io, server_at(fake), ".");
  CAF_REQUIRE(!client);
  CAF_CHECK(contains(client.error(), "wants authorization (HTTP 401: "));
  CAF_CHECK(contains(client.error(), " by OAuth (https://example.com/.well-known/oauth-protected-resource); "
                                     "jp-actors does not do MCP's OAuth: give a token in its headers"));
  CAF_CHECK(contains(client.error(), R"(command = ["npx", "mcp-remote", ")" + server_at(fake).url + R"("])"));
  // A token the config sends and the server refuses is said to be refused.
  fake.push(unauthorized);
  auto with_token = server_at(fake);
  with_token.headers["Authorization"] = "Bearer expired";
  auto refused = jp::McpClient::start(io, with_token, ".");
  CAF_REQUIRE(!refused);
  CAF_CHECK(contains(refused.error(), "refused the Authorization header of its config (a token wrong or expired?) "
                                      "(HTTP 401: "));
}

CAF_TEST(a list change on the server s GET stream is followed between requests and the stream opened again) {
  FakeProviderServer fake;
  script_start(fake);
  auto events = std::make_shared<FakeEventStream>();
  fake.push_get(held(events));
  std::promise<void> reopened;
  fake.push_get(no_stream(reopened)); // the second GET: the server has none now
  std::promise<void> relisting;
  auto list = answer(3, tool_list("shout"));
  list.before = [&relisting] { relisting.set_value(); };
  fake.push(list);
  fake.push(text(4, "after"));
  std::vector<FakeProviderServer::Seen> gets;
  {
    IoThread io;
    auto client = jp::McpClient::start(io, server_at(fake), ".");
    CAF_REQUIRE(client);
    events->wait_open(); // after initialize: notifications/initialized was answered
    CAF_CHECK_EQUAL((*client)->tools()->front().name, "echo");
    // No request is out: the server says so on its own stream.
    events->send(event(notification("notifications/tools/list_changed")));
    relisting.get_future().wait(); // tools/list is out: the next request is answered with its list
    auto r = call(**client);
    CAF_CHECK_EQUAL(r.content, "after");
    auto after = (*client)->tools();
    CAF_REQUIRE_EQUAL(after->size(), 1u);
    CAF_CHECK_EQUAL(after->front().name, "shout");
    events->end(); // the server ends its stream: it is opened again
    reopened.get_future().wait();
    gets = fake.gets();
  }
  auto seen = fake.requests();
  CAF_REQUIRE_GREATER_OR_EQUAL(seen.size(), 5u);
  CAF_CHECK_EQUAL(method_of(seen[2]), "tools/list");
  CAF_CHECK_EQUAL(method_of(seen[3]), "tools/list");
  CAF_CHECK_EQUAL(method_of(seen[4]), "tools/call");
  CAF_REQUIRE_EQUAL(gets.size(), 2u);
  for (auto& g : gets) {
    CAF_CHECK_EQUAL(g.path, "/mcp");
    CAF_CHECK_EQUAL(header(g, "accept"), "text/event-stream");
    CAF_CHECK_EQUAL(header(g, "mcp-session-id"), "s1");
    CAF_CHECK_EQUAL(header(g, "mcp-protocol-version"), "2025-06-18");
  }
  CAF_CHECK_EQUAL(fake.gets().size(), 2u); // none after the 405
}

/// The GET stream refused once with `refusal`, a refusal that passes: it is asked
/// again, and a list change said on the second stream is followed. Hangs waiting for
/// the second GET when the client gave up after the first.
void check_stream_asked_again_after(FakeResponse refusal) {
  FakeProviderServer fake;
  script_start(fake);
  fake.push_get(std::move(refusal));
  auto events = std::make_shared<FakeEventStream>();
  fake.push_get(held(events));
  std::promise<void> relisting;
  auto list = answer(3, tool_list("shout"));
  list.before = [&relisting] { relisting.set_value(); };
  fake.push(list);
  fake.push(text(4, "after"));
  {
    IoThread io;
    auto client = jp::McpClient::start(io, server_at(fake), ".");
    CAF_REQUIRE(client);
    events->wait_open(); // the second GET
    events->send(event(notification("notifications/tools/list_changed")));
    relisting.get_future().wait(); // tools/list is out: the call is answered once it is in
    CAF_CHECK_EQUAL(call(**client).content, "after");
    CAF_CHECK_EQUAL((*client)->tools()->front().name, "shout");
  }
  CAF_CHECK_EQUAL(fake.gets().size(), 2u);
}

CAF_TEST(a GET stream answered 409 is asked again and a list change on it then followed) {
  // The SDKs answer 409 while a stream of the session is still open on their side (a
  // reconnect before they noticed the break): it passes, the stream is asked again.
  FakeResponse conflict;
  conflict.status = 409;
  conflict.body = "Conflict: Only one SSE stream is allowed per session";
  check_stream_asked_again_after(conflict);
}

CAF_TEST(a GET stream answered 503 is asked again and a list change on it then followed) {
  // A server (or the proxy before it) down for a moment: it is asked again later.
  FakeResponse down;
  down.status = 503;
  down.body = "Service Unavailable";
  check_stream_asked_again_after(down);
}

/// A GET stream answered `refusal` is given up: the client says so once on stderr
/// (`note`, waited for), asks for no second stream, and its requests go on.
void check_stream_given_up(FakeResponse refusal, const std::string& note) {
  FakeProviderServer fake;
  script_start(fake);
  fake.push_get(std::move(refusal));
  fake.push(text(3, "fine"));
  std::string said;
  {
    StderrCaught err; // (no CAF_REQUIRE while it lives: its abort would lose what it caught)
    {
      IoThread io;
      auto client = jp::McpClient::start(io, server_at(fake), ".");
      CAF_CHECK(client);
      if (!client)
        return;
      // Said once given up: the stream's thread asks nothing more.
      CAF_CHECK(err.wait_for(note));
      CAF_CHECK_EQUAL(call(**client).content, "fine");
    }
    said = err.said();
  }
  auto first = said.find("its event stream (GET)");
  CAF_CHECK(first != std::string::npos && said.find("its event stream (GET)", first + 1) == std::string::npos);
  CAF_CHECK_EQUAL(fake.gets().size(), 1u);
}

CAF_TEST(a GET stream refused with 403 is given up once said on stderr and requests go on) {
  // Asking again changes nothing: the stream is let go, and the user told so.
  FakeResponse forbidden;
  forbidden.status = 403;
  forbidden.body = "Forbidden";
  check_stream_given_up(forbidden, "its event stream (GET): it refused the stream (HTTP 403: Forbidden); what the "
                                   "server says outside of an answer (a list change, a log message) is not heard in "
                                   "this session\n");
}

CAF_TEST(a GET answered 2xx without a body or an event stream is given up) {
  // Before, only a body's first bytes told what it was: an empty answer read as a
  // stream the server ended, asked again for the session's life.
  FakeResponse empty;
  empty.status = 202; // application/json, no body
  check_stream_given_up(empty, "its event stream (GET): it refused the stream (HTTP 202 with Content-Type "
                               "`application/json`, not an event stream)");
}

CAF_TEST(the GET stream is closed with the client) {
  FakeProviderServer fake;
  script_start(fake);
  auto events = std::make_shared<FakeEventStream>();
  fake.push_get(held(events));
  {
    IoThread io;
    auto client = jp::McpClient::start(io, server_at(fake), ".");
    CAF_REQUIRE(client);
    events->wait_open();
    // A log message of the server's own, with no call out: heard, and nothing breaks.
    events->send(event(notification("notifications/message", Json::object().set("level", "info").set("data", "hi"))));
  }
  CAF_CHECK(events->client_left());
  CAF_CHECK_EQUAL(fake.gets().size(), 1u);
  auto seen = fake.requests();
  CAF_REQUIRE_EQUAL(seen.size(), 4u); // the start, then the session's end
  CAF_CHECK_EQUAL(seen[3].headers.count("mcp-session-id"), 1u);
  CAF_CHECK_EQUAL(seen[3].body, ""); // DELETE
}

CAF_TEST(a server that answers the GET with 405 is left alone and works) {
  FakeProviderServer fake;
  script_start(fake);
  std::promise<void> asked;
  fake.push_get(no_stream(asked));
  fake.push(text(3, "fine"));
  {
    IoThread io;
    auto client = jp::McpClient::start(io, server_at(fake), ".");
    CAF_REQUIRE(client);
    asked.get_future().wait();
    auto r = call(**client);
    CAF_CHECK(r.ok);
    CAF_CHECK_EQUAL(r.content, "fine");
  }
  CAF_CHECK_EQUAL(fake.gets().size(), 1u);
}

CAF_TEST(a legacy sse server is spoken to on its stream and where its endpoint event says) {
  FakeProviderServer fake;
  auto events = std::make_shared<FakeEventStream>();
  fake.push_get(held(events, "event: endpoint\ndata: /messages/?session_id=abc\n\n"));
  fake.push(on_stream(events, {result_of(1, Json::object()
                                              .set("protocolVersion", "2024-11-05")
                                              .set("capabilities", Json::object().set("tools", Json::object()))
                                              .set("serverInfo", Json::object().set("name", "old").set("version", "1")))}));
  fake.push(accepted()); // notifications/initialized
  fake.push(on_stream(events, {result_of(2, tool_list("echo"))}));
  fake.push(on_stream(events, {notification("notifications/progress", Json::object()
                                                                         .set("progressToken", 3)
                                                                         .set("progress", 1)
                                                                         .set("message", "halfway")),
                               result_of(3, text_result("done"))}));
  ::setenv("JP_TEST_SSE_TOKEN", "tok-sse", 1);
  auto server = legacy_server_at(fake);
  server.headers["Authorization"] = "Bearer ${JP_TEST_SSE_TOKEN}";
  std::vector<std::string> progress;
  ToolState state;
  {
    IoThread io;
    auto client = jp::McpClient::start(io, server, ".");
    ::unsetenv("JP_TEST_SSE_TOKEN");
    CAF_REQUIRE(client);
    auto tools = (*client)->tools();
    CAF_REQUIRE_EQUAL(tools->size(), 1u);
    CAF_CHECK_EQUAL(tools->front().name, "echo");
    std::promise<ToolState> done;
    (*client)->call("echo", Json::object(), [&progress](std::string p) { progress.push_back(std::move(p)); },
                    [&done](ToolState s) { done.set_value(std::move(s)); });
    state = done.get_future().get();
  }
  CAF_CHECK(events->client_left()); // the stream, the session, closed with the client
  CAF_CHECK(state.ok);
  CAF_CHECK_EQUAL(state.content, "done");
  CAF_REQUIRE_EQUAL(progress.size(), 1u);
  CAF_CHECK_EQUAL(progress[0], "halfway\n");
  auto gets = fake.gets();
  CAF_REQUIRE_EQUAL(gets.size(), 1u);
  CAF_CHECK_EQUAL(gets[0].path, "/sse");
  CAF_CHECK_EQUAL(header(gets[0], "accept"), "text/event-stream");
  CAF_CHECK_EQUAL(header(gets[0], "authorization"), "Bearer tok-sse");
  auto seen = fake.requests();
  CAF_REQUIRE_EQUAL(seen.size(), 4u); // no DELETE: the stream was the session
  std::vector<std::string> methods{"initialize", "notifications/initialized", "tools/list", "tools/call"};
  for (size_t i = 0; i < seen.size(); ++i) {
    CAF_CHECK_EQUAL(method_of(seen[i]), methods[i]);
    CAF_CHECK_EQUAL(seen[i].path, "/messages/");
    CAF_CHECK_EQUAL(seen[i].query, "session_id=abc");
    CAF_CHECK_EQUAL(header(seen[i], "authorization"), "Bearer tok-sse");
    CAF_CHECK_EQUAL(header(seen[i], "mcp-session-id"), "(none)");
  }
  auto init = Json::parse(seen[0].body);
  CAF_REQUIRE(init);
  CAF_CHECK_EQUAL(init->find("params")->find("protocolVersion")->as_string(), "2024-11-05");
}

/// A legacy server's answer to initialize `id`.
Json legacy_initialized(int64_t id) {
  return result_of(id, Json::object()
                         .set("protocolVersion", "2024-11-05")
                         .set("capabilities", Json::object())
                         .set("serverInfo", Json::object().set("name", "old").set("version", "1")));
}

/// A legacy server's session on `events`: its endpoint (`/messages/?session_id=` and
/// `session`), and its answers to initialize `initialize` and to initialized.
void script_legacy_session(FakeProviderServer& fake, const std::shared_ptr<FakeEventStream>& events,
                           const std::string& session, int64_t initialize) {
  fake.push_get(held(events, "event: endpoint\ndata: /messages/?session_id=" + session + "\n\n"));
  fake.push(on_stream(events, {legacy_initialized(initialize)}));
  fake.push(accepted());
}

/// A legacy server's start on `first`: session abc, initialize 1, initialized,
/// tools/list 2 (echo).
void script_legacy_start(FakeProviderServer& fake, const std::shared_ptr<FakeEventStream>& first) {
  script_legacy_session(fake, first, "abc", 1);
  fake.push(on_stream(first, {result_of(2, tool_list("echo"))}));
}

/// A legacy server's start on `first` (script_legacy_start), and its stream -- the
/// session -- ended as call 3 is taken.
void script_legacy_start_then_end(FakeProviderServer& fake, const std::shared_ptr<FakeEventStream>& first) {
  script_legacy_start(fake, first);
  auto ends = accepted();
  ends.before = [first] { first->end(); };
  fake.push(ends);
}

/// What a legacy server saw of a start (script_legacy_start) and a call that went
/// again in a new session, def: two streams, and the call sent in each session.
void check_call_again_in_session_def(FakeProviderServer& fake) {
  CAF_CHECK_EQUAL(fake.gets().size(), 2u);
  auto seen = fake.requests();
  CAF_REQUIRE_EQUAL(seen.size(), 7u);
  std::vector<std::string> methods{"initialize", "notifications/initialized", "tools/list", "tools/call",
                                   "initialize", "notifications/initialized", "tools/call"};
  for (size_t i = 0; i < methods.size(); ++i) {
    CAF_CHECK_EQUAL(method_of(seen[i]), methods[i]);
    CAF_CHECK_EQUAL(seen[i].query, i < 4 ? "session_id=abc" : "session_id=def");
  }
}

CAF_TEST(a legacy sse server that ends its stream fails the call out and the next starts a new session) {
  FakeProviderServer fake;
  auto first = std::make_shared<FakeEventStream>();
  auto second = std::make_shared<FakeEventStream>();
  script_legacy_start_then_end(fake, first);
  // Call 4 was not sent in the ended session: a new one, and it there.
  script_legacy_session(fake, second, "def", 5);
  fake.push(on_stream(second, {result_of(4, text_result("again"))}));
  auto server = legacy_server_at(fake);
  {
    IoThread io;
    auto client = jp::McpClient::start(io, server, ".");
    CAF_REQUIRE(client);
    auto cut = call(**client);
    CAF_CHECK(!cut.ok);
    CAF_CHECK(cut.error.transient);
    CAF_CHECK(contains(cut.error.message, "ended its event stream, which was the session"));
    auto again = call(**client);
    CAF_CHECK(again.ok);
    CAF_CHECK_EQUAL(again.content, "again");
  }
  CAF_CHECK(second->client_left());
  check_call_again_in_session_def(fake);
}

CAF_TEST(a legacy sse server down when a new session was started is reached again once it is back) {
  FakeProviderServer fake;
  auto first = std::make_shared<FakeEventStream>();
  auto third = std::make_shared<FakeEventStream>();
  script_legacy_start_then_end(fake, first);
  FakeResponse down; // call 4's new session: the server is down for it
  down.status = 503;
  down.body = "restarting";
  fake.push_get(down);
  // Call 6 starts another (initialize 7), and the server is back.
  script_legacy_session(fake, third, "ghi", 7);
  fake.push(on_stream(third, {result_of(6, text_result("back"))}));
  auto server = legacy_server_at(fake);
  {
    IoThread io;
    auto client = jp::McpClient::start(io, server, ".");
    CAF_REQUIRE(client);
    CAF_CHECK(!call(**client).ok); // the session ended under it
    auto during = call(**client);
    CAF_CHECK(!during.ok);
    CAF_CHECK(during.error.transient);
    CAF_CHECK(contains(during.error.message, "HTTP 503"));
    auto back = call(**client);
    CAF_CHECK_EQUAL(back.error.message, "");
    CAF_CHECK_EQUAL(back.content, "back");
  }
  CAF_CHECK(third->client_left());
  CAF_CHECK_EQUAL(fake.gets().size(), 3u);
}

CAF_TEST(a legacy sse server that answers a call with 404 has it sent again in a new session) {
  // The Python SDK answers 404 to a POST for a session it does not know (restarted):
  // the call was not run, and goes again, once, in a new session on a new stream.
  FakeProviderServer fake;
  auto first = std::make_shared<FakeEventStream>();
  auto second = std::make_shared<FakeEventStream>();
  script_legacy_start(fake, first);
  fake.push(session_not_found()); // call 3
  script_legacy_session(fake, second, "def", 4);
  fake.push(on_stream(second, {result_of(3, text_result("again"))}));
  {
    IoThread io;
    auto client = jp::McpClient::start(io, legacy_server_at(fake), ".");
    CAF_REQUIRE(client);
    auto r = call(**client);
    CAF_CHECK_EQUAL(r.error.message, "");
    CAF_CHECK_EQUAL(r.content, "again");
    CAF_CHECK(first->client_left()); // the forgotten session's stream is let go
  }
  CAF_CHECK(second->client_left());
  check_call_again_in_session_def(fake);
}

CAF_TEST(a legacy sse answer larger than a default event is taken and the session goes on) {
  // An answer may be as large on the legacy stream as in a POST's (64 MiB): one over
  // the event parser's default (8 MiB) used to end the stream, and the session.
  FakeProviderServer fake;
  auto events = std::make_shared<FakeEventStream>();
  script_legacy_start(fake, events);
  std::string big(9u << 20, 'x');
  fake.push(on_stream(events, {result_of(3, text_result(big))}));
  fake.push(on_stream(events, {result_of(4, text_result("small"))}));
  auto server = legacy_server_at(fake);
  {
    IoThread io;
    auto client = jp::McpClient::start(io, server, ".");
    CAF_REQUIRE(client);
    auto large = call(**client);
    CAF_CHECK_EQUAL(large.error.message, "");
    CAF_CHECK_EQUAL(large.content.size(), big.size());
    CAF_CHECK_EQUAL(call(**client).content, "small");
  }
  CAF_CHECK_EQUAL(fake.gets().size(), 1u); // one stream, one session
}

CAF_TEST(a legacy sse server naming an endpoint on another origin is refused) {
  FakeProviderServer fake;
  auto events = std::make_shared<FakeEventStream>();
  fake.push_get(held(events, "event: endpoint\ndata: http://127.0.0.2:9/messages/?session_id=abc\n\n"));
  auto server = legacy_server_at(fake);
  {
    IoThread io;
    auto client = jp::McpClient::start(io, server, ".");
    CAF_REQUIRE(!client);
    CAF_CHECK(contains(client.error(), "MCP server `web` (" + server.url + ") named "
                                       "`http://127.0.0.2:9/messages/?session_id=abc` as where to send its messages, "
                                       "which is not on its own scheme, host and port: jp-actors sends nothing there"));
  }
  CAF_CHECK(events->client_left());
  CAF_CHECK_EQUAL(fake.requests().size(), 0u); // nothing was POSTed anywhere
}

CAF_TEST(an http client pointed at a legacy sse server is told to give transport sse) {
  // A legacy server's stream url takes GETs only (Starlette's route answers a POST 405).
  FakeProviderServer fake;
  FakeResponse get_only;
  get_only.status = 405;
  get_only.body = "Method Not Allowed";
  fake.push(get_only);
  auto server = legacy_server_at(fake);
  server.transport = "http";
  CAF_CHECK(contains(start_error(server), "refused the request: HTTP 405: Method Not Allowed; if it speaks the "
                                          "legacy HTTP+SSE transport (MCP 2024-11-05, an `/sse` url), give "
                                          "transport = \"sse\""));
}

CAF_TEST(an sse client pointed at a streamable http server is told to give transport http) {
  FakeProviderServer fake;
  auto server = server_at(fake);
  server.transport = "sse";
  // A server without a GET stream: 405 (the fake's answer to a GET not scripted).
  CAF_CHECK(contains(start_error(server), "did not open its event stream (GET): HTTP 405: (no body); a server of "
                                          "Streamable HTTP takes transport = \"http\""));
  // One whose stream names no endpoint and ends.
  FakeResponse no_endpoint;
  no_endpoint.body = ": nothing to say\n\n";
  fake.push_get(no_endpoint);
  CAF_CHECK(contains(start_error(server), "ended its event stream without naming where to send messages (no "
                                          "`endpoint` event): it may not speak the legacy HTTP+SSE transport "
                                          "(transport = \"sse\"); for Streamable HTTP give transport = \"http\""));
  // One that wants its session on a GET: 400 (the SDKs' answer).
  FakeResponse no_session;
  no_session.status = 400;
  no_session.body = "Bad Request: Missing session ID";
  fake.push_get(no_session);
  CAF_CHECK(contains(start_error(server), "did not open its event stream (GET): HTTP 400: Bad Request: Missing "
                                          "session ID; a server of Streamable HTTP takes transport = \"http\""));
  CAF_CHECK_EQUAL(fake.gets().size(), 3u);
  CAF_CHECK_EQUAL(fake.requests().size(), 0u); // nothing was POSTed
}

CAF_TEST(a legacy sse server whose endpoint answers initialize 404 is refused saying so) {
  // An endpoint that is none: a new session would meet it again (before, the 404
  // was taken as a session the server forgot, and the start waited out its timeout).
  FakeProviderServer fake;
  auto events = std::make_shared<FakeEventStream>();
  fake.push_get(held(events, "event: endpoint\ndata: /nowhere\n\n"));
  FakeResponse missing;
  missing.status = 404;
  missing.body = "Not Found";
  fake.push(missing);
  CAF_CHECK(contains(start_error(legacy_server_at(fake)), "refused the request: HTTP 404: Not Found"));
  CAF_CHECK(events->client_left());
  CAF_CHECK_EQUAL(fake.gets().size(), 1u); // no second session
}

CAF_TEST(a url a server hands back is made absolute and kept on its origin) {
  std::string sse = "http://127.0.0.1:8000/mcp/sse?x=1";
  CAF_CHECK_EQUAL(same_origin_target(sse, "/messages/?session_id=a"), "http://127.0.0.1:8000/messages/?session_id=a");
  CAF_CHECK_EQUAL(same_origin_target(sse, "messages?sessionId=a"), "http://127.0.0.1:8000/mcp/messages?sessionId=a");
  CAF_CHECK_EQUAL(same_origin_target(sse, "http://127.0.0.1:8000/m"), "http://127.0.0.1:8000/m");
  CAF_CHECK_EQUAL(same_origin_target("http://h:1", "m"), "http://h:1/m");
  for (auto* elsewhere : {"//evil.example/m", "https://127.0.0.1:8000/m", "http://127.0.0.1:8001/m",
                          "http://127.0.0.1:8000@evil.example/m", "/\\evil.example/m", "/m x", ""})
    CAF_CHECK_EQUAL(same_origin_target(sse, elsewhere), "");
}

CAF_TEST(an origin is the same however its scheme host and default port are written) {
  // Scheme and host know no case, and a default port is no other port.
  CAF_CHECK_EQUAL(url_origin("HTTP://Host:80/sse"), "http://host");
  CAF_CHECK_EQUAL(url_origin("https://H:443"), "https://h");
  CAF_CHECK_EQUAL(url_origin("https://h:80/x"), "https://h:80"); // not https's own
  CAF_CHECK_EQUAL(url_origin("http://User:PW@Host:8000?q"), "http://User:PW@host:8000");
  CAF_CHECK_EQUAL(url_origin("http://[::1]:80/sse"), "http://[::1]");
  CAF_CHECK_EQUAL(url_origin("http://[::1]:8000/sse"), "http://[::1]:8000");
  CAF_CHECK_EQUAL(same_origin_target("http://h/sse", "http://h:80/m"), "http://h:80/m");
  CAF_CHECK_EQUAL(same_origin_target("http://h:80/sse", "/m?s=1"), "http://h/m?s=1");
  CAF_CHECK_EQUAL(same_origin_target("HTTP://Host/sse", "http://host/m"), "http://host/m");
  CAF_CHECK_EQUAL(same_origin_target("https://h/sse", "https://H:443/m"), "https://H:443/m");
  CAF_CHECK_EQUAL(same_origin_target("http://H:80/mcp/sse?x=1", "messages"), "http://h/mcp/messages");
  CAF_CHECK_EQUAL(same_origin_target("http://[::1]:8000/sse", "/m"), "http://[::1]:8000/m");
  CAF_CHECK_EQUAL(same_origin_target("http://[::1]/sse", "http://[::1]:80/m"), "http://[::1]:80/m");
  // Still not another host, port or scheme, however written.
  for (auto* elsewhere : {"http://evil/m", "HTTP://EVIL/m", "//evil/m", "//h@evil/m", "http://h@evil/m",
                          "http://h:80@evil/m", "http://h:8080/m", "http://h:443/m", "https://h/m",
                          "https://h:80/m", "http://h.evil/m", "http://evil#@h/m"})
    CAF_CHECK_EQUAL(same_origin_target("http://h/sse", elsewhere), "");
  CAF_CHECK_EQUAL(same_origin_target("http://[::1]:8000/sse", "http://[::1]:8001/m"), "");
  CAF_CHECK_EQUAL(same_origin_target("http://[::1]/sse", "http://[::2]/m"), "");
}
