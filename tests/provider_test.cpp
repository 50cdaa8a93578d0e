// The HTTP providers against a fake provider on loopback: streams, retries and the
// errors a user sees. No test reaches the internet.
#define CAF_SUITE provider
#include <caf/test/unit_test.hpp>

#include <cstdlib>
#include <map>
#include <tuple>

#include "fake_provider_server.hpp"
#include "messages/json.hpp"
#include "runtime/provider/llm_inquiry.hpp"
#include "runtime/provider/provider.hpp"
#include "contains.hpp"

using namespace jp;
using namespace jp::testing;

namespace {

/// What one stream() produced, as the loop would keep it: a retry voids what came.
struct Collected {
  std::string text;
  std::string reasoning;
  std::vector<ToolCall> calls;
  std::vector<std::string> retries;
  std::string finish;
  int done = 0;
  Status status;
  error_code kind = error_code::none; // of the status's error
};

HttpProviderConfig config_for(const FakeProviderServer& server, const std::string& provider) {
  HttpProviderConfig c;
  c.provider = provider;
  c.base_url = server.base_url() + (provider == "openai" ? "/v1" : "");
  c.api_key_env = "JP_TEST_PROVIDER_KEY";
  c.retry.max_retries = 3;
  c.retry.base_backoff_ms = 1; // no real waiting in tests
  // Long: the fake server is a thread of this (loaded, sanitized) process, and a
  // spurious idle retry would take the next scripted response. A test of a stall
  // sets a short one.
  c.idle_timeout_secs = 30;
  return c;
}

/// config_for's, with an idle timeout a stalled stream meets soon.
HttpProviderConfig stalling_config_for(const FakeProviderServer& server, const std::string& provider) {
  auto c = config_for(server, provider);
  c.idle_timeout_secs = 0.5;
  return c;
}

Collected run(const HttpProviderConfig& config, ChatRequest request = {}) {
  if (request.model.empty())
    request.model = "test-model";
  if (request.messages.empty())
    request.messages.push_back(ChatMessage{chat_role::user, "hi"});
  Collected out;
  auto provider = make_http_provider(config);
  if (!provider) {
    out.status = Error{provider.error()};
    return out;
  }
  StreamHooks hooks;
  hooks.emit = [&](ChatEvent e) {
    switch (e.kind) {
      case chat_event_kind::text: out.text += e.text; break;
      case chat_event_kind::tool_call: out.calls.push_back(e.call); break;
      case chat_event_kind::done:
        out.finish = e.finish_reason;
        ++out.done;
        break;
      case chat_event_kind::usage: break; // token counts: not what these tests look at
      case chat_event_kind::reasoning: out.reasoning += e.text; break;
    }
  };
  hooks.on_retry = [&](const std::string& why) {
    out.retries.push_back(why);
    out.text.clear();
    out.calls.clear();
    out.done = 0;
  };
  out.status = (*provider)->stream_classified(request, hooks, out.kind);
  return out;
}

/// Hooks that drop the events and keep what each retry said: a test of what a
/// provider asks, not of what it streams.
struct RetriesSaid {
  std::vector<std::string> retries;
  StreamHooks hooks;
  RetriesSaid() {
    hooks.emit = [](ChatEvent) {};
    hooks.on_retry = [this](const std::string& why) { retries.push_back(why); };
  }
  RetriesSaid(const RetriesSaid&) = delete; // the hook points at this one
};

/// Two requests through one provider, the first answered `refusal` (of a part of the
/// request, asked again at once without it or otherwise), each a stream after that:
/// what the server saw. A refusal asked again is no failure to wait on: no retry.
std::vector<FakeProviderServer::Seen> asked_twice_after(FakeProviderServer& server, FakeResponse refusal,
                                                        Provider& provider, const ChatRequest& request) {
  server.push(std::move(refusal));
  server.push({200, provider_fixture("openai_text.sse")});
  server.push({200, provider_fixture("openai_text.sse")});
  RetriesSaid said;
  CAF_CHECK(provider.stream(request, said.hooks));
  CAF_CHECK(provider.stream(request, said.hooks));
  CAF_CHECK(said.retries.empty());
  return server.requests();
}

struct KeyEnv {
  KeyEnv() { ::setenv("JP_TEST_PROVIDER_KEY", "sk-test-123", 1); }
  ~KeyEnv() { ::unsetenv("JP_TEST_PROVIDER_KEY"); }
};

} // namespace

CAF_TEST(openai text streams and the request carries model messages and key) {
  KeyEnv key;
  FakeProviderServer server;
  server.push({200, provider_fixture("openai_text.sse")});
  auto got = run(config_for(server, "openai"));
  CAF_REQUIRE(got.status);
  CAF_CHECK(!got.text.empty());
  CAF_CHECK_EQUAL(got.done, 1);
  CAF_CHECK(got.calls.empty());
  auto seen = server.requests();
  CAF_REQUIRE_EQUAL(seen.size(), 1u);
  CAF_CHECK_EQUAL(seen[0].path, "/v1/chat/completions");
  CAF_CHECK_EQUAL(seen[0].headers["authorization"], "Bearer sk-test-123");
  auto body = Json::parse(seen[0].body);
  CAF_REQUIRE(body.ok());
  CAF_CHECK_EQUAL(body->find("model")->as_string(), "test-model");
  CAF_CHECK(body->find("stream")->as_bool());
}

CAF_TEST(openai parallel tool calls arrive whole and in order) {
  KeyEnv key;
  FakeProviderServer server;
  server.push({200, provider_fixture("openai_parallel_tool_calls.sse")});
  auto got = run(config_for(server, "openai"));
  CAF_REQUIRE(got.status);
  CAF_REQUIRE_EQUAL(got.calls.size(), 2u);
  for (auto& c : got.calls)
    CAF_CHECK(Json::parse(c.arguments).ok());
  CAF_CHECK_NOT_EQUAL(got.calls[0].id, got.calls[1].id);
  CAF_CHECK_EQUAL(got.done, 1);
}

CAF_TEST(anthropic tool use streams with its key header and version) {
  KeyEnv key;
  FakeProviderServer server;
  server.push({200, provider_fixture("anthropic_tool_use.sse")});
  auto got = run(config_for(server, "anthropic"));
  CAF_REQUIRE(got.status);
  CAF_REQUIRE_EQUAL(got.calls.size(), 1u);
  CAF_CHECK(Json::parse(got.calls[0].arguments).ok());
  auto seen = server.requests();
  CAF_REQUIRE_EQUAL(seen.size(), 1u);
  CAF_CHECK_EQUAL(seen[0].path, "/v1/messages");
  CAF_CHECK_EQUAL(seen[0].headers["x-api-key"], "sk-test-123");
  CAF_CHECK_EQUAL(seen[0].headers["anthropic-version"], "2023-06-01");
  // Its /v1, or the whole endpoint as pasted, ask the same path.
  for (auto* tail : {"/v1", "/v1/", "/v1/messages"}) {
    server.push({200, provider_fixture("anthropic_tool_use.sse")});
    auto config = config_for(server, "anthropic");
    config.base_url += tail;
    CAF_REQUIRE(run(config).status);
    auto asked = server.requests(); // a copy: the check keeps a reference into it
    CAF_CHECK_EQUAL(asked.back().path, "/v1/messages");
  }
}

