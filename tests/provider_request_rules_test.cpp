// Providers accept what we send: the fake provider refuses what the real services
// refuse (provider_request_rules.hpp), and the requests we build from a real config
// and conversation pass it; a refusal's message reaches the user verbatim.
#define CAF_SUITE provider_request_rules
#include <caf/test/unit_test.hpp>

#include <cstdlib>

#include "cli_run.hpp"
#include "config/config_loader.hpp"
#include "fake_provider_server.hpp"
#include "messages/json.hpp"
#include "runtime/provider/anthropic_format.hpp"
#include "runtime/provider/openai_format.hpp"
#include "runtime/provider/provider.hpp"
#include "tools/builtin_tools.hpp"
#include "temp_dir.hpp"
#include "tools/schema.hpp"
#include "contains.hpp"

using namespace jp;
using namespace jp::testing;

namespace {

Json parsed(const std::string& text) {
  auto j = Json::parse(text);
  CAF_REQUIRE(j.ok());
  return *j;
}

struct KeyEnv {
  KeyEnv() { ::setenv("JP_TEST_RULES_KEY", "sk-test", 1); }
  ~KeyEnv() { ::unsetenv("JP_TEST_RULES_KEY"); }
};

HttpProviderConfig config_for(const FakeProviderServer& server, const std::string& provider) {
  HttpProviderConfig c;
  c.provider = provider;
  c.base_url = server.base_url() + (provider == "openai" ? "/v1" : "");
  c.api_key_env = "JP_TEST_RULES_KEY";
  c.retry.max_retries = 0;
  return c;
}

/// Streams `request` to the fake server as `provider`; the status.
Status send(FakeProviderServer& server, const std::string& provider, const ChatRequest& request) {
  auto p = make_http_provider(config_for(server, provider));
  CAF_REQUIRE(p.ok());
  StreamHooks hooks;
  hooks.emit = [](ChatEvent) {};
  return (*p)->stream(request, hooks);
}

/// The refusal's message, "" when accepted.
std::string message_of(const std::optional<Violation>& v) {
  return v ? v->message : "";
}

std::string text_stream(const std::string& provider) {
  return provider_fixture(provider == "openai" ? "openai_text.sse" : "anthropic_text.sse");
}

ToolCall call(std::string id, std::string name, std::string arguments) {
  return ToolCall{std::move(id), std::move(name), std::move(arguments)};
}

ChatMessage result(std::string id, std::string text) {
  ChatMessage m{chat_role::tool, std::move(text)};
  m.tool_call_id = std::move(id);
  m.tool_name = "shell";
  return m;
}

/// A conversation as the turn loop keeps it: the tools of the default config, a
/// batch of two calls, and a notification recorded between the calls' results.
ChatRequest conversation(const std::string& model, dialect d) {
  ChatRequest r;
  r.model = model;
  r.system = "You run tools.";
  r.max_tokens = 1000;
  r.tools_json = tool_declarations(default_config(), d).dump();
  r.messages.push_back(ChatMessage{chat_role::user, "Build it."});
  ChatMessage said{chat_role::assistant, "Starting."};
  said.tool_calls = {call("call_1", "shell", R"({"action":"spawn","id":"b","command":"make"})"),
                     call("call_2", "await", R"({"all":["b"]})")};
  r.messages.push_back(said);
  r.messages.push_back(result("call_1", R"({"id":"b","state":"running"})"));
  r.messages.push_back(ChatMessage{chat_role::user, "<notifications>\nHandle `b` printed\n</notifications>"});
  r.messages.push_back(result("call_2", R"({"completed":[{"id":"b","state":"stopped","result":"ok"}]})"));
  return r;
}

} // namespace

// ---- The rules refuse what the services refuse, in their words and shapes -------

CAF_TEST(openai rules refuse a top level oneOf with the service message and error shape) {
  auto tools = parsed(R"([{"type":"function","function":{"name":"shell","parameters":)"
                      R"({"type":"object","oneOf":[{"required":["a"]}]}}}])");
  auto v = openai_tools_violation(tools);
  CAF_REQUIRE(v.has_value());
  CAF_CHECK_EQUAL(v->message, "Invalid schema for function 'shell': schema must have type 'object' and not have "
                              "'oneOf'/'anyOf'/'allOf'/'enum'/'const'/'not' at the top level.");
  auto body = parsed(openai_error_body(*v));
  CAF_CHECK_EQUAL(body.find("error")->find("type")->as_string(), "invalid_request_error");
  CAF_CHECK_EQUAL(body.find("error")->find("param")->as_string(), "tools[0].function.parameters");
  CAF_CHECK_EQUAL(body.find("error")->find("code")->as_string(), "invalid_function_parameters");
  CAF_CHECK_EQUAL(body.find("error")->find("message")->as_string(), v->message);
  // An array without items, a bad name.
  CAF_CHECK(contains(openai_tools_violation(parsed(R"([{"type":"function","function":{"name":"a","parameters":)"
                                                   R"({"type":"object","properties":{"xs":{"type":"array"}}}}}])"))
                       ->message,
                     "In context=('properties', 'xs'), array schema missing items."));
  CAF_CHECK(contains(openai_tools_violation(parsed(R"([{"type":"function","function":{"name":"a b"}}])"))->message,
                     "Invalid 'tools[0].function.name'"));
}

