// `jp-actors mcp`'s server actor against a scripted turn, on CAF's deterministic
// scheduler: the orders of messages a real session cannot be made to show on
// purpose (a cancel that crosses its call's answer).
#define CAF_SUITE mcp_server_actor
#include <caf/test/dsl.hpp>

#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "actor_fixture.hpp"
#include "contains.hpp"
#include "actors/mcp_server.hpp"
#include "config/config.hpp"
#include "messages/json.hpp"
#include "runtime/mcp/mcp_requests.hpp"
#include "tools/builtin_tools.hpp"

using namespace jp;
using namespace jp::testing;

namespace {

/// What the scripted turn was sent, in order, and the calls it has not answered.
struct turn_script {
  std::vector<std::string> seen; // "call TAG", "abort TAG", "retire TAG"
  std::vector<caf::typed_response_promise<CallResult>> calls;
};

/// A turn the test drives: (finish_atom, text) answers its oldest call left.
using scripted_turn_actor = turn_actor::extend<caf::reacts_to<finish_atom, std::string>>;

scripted_turn_actor::behavior_type scripted_turn(scripted_turn_actor::pointer self, std::shared_ptr<turn_script> script) {
  return {
    [script](finish_atom, const std::string& text) {
      if (script->calls.empty())
        return;
      script->calls.front().deliver(CallResult{true, text});
      script->calls.erase(script->calls.begin());
    },
    [](batch_atom, const std::vector<std::string>&) { return true; },
    [](call_atom, const std::string&, const std::string&) { return CallResult{true, "untagged"}; },
    [self, script](call_atom, const std::string&, const std::string&, const std::string& tag) {
      script->seen.push_back("call " + tag);
      auto rp = self->make_response_promise<CallResult>();
      script->calls.push_back(rp);
      return rp;
    },
    [script](abort_atom, const std::string& tag) { script->seen.push_back("abort " + tag); },
    [script](retire_atom, const std::string& tag) { script->seen.push_back("retire " + tag); },
    [](list_atom) { return std::vector<HandleSummary>{}; },
    [](counts_atom) { return HandleCounts{}; },
    [](turn_end_atom) { return caf::make_result(std::vector<HandleSummary>{}, std::string()); },
    [](pending_atom) { return std::vector<Notification>{}; },
    [](abort_all_atom) {},
    [](notify_atom, Notification&) {},
    [](user_abort_atom, const std::string& id) { return HandleReport{id, ToolState::running(), 0, {}}; },
  };
}

struct mcp_fixture : test_coordinator_fixture<registered_config> {
  std::shared_ptr<turn_script> script = std::make_shared<turn_script>();
  std::vector<std::string> written; // what went to the client
  mcp_server_actor server;
  scripted_turn_actor turn;

  mcp_fixture() {
    auto config = std::make_shared<const Config>(default_config());
    server = spawn_mcp_server(
      sys, [this](AskPermission, const std::string&) {
        turn = sys.spawn(scripted_turn, script);
        return caf::actor_cast<turn_actor>(turn);
      }, config,
      [this](const std::string& message, const std::string&) { written.push_back(message); });
    message(R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18",)"
            R"("capabilities":{},"clientInfo":{"name":"test","version":"1"}}})");
    message(R"({"jsonrpc":"2.0","method":"notifications/initialized"})");
    written.clear();
  }

  ~mcp_fixture() {
    script->calls.clear(); // its promises hold the turn
    anon_send_exit(server, caf::exit_reason::user_shutdown);
    anon_send_exit(turn, caf::exit_reason::user_shutdown);
    sched.run();
  }

  void message(const std::string& text) {
    anon_send(server, message_atom::value, text);
    sched.run();
  }
};

} // namespace

CAF_TEST_FIXTURE_SCOPE(mcp_server_actor_tests, mcp_fixture)

CAF_TEST(a cancel that crosses its call s answer has the turn forget the tag so its id can be used again) {
  message(R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"shell","arguments":{"command":"true"}}})");
  CAF_REQUIRE_EQUAL(script->calls.size(), 1u);
  // The client cancels as the turn answers: the server reads the cancel before the
  // answer, and the turn reads the abort after its answer went.
  anon_send(server, message_atom::value, std::string(R"({"jsonrpc":"2.0","method":"notifications/cancelled",)"
                                                     R"("params":{"requestId":1}})"));
  anon_send(turn, finish_atom::value, std::string("done"));
  CAF_REQUIRE(sched.prioritize(turn));
  sched.run_once(); // the answer: queued for the server behind the cancel
  sched.run();
  CAF_CHECK_EQUAL(written.size(), 0u); // a cancelled call gets no answer
  // The abort came after the answer: only the server knows it is moot, and says so.
  std::vector<std::string> expected{"call 1", "abort 1", "retire 1"};
  CAF_CHECK_EQUAL(script->seen, expected);
}

CAF_TEST(an answered call that was not cancelled leaves the turn nothing to forget) {
  message(R"({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"shell","arguments":{"command":"true"}}})");
  CAF_REQUIRE_EQUAL(script->calls.size(), 1u);
  anon_send(turn, finish_atom::value, std::string("done"));
  sched.run();
  CAF_REQUIRE_EQUAL(written.size(), 1u);
  CAF_CHECK(written[0].find("\"id\":2") != std::string::npos);
  std::vector<std::string> expected{"call 2"};
  CAF_CHECK_EQUAL(script->seen, expected);
}

CAF_TEST_FIXTURE_SCOPE_END()

namespace {

/// Waits (bounded: a hang guard) until `requests` has `n` asks waiting.
void until_waiting(const McpRequests& requests, size_t n) {
  for (int i = 0; i < 60000 && requests.waiting() < n; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  CAF_REQUIRE_EQUAL(requests.waiting(), n);
}

} // namespace

CAF_TEST(a request to the client waits for its initialized notification and goes in order then) {
  // MCP: the server SHOULD NOT send requests (elicitation/create) before the client's
  // notifications/initialized; a client may send its tools/call before it.
  std::mutex mtx;
  std::vector<std::string> sent;
  McpRequests requests([&](const std::string& message, const std::string&) {
    std::lock_guard lock(mtx);
    sent.push_back(message);
  });
  std::optional<Json> first, second;
  std::thread one([&] { first = requests.ask("elicitation/create", Json::object().set("n", 1), "7"); });
  until_waiting(requests, 1);
  std::thread two([&] { second = requests.ask("elicitation/create", Json::object().set("n", 2), "8"); });
  until_waiting(requests, 2);
  {
    std::lock_guard lock(mtx);
    CAF_CHECK(sent.empty());
  }
  // One withdrawn before it was sent: the client is told nothing of it.
  requests.withdraw("8", "the tools/call it asks for was cancelled");
  two.join();
  CAF_CHECK(!second);
  requests.initialized();
  {
    std::lock_guard lock(mtx);
    CAF_REQUIRE_EQUAL(sent.size(), 1u);
    CAF_CHECK(contains(sent[0], R"("method":"elicitation/create")"));
    CAF_CHECK(contains(sent[0], R"("n":1)"));
  }
  CAF_CHECK(requests.answered(*Json::parse(R"({"jsonrpc":"2.0","id":1,"result":{"action":"decline"}})")));
  one.join();
  CAF_REQUIRE(first);
  CAF_CHECK(contains(first->dump(), "decline"));
  // From then on a request goes at once.
  std::thread three([&] { requests.ask("ping", Json::object(), "9"); });
  until_waiting(requests, 1);
  {
    std::lock_guard lock(mtx);
    CAF_CHECK_EQUAL(sent.size(), 2u);
  }
  requests.close();
  three.join();
}