CAF_TEST(a server that refuses stream_options is asked again without it and never again with it) {
  // Mistral: HTTP 422 from pydantic's extra_forbidden.
  KeyEnv key;
  FakeProviderServer server;
  auto provider = make_http_provider(config_for(server, "openai"));
  CAF_REQUIRE(provider.ok());
  ChatRequest request;
  request.model = "test-model"; // the 422 below is Mistral's, as its API words it
  request.messages.push_back(ChatMessage{chat_role::user, "hi"});
  auto seen = asked_twice_after(server,
                                {422, R"({"object":"error","message":{"detail":[{"type":"extra_forbidden","loc":)"
                                      R"(["body","stream_options","include_usage"],"msg":"Extra inputs are not )"
                                      R"(permitted","input":true}]},"type":"invalid_request_error","param":null,)"
                                      R"("code":null})"},
                                **provider, request);
  CAF_REQUIRE_EQUAL(seen.size(), 3u);
  CAF_CHECK(Json::parse(seen[0].body)->find("stream_options") != nullptr);
  CAF_CHECK(Json::parse(seen[1].body)->find("stream_options") == nullptr);
  CAF_CHECK(Json::parse(seen[2].body)->find("stream_options") == nullptr);
  RetriesSaid said;
  auto& hooks = said.hooks;
  // Another 422 is the request's own: it fails, as before.
  server.push({422, R"({"object":"error","message":"Extra inputs are not permitted: stream_options","type":"x"})"});
  CAF_CHECK(!(*provider)->stream(request, hooks));
  // A refusal of something else that echoes the request (pydantic's `input`) is not
  // one of stream_options: it fails, and the next request still asks for usage.
  auto fresh = make_http_provider(config_for(server, "openai"));
  CAF_REQUIRE(fresh.ok());
  server.push({422, R"({"detail":[{"type":"missing","loc":["body","messages",0,"content"],"msg":"Field required",)"
                    R"("input":{"model":"m","stream":true,"stream_options":{"include_usage":true}}}]})"});
  server.push({200, provider_fixture("openai_text.sse")});
  CAF_CHECK(!(*fresh)->stream(request, hooks));
  CAF_CHECK((*fresh)->stream(request, hooks));
  seen = server.requests();
  CAF_REQUIRE_EQUAL(seen.size(), 6u);
  CAF_CHECK(Json::parse(seen[5].body)->find("stream_options") != nullptr);
  // Nor is one whose text echoes it (vLLM: pydantic's `input_value=`), while the same
  // text naming it outside the echo is.
  auto echoed = make_http_provider(config_for(server, "openai"));
  CAF_REQUIRE(echoed.ok());
  server.push({400, R"({"object":"error","message":"1 validation error for ChatCompletionRequest\n  Value error, )"
                    R"(bad tools [type=value_error, input_value={'model': 'm', 'stream_options': {'include_usage': )"
                    R"(True}}, input_type=dict]","type":"BadRequestError","param":null,"code":400})"});
  server.push({200, provider_fixture("openai_text.sse")});
  CAF_CHECK(!(*echoed)->stream(request, hooks));
  CAF_CHECK((*echoed)->stream(request, hooks));
  seen = server.requests();
  CAF_REQUIRE_EQUAL(seen.size(), 8u);
  CAF_CHECK(Json::parse(seen[7].body)->find("stream_options") != nullptr);
  server.push({400, R"({"object":"error","message":"1 validation error for ChatCompletionRequest\nstream_options\n  )"
                    R"(Extra inputs are not permitted [type=extra_forbidden, input_value={'include_usage': True}, )"
                    R"(input_type=dict]","type":"BadRequestError","param":null,"code":400})"});
  server.push({200, provider_fixture("openai_text.sse")});
  CAF_CHECK((*echoed)->stream(request, hooks));
  seen = server.requests();
  CAF_REQUIRE_EQUAL(seen.size(), 10u);
  CAF_CHECK(Json::parse(seen[9].body)->find("stream_options") == nullptr);
  // A refusal that names it by a key of its own is one of stream_options.
  auto keyed = make_http_provider(config_for(server, "openai"));
  CAF_REQUIRE(keyed.ok());
  server.push({400, R"({"errors":{"stream_options":["Unknown field."]}})"});
  server.push({200, provider_fixture("openai_text.sse")});
  CAF_CHECK((*keyed)->stream(request, hooks));
  seen = server.requests();
  CAF_REQUIRE_EQUAL(seen.size(), 12u);
  CAF_CHECK(Json::parse(seen[11].body)->find("stream_options") == nullptr);
}

CAF_TEST(requests to one server go over the connection the last one left open) {
  // The real services keep a connection open after a response: the next round of a
  // tool loop must not pay a new TCP and TLS handshake.
  KeyEnv key;
  for (auto [provider, fixture] : {std::pair{"openai", "openai_text.sse"},
                                   std::pair{"anthropic", "anthropic_text.sse"}}) {
    FakeProviderServer server(true);
    for (int i = 0; i < 3; ++i)
      server.push({200, provider_fixture(fixture)});
    for (int i = 0; i < 3; ++i) {
      auto got = run(config_for(server, provider));
      CAF_REQUIRE(got.status);
      CAF_CHECK_EQUAL(got.done, 1);
    }
    CAF_CHECK_EQUAL(server.requests().size(), 3u);
    CAF_CHECK_EQUAL(server.connections(), 1);
    // A server that closed the kept connection (its idle timeout) gets a new one,
    // and the request goes through: nothing the user sees.
    FakeResponse closing{200, provider_fixture(fixture)};
    closing.then_close = true;
    server.push(std::move(closing));
    server.push({200, provider_fixture(fixture)});
    auto before = run(config_for(server, provider));
    auto after = run(config_for(server, provider));
    CAF_CHECK(before.status);
    CAF_CHECK(after.status);
    CAF_CHECK(after.retries.empty());
    CAF_CHECK_EQUAL(server.connections(), 2);
  }
}