CAF_TEST(openai rules refuse max_tokens for reasoning models only) {
  auto body = [](const char* model, const char* param) {
    return parsed(fmt::format(R"({{"model":"{}","{}":100,"messages":[{{"role":"user","content":"hi"}}]}})", model,
                              param));
  };
  for (auto model : {"o1", "o3-mini", "o4-mini", "gpt-5", "gpt-5-mini", "gpt-5.1", "openai/o3"}) {
    auto v = openai_request_violation(body(model, "max_tokens"));
    CAF_REQUIRE(v.has_value());
    CAF_CHECK_EQUAL(v->message, "Unsupported parameter: 'max_tokens' is not supported with this model. Use "
                                "'max_completion_tokens' instead.");
    CAF_CHECK(!openai_request_violation(body(model, "max_completion_tokens")));
  }
  for (auto model : {"gpt-4o", "gpt-4.1-mini", "llama3", "o1x"})
    CAF_CHECK(!openai_request_violation(body(model, "max_tokens")));
}

CAF_TEST(openai rules want every tool call answered by tool messages right after it) {
  auto with = [](const std::string& messages) {
    return openai_request_violation(parsed(R"({"model":"m","messages":[{"role":"user","content":"hi"},)"
                                           R"({"role":"assistant","content":null,"tool_calls":[)"
                                           R"({"id":"a","type":"function","function":{"name":"t","arguments":"{}"}},)"
                                           R"({"id":"b","type":"function","function":{"name":"t","arguments":"{}"}}]})" +
                                           messages + "]}"));
  };
  CAF_CHECK(!with(R"(,{"role":"tool","tool_call_id":"b","content":"x"},{"role":"tool","tool_call_id":"a","content":"y"})"));
  auto missing = with(R"(,{"role":"tool","tool_call_id":"a","content":"y"},{"role":"user","content":"n"})");
  CAF_REQUIRE(missing.has_value());
  CAF_CHECK(contains(missing->message, "did not have response messages: b"));
  CAF_CHECK_EQUAL(missing->param, "messages.[1].role");
  // A user message between the call and its result.
  CAF_CHECK(with(R"(,{"role":"tool","tool_call_id":"a","content":"y"},{"role":"user","content":"n"},)"
                 R"({"role":"tool","tool_call_id":"b","content":"x"})")
              .has_value());
  auto twice = with(R"(,{"role":"tool","tool_call_id":"a","content":"y"},{"role":"tool","tool_call_id":"a","content":"y"})");
  CAF_REQUIRE(twice.has_value());
  CAF_CHECK(contains(twice->message, "must be a response to a preceeding message with 'tool_calls'"));
}

CAF_TEST(anthropic rules take four cache breakpoints of type ephemeral and a system of text blocks) {
  auto body = [](const std::string& system, const std::string& content) {
    return anthropic_request_violation(parsed(fmt::format(
      R"({{"model":"m","max_tokens":10,"system":{},"messages":[{{"role":"user","content":[{}]}}]}})", system, content)));
  };
  auto block = [](const char* type) {
    return fmt::format(R"({{"type":"text","text":"x","cache_control":{{"type":"{}"}}}})", type);
  };
  auto blocks = [&](int n) {
    std::string out;
    for (int i = 0; i < n; ++i)
      out += (i ? "," : "") + block("ephemeral");
    return out;
  };
  CAF_CHECK(!body("[" + block("ephemeral") + "]", blocks(3)));
  CAF_CHECK_EQUAL(message_of(body("[" + block("ephemeral") + "]", blocks(4))),
                  "A maximum of 4 blocks with cache_control may be provided. Found 5.");
  CAF_CHECK_EQUAL(message_of(body(R"("s")", block("forever"))),
                  "messages.0.content.0.cache_control.type: Input should be 'ephemeral'");
  CAF_CHECK_EQUAL(message_of(body(R"([{"type":"image"}])", blocks(1))), "system.0.type: Input should be 'text'");
}

CAF_TEST(anthropic rules refuse a tool property name outside its pattern but not a nested one) {
  auto tools = [](const std::string& properties) {
    return message_of(anthropic_request_violation(parsed(
      R"({"model":"m","max_tokens":10,"messages":[{"role":"user","content":"go"}],"tools":[{"name":"t",)"
      R"("input_schema":{"type":"object","properties":)" + properties + "}}]}")));
  };
  const std::string refused = "tools.0.custom.input_schema.properties: Property keys should match pattern "
                              "'^[a-zA-Z0-9_.-]{1,64}$'";
  CAF_CHECK_EQUAL(tools(R"({"filter.id-1_x":{"type":"string"}})"), "");
  CAF_CHECK_EQUAL(tools(R"({"filter[id]":{"type":"string"}})"), refused);
  CAF_CHECK_EQUAL(tools(R"({"$top":{"type":"integer"}})"), refused);
  CAF_CHECK_EQUAL(tools(R"({")" + std::string(65, 'n') + R"(":{"type":"string"}})"), refused);
  CAF_CHECK_EQUAL(tools(R"({"o":{"type":"object","properties":{"$top":{"type":"integer"}}}})"), "");
}

