// The rules the fake MCP server holds a client's messages to (mcp/mcp_message_rules.hpp):
// mcp_client_test counts on them to refuse what a real server refuses, so each rule
// is checked here to refuse its breach and to let the lawful messages through.
#define CAF_SUITE mcp_message_rules
#include <caf/test/unit_test.hpp>

#include "mcp/mcp_message_rules.hpp"

using namespace jp;
using namespace jp::testing;

namespace {

/// Why `text` is refused before (or after) initialize; "" when it is not.
std::string why(const std::string& text, bool initialized) {
  auto msg = Json::parse(text);
  CAF_REQUIRE(msg.ok());
  return mcp_violation(*msg, initialized);
}

} // namespace

CAF_TEST(lawful messages pass at every point of the lifecycle they may come) {
  // Before initialize: initialize itself, ping, and notifications.
  CAF_CHECK_EQUAL(why(R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{}})", false), "");
  CAF_CHECK_EQUAL(why(R"({"jsonrpc":"2.0","id":"p","method":"ping"})", false), "");
  CAF_CHECK_EQUAL(why(R"({"jsonrpc":"2.0","method":"notifications/initialized"})", false), "");
  // After it: any request; params as an object or an array; responses to the server.
  CAF_CHECK_EQUAL(why(R"({"jsonrpc":"2.0","id":2,"method":"tools/list"})", true), "");
  CAF_CHECK_EQUAL(why(R"({"jsonrpc":"2.0","id":3,"method":"tools/call","params":[1]})", true), "");
  CAF_CHECK_EQUAL(why(R"({"jsonrpc":"2.0","id":4,"result":{}})", true), "");
  CAF_CHECK_EQUAL(why(R"({"jsonrpc":"2.0","id":"s","error":{"code":-1,"message":"no"}})", true), "");
}

CAF_TEST(each breach of JSON-RPC 2.0 is refused naming the rule) {
  CAF_CHECK_EQUAL(why(R"([1,2])", true), "a message must be a JSON object");
  CAF_CHECK_EQUAL(why(R"({"id":1,"method":"ping"})", true), "\"jsonrpc\" must be \"2.0\"");
  CAF_CHECK_EQUAL(why(R"({"jsonrpc":"1.0","id":1,"method":"ping"})", true), "\"jsonrpc\" must be \"2.0\"");
  CAF_CHECK_EQUAL(why(R"({"jsonrpc":2.0,"id":1,"method":"ping"})", true), "\"jsonrpc\" must be \"2.0\"");
  CAF_CHECK_EQUAL(why(R"({"jsonrpc":"2.0","id":1.5,"method":"ping"})", true), "an id must be a string or an integer");
  CAF_CHECK_EQUAL(why(R"({"jsonrpc":"2.0","id":null,"method":"ping"})", true), "an id must be a string or an integer");
  CAF_CHECK_EQUAL(why(R"({"jsonrpc":"2.0","id":1})", true), "neither a request, a notification nor a response");
  CAF_CHECK_EQUAL(why(R"({"jsonrpc":"2.0","result":{}})", true), "neither a request, a notification nor a response");
  CAF_CHECK_EQUAL(why(R"({"jsonrpc":"2.0","id":1,"method":7})", true), "\"method\" must be a string");
  CAF_CHECK_EQUAL(why(R"({"jsonrpc":"2.0","id":1,"method":"ping","params":"x"})", true),
                  "\"params\" must be an object or an array");
}

CAF_TEST(a request before initialize is refused) {
  CAF_CHECK_EQUAL(why(R"({"jsonrpc":"2.0","id":1,"method":"tools/list"})", false),
                  "initialize first: no other request comes before it");
  CAF_CHECK_EQUAL(why(R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}})", false),
                  "initialize first: no other request comes before it");
}