CAF_TEST(the reasoning a provider streams comes apart from the answer) {
  KeyEnv key;
  for (auto [provider, fixture] : {std::pair{"anthropic", "anthropic_thinking.sse"},
                                   std::pair{"openai", "openai_reasoning.sse"}}) {
    FakeProviderServer server;
    server.push({200, provider_fixture(fixture)});
    auto got = run(config_for(server, provider));
    CAF_REQUIRE(got.status);
    CAF_CHECK_EQUAL(got.reasoning, "The user asks for 2+2. That is 4.");
    CAF_CHECK_EQUAL(got.text, "2 + 2 = 4.");
    CAF_CHECK_EQUAL(got.done, 1);
  }
}

CAF_TEST(a 429 with Retry-After is retried after the wait it asks) {
  KeyEnv key;
  FakeProviderServer server;
  server.push({429, R"({"error":{"message":"slow down"}})", {"Retry-After: 0.1"}});
  server.push({200, provider_fixture("openai_text.sse")});
  auto got = run(config_for(server, "openai"));
  CAF_REQUIRE(got.status);
  CAF_REQUIRE_EQUAL(got.retries.size(), 1u);
  CAF_CHECK(contains(got.retries[0], "HTTP 429"));
  CAF_CHECK(contains(got.retries[0], "slow down"));
  CAF_CHECK(contains(got.retries[0], "retrying in 0.1 s (retry 1 of 3)"));
  CAF_CHECK_EQUAL(got.done, 1);
  CAF_CHECK_EQUAL(server.requests().size(), 2u);
}

CAF_TEST(a Retry-After of 0 waits the backoff rather than none) {
  // Asked to retry at once, every retry went within a fraction of a second.
  KeyEnv key;
  FakeProviderServer server;
  server.push({429, R"({"error":{"message":"slow down"}})", {"Retry-After: 0"}});
  server.push({429, R"({"error":{"message":"slow down"}})", {"retry-after-ms: 0"}});
  server.push({200, provider_fixture("openai_text.sse")});
  auto config = config_for(server, "openai");
  config.retry.base_backoff_ms = 400; // 200 to 400 ms, then 400 to 800 (jitter)
  auto got = run(config);
  CAF_REQUIRE(got.status);
  CAF_REQUIRE_EQUAL(got.retries.size(), 2u);
  CAF_CHECK(!contains(got.retries[0], "retrying in 0.0 s") && !contains(got.retries[0], "retrying in 0.1 s"));
  CAF_CHECK(!contains(got.retries[1], "retrying in 0.0 s") && !contains(got.retries[1], "retrying in 0.1 s"));
}

CAF_TEST(an API key a server quotes in its error is left out of what jp-actors says) {
  // A proxy or a compatible server echoing the key it refused: it went to the
  // terminal and into the workspace's conversation log.
  ::setenv("JP_TEST_PROVIDER_KEY", "sk-test-secret-4711", 1);
  FakeProviderServer server;
  server.push({500, R"({"error":{"message":"upstream refused key sk-test-secret-4711"}})"});
  server.push({401, R"x({"error":{"message":"Invalid API key: Bearer sk-test-secret-4711 (sk-test-secret-4711)"}})x"});
  auto got = run(config_for(server, "openai"));
  ::unsetenv("JP_TEST_PROVIDER_KEY");
  CAF_REQUIRE(!got.status);
  CAF_REQUIRE_EQUAL(got.retries.size(), 1u);
  CAF_CHECK_EQUAL(got.retries[0].find("sk-test-secret"), std::string::npos);
  CAF_CHECK(contains(got.retries[0], "upstream refused key [the API key]"));
  CAF_CHECK_EQUAL(got.status.error.find("sk-test-secret"), std::string::npos);
  CAF_CHECK(contains(got.status.error, "Invalid API key: Bearer [the API key] ([the API key])"));
  // Cut where a body no JSON is cut (its first 300 bytes): its start alone is left out too.
  ::setenv("JP_TEST_PROVIDER_KEY", "sk-test-secret-4711-and-more-of-it", 1);
  server.push({401, std::string(260, '.') + " Authorization: Bearer sk-test-secret-4711-and-more-of-it", {},
               "text/html"});
  got = run(config_for(server, "openai"));
  ::unsetenv("JP_TEST_PROVIDER_KEY");
  CAF_REQUIRE(!got.status);
  CAF_CHECK_EQUAL(got.status.error.find("sk-test-secret-4711"), std::string::npos);
  CAF_CHECK(contains(got.status.error, "Bearer [the API key]"));
  // In the stream too (an error event of a compatible server).
  ::setenv("JP_TEST_PROVIDER_KEY", "sk-test-secret-4711", 1);
  server.push({200, "data: {\"error\":{\"code\":400,\"message\":\"key sk-test-secret-4711 has no access to this model\"}}\n\n"});
  got = run(config_for(server, "openai"));
  ::unsetenv("JP_TEST_PROVIDER_KEY");
  CAF_REQUIRE(!got.status);
  CAF_CHECK_EQUAL(got.status.error.find("sk-test-secret"), std::string::npos);
  CAF_CHECK(contains(got.status.error, "key [the API key] has no access"));
}

CAF_TEST(server errors exhaust the retries with the last reason) {
  KeyEnv key;
  FakeProviderServer server;
  for (int i = 0; i < 4; ++i)
    server.push({500, R"({"error":{"message":"boom"}})"});
  auto got = run(config_for(server, "openai"));
  CAF_REQUIRE(!got.status);
  CAF_CHECK(contains(got.status.error, "gave up after 3 retries: HTTP 500"));
  CAF_CHECK(contains(got.status.error, "boom"));
  CAF_CHECK_EQUAL(got.retries.size(), 3u);
  CAF_CHECK_EQUAL(server.requests().size(), 4u);
}

CAF_TEST(a response that is no event stream fails at once and says what the server said) {
  KeyEnv key;
  FakeProviderServer server;
  // A compatible server that ignores "stream": true and answers with one JSON body.
  FakeResponse json{200, R"({"error":{"message":"streaming is not enabled for this deployment"}})"};
  json.content_type = "application/json";
  server.push(json);
  auto got = run(config_for(server, "openai"));
  CAF_REQUIRE(!got.status);
  CAF_CHECK(contains(got.status.error, "answered HTTP 200 with application/json rather than an event stream: "
                                       "streaming is not enabled for this deployment"));
  CAF_CHECK(contains(got.status.error, "assistant.base_url"));
  CAF_CHECK_EQUAL(got.retries.size(), 0u);
  CAF_CHECK_EQUAL(server.requests().size(), 1u);
}

CAF_TEST(a stream cut mid event is retried and what came before is void) {
  KeyEnv key;
  FakeProviderServer server;
  auto stream = provider_fixture("anthropic_parallel_tool_use.sse");
  FakeResponse cut{200, stream};
  cut.cut_after = stream.size() * 2 / 3;
  server.push(cut);
  server.push({200, stream});
  auto got = run(config_for(server, "anthropic"));
  CAF_REQUIRE(got.status);
  CAF_REQUIRE_EQUAL(got.retries.size(), 1u);
  CAF_CHECK(contains(got.retries[0], "ended before the response was complete"));
  CAF_CHECK_EQUAL(got.calls.size(), 2u); // once, from the whole stream
  CAF_CHECK_EQUAL(got.done, 1);
}