CAF_TEST(anthropic rules want max_tokens alternating roles and tool results first and paired) {
  auto body = [](const std::string& messages, bool max_tokens = true) {
    return anthropic_request_violation(parsed(fmt::format(R"({{"model":"m",{}"messages":[{}]}})",
                                                          max_tokens ? R"("max_tokens":10,)" : "", messages)));
  };
  const std::string use = R"({"role":"user","content":"go"},{"role":"assistant","content":[)"
                          R"({"type":"tool_use","id":"t1","name":"shell","input":{}}]},)";
  CAF_CHECK(!body(use + R"({"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"ok"},)"
                        R"({"type":"text","text":"more"}]})"));
  CAF_CHECK_EQUAL(message_of(body(R"({"role":"user","content":"hi"})", false)), "max_tokens: Field required");
  CAF_CHECK(contains(body(R"({"role":"assistant","content":"hi"})")->message, "first message must use the \"user\" role"));
  CAF_CHECK(contains(body(R"({"role":"user","content":"a"},{"role":"user","content":"b"})")->message,
                     "roles must alternate"));
  auto text_first = body(use + R"({"role":"user","content":[{"type":"text","text":"note"},)"
                               R"({"type":"tool_result","tool_use_id":"t1","content":"ok"}]})");
  CAF_REQUIRE(text_first.has_value());
  CAF_CHECK_EQUAL(text_first->message, "messages.1: `tool_use` ids were found without `tool_result` blocks "
                                       "immediately after: t1. Each `tool_use` block must have a corresponding "
                                       "`tool_result` block in the next message.");
  CAF_CHECK(contains(body(use + R"({"role":"user","content":[{"type":"tool_result","tool_use_id":"zz","content":"ok"}]})")
                       ->message,
                     "unexpected `tool_use_id` found in `tool_result` blocks: zz"));
  auto shape = parsed(anthropic_error_body(*text_first));
  CAF_CHECK_EQUAL(shape.find("type")->as_string(), "error");
  CAF_CHECK_EQUAL(shape.find("error")->find("type")->as_string(), "invalid_request_error");
  CAF_CHECK_EQUAL(shape.find("error")->find("message")->as_string(), text_first->message);
  // Top-level combinators and tool names.
  auto tools = [](const std::string& tool) {
    return anthropic_request_violation(parsed(R"({"model":"m","max_tokens":1,"messages":[{"role":"user",)"
                                              R"("content":"x"}],"tools":[)" +
                                              tool + "]}"));
  };
  CAF_CHECK(contains(tools(R"({"name":"a","input_schema":{"type":"object","anyOf":[]}})")->message,
                     "input_schema does not support oneOf, allOf, or anyOf at the top level"));
  CAF_CHECK(contains(tools(R"({"name":"a.b","input_schema":{"type":"object"}})")->message, "String should match pattern"));
}

CAF_TEST(anthropic rules refuse blank text empty error results and malformed tool uses) {
  auto body = [](const std::string& messages) {
    return message_of(
      anthropic_request_violation(parsed(R"({"model":"m","max_tokens":10,"messages":[)" + messages + "]}")));
  };
  const std::string use = R"({"role":"user","content":"go"},{"role":"assistant","content":[)"
                          R"({"type":"tool_use","id":"t1","name":"shell","input":{}}]},)";
  CAF_CHECK_EQUAL(body(R"({"role":"user","content":"go"},{"role":"assistant","content":"\n\n"},)"
                       R"({"role":"user","content":"again"})"),
                  "messages.1.content.0.text: text content blocks must contain non-whitespace text");
  CAF_CHECK_EQUAL(body(use + R"({"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"",)"
                             R"("is_error":true}]})"),
                  "messages.2.content.0.tool_result: content cannot be empty if `is_error` is true");
  CAF_CHECK_EQUAL(body(use + R"({"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":""}]})"),
                  ""); // empty is allowed when it is not an error
  CAF_CHECK(contains(body(R"({"role":"user","content":"go"},{"role":"assistant","content":[)"
                          R"({"type":"tool_use","id":"t1","name":"shell","input":"{}"}]})"),
                     "tool_use.input: Input should be a valid dictionary"));
  CAF_CHECK(contains(body(R"({"role":"user","content":"go"},{"role":"assistant","content":[)"
                          R"({"type":"tool_use","id":"t1","name":"a","input":{}},)"
                          R"({"type":"tool_use","id":"t1","name":"b","input":{}}]})"),
                     "`tool_use` ids must be unique"));
  CAF_CHECK(contains(body(R"({"role":"user","content":"go"},{"role":"assistant","content":[)"
                          R"({"type":"tool_use","id":"functions.Bash:0","name":"a","input":{}}]})"),
                     "tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$'"));
  // A result after other content does not count, and what follows it is still read.
  CAF_CHECK_EQUAL(body(use + R"({"role":"user","content":[{"type":"text","text":"note"},)"
                             R"({"type":"tool_result","tool_use_id":"t1","content":"ok"},{"type":"text","text":" "}]})"),
                  "messages.2.content.2.text: text content blocks must contain non-whitespace text");
}