CAF_TEST(a stream that stalls hits the idle timeout and is retried) {
  KeyEnv key;
  FakeProviderServer server;
  auto stream = provider_fixture("openai_tool_call.sse");
  FakeResponse stall{200, stream};
  stall.stall_after = stream.size() / 2;
  server.push(stall);
  server.push({200, stream});
  auto got = run(stalling_config_for(server, "openai"));
  CAF_REQUIRE(got.status);
  CAF_REQUIRE_EQUAL(got.retries.size(), 1u);
  CAF_CHECK(contains(got.retries[0], "(assistant.request.idle_timeout_secs)"));
  CAF_CHECK_EQUAL(got.calls.size(), 1u);
}

CAF_TEST(errors a user can act on name what to fix) {
  KeyEnv key;
  FakeProviderServer server;
  server.push({401, R"({"error":{"message":"invalid x-api-key"}})"});
  auto refused = run(config_for(server, "anthropic"));
  CAF_CHECK(contains(refused.status.error, "refused the API key in $JP_TEST_PROVIDER_KEY (HTTP 401): invalid x-api-key"));
  server.push({404, R"({"error":{"message":"model not found"}})"});
  ChatRequest req;
  req.model = "no-such-model";
  auto missing = run(config_for(server, "openai"), req);
  CAF_CHECK(contains(missing.status.error, "HTTP 404"));
  CAF_CHECK(contains(missing.status.error, "assistant.model (`no-such-model`)"));
  server.push({200, "data: {not json\n\n"});
  auto malformed = run(config_for(server, "openai"));
  CAF_CHECK(contains(malformed.status.error, "malformed stream"));
  CAF_CHECK(malformed.retries.empty());
}

CAF_TEST(an overload reported inside the stream is retried as its status would be) {
  // Anthropic: "during periods of high usage, you may receive an overloaded_error,
  // which would normally correspond to an HTTP 529" (its streaming docs).
  KeyEnv key;
  FakeProviderServer server;
  auto text = provider_fixture("anthropic_text.sse");
  auto start = text.substr(0, text.find("event: content_block_delta"));
  server.push({200, start + "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\","
                            "\"message\":\"Overloaded\"}}\n\n"});
  server.push({200, text});
  auto got = run(config_for(server, "anthropic"));
  CAF_REQUIRE(got.status);
  CAF_REQUIRE_EQUAL(got.retries.size(), 1u);
  CAF_CHECK(contains(got.retries[0], "provider error: overloaded_error: Overloaded; retrying"));
  CAF_CHECK_EQUAL(got.done, 1);
  // OpenAI's server_error alike; a request the stream says is invalid is not retried.
  server.push({200, "data: {\"error\":{\"message\":\"The server had an error\",\"type\":\"server_error\"}}\n\n"});
  server.push({200, provider_fixture("openai_text.sse")});
  auto again = run(config_for(server, "openai"));
  CAF_REQUIRE(again.status);
  CAF_CHECK_EQUAL(again.retries.size(), 1u);
  server.push({200, "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"invalid_request_error\","
                    "\"message\":\"bad\"}}\n\n"});
  auto invalid = run(config_for(server, "anthropic"));
  CAF_CHECK(contains(invalid.status.error, "provider error: invalid_request_error: bad"));
  CAF_CHECK(invalid.retries.empty());
}

CAF_TEST(a server that refuses max_tokens for max_completion_tokens is asked again with it and from then on) {
  // An Azure deployment serving a reasoning model under a name of its own.
  KeyEnv key;
  FakeProviderServer server;
  auto provider = make_http_provider(config_for(server, "openai"));
  CAF_REQUIRE(provider.ok());
  ChatRequest request;
  request.model = "my-deployment";
  request.max_tokens = 300;
  request.messages.push_back(ChatMessage{chat_role::user, "hi"});
  auto seen = asked_twice_after(server,
                                {400, R"({"error":{"message":"Unsupported parameter: 'max_tokens' is not supported )"
                                      R"(with this model. Use 'max_completion_tokens' instead.","type":)"
                                      R"("invalid_request_error","param":"max_tokens","code":"unsupported_parameter"}})"},
                                **provider, request);
  CAF_REQUIRE_EQUAL(seen.size(), 3u);
  auto limit = [](const std::string& body, const char* name) {
    auto parsed = Json::parse(body); // kept: what find() points into
    auto* v = parsed ? parsed->find(name) : nullptr;
    return v && v->is_number() ? v->as_number() : -1.0;
  };
  CAF_CHECK_EQUAL(limit(seen[0].body, "max_tokens"), 300.0);
  CAF_CHECK_EQUAL(limit(seen[1].body, "max_completion_tokens"), 300.0);
  CAF_CHECK_EQUAL(limit(seen[1].body, "max_tokens"), -1.0);
  CAF_CHECK_EQUAL(limit(seen[2].body, "max_completion_tokens"), 300.0);
  // Refused again with the newer name: the request's own failure, not asked a third way.
  server.push({400, R"({"error":{"message":"max_completion_tokens is too large","type":"invalid_request_error"}})"});
  RetriesSaid said;
  auto refused = (*provider)->stream(request, said.hooks);
  CAF_CHECK(!refused);
  CAF_CHECK(contains(refused.error, "max_completion_tokens is too large"));
  CAF_CHECK_EQUAL(server.requests().size(), 4u);
  // Not a refusal of the name: a limit too large for the context (vLLM's words), or
  // a request echoed back that holds the word. Each fails as it is, asked once.
  for (auto body : {R"({"error":{"message":"'max_tokens' or 'max_completion_tokens' is too large: 9000. This )"
                    R"(model's maximum context length is 8192 tokens","type":"BadRequestError","param":null,)"
                    R"("code":400}})",
                    R"({"error":{"message":"messages: too long","type":"invalid_request_error","param":"messages",)"
                    R"("code":null,"input":"please set max_completion_tokens"}})"}) {
    auto fresh = make_http_provider(config_for(server, "openai"));
    CAF_REQUIRE(fresh.ok());
    auto before = server.requests().size();
    server.push({400, body});
    CAF_CHECK(!(*fresh)->stream(request, said.hooks));
    auto seen_now = server.requests();
    CAF_REQUIRE_EQUAL(seen_now.size(), before + 1);
    CAF_CHECK_EQUAL(limit(seen_now.back().body, "max_tokens"), 300.0);
  }
}