CAF_TEST(a request without its key or anthropic s version is refused as the services refuse it) {
  // Without the key's variable set no key is sent: 401, in each service's words.
  for (auto [provider, d] : {std::pair{"openai", dialect::openai}, std::pair{"anthropic", dialect::anthropic}}) {
    FakeProviderServer server;
    auto s = send(server, provider, conversation("test-model", d));
    CAF_REQUIRE(!s);
    CAF_CHECK(contains(s.error, "the provider wants an API key (HTTP 401): "));
    CAF_CHECK(contains(s.error, "export $JP_TEST_RULES_KEY with it"));
    CAF_CHECK(contains(s.error, std::string(provider) == "openai" ? "You didn't provide an API key."
                                                                  : "x-api-key header is required"));
    // A local server that wants no key takes it.
    server.takes_no_key();
    server.push({200, text_stream(provider)});
    s = send(server, provider, conversation("test-model", d));
    CAF_CHECK_EQUAL(s ? "" : s.error, "");
  }
  std::map<std::string, std::string> headers{{"x-api-key", "sk-test"}};
  CAF_CHECK_EQUAL(message_of(anthropic_header_violation(headers)), "anthropic-version: header is required");
  headers["anthropic-version"] = "2023-06-01";
  CAF_CHECK_EQUAL(message_of(anthropic_header_violation(headers)), "");
  CAF_CHECK_EQUAL(message_of(openai_header_violation({{"authorization", "Bearer "}})).substr(0, 30),
                  "You didn't provide an API key.");
  CAF_CHECK_EQUAL(message_of(openai_header_violation({{"authorization", "Bearer sk-test"}})), "");
}

// ---- What we send passes -------------------------------------------------------

CAF_TEST(requests with the default tools and a real conversation pass both services) {
  KeyEnv key;
  for (auto [provider, d] : {std::pair{"openai", dialect::openai}, std::pair{"anthropic", dialect::anthropic}}) {
    FakeProviderServer server;
    server.push({200, text_stream(provider)});
    auto s = send(server, provider, conversation("test-model", d));
    CAF_CHECK_EQUAL(s ? "" : s.error, "");
    CAF_CHECK(server.refused().empty());
  }
}

CAF_TEST(a long tool description and another service s call ids still make requests both services take) {
  // An MCP server's description past OpenAI's 1,024 characters is cut, saying so; a
  // conversation begun on a service whose call ids Anthropic refuses (Kimi's
  // `functions.Bash:0`) is sent with ids it takes, each call's and its result's alike.
  KeyEnv key;
  auto config = default_config();
  auto long_tool = config.tools.at("shell");
  long_tool.name = "srv__long";
  long_tool.description = std::string(3000, 'd');
  config.tools[long_tool.name] = long_tool;
  for (auto [provider, d] : {std::pair{"openai", dialect::openai}, std::pair{"anthropic", dialect::anthropic}}) {
    auto r = conversation("test-model", d);
    r.tools_json = tool_declarations(config, d).dump();
    r.messages[1].tool_calls[0].id = "functions.Bash:0";
    r.messages[1].tool_calls[1].id = "functions.Bash;0";
    r.messages[2].tool_call_id = "functions.Bash:0";
    r.messages[4].tool_call_id = "functions.Bash;0";
    FakeProviderServer server;
    server.push({200, text_stream(provider)});
    auto s = send(server, provider, r);
    CAF_CHECK_EQUAL(s ? "" : s.error, "");
    CAF_CHECK(server.refused().empty());
  }
  auto declared = tool_declarations(config, dialect::openai).dump();
  CAF_CHECK(contains(declared, "…(30"));
}

CAF_TEST(a call whose arguments are no json object is sent back with an empty object) {
  // Sent as the model wrote them: Ollama and vLLM read every earlier call's
  // arguments into an object and refused each later request of the conversation.
  // (The call's failed result says what was wrong with them.)
  for (auto wrote : {"{nope", "[1]", "\"text\""}) {
    auto r = conversation("qwen3:8b", dialect::openai);
    r.messages[1].tool_calls[0].arguments = wrote;
    auto body = parsed(openai_request_body(r));
    CAF_CHECK_EQUAL(message_of(openai_request_violation(body)), "");
    auto& call = body.find("messages")->as_array().at(2).find("tool_calls")->as_array().at(0);
    CAF_CHECK_EQUAL(call.find("function")->string_at("arguments"), "{}");
    // The rule refuses what was sent before.
    call.find("function")->set("arguments", wrote);
    CAF_CHECK_EQUAL(message_of(openai_request_violation(body)), "invalid tool call arguments");
  }
}