CAF_TEST(x-should-retry from the provider decides whether a failure is retried) {
  KeyEnv key;
  FakeProviderServer server;
  // "false": a status retried otherwise is not.
  server.push({503, R"({"error":{"message":"overloaded"}})", {"x-should-retry: false"}});
  auto refused = run(config_for(server, "openai"));
  CAF_REQUIRE(!refused.status);
  CAF_CHECK(refused.retries.empty());
  CAF_CHECK(contains(refused.status.error, "HTTP 503 from "));
  CAF_CHECK(contains(refused.status.error, "overloaded; the provider says not to retry it (x-should-retry: false)"));
  CAF_CHECK_EQUAL(server.requests().size(), 1u);
  // "true": a status never retried otherwise is.
  server.push({400, R"({"type":"error","error":{"type":"invalid_request_error","message":"try again"}})",
               {"x-should-retry: true"}});
  server.push({200, provider_fixture("anthropic_text.sse")});
  auto again = run(config_for(server, "anthropic"));
  CAF_REQUIRE_EQUAL(again.status.error, "");
  CAF_REQUIRE_EQUAL(again.retries.size(), 1u);
  CAF_CHECK(contains(again.retries[0], "HTTP 400 from "));
  CAF_CHECK_EQUAL(server.requests().size(), 3u);
}

CAF_TEST(a 429 for a used up quota is not retried and says what to check) {
  KeyEnv key;
  FakeProviderServer server;
  server.push({429, R"({"error":{"message":"You exceeded your current quota","type":"insufficient_quota","code":"insufficient_quota"}})"});
  auto got = run(config_for(server, "openai"));
  CAF_REQUIRE(!got.status);
  CAF_CHECK(got.retries.empty());
  CAF_CHECK(contains(got.status.error, "quota is used up (HTTP 429"));
  CAF_CHECK(contains(got.status.error, "You exceeded your current quota; waiting will not help: check the plan and "
                                       "billing of the key in $JP_TEST_PROVIDER_KEY"));
  CAF_CHECK_EQUAL(server.requests().size(), 1u);
  // A spending limit reached: no wait cures it either.
  server.push({429, R"({"error":{"message":"Billing hard limit has been reached","type":"requests","code":"billing_hard_limit_reached"}})"});
  auto limit = run(config_for(server, "openai"));
  CAF_REQUIRE(!limit.status);
  CAF_CHECK(limit.retries.empty());
  CAF_CHECK(contains(limit.status.error, "Billing hard limit has been reached; waiting will not help"));
}

/// An openai provider config whose base_url is a loopback port nobody listens on.
std::pair<HttpProviderConfig, int> closed_port_config() {
  int port;
  {
    FakeProviderServer gone; // a port that was just ours and is closed now
    port = std::stoi(gone.base_url().substr(gone.base_url().rfind(':') + 1));
  }
  HttpProviderConfig c;
  c.provider = "openai";
  c.base_url = fmt::format("http://127.0.0.1:{}/v1", port);
  return {c, port};
}

CAF_TEST(a failure says its kind auth HTTP stream or network) {
  KeyEnv key;
  FakeProviderServer server;
  server.push({200, provider_fixture("openai_tool_call.sse")});
  CAF_CHECK(run(config_for(server, "openai")).kind == error_code::none);
  server.push({401, R"({"error":{"message":"invalid x-api-key"}})"});
  CAF_CHECK(run(config_for(server, "anthropic")).kind == error_code::provider_auth);
  server.push({404, R"({"error":{"message":"model not found"}})"});
  CAF_CHECK(run(config_for(server, "openai")).kind == error_code::provider_http);
  server.push({200, "data: {not json\n\n"});
  CAF_CHECK(run(config_for(server, "openai")).kind == error_code::provider_stream);
  CAF_CHECK(run(closed_port_config().first).kind == error_code::provider_network);
}

CAF_TEST(connection refused names the url and nothing is retried) {
  // The host answered that nothing listens there: no wait would change that soon.
  auto [c, port] = closed_port_config();
  auto got = run(c);
  CAF_CHECK(contains(got.status.error, fmt::format("cannot connect to http://127.0.0.1:{}/v1/chat/completions", port)));
  CAF_CHECK(contains(got.status.error, "is the server running? (assistant.base_url)"));
  CAF_CHECK(got.retries.empty());
}

/// A loopback port whose connections are never answered: a listener of backlog 0
/// whose one place is taken by a connection it never accepts, so that the kernel
/// drops every SYN after it (as a network that is down would), and a connect
/// waits out its timeout. (Linux's rule for a full accept queue: the project's only
/// platform.)
struct UnansweredPort {
  int listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int filler = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int port = 0;
  UnansweredPort() {
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    CAF_REQUIRE(::bind(listener, reinterpret_cast<sockaddr*>(&addr), len) == 0);
    CAF_REQUIRE(::listen(listener, 0) == 0);
    CAF_REQUIRE(::getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len) == 0);
    port = ntohs(addr.sin_port);
    CAF_REQUIRE(::connect(filler, reinterpret_cast<sockaddr*>(&addr), len) == 0);
    // Readable once the filler is in the accept queue: from then on it is full.
    pollfd queued{listener, POLLIN, 0};
    CAF_REQUIRE(::poll(&queued, 1, 10000) == 1);
  }
  ~UnansweredPort() {
    ::close(filler);
    ::close(listener);
  }
};

CAF_TEST(a connection that is never answered is retried as the network may come back) {
  UnansweredPort silent;
  HttpProviderConfig c;
  c.provider = "openai";
  c.base_url = fmt::format("http://127.0.0.1:{}/v1", silent.port);
  c.retry.max_retries = 2;
  c.retry.base_backoff_ms = 1;
  c.limits.connect_timeout = std::chrono::milliseconds(200);
  auto got = run(c);
  CAF_REQUIRE(!got.status);
  CAF_CHECK_EQUAL(got.retries.size(), 2u);
  CAF_CHECK(got.kind == error_code::provider_network);
  auto url = fmt::format("http://127.0.0.1:{}/v1/chat/completions", silent.port);
  CAF_CHECK(contains(got.status.error, "gave up after 2 retries: cannot connect to " + url));
  CAF_CHECK(contains(got.status.error, "is the network up, and assistant.base_url right?"));
  CAF_REQUIRE(!got.retries.empty());
  CAF_CHECK(contains(got.retries[0], "retrying in"));
}

CAF_TEST(a missing API key for the official endpoint names the variable) {
  ::unsetenv("JP_TEST_PROVIDER_KEY");
  HttpProviderConfig c;
  c.provider = "openai";
  c.api_key_env = "JP_TEST_PROVIDER_KEY";
  auto p = make_http_provider(c);
  CAF_REQUIRE(!p);
  CAF_CHECK(contains(p.error(), "JP_TEST_PROVIDER_KEY is not set"));
  c.provider = "gemini";
  CAF_CHECK(contains(make_http_provider(c).error(), "unknown provider \"gemini\""));
}

CAF_TEST(the retry count starts again when an attempt gets further than any before) {
  KeyEnv key;
  FakeProviderServer server;
  auto stream = provider_fixture("openai_text.sse");
  // Three cuts in a row, each later in the stream: with max_retries 1 this only
  // succeeds because an attempt that gets further resets the count.
  for (int i = 1; i <= 3; ++i) {
    FakeResponse cut{200, stream};
    cut.cut_after = stream.size() * i / 4;
    server.push(cut);
  }
  server.push({200, stream});
  auto config = config_for(server, "openai");
  config.retry.max_retries = 1;
  auto got = run(config);
  CAF_REQUIRE(got.status);
  CAF_CHECK_EQUAL(got.retries.size(), 3u);
  CAF_CHECK(contains(got.retries.back(), "(retry 1 of 1)"));
  CAF_CHECK_EQUAL(got.done, 1);
}

CAF_TEST(a stream cut at the same place again and again gives up after max_retries) {
  // Each attempt starts the response anew: one that gets no further than the last
  // is a failure however many good events it had (else: retried, and billed, forever).
  KeyEnv key;
  FakeProviderServer server;
  auto stream = provider_fixture("openai_text.sse");
  for (int i = 0; i < 3; ++i) {
    FakeResponse cut{200, stream};
    cut.cut_after = stream.size() / 2;
    server.push(cut);
  }
  server.push({200, stream});
  auto config = config_for(server, "openai");
  config.retry.max_retries = 1;
  auto got = run(config);
  CAF_REQUIRE(!got.status);
  CAF_CHECK(contains(got.status.error, "gave up after 1 retries"));
  CAF_CHECK_EQUAL(got.retries.size(), 1u);
}

CAF_TEST(a whole response is taken at its end though the connection stays open) {
  // [DONE] and then silence: the response is complete, not an idle stream to retry.
  KeyEnv key;
  FakeProviderServer server;
  auto stream = provider_fixture("openai_text.sse");
  FakeResponse held{200, stream};
  held.stall_after = stream.size();
  server.push(held);
  server.push({200, stream});
  auto got = run(stalling_config_for(server, "openai"));
  CAF_REQUIRE(got.status);
  CAF_CHECK(got.retries.empty());
  CAF_CHECK_EQUAL(got.done, 1);
}

CAF_TEST(an error whose body does not end is answered from its start) {
  KeyEnv key;
  FakeProviderServer server;
  std::string body = R"({"error":{"message":"overloaded"}})" + std::string(1 << 20, ' ');
  FakeResponse endless{503, body};
  endless.stall_after = body.size(); // and then never ends
  server.push(endless);
  auto config = stalling_config_for(server, "openai");
  config.retry.max_retries = 0;
  auto got = run(config);
  CAF_REQUIRE(!got.status);
  CAF_CHECK(contains(got.status.error, "HTTP 503"));
}

CAF_TEST(a Retry-After longer than the longest backoff fails at once saying so) {
  KeyEnv key;
  FakeProviderServer server;
  server.push({429, R"({"error":{"message":"quota"}})", {"Retry-After: 100000"}});
  auto config = config_for(server, "openai");
  config.retry.max_backoff_secs = 2;
  auto got = run(config);
  CAF_REQUIRE(!got.status);
  CAF_CHECK(contains(got.status.error, "the provider asks to retry after 100000 s, more than "
                                       "assistant.request.max_backoff_secs (2 s): try again later"));
  CAF_CHECK(got.retries.empty());
  // A fraction is said as asked, not rounded to look like the limit.
  server.push({429, R"({"error":{"message":"quota"}})", {"retry-after-ms: 2500"}});
  got = run(config);
  CAF_REQUIRE(!got.status);
  CAF_CHECK(contains(got.status.error, "the provider asks to retry after 2.5 s, more than "
                                       "assistant.request.max_backoff_secs (2 s)"));
}

CAF_TEST(retry-after-ms is the wait asked before Retry-After) {
  // OpenAI's and Azure's finer header, which their SDKs read first.
  KeyEnv key;
  FakeProviderServer server;
  server.push({429, R"({"error":{"message":"quota"}})", {"Retry-After: 0", "retry-after-ms: 100000000"}});
  auto config = config_for(server, "openai");
  config.retry.max_backoff_secs = 2;
  auto got = run(config);
  CAF_REQUIRE(!got.status);
  CAF_CHECK(contains(got.status.error, "the provider asks to retry after 100000 s"));
  server.push({429, R"({"error":{"message":"slow down"}})", {"retry-after-ms: 20", "Retry-After: 100000"}});
  server.push({200, provider_fixture("openai_text.sse")});
  got = run(config);
  CAF_REQUIRE(got.status);
  CAF_REQUIRE_EQUAL(got.retries.size(), 1u);
  CAF_CHECK(contains(got.retries[0], "retrying in 0.0 s (retry 1 of 3)"));
}

CAF_TEST(a 401 when no key was sent says which variable to set) {
  ::unsetenv("JP_TEST_PROVIDER_KEY");
  FakeProviderServer server;
  server.takes_no_key(); // its own 401 says it
  server.push({401, R"({"error":{"message":"missing key"}})"});
  auto got = run(config_for(server, "openai"));
  CAF_CHECK(contains(got.status.error, "the provider wants an API key (HTTP 401): missing key; export "
                                       "$JP_TEST_PROVIDER_KEY with it"));
}

// ---- Azure OpenAI's deployment URLs -------------------------------------------------

namespace {

/// A config for the fake server as an Azure OpenAI resource: base_url its deployment
/// `gpt-4o-prod` + `suffix`.
HttpProviderConfig azure_config(const FakeProviderServer& server, const std::string& suffix,
                                const std::string& api_version) {
  auto c = config_for(server, "openai");
  c.base_url = server.base_url() + "/openai/deployments/gpt-4o-prod" + suffix;
  c.api_version = api_version;
  return c;
}

} // namespace