CAF_TEST(call ids longer than openai takes are sent short and alike in the call and its result) {
  // A conversation begun on vLLM (`chatcmpl-tool-` and 32 hex digits) goes on at
  // api.openai.com, which refuses an id past 40 characters; OpenRouter's reasoning
  // details name their call by the id sent.
  auto r = conversation("google/gemini-3-pro-preview", dialect::openai);
  const std::string first = "chatcmpl-tool-" + std::string(31, 'a') + "1";
  const std::string second = "chatcmpl-tool-" + std::string(31, 'a') + "2";
  r.messages[1].tool_calls[0].id = first;
  r.messages[1].tool_calls[1].id = second;
  r.messages[2].tool_call_id = first;
  r.messages[4].tool_call_id = second;
  r.messages[1].provider_extra = R"({"reasoning_details":[{"type":"reasoning.encrypted","data":"c2ln","id":")" +
                                 second + R"("}],"jp_model":"google/gemini-3-pro-preview"})";
  auto body = parsed(openai_request_body(r));
  CAF_CHECK_EQUAL(message_of(openai_request_violation(body)), "");
  auto& sent = body.find("messages")->as_array();
  auto& calls = sent.at(2).find("tool_calls")->as_array();
  auto one = std::string(calls.at(0).string_at("id"));
  auto two = std::string(calls.at(1).string_at("id"));
  CAF_CHECK_LESS_OR_EQUAL(one.size(), 40u);
  CAF_CHECK_NOT_EQUAL(one, two);
  CAF_CHECK_EQUAL(sent.at(3).string_at("tool_call_id"), one);
  CAF_CHECK_EQUAL(sent.at(4).string_at("tool_call_id"), two);
  CAF_CHECK_EQUAL(sent.at(2).find("reasoning_details")->as_array().at(0).string_at("id"), two);
  // One of 40 is sent as it is; the rules refuse one longer, as the service does.
  r.messages[1].tool_calls[0].id = r.messages[2].tool_call_id = std::string(40, 'c');
  CAF_CHECK(contains(openai_request_body(r), R"("id":")" + std::string(40, 'c') + R"(")"));
  auto long_id = body;
  long_id.find("messages")->as_array().at(2).find("tool_calls")->as_array().at(0).set("id", std::string(41, 'c'));
  auto v = openai_request_violation(long_id);
  CAF_REQUIRE(v);
  CAF_CHECK_EQUAL(v->message, "Invalid 'messages[2].tool_calls[0].id': string too long. Expected a string with "
                              "maximum length 40, but got a string with length 41 instead.");
  CAF_CHECK_EQUAL(v->code, "string_above_max_length");
}

CAF_TEST(an agent without tools sends no tools array) {
  // A sub-agent given `tools = []` declares none: OpenAI refuses an empty `tools`.
  KeyEnv key;
  auto config = default_config();
  config.tools.clear();
  for (auto [provider, d] : {std::pair{"openai", dialect::openai}, std::pair{"anthropic", dialect::anthropic}}) {
    auto r = conversation("test-model", d);
    r.messages.resize(1);
    r.tools_json = tool_declarations(config, d).dump();
    CAF_CHECK_EQUAL(r.tools_json, "[]");
    FakeProviderServer server;
    server.push({200, text_stream(provider)});
    auto s = send(server, provider, r);
    CAF_CHECK_EQUAL(s ? "" : s.error, "");
    CAF_CHECK(server.refused().empty());
    CAF_REQUIRE_EQUAL(server.requests().size(), 1u);
    CAF_CHECK(!contains(server.requests()[0].body, R"("tools")"));
  }
}

CAF_TEST(a reasoning model gets max_completion_tokens and others max_tokens) {
  CAF_CHECK_EQUAL(max_tokens_parameter("gpt-5-mini"), "max_completion_tokens");
  CAF_CHECK_EQUAL(max_tokens_parameter("o3"), "max_completion_tokens");
  CAF_CHECK_EQUAL(max_tokens_parameter("openrouter/o4-mini"), "max_completion_tokens");
  CAF_CHECK_EQUAL(max_tokens_parameter("gpt-4o-mini"), "max_tokens");
  CAF_CHECK_EQUAL(max_tokens_parameter("llama3.1"), "max_tokens");
  // OpenAI's own service takes the new name for every model (a new reasoning
  // model's name is not known here).
  CAF_CHECK_EQUAL(max_tokens_parameter("gpt-4o-mini", true), "max_completion_tokens");
  CAF_CHECK(is_openai_service("https://api.openai.com/v1/chat/completions"));
  CAF_CHECK(!is_openai_service("https://api.openai.com.evil.example/v1"));
  CAF_CHECK(!is_openai_service("http://127.0.0.1:8080/v1/chat/completions"));
  auto official = conversation("gpt-4o", dialect::openai);
  CAF_CHECK_EQUAL(parsed(openai_request_body(official, true, true)).find("max_completion_tokens")->as_int(), 1000);
  KeyEnv key;
  FakeProviderServer server;
  for (auto model : {"gpt-5-mini", "o3", "gpt-4o"}) {
    server.push({200, text_stream("openai")});
    auto s = send(server, "openai", conversation(model, dialect::openai));
    CAF_CHECK_EQUAL(s ? "" : s.error, "");
  }
  auto seen = server.requests();
  CAF_REQUIRE_EQUAL(seen.size(), 3u);
  CAF_CHECK_EQUAL(parsed(seen[0].body).find("max_completion_tokens")->as_int(), 1000);
  CAF_CHECK(parsed(seen[1].body).find("max_tokens") == nullptr);
  CAF_CHECK_EQUAL(parsed(seen[2].body).find("max_tokens")->as_int(), 1000);
}