CAF_TEST(an azure deployment gets the api version after the path and the key in api-key alone) {
  KeyEnv key;
  FakeProviderServer server; // refuses what Azure refuses: no api-version, Authorization, no api-key
  // As the config says it, and as Azure's portal shows the endpoint (its Target URI).
  for (auto [suffix, version, expected] :
       {std::tuple{"", "2024-10-21", "api-version=2024-10-21"},
        std::tuple{"/", "2024-10-21", "api-version=2024-10-21"},
        std::tuple{"/chat/completions?api-version=2025-01-01-preview", "", "api-version=2025-01-01-preview"},
        std::tuple{"?api-version=2024-10-21", "2024-10-21", "api-version=2024-10-21"}}) {
    server.push({200, provider_fixture("openai_tool_call.sse")});
    auto got = run(azure_config(server, suffix, version));
    CAF_CHECK_EQUAL(got.status ? "" : got.status.error, "");
    CAF_CHECK_EQUAL(got.calls.size(), 1u);
    auto seen = server.requests().back();
    CAF_CHECK_EQUAL(seen.path, "/openai/deployments/gpt-4o-prod/chat/completions");
    CAF_CHECK_EQUAL(seen.query, expected);
    CAF_CHECK_EQUAL(seen.headers["api-key"], "sk-test-123");
    CAF_CHECK(!seen.headers.count("authorization"));
  }
  CAF_CHECK_EQUAL(server.refused(), std::vector<std::string>{});
  // A key Azure refuses: the error names the variable, never the key.
  server.push({401, R"({"error":{"code":"401","message":"Access denied due to invalid subscription key or wrong API )"
                    R"(endpoint."}})"});
  auto refused = run(azure_config(server, "", "2024-10-21"));
  CAF_CHECK(contains(refused.status.error, "refused the API key in $JP_TEST_PROVIDER_KEY (HTTP 401): Access denied"));
  CAF_CHECK(!contains(refused.status.error, "sk-test-123"));
  // A deployment Azure does not know: the deployment names the model, not assistant.model.
  server.push({404, R"({"error":{"code":"DeploymentNotFound","message":"The API deployment for this resource does )"
                    R"(not exist."}})"});
  auto unknown = run(azure_config(server, "", "2024-10-21"));
  CAF_CHECK(contains(unknown.status.error, "/openai/deployments/gpt-4o-prod/chat/completions?api-version=2024-10-21: "
                                           "The API deployment for this resource does not exist.; check the "
                                           "deployment's name in assistant.base_url and assistant.api_version"));
}

CAF_TEST(an azure deployment without a key is refused by the service as azure refuses it) {
  ::unsetenv("JP_TEST_PROVIDER_KEY");
  FakeProviderServer server;
  auto got = run(azure_config(server, "", "2024-10-21"));
  CAF_CHECK(contains(got.status.error, "the provider wants an API key (HTTP 401): Access denied due to invalid "
                                       "subscription key"));
  CAF_CHECK(contains(got.status.error, "export $JP_TEST_PROVIDER_KEY with it"));
  CAF_REQUIRE_EQUAL(server.refused().size(), 1u);
}

CAF_TEST(the fake refuses what azure refuses of a deployment request) {
  std::map<std::string, std::string> keyed{{"api-key", "k"}};
  auto path = "/openai/deployments/d/chat/completions";
  CAF_CHECK(!azure_request_violation(path, "api-version=2024-10-21", keyed));
  CAF_CHECK(!azure_request_violation("/v1/chat/completions", "", {})); // not Azure's
  auto no_version = azure_request_violation(path, "", keyed);
  CAF_REQUIRE(no_version);
  CAF_CHECK_EQUAL(no_version->status, 404);
  CAF_CHECK_EQUAL(no_version->message, "Resource not found");
  // Kept: CAF_CHECK_EQUAL reads its arguments after a temporary's end.
  auto misnamed = azure_request_violation(path, "api=2024-10-21", keyed);
  CAF_REQUIRE(misnamed);
  CAF_CHECK_EQUAL(misnamed->status, 404);
  auto nameless = azure_request_violation("/openai/deployments/chat/completions", "api-version=2024-10-21", keyed);
  CAF_REQUIRE(nameless);
  CAF_CHECK_EQUAL(nameless->status, 404);
  auto bearer = azure_request_violation(path, "api-version=2024-10-21",
                                        {{"api-key", "k"}, {"authorization", "Bearer k"}});
  CAF_REQUIRE(bearer);
  CAF_CHECK_EQUAL(bearer->status, 401);
  CAF_CHECK(contains(bearer->message, "Access token is missing, invalid"));
  auto keyless = azure_request_violation(path, "api-version=2024-10-21", {});
  CAF_REQUIRE(keyless);
  CAF_CHECK_EQUAL(keyless->status, 401);
  CAF_CHECK(contains(keyless->message, "Access denied due to invalid subscription key"));
}

CAF_TEST(an azure base_url or api_version that makes no request url is refused naming what to set) {
  KeyEnv key;
  FakeProviderServer server;
  auto error_of = [](const HttpProviderConfig& c) {
    auto p = make_http_provider(c);
    return p ? std::string() : p.error();
  };
  auto missing = error_of(azure_config(server, "", ""));
  CAF_CHECK(contains(missing, "is an Azure OpenAI deployment URL, which needs an API version: set "
                              "assistant.api_version, e.g. \"2024-10-21\""));
  CAF_CHECK(contains(missing, "https://RESOURCE.openai.azure.com/openai/v1"));
  auto no_name = azure_config(server, "", "2024-10-21");
  no_name.base_url = server.base_url() + "/openai/deployments/";
  CAF_CHECK(contains(error_of(no_name), "is not an Azure OpenAI deployment URL: expected "
                                        "https://RESOURCE.openai.azure.com/openai/deployments/DEPLOYMENT"));
  CAF_CHECK(contains(error_of(azure_config(server, "/extensions/chat/completions", "2024-10-21")),
                     "is not an Azure OpenAI deployment URL"));
  CAF_CHECK(contains(error_of(azure_config(server, "", "2024-10-21&x=1")),
                     "assistant.api_version (\"2024-10-21&x=1\") is not an API version: expected one such as "
                     "\"2024-10-21\" or \"2025-04-01-preview\""));
  CAF_CHECK(contains(error_of(azure_config(server, "?api-version=2024-06-01", "2024-10-21")),
                     "the api-version is given twice, differently: 2024-06-01 in assistant.base_url and "
                     "\"2024-10-21\" in assistant.api_version; keep one"));
  auto anthropic = config_for(server, "anthropic");
  anthropic.api_version = "2024-10-21";
  CAF_CHECK(contains(error_of(anthropic), "assistant.api_version (\"2024-10-21\") is for provider openai"));
}

CAF_TEST(an api_version goes in the query of any openai server and the key stays in the bearer header) {
  // Other servers take an api-version too (Azure AI Foundry's models endpoint); a
  // query in base_url is kept after the path.
  KeyEnv key;
  FakeProviderServer server;
  server.push({200, provider_fixture("openai_text.sse")});
  auto c = config_for(server, "openai");
  c.base_url += "?tenant=a";
  c.api_version = "2024-05-01-preview";
  auto got = run(c);
  CAF_REQUIRE(got.status);
  auto seen = server.requests().back();
  CAF_CHECK_EQUAL(seen.path, "/v1/chat/completions");
  CAF_CHECK_EQUAL(seen.query, "tenant=a&api-version=2024-05-01-preview");
  CAF_CHECK_EQUAL(seen.headers["authorization"], "Bearer sk-test-123");
  CAF_CHECK(!seen.headers.count("api-key"));
}

CAF_TEST(an inquiry cancelled once still answers the questions asked after) {
  // One inquiry serves the main loop and every sub-agent: a sub-agent's turn
  // interrupted (aborted) cancels what is asked then, not every later question.
  struct Answering : Provider {
    bool blocking() const override { return false; }
    Status stream(const ChatRequest&, const StreamHooks& hooks) override {
      if (hooks.cancelled && hooks.cancelled())
        return Error{"cancelled"};
      ChatEvent text{chat_event_kind::text};
      text.text = R"({"inquiry_id":"go","answer":true})";
      hooks.emit(std::move(text));
      hooks.emit(ChatEvent{chat_event_kind::done});
      return Status::success();
    }
  };
  auto inquiry = make_llm_inquiry(std::make_shared<Answering>(), "m");
  Question q;
  q.id = "go";
  q.text = "Go on?";
  q.answer_type.kind = answer_kind::boolean;
  CAF_CHECK(inquiry->answer("t", q).has_value());
  inquiry->cancel();
  auto later = inquiry->answer("t", q);
  CAF_REQUIRE(later.has_value());
  CAF_CHECK(later->as_bool());
  // Each turn stops its own questions: one interrupted is asked nothing (its turn
  // end's inquiry included), another still is.
  std::atomic<bool> interrupted{true};
  auto stopped = [&] { return interrupted.load(); };
  CAF_CHECK(!inquiry->answer("t", q, stopped).has_value());
  CAF_CHECK(!inquiry->turn_end({HandleSummary{"h", "shell"}}, {}, stopped).ok());
  interrupted = false;
  CAF_CHECK(inquiry->answer("t", q, stopped).has_value());
}

CAF_TEST(an inquiry whose response_format the server refuses is asked again without it) {
  // DeepSeek's answer to structured outputs. The prompt asks for JSON anyway: the
  // inquiry goes on without response_format, and later ones never send it.
  KeyEnv key;
  FakeProviderServer server;
  auto answer = [](const std::string& json) {
    auto delta = Json::object().set("content", json);
    auto choice = [](Json d, Json finish) {
      return "data: " +
             Json::object().set("choices", Json(JsonArray{Json::object().set("index", 0).set("delta", std::move(d))
                                                            .set("finish_reason", std::move(finish))})).dump() +
             "\n\n";
    };
    return choice(delta, Json()) + choice(Json::object(), Json("stop")) + "data: [DONE]\n\n";
  };
  server.push({400, R"({"error":{"message":"This response_format type is unavailable now","type":)"
                    R"("invalid_request_error","param":null,"code":"invalid_request_error"}})"});
  server.push({200, answer(R"({"inquiry_id":"turn_end","answer":{"h":"wait"}})")});
  server.push({200, answer(R"({"inquiry_id":"turn_end","answer":{"h":"abort"}})")});
  auto provider = make_http_provider(config_for(server, "openai"));
  CAF_REQUIRE(provider.ok());
  auto inquiry = make_llm_inquiry(std::shared_ptr<Provider>(std::move(*provider)), "deepseek-chat");
  auto first = inquiry->turn_end({HandleSummary{"h", "shell"}}, {});
  CAF_REQUIRE(first.ok());
  CAF_CHECK(first->at("h") == inquiry_answer::wait);
  auto second = inquiry->turn_end({HandleSummary{"h", "shell"}}, {});
  CAF_REQUIRE(second.ok());
  CAF_CHECK(second->at("h") == inquiry_answer::abort);
  auto seen = server.requests();
  CAF_REQUIRE_EQUAL(seen.size(), 3u);
  CAF_CHECK(Json::parse(seen[0].body)->find("response_format") != nullptr);
  CAF_CHECK(Json::parse(seen[1].body)->find("response_format") == nullptr);
  CAF_CHECK(Json::parse(seen[2].body)->find("response_format") == nullptr);
  CAF_CHECK(contains(Json::parse(seen[1].body)->find("messages")->dump(), "Reply with only a JSON object"));
}

CAF_TEST(an inquiry answer cut off at the token limit says so) {
  // A reasoning model can spend the whole limit before the JSON is complete.
  KeyEnv key;
  FakeProviderServer server;
  auto chunk = [](Json delta, Json finish) {
    return "data: " +
           Json::object().set("choices", Json(JsonArray{Json::object().set("index", 0).set("delta", std::move(delta))
                                                          .set("finish_reason", std::move(finish))})).dump() +
           "\n\n";
  };
  server.push({200, chunk(Json::object().set("content", R"({"inquiry_id":"turn_end","ans)"), Json()) +
                      chunk(Json::object(), Json("length")) + "data: [DONE]\n\n"});
  auto provider = make_http_provider(config_for(server, "openai"));
  CAF_REQUIRE(provider.ok());
  auto inquiry = make_llm_inquiry(std::shared_ptr<Provider>(std::move(*provider)), "o3");
  auto got = inquiry->turn_end({HandleSummary{"h", "shell"}}, {});
  CAF_REQUIRE(!got.ok());
  CAF_CHECK(contains(got.error(), "the inquiry model's answer was cut off at the token limit before it was complete"));
  CAF_CHECK(contains(got.error(), "assistant.inquiry_model"));
}

CAF_TEST(an inquiry refused for another reason is not asked again) {
  KeyEnv key;
  FakeProviderServer server;
  server.push({400, R"({"error":{"message":"Invalid value for 'model'"}})"});
  auto provider = make_http_provider(config_for(server, "openai"));
  CAF_REQUIRE(provider.ok());
  auto inquiry = make_llm_inquiry(std::shared_ptr<Provider>(std::move(*provider)), "m");
  auto got = inquiry->turn_end({HandleSummary{"h", "shell"}}, {});
  CAF_REQUIRE(!got.ok());
  CAF_CHECK(contains(got.error(), "Invalid value for 'model'"));
  CAF_CHECK_EQUAL(server.requests().size(), 1u);
  // A schema the server read and found wrong is a bug of ours: said, not hidden.
  server.push({400, R"({"error":{"message":"Invalid schema for response_format 'inquiry_answer': In context=(), )"
                    R"('additionalProperties' is required to be supplied and to be false."}})"});
  auto schema = inquiry->turn_end({HandleSummary{"h", "shell"}}, {});
  CAF_REQUIRE(!schema.ok());
  CAF_CHECK(contains(schema.error(), "Invalid schema for response_format"));
  CAF_CHECK_EQUAL(server.requests().size(), 2u);
}