CAF_TEST(anthropic always gets max_tokens) {
  auto r = conversation("claude-sonnet-4-5", dialect::anthropic);
  r.max_tokens = 0;
  CAF_CHECK_EQUAL(parsed(anthropic_request_body(r)).find("max_tokens")->as_int(), 4096);
}

CAF_TEST(tool results come first in the user turn and answer the previous calls) {
  auto body = parsed(anthropic_request_body(conversation("claude-sonnet-4-5", dialect::anthropic)));
  auto& msgs = body.find("messages")->as_array();
  CAF_REQUIRE_EQUAL(msgs.size(), 3u);
  auto& turn = msgs[2].find("content")->as_array();
  CAF_REQUIRE_EQUAL(turn.size(), 3u);
  CAF_CHECK_EQUAL(turn[0].find("tool_use_id")->as_string(), "call_1");
  CAF_CHECK_EQUAL(turn[1].find("tool_use_id")->as_string(), "call_2");
  CAF_CHECK(contains(turn[2].find("text")->as_string(), "<notifications>"));
  // openai: both tool messages right after the assistant, then the notification.
  auto oa = parsed(openai_request_body(conversation("gpt-4o", dialect::openai)));
  auto& om = oa.find("messages")->as_array();
  CAF_REQUIRE_EQUAL(om.size(), 6u);
  CAF_CHECK_EQUAL(om[3].find("tool_call_id")->as_string(), "call_1");
  CAF_CHECK_EQUAL(om[4].find("tool_call_id")->as_string(), "call_2");
  CAF_CHECK_EQUAL(om[5].find("role")->as_string(), "user");
}

CAF_TEST(a cache breakpoint is never put on a result of a tool that printed nothing) {
  // The API refuses cache_control on an empty text; an empty result is the last
  // block of a round whose last call printed nothing (`mkdir x`).
  ChatRequest r;
  r.model = "m";
  r.max_tokens = 100;
  r.messages.push_back(ChatMessage{chat_role::user, "go"});
  ChatMessage said{chat_role::assistant, "both"};
  said.tool_calls = {call("a", "shell", "{}"), call("b", "shell", "{}")};
  r.messages.push_back(said);
  r.messages.push_back(result("a", "made"));
  r.messages.push_back(result("b", ""));
  auto body = parsed(anthropic_request_body(r));
  CAF_CHECK_EQUAL(message_of(anthropic_request_violation(body)), "");
  auto& turn = body.find("messages")->as_array().back().find("content")->as_array();
  CAF_REQUIRE_EQUAL(turn.size(), 2u);
  CAF_CHECK(turn[0].find("cache_control") != nullptr);
  CAF_CHECK(turn[1].find("cache_control") == nullptr);
  CAF_CHECK_EQUAL(turn[1].string_at("content"), "");
  // A turn of empty results only has no breakpoint.
  r.messages[2] = result("a", " ");
  auto none = parsed(anthropic_request_body(r));
  auto& alone = none.find("messages")->as_array().back().find("content")->as_array();
  CAF_CHECK(alone[0].find("cache_control") == nullptr && alone[1].find("cache_control") == nullptr);
}

CAF_TEST(results without a call and calls without a result still make a valid request) {
  ChatRequest r;
  r.model = "m";
  r.max_tokens = 100;
  r.messages.push_back(ChatMessage{chat_role::user, "go"});
  r.messages.push_back(result("stale", "from a cut turn"));
  ChatMessage said{chat_role::assistant};
  said.tool_calls = {call("a", "shell", "{}"), call("b", "shell", "{}")};
  r.messages.push_back(said);
  r.messages.push_back(result("a", "one"));
  r.messages.push_back(result("a", "again"));
  r.messages.push_back(ChatMessage{chat_role::user, "next"});
  auto oa = parsed(openai_request_body(r));
  CAF_CHECK(!openai_request_violation(oa));
  CAF_CHECK(contains(oa.dump(), "Result of the earlier tool call `stale` (shell): from a cut turn"));
  CAF_CHECK(contains(oa.dump(), "no result was recorded for this call"));
  auto an = parsed(anthropic_request_body(r));
  auto v = anthropic_request_violation(an);
  CAF_CHECK_EQUAL(message_of(v), "");
  // A conversation starting with the assistant gets a user turn first.
  r.messages.erase(r.messages.begin(), r.messages.begin() + 2);
  v = anthropic_request_violation(parsed(anthropic_request_body(r)));
  CAF_CHECK_EQUAL(message_of(v), "");
}

CAF_TEST(a blank text and an empty failure make a request anthropic accepts) {
  // A response cut after "\n\n" keeps its text; a tool may fail saying nothing.
  ChatRequest r;
  r.model = "m";
  r.max_tokens = 100;
  r.messages.push_back(ChatMessage{chat_role::user, "go"});
  r.messages.push_back(ChatMessage{chat_role::assistant, "\n\n"});
  r.messages.push_back(ChatMessage{chat_role::user, "again"});
  ChatMessage said{chat_role::assistant, " "};
  said.tool_calls = {call("a", "shell", "{}")};
  r.messages.push_back(said);
  auto failed = result("a", "");
  failed.tool_error = true;
  r.messages.push_back(failed);
  auto body = parsed(anthropic_request_body(r));
  CAF_CHECK_EQUAL(message_of(anthropic_request_violation(body)), "");
  CAF_CHECK(contains(body.dump(), R"("content":"the tool failed and said nothing","is_error":true)"));
}

CAF_TEST(a tool s images go where each service takes them and nowhere it refuses them) {
  // OpenAI: images only in a user message, after the run of results; Anthropic: in the
  // tool_result, after its text (a blank text left out). Both pass the services' rules.
  ChatRequest r;
  r.model = "m";
  r.max_tokens = 100;
  r.messages.push_back(ChatMessage{chat_role::user, "look"});
  ChatMessage said{chat_role::assistant, ""};
  said.tool_calls = {call("a", "shot", "{}"), call("b", "shell", "{}")};
  r.messages.push_back(said);
  auto shot = result("a", " ");
  shot.tool_name = "shot";
  shot.images = {ToolImage{"image/png", "iVBORw0KGgo="}, ToolImage{"image/webp", "UklGRg=="}};
  r.messages.push_back(shot);
  r.messages.push_back(result("b", "ok"));
  auto openai = parsed(openai_request_body(r));
  CAF_CHECK_EQUAL(message_of(openai_request_violation(openai)), "");
  auto& sent = openai.find("messages")->as_array();
  CAF_REQUIRE_EQUAL(sent.size(), 5u);
  CAF_CHECK_EQUAL(sent[3].string_at("role"), "tool");
  CAF_CHECK_EQUAL(sent[4].find("content")->dump(),
                  R"([{"type":"text","text":"The image(s) of tool call `a` (shot):"},)"
                  R"({"type":"image_url","image_url":{"url":"data:image/png;base64,iVBORw0KGgo="}},)"
                  R"({"type":"image_url","image_url":{"url":"data:image/webp;base64,UklGRg=="}}])");
  auto anthropic = parsed(anthropic_request_body(r));
  CAF_CHECK_EQUAL(message_of(anthropic_request_violation(anthropic)), "");
  auto& results = anthropic.find("messages")->as_array().at(2).find("content")->as_array();
  CAF_CHECK_EQUAL(results.at(0).find("content")->dump(),
                  R"([{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0KGgo="}},)"
                  R"({"type":"image","source":{"type":"base64","media_type":"image/webp","data":"UklGRg=="}}])");
  // What the services refuse, the rules refuse: an image in a tool message, a type
  // they do not take.
  auto in_tool = openai;
  auto image_part = sent[4].find("content")->as_array().at(1);
  in_tool.find("messages")->as_array().at(3).set("content", Json(JsonArray{image_part}));
  CAF_CHECK(contains(message_of(openai_request_violation(in_tool)), "Image URLs are only allowed for messages with role 'user'"));
  auto bmp = r;
  bmp.messages[2].images = {ToolImage{"image/bmp", "Qk0="}};
  CAF_CHECK(contains(message_of(anthropic_request_violation(parsed(anthropic_request_body(bmp)))),
                     "media_type: Input should be 'image/jpeg', 'image/png', 'image/gif' or 'image/webp'"));
  CAF_CHECK(contains(message_of(openai_request_violation(parsed(openai_request_body(bmp)))), "Invalid image URL"));
}

CAF_TEST(a failed tool s images are told of in words to anthropic which takes only text in an error result) {
  ChatRequest r;
  r.model = "m";
  r.max_tokens = 100;
  r.messages.push_back(ChatMessage{chat_role::user, "look"});
  ChatMessage said{chat_role::assistant, ""};
  said.tool_calls = {call("a", "shot", "{}")};
  r.messages.push_back(said);
  auto shot = result("a", "the page did not load");
  shot.tool_error = true;
  shot.images = {ToolImage{"image/png", "iVBORw0KGgo="}, ToolImage{"image/webp", "UklGRg=="}};
  r.messages.push_back(shot);
  auto body = parsed(anthropic_request_body(r));
  CAF_CHECK_EQUAL(message_of(anthropic_request_violation(body)), "");
  auto& sent = body.find("messages")->as_array().at(2).find("content")->as_array().at(0);
  CAF_CHECK_EQUAL(sent.find("content")->dump(),
                  R"("the page did not load\n[2 image(s) not shown: the API takes no images in a failed tool's result]")");
  // What the service refuses, the rules refuse.
  auto with_image = body;
  with_image.find("messages")->as_array().at(2).find("content")->as_array().at(0).set(
    "content", parsed(R"([{"type":"text","text":"failed"},{"type":"image","source":{"type":"base64",)"
                      R"("media_type":"image/png","data":"iVBORw0KGgo="}}])"));
  CAF_CHECK_EQUAL(message_of(anthropic_request_violation(with_image)),
                  "messages.2.content.0.tool_result: all content must be type 'text' if 'is_error' is true");
}

// ---- A refusal reaches the user verbatim -------------------------------------------

CAF_TEST(a 400 message from either service reaches the user unchanged) {
  KeyEnv key;
  for (auto provider : {"openai", "anthropic"}) {
    FakeProviderServer server;
    auto r = conversation("test-model", std::string(provider) == "openai" ? dialect::openai : dialect::anthropic);
    r.tools_json = std::string(provider) == "openai"
                     ? R"([{"type":"function","function":{"name":"bad name","parameters":{"type":"object"}}}])"
                     : R"([{"name":"bad name","input_schema":{"type":"object"}}])";
    auto s = send(server, provider, r);
    CAF_REQUIRE(!s);
    auto refused = server.refused();
    CAF_REQUIRE_EQUAL(refused.size(), 1u);
    CAF_CHECK(contains(s.error, "HTTP 400"));
    CAF_CHECK_EQUAL(contains(s.error, refused[0]) ? "" : s.error + " lacks " + refused[0], "");
  }
}

CAF_TEST(a conversation longer than the model takes is told to start a new one) {
  // Only the service's words came, and asking again failed the same way.
  KeyEnv key;
  for (auto [provider, body] :
       {std::pair{"anthropic", R"({"type":"error","error":{"type":"invalid_request_error","message":"prompt is too )"
                               R"(long: 208310 tokens > 200000 maximum"}})"},
        std::pair{"openai", R"({"error":{"message":"This model's maximum context length is 128000 tokens. However, )"
                            R"(your messages resulted in 130410 tokens.","type":"invalid_request_error","param":)"
                            R"("messages","code":"context_length_exceeded"}})"}}) {
    FakeProviderServer server;
    server.push({400, body});
    auto s = send(server, provider,
                  conversation("test-model", std::string(provider) == "openai" ? dialect::openai : dialect::anthropic));
    CAF_REQUIRE(!s);
    CAF_CHECK(contains(s.error, "HTTP 400"));
    CAF_CHECK(contains(s.error, "; the conversation is longer than the model takes: start a new conversation"));
  }
}

CAF_TEST(openrouter refuses a gemini 3 tool loop without the reasoning_details and the user reads why) {
  KeyEnv key;
  FakeProviderServer server;
  auto r = conversation("google/gemini-3-pro-preview", dialect::openai);
  auto s = send(server, "openai", r);
  CAF_REQUIRE(!s);
  CAF_CHECK(contains(s.error, "the provider rejected the request (HTTP 400 from "));
  // OpenRouter's message, then Google's words it carries (error.metadata.raw).
  CAF_CHECK(contains(s.error, "): Provider returned error: Gemini models require OpenRouter reasoning details to be "
                              "preserved in each request."));
  CAF_CHECK(contains(s.error, "Function call is missing a thought_signature in functionCall parts."));
  // With a thought signature for its calls, the same conversation goes.
  for (auto& m : r.messages)
    if (!m.tool_calls.empty())
      m.provider_extra = R"({"reasoning_details":[{"type":"reasoning.encrypted","data":"c2ln","id":")" +
                         m.tool_calls[0].id + R"(","format":"google-gemini-v1","index":0}],)"
                         R"("jp_model":"google/gemini-3-pro-preview"})";
  server.push({200, text_stream("openai")});
  s = send(server, "openai", r);
  CAF_CHECK_EQUAL(s ? "" : s.error, "");
  // A signature naming no call of the message is no signature for it.
  for (auto& m : r.messages)
    if (!m.tool_calls.empty())
      m.provider_extra = R"({"reasoning_details":[{"type":"reasoning.encrypted","data":"c2ln","id":"other"}]})";
  CAF_CHECK(!send(server, "openai", r));
  CAF_CHECK_EQUAL(server.refused().size(), 2u);
}

CAF_TEST(jp-actors query shows a 400 message from either service unchanged) {
  for (auto provider : {"openai", "anthropic"}) {
    FakeProviderServer server;
    server.takes_no_key();
    temp_dir ws;
    ws.write("config.toml", fmt::format("[assistant]\nprovider = \"{}\"\nmodel = \"test-model\"\nbase_url = \"{}\"\n"
                                        "api_key_env = \"JP_TEST_RULES_UNSET\"\n",
                                        provider, server.base_url() + (std::string(provider) == "openai" ? "/v1" : "")));
    Violation v{"messages.1: `tool_use` ids were found without \"tool_result\" blocks: t1 <é>", "messages", ""};
    server.push({400, std::string(provider) == "openai" ? openai_error_body(v) : anthropic_error_body(v)});
    auto r = cli_in(ws.path.string(), fmt::format("--config {}/config.toml query hi", ws.path.string()));
    CAF_CHECK_NOT_EQUAL(r.status, 0);
    CAF_CHECK_EQUAL(contains(r.out, v.message) ? "" : r.out, "");
    CAF_CHECK(server.refused().empty()); // our request itself was fine
  }
}

CAF_TEST(jp-actors tools prints the json-schema dialect with oneOf and openai flat) {
  auto full = cli("tools --schema --dialect json-schema");
  CAF_CHECK_EQUAL(full.status, 0);
  CAF_CHECK(contains(full.out, R"("oneOf")"));
  CAF_CHECK(contains(full.out, R"("anyOf")"));
  auto openai = cli("tools --schema --dialect openai");
  CAF_CHECK_EQUAL(openai.status, 0);
  auto v = openai_tools_violation(parsed(openai.out));
  CAF_CHECK_EQUAL(message_of(v), "");
  auto bad = cli("tools --schema --dialect cohere");
  CAF_CHECK(contains(bad.out, "openai, anthropic, gemini, json-schema"));
}
