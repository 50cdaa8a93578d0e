#define CAF_SUITE provider_stream
#include <caf/test/unit_test.hpp>

#include <fmt/format.h>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "contains.hpp"
#include "provider_request_rules.hpp"
#include "messages/chat.hpp"
#include "runtime/provider/anthropic_format.hpp"
#include "runtime/provider/openai_format.hpp"
#include "runtime/provider/sse.hpp"

using namespace jp;

namespace {

std::string fixture(const std::string& name) {
  std::ifstream in(std::string(JP_SOURCE_DIR) + "/tests/providers/" + name, std::ios::binary);
  CAF_REQUIRE(in.good());
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// The events of `bytes` fed in pieces cut at `cuts` (increasing offsets).
std::vector<SseEvent> parse_pieces(std::string_view bytes, const std::vector<size_t>& cuts,
                                   SseParser& parser) {
  std::vector<SseEvent> events;
  auto collect = [&](const SseEvent& e) { events.push_back(e); };
  size_t from = 0;
  for (auto cut : cuts) {
    parser.feed(bytes.substr(from, cut - from), collect);
    from = cut;
  }
  parser.feed(bytes.substr(from), collect);
  return events;
}

std::vector<SseEvent> parse_all(std::string_view bytes) {
  SseParser parser;
  auto events = parse_pieces(bytes, {}, parser);
  CAF_CHECK(!parser.pending());
  return events;
}

std::string crlf(std::string_view lf) {
  std::string out;
  for (char c : lf) {
    if (c == '\n')
      out += '\r';
    out += c;
  }
  return out;
}

/// What a stream decoded to.
struct Decoded {
  std::vector<ChatEvent> events;
  std::string error;
  bool finished = false;

  std::string text() const {
    std::string s;
    for (const auto& e : events)
      if (e.kind == chat_event_kind::text)
        s += e.text;
    return s;
  }
  std::vector<ToolCall> calls() const {
    std::vector<ToolCall> v;
    for (const auto& e : events)
      if (e.kind == chat_event_kind::tool_call)
        v.push_back(e.call);
    return v;
  }
  size_t count(chat_event_kind kind) const {
    size_t n = 0;
    for (const auto& e : events)
      n += e.kind == kind;
    return n;
  }
  /// The finish reason of the one `done`, which is the last event but for a usage.
  std::string done_reason() const {
    CAF_REQUIRE(!events.empty());
    CAF_CHECK_EQUAL(count(chat_event_kind::done), 1u);
    auto last = events.back().kind == chat_event_kind::usage && events.size() > 1 ? events.end() - 2 : events.end() - 1;
    CAF_CHECK(last->kind == chat_event_kind::done);
    return last->finish_reason;
  }
  /// The usage reported last (tokens in, out); (-2, -2) if none was.
  std::pair<int64_t, int64_t> usage() const {
    std::pair<int64_t, int64_t> last{-2, -2};
    for (const auto& e : events)
      if (e.kind == chat_event_kind::usage)
        last = {e.tokens_in, e.tokens_out};
    return last;
  }
};

template <class Stream>
Decoded decode(std::string_view bytes) {
  Decoded out;
  Stream stream;
  SseParser parser;
  parser.feed(bytes, [&](const SseEvent& ev) {
    if (!out.error.empty())
      return;
    auto st = stream.on_event(ev, [&](ChatEvent e) { out.events.push_back(std::move(e)); });
    if (!st)
      out.error = st.error;
  });
  CAF_CHECK(!parser.pending());
  out.finished = stream.finished();
  return out;
}

/// Decodes SSE data payloads given directly (one event each).
template <class Stream>
Decoded decode_data(const std::vector<std::string>& datas) {
  Decoded out;
  Stream stream;
  for (const auto& d : datas) {
    auto st = stream.on_event(SseEvent{"", d},
                              [&](ChatEvent e) { out.events.push_back(std::move(e)); });
    if (!st) {
      out.error = st.error;
      break;
    }
  }
  out.finished = stream.finished();
  return out;
}

const std::vector<std::string> all_fixtures = {
  "openai_text.sse",    "openai_tool_call.sse",   "openai_parallel_tool_calls.sse",
  "anthropic_text.sse", "anthropic_tool_use.sse", "anthropic_parallel_tool_use.sse",
};

ToolCall call(std::string id, std::string name, std::string arguments) {
  return ToolCall{std::move(id), std::move(name), std::move(arguments)};
}

} // namespace

// ---- SSE ---------------------------------------------------------------------

CAF_TEST(sse fields and line endings) {
  auto events = parse_all("event: a\ndata: one\r\n\r\n"
                          "data:two\rdata:  three\r\r"
                          ": a comment\n"
                          "id: 7\nretry: 1000\ndata\nfoo: bar\ndata: x:y\n\n");
  CAF_REQUIRE_EQUAL(events.size(), 3u);
  CAF_CHECK(events[0] == (SseEvent{"a", "one"}));
  // One leading space is removed, a second one kept; data lines join with \n.
  CAF_CHECK(events[1] == (SseEvent{"", "two\n three"}));
  // `data` alone is an empty data line; id, retry and unknown fields are ignored.
  CAF_CHECK(events[2] == (SseEvent{"", "\nx:y"}));
}

CAF_TEST(sse events without data and comments are not dispatched) {
  auto events = parse_all(": keep-alive\n\nevent: ping\n\n\n\ndata: x\n\n");
  CAF_REQUIRE_EQUAL(events.size(), 1u);
  // The `event: ping` without data reset the type (WHATWG).
  CAF_CHECK(events[0] == (SseEvent{"", "x"}));
}

CAF_TEST(sse CR at the end of a chunk and LF at the start of the next are one ending) {
  SseParser parser;
  auto events = parse_pieces("data: a\r\ndata: b\r\n\r\n", {8}, parser);
  CAF_REQUIRE_EQUAL(events.size(), 1u);
  CAF_CHECK_EQUAL(events[0].data, "a\nb");
  CAF_CHECK(!parser.pending());
}

CAF_TEST(sse a leading byte order mark is skipped) {
  auto events = parse_all("\xEF\xBB\xBF" "data: x\n\n");
  CAF_REQUIRE_EQUAL(events.size(), 1u);
  CAF_CHECK_EQUAL(events[0].data, "x");
}

CAF_TEST(sse splitting a fixture anywhere yields the same events) {
  for (const auto& name : all_fixtures) {
    CAF_MESSAGE("fixture " << name);
    for (const auto& bytes : {fixture(name), crlf(fixture(name))}) {
      auto whole = parse_all(bytes);
      CAF_CHECK(whole.size() > 5);
      bool same = true;
      for (size_t cut = 1; cut < bytes.size() && same; ++cut) {
        SseParser parser;
        same = parse_pieces(bytes, {cut}, parser) == whole && !parser.pending();
        if (!same)
          CAF_FAIL("different events when cut at " << cut);
      }
      // And one byte per feed.
      std::vector<size_t> every;
      for (size_t i = 1; i < bytes.size(); ++i)
        every.push_back(i);
      SseParser parser;
      CAF_CHECK(parse_pieces(bytes, every, parser) == whole);
      CAF_CHECK(!parser.pending());
    }
  }
}

CAF_TEST(sse pending tells a stream cut mid event) {
  SseParser parser;
  auto ignore = [](const SseEvent&) {};
  CAF_CHECK(!parser.pending());
  parser.feed(": keep-alive\n", ignore);
  CAF_CHECK(!parser.pending());
  parser.feed("data: {\"a\"", ignore);
  CAF_CHECK(parser.pending()); // a partial line
  parser.feed(":1}\n", ignore);
  CAF_CHECK(parser.pending()); // a complete line, but no empty line yet
  parser.feed("\n", ignore);
  CAF_CHECK(!parser.pending());
  parser.feed("event: message_stop\n", ignore);
  CAF_CHECK(parser.pending());
}

CAF_TEST(sse an event larger than the cap overflows) {
  SseParser parser(64);
  std::vector<SseEvent> events;
  auto collect = [&](const SseEvent& e) { events.push_back(e); };
  parser.feed("data: small\n\n", collect);
  CAF_CHECK(!parser.overflowed());
  // Many lines, each below the cap: the event as a whole counts.
  for (int i = 0; i < 10 && !parser.overflowed(); ++i)
    parser.feed("data: 0123456789\n", collect);
  CAF_CHECK(parser.overflowed());
  parser.feed("\ndata: after\n\n", collect);
  CAF_REQUIRE_EQUAL(events.size(), 1u);
  CAF_CHECK_EQUAL(events[0].data, "small");
  // A single line longer than the cap, arriving in pieces.
  SseParser one(64);
  for (int i = 0; i < 10; ++i)
    one.feed("data: 0123456789", collect);
  CAF_CHECK(one.overflowed());
}

// ---- OpenAI stream -----------------------------------------------------------

CAF_TEST(openai text fixture) {
  auto d = decode<OpenAiStream>(fixture("openai_text.sse"));
  CAF_REQUIRE_EQUAL(d.error, "");
  CAF_CHECK_EQUAL(d.text(), "Hello! I ran `echo hi` and it printed:\n\n```\nhi\n```");
  CAF_CHECK_EQUAL(d.count(chat_event_kind::text), 8u); // the empty first delta is skipped
  CAF_CHECK(d.calls().empty());
  CAF_CHECK_EQUAL(d.done_reason(), "stop");
  CAF_CHECK(d.finished);
}

CAF_TEST(openai tool call fixture) {
  auto d = decode<OpenAiStream>(fixture("openai_tool_call.sse"));
  CAF_REQUIRE_EQUAL(d.error, "");
  CAF_CHECK_EQUAL(d.text(), "");
  CAF_CHECK(d.calls() == std::vector<ToolCall>{call("call_q3Xv8LmZ2pRtN6cW1yHbK9dF", "shell",
                                                    R"({"command":"echo hi"})")});
  CAF_CHECK_EQUAL(d.done_reason(), "tool_calls");
  CAF_CHECK(d.finished);
}

CAF_TEST(openai parallel tool calls fixture with interleaved deltas) {
  auto d = decode<OpenAiStream>(fixture("openai_parallel_tool_calls.sse"));
  CAF_REQUIRE_EQUAL(d.error, "");
  auto calls = d.calls();
  CAF_REQUIRE_EQUAL(calls.size(), 2u);
  CAF_CHECK(calls[0] == call("call_7HnR2kWq9ZtL4mXc8VbP1sJe", "shell", R"({"command":"echo hi"})"));
  CAF_CHECK(calls[1] == call("call_Ds5Yu3Fa6Gh1Jk8Lz2Xc4Vb9", "shell",
                             R"({"action":"spawn","id":"build","command":"sleep 1"})"));
  CAF_CHECK_EQUAL(d.done_reason(), "tool_calls");
}

CAF_TEST(openai refusal deltas are the answer text) {
  // Structured outputs: a refusal comes as delta.refusal, content null.
  auto d = decode<OpenAiStream>(fixture("openai_refusal.sse"));
  CAF_REQUIRE_EQUAL(d.error, "");
  CAF_CHECK_EQUAL(d.text(), "I'm sorry, I can't help with that.");
  CAF_CHECK_EQUAL(d.done_reason(), "stop");
}

CAF_TEST(streams cut at the token limit keep their calls and say why they ended) {
  // The decoders pass every call on, the cut one too: the loop runs none of them.
  auto o = decode<OpenAiStream>(fixture("openai_length_tool_calls.sse"));
  CAF_REQUIRE_EQUAL(o.error, "");
  auto calls = o.calls();
  CAF_REQUIRE_EQUAL(calls.size(), 2u);
  CAF_CHECK_EQUAL(calls[1].arguments, R"({"action":"spawn","id":"bu)");
  CAF_CHECK_EQUAL(o.done_reason(), "length");
  CAF_CHECK(cut_off_of(o.done_reason()) == cut_off::token_limit);
  auto a = decode<AnthropicStream>(fixture("anthropic_max_tokens_tool_use.sse"));
  CAF_REQUIRE_EQUAL(a.error, "");
  CAF_REQUIRE_EQUAL(a.calls().size(), 2u);
  CAF_CHECK_EQUAL(a.done_reason(), "max_tokens");
  CAF_CHECK(cut_off_of(a.done_reason()) == cut_off::token_limit);
  // Anthropic's full context window cuts a response as its token limit does.
  auto full = decode<AnthropicStream>(fixture("anthropic_context_window_exceeded_tool_use.sse"));
  CAF_REQUIRE_EQUAL(full.error, "");
  CAF_REQUIRE_EQUAL(full.calls().size(), 2u);
  CAF_CHECK_EQUAL(full.done_reason(), "model_context_window_exceeded");
  CAF_CHECK(cut_off_of(full.done_reason()) == cut_off::context_full);
  CAF_CHECK(cut_off_of("model_length") == cut_off::context_full); // Mistral's
  CAF_CHECK(cut_off_of("refusal") == cut_off::refused);
  CAF_CHECK(cut_off_of("content_filter") == cut_off::filtered);
  for (auto done : {"stop", "tool_calls", "end_turn", "tool_use", "stop_sequence", ""})
    CAF_CHECK(cut_off_of(done) == cut_off::none);
}

CAF_TEST(openai calls are emitted in index order and text right away) {
  auto d = decode_data<OpenAiStream>({
    R"({"choices":[{"index":0,"delta":{"content":"Running"},"finish_reason":null}]})",
    R"({"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"b","type":"function","function":{"name":"shell","arguments":"{\"command\":"}}]}}]})",
    R"({"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"a","type":"function","function":{"name":"shell","arguments":""}},{"index":1,"function":{"arguments":"\"ls\"}"}}]}}]})",
    R"({"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]})",
  });
  CAF_REQUIRE_EQUAL(d.error, "");
  CAF_REQUIRE_EQUAL(d.events.size(), 4u);
  CAF_CHECK(d.events[0] == (ChatEvent{chat_event_kind::text, "Running"}));
  // Empty arguments become an empty object.
  CAF_CHECK(d.events[1].call == call("a", "shell", "{}"));
  CAF_CHECK(d.events[2].call == call("b", "shell", R"({"command":"ls"})"));
  CAF_CHECK_EQUAL(d.done_reason(), "tool_calls");
}

CAF_TEST(openai DONE without finish reason ends the message once) {
  auto d = decode_data<OpenAiStream>({
    R"({"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c1","function":{"name":"shell","arguments":"{}"}}]}}]})",
    "[DONE]",
    "[DONE]",
  });
  CAF_REQUIRE_EQUAL(d.error, "");
  CAF_CHECK(d.calls() == std::vector<ToolCall>{call("c1", "shell", "{}")});
  CAF_CHECK_EQUAL(d.done_reason(), "tool_calls");
  CAF_CHECK(d.finished);

  // finish_reason then [DONE]: one done.
  auto e = decode_data<OpenAiStream>({
    R"({"choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":"length"}]})",
    "[DONE]",
  });
  CAF_CHECK_EQUAL(e.done_reason(), "length");
}

CAF_TEST(openai usage chunks with empty choices are fine) {
  auto d = decode_data<OpenAiStream>({
    R"({"choices":[{"index":0,"delta":{"content":"ok"},"finish_reason":null}],"usage":null})",
    R"({"choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":null})",
    R"({"choices":[],"usage":{"prompt_tokens":9,"completion_tokens":1,"total_tokens":10}})",
    "[DONE]",
  });
  CAF_REQUIRE_EQUAL(d.error, "");
  CAF_CHECK_EQUAL(d.text(), "ok");
  CAF_CHECK_EQUAL(d.done_reason(), "stop");
  // The usage chunk comes after the finish_reason: it is reported after `done`.
  CAF_CHECK(d.usage() == std::make_pair<int64_t, int64_t>(9, 1));
  CAF_CHECK(d.events.back().kind == chat_event_kind::usage);
}

CAF_TEST(usage counts the prompt cache and ignores what is not a count) {
  auto d = decode_data<AnthropicStream>({
    R"({"type":"message_start","message":{"usage":{"input_tokens":10,"cache_creation_input_tokens":5,"cache_read_input_tokens":100,"output_tokens":1}}})",
    R"({"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":-3}})",
    R"({"type":"message_stop"})",
  });
  CAF_CHECK(d.usage() == std::make_pair<int64_t, int64_t>(115, 1));
  auto none = decode_data<AnthropicStream>({R"({"type":"message_stop"})"});
  CAF_CHECK(none.usage() == std::make_pair<int64_t, int64_t>(-2, -2)); // none reported: no event
  auto o = decode_data<OpenAiStream>({
    R"({"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]})",
    R"({"choices":[],"usage":{"prompt_tokens":"many","completion_tokens":4}})",
    R"({"choices":[],"usage":{"prompt_tokens":1,"completion_tokens":1}})",
  });
  CAF_CHECK(o.usage() == std::make_pair<int64_t, int64_t>(-1, 4)); // once; a count that is none is unknown
}

CAF_TEST(openai stream not finished without finish reason or DONE) {
  auto d = decode_data<OpenAiStream>({
    R"({"choices":[{"index":0,"delta":{"content":"partial"},"finish_reason":null}]})",
  });
  CAF_CHECK_EQUAL(d.error, "");
  CAF_CHECK(!d.finished);
  CAF_CHECK_EQUAL(d.count(chat_event_kind::done), 0u);
}

CAF_TEST(openai calls that reuse an index or lack one stay apart) {
  // Some servers send each call of a parallel batch whole, all at index 0.
  auto d = decode_data<OpenAiStream>({
    R"({"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"x","function":{"name":"shell","arguments":"{\"command\":\"a\"}"}}]}}]})",
    R"({"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"y","function":{"name":"shell","arguments":"{\"command\":\"b\"}"}}]}}]})",
    R"({"choices":[{"index":0,"delta":{"tool_calls":[{"id":"z","function":{"name":"shell","arguments":"{\"command\":"}}]}}]})",
    R"({"choices":[{"index":0,"delta":{"tool_calls":[{"function":{"arguments":"\"c\"}"}}]}}]})",
    R"({"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]})",
  });
  CAF_REQUIRE_EQUAL(d.error, "");
  CAF_CHECK(d.calls() == (std::vector<ToolCall>{call("x", "shell", R"({"command":"a"})"),
                                                call("y", "shell", R"({"command":"b"})"),
                                                call("z", "shell", R"({"command":"c"})")}));
}

CAF_TEST(openai calls with neither index nor id sent whole in one chunk stay apart) {
  // They were one call, its arguments the two objects end to end.
  auto d = decode_data<OpenAiStream>({
    R"({"choices":[{"index":0,"delta":{"tool_calls":[{"type":"function","function":{"name":"shell","arguments":"{\"command\":\"echo A\"}"}},{"type":"function","function":{"name":"shell","arguments":"{\"command\":\"echo B\"}"}}]}}]})",
    R"({"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]})",
  });
  CAF_REQUIRE_EQUAL(d.error, "");
  auto calls = d.calls();
  CAF_REQUIRE_EQUAL(calls.size(), 2u);
  CAF_CHECK_EQUAL(calls[0].arguments, R"({"command":"echo A"})");
  CAF_CHECK_EQUAL(calls[1].arguments, R"({"command":"echo B"})");
  // A bare fragment repeating the name while the arguments are still cut is the same call.
  auto same = decode_data<OpenAiStream>({
    R"({"choices":[{"index":0,"delta":{"tool_calls":[{"function":{"name":"shell","arguments":"{\"command\":"}}]}}]})",
    R"({"choices":[{"index":0,"delta":{"tool_calls":[{"function":{"name":"shell","arguments":"\"c\"}"}}]}}]})",
    R"({"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]})",
  });
  CAF_REQUIRE_EQUAL(same.error, "");
  auto one = same.calls(); // a copy: a member of the temporary would die within the check
  CAF_REQUIRE_EQUAL(one.size(), 1u);
  CAF_CHECK_EQUAL(one[0].arguments, R"({"command":"c"})");
}

CAF_TEST(openai arguments sent as an object are the call s arguments) {
  auto d = decode_data<OpenAiStream>({
    R"({"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"x","function":{"name":"shell","arguments":{"command":"a"}}}]}}]})",
    R"({"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]})",
  });
  CAF_REQUIRE_EQUAL(d.error, "");
  CAF_CHECK(d.calls() == (std::vector<ToolCall>{call("x", "shell", R"({"command":"a"})")}));
}

CAF_TEST(openai a tool name sent whole more than once or in pieces is the one name) {
  auto d = decode_data<OpenAiStream>({
    R"({"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"x","function":{"name":"shell","arguments":""}}]}}]})",
    R"({"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"name":"shell","arguments":"{}"}}]}}]})",
    R"({"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"y","function":{"name":"sh","arguments":""}}]}}]})",
    R"({"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"name":"ell","arguments":"{}"}}]}}]})",
    R"({"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]})",
  });
  CAF_REQUIRE_EQUAL(d.error, "");
  CAF_CHECK(d.calls() == (std::vector<ToolCall>{call("x", "shell", "{}"), call("y", "shell", "{}")}));
}

CAF_TEST(openai usage counted in every chunk is the last count) {
  // Gemini's OpenAI endpoint: each chunk counts the response so far, the finish too.
  OpenAiStream stream;
  std::vector<ChatEvent> events;
  auto feed = [&](std::string data) {
    CAF_CHECK(stream.on_event(SseEvent{"", std::move(data)}, [&](ChatEvent e) { events.push_back(std::move(e)); }));
  };
  feed(R"({"choices":[{"index":0,"delta":{"content":"a"}}],"usage":{"prompt_tokens":9,"completion_tokens":1}})");
  CAF_CHECK(!stream.ended());
  feed(R"({"choices":[{"index":0,"delta":{"content":"b"},"finish_reason":"stop"}],"usage":{"prompt_tokens":9,"completion_tokens":7}})");
  CAF_CHECK(stream.ended()); // counted with the finish: nothing more to wait for
  Decoded d;
  d.events = events;
  CAF_CHECK(d.usage() == std::make_pair<int64_t, int64_t>(9, 7));
}

CAF_TEST(openai reasoning sent in both fields is shown once) {
  auto d = decode_data<OpenAiStream>({
    R"({"choices":[{"index":0,"delta":{"reasoning_content":"think","reasoning":"think"}}]})",
    R"({"choices":[{"index":0,"delta":{"reasoning":"more"}}]})",
    R"({"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]})",
  });
  std::string shown;
  for (auto& e : d.events)
    if (e.kind == chat_event_kind::reasoning)
      shown += e.text + "|";
  CAF_CHECK_EQUAL(shown, "think|more|");
}

CAF_TEST(openai errors in the stream with an HTTP status as their code are transient as that status is) {
  // OpenRouter: {"error":{"code":502,"message":"..."}} once the stream has begun.
  for (auto [code, transient] : {std::pair{"502", true}, std::pair{"429", true}, std::pair{"408", true},
                                 std::pair{"400", false}, std::pair{"\"invalid_request_error\"", false}}) {
    OpenAiStream stream;
    auto st = stream.on_event(SseEvent{"", fmt::format(R"({{"error":{{"code":{},"message":"down"}}}})", code)},
                              [](ChatEvent) {});
    CAF_CHECK(!st);
    CAF_CHECK_EQUAL(stream.error_transient(), transient);
  }
}

CAF_TEST(openai error object in the stream) {
  auto d = decode_data<OpenAiStream>({
    R"({"choices":[{"index":0,"delta":{"content":"Hel"},"finish_reason":null}]})",
    R"({"error":{"message":"The server had an error while processing your request.","type":"server_error","param":null,"code":null}})",
  });
  CAF_CHECK_EQUAL(d.error, "provider error: The server had an error while processing your request.");
  CAF_CHECK(!d.finished);
}

CAF_TEST(openai malformed JSON) {
  std::string data = R"({"choices":[{"index":0,"delta":{"content":")" + std::string(300, 'x');
  auto d = decode_data<OpenAiStream>({data});
  CAF_CHECK(d.error.starts_with("malformed stream from the provider: invalid JSON"));
  auto tail = " in event: " + data.substr(0, 200);
  CAF_CHECK(d.error.ends_with(tail));
  auto e = decode_data<OpenAiStream>({"[1,2]"});
  CAF_CHECK_EQUAL(e.error,
                  "malformed stream from the provider: expected a JSON object in event: [1,2]");
}

// ---- Anthropic stream --------------------------------------------------------

CAF_TEST(anthropic text fixture) {
  auto d = decode<AnthropicStream>(fixture("anthropic_text.sse"));
  CAF_REQUIRE_EQUAL(d.error, "");
  CAF_CHECK_EQUAL(d.text(), "Hello! I ran `echo hi` and it printed:\n\n```\nhi\n```");
  CAF_CHECK_EQUAL(d.count(chat_event_kind::text), 4u);
  CAF_CHECK(d.calls().empty());
  CAF_CHECK_EQUAL(d.done_reason(), "end_turn");
  CAF_CHECK(d.finished);
  // message_start's input tokens (fresh and cached), message_delta's output tokens.
  CAF_CHECK(d.usage() == std::make_pair<int64_t, int64_t>(412, 24));
}

CAF_TEST(anthropic tool use fixture) {
  auto d = decode<AnthropicStream>(fixture("anthropic_tool_use.sse"));
  CAF_REQUIRE_EQUAL(d.error, "");
  CAF_CHECK(d.calls() == std::vector<ToolCall>{call("toolu_01Ab3CdE5fGh7JkL9mNp2QrS", "shell",
                                                    R"({"command": "echo hi"})")});
  CAF_CHECK_EQUAL(d.done_reason(), "tool_use");
}

CAF_TEST(anthropic parallel tool use fixture) {
  auto d = decode<AnthropicStream>(fixture("anthropic_parallel_tool_use.sse"));
  CAF_REQUIRE_EQUAL(d.error, "");
  CAF_REQUIRE_EQUAL(d.events.size(), 7u); // text, two calls, usage, done
  CAF_CHECK_EQUAL(d.text(), "I'll start the build in the background and say hi meanwhile.");
  // Text first, then the calls in block order, then done.
  for (size_t i = 0; i < 3; ++i)
    CAF_CHECK(d.events[i].kind == chat_event_kind::text);
  CAF_CHECK(d.events[3].call ==
            call("toolu_01Nm4Pq7Rs2Tu5Vw8Xy1Za3Bc", "shell", R"({"command": "echo hi"})"));
  CAF_CHECK(d.events[4].call == call("toolu_01Cd6Ef9Gh2Ij5Kl8Mn1Op4Qr", "shell",
                                     R"({"action": "spawn", "id": "build", "command": "sleep 1"})"));
  CAF_CHECK_EQUAL(d.done_reason(), "tool_use");
}

CAF_TEST(anthropic tool use without input and unknown events) {
  auto d = decode_data<AnthropicStream>({
    R"({"type":"message_start","message":{"id":"m","content":[]}})",
    R"({"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}})",
    R"({"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"hmm"}})",
    R"({"type":"content_block_stop","index":0})",
    R"({"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"t1","name":"await","input":{}}})",
    R"({"type":"content_block_stop","index":1})",
    R"({"type":"some_future_event"})",
    R"({"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":5}})",
    R"({"type":"message_stop"})",
    R"({"type":"message_stop"})",
  });
  CAF_REQUIRE_EQUAL(d.error, "");
  CAF_CHECK_EQUAL(d.text(), "");
  CAF_CHECK(d.calls() == std::vector<ToolCall>{call("t1", "await", "{}")});
  CAF_CHECK_EQUAL(d.done_reason(), "tool_use");
}

CAF_TEST(anthropic tool use whose input comes whole in its start) {
  // Some compatible servers give the input in content_block_start and no delta; a
  // delta that comes still counts (Anthropic's own start has input {}).
  auto d = decode_data<AnthropicStream>({
    R"({"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"t1","name":"shell","input":{"command":"echo whole"}}})",
    R"({"type":"content_block_stop","index":0})",
    R"({"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"t2","name":"shell","input":{"command":"x"}}})",
    R"({"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"command\":\"echo streamed\"}"}})",
    R"({"type":"content_block_stop","index":1})",
    R"({"type":"message_stop"})",
  });
  CAF_REQUIRE_EQUAL(d.error, "");
  CAF_CHECK(d.calls() == (std::vector<ToolCall>{call("t1", "shell", R"({"command":"echo whole"})"),
                                                call("t2", "shell", R"({"command":"echo streamed"})")}));
}

CAF_TEST(anthropic text blocks on either side of a tool use stay apart) {
  auto d = decode_data<AnthropicStream>({
    R"({"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}})",
    R"({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Let me look."}})",
    R"({"type":"content_block_stop","index":0})",
    R"({"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"t1","name":"shell","input":{}}})",
    R"({"type":"content_block_stop","index":1})",
    R"({"type":"content_block_start","index":2,"content_block":{"type":"text","text":""}})",
    R"({"type":"content_block_delta","index":2,"delta":{"type":"text_delta","text":"Found it."}})",
    R"({"type":"content_block_stop","index":2})",
    R"({"type":"message_stop"})",
  });
  CAF_REQUIRE_EQUAL(d.error, "");
  CAF_CHECK_EQUAL(d.text(), "Let me look.\n\nFound it.");
}

CAF_TEST(anthropic a text delta with half of a UTF-16 pair is text with U+FFFD for the half) {
  // Valid JSON that simdjson alone refused: the whole turn failed as a malformed stream.
  auto d = decode_data<AnthropicStream>({
    R"({"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}})",
    R"({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"smile \ud83d"}})",
    R"({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"\ude00 done"}})",
    R"({"type":"content_block_stop","index":0})",
    R"({"type":"message_stop"})",
  });
  CAF_REQUIRE_EQUAL(d.error, "");
  CAF_CHECK_EQUAL(d.text(), "smile \xEF\xBF\xBD\xEF\xBF\xBD done");
}

CAF_TEST(anthropic error event) {
  std::string stream = fixture("anthropic_text.sse");
  stream = stream.substr(0, stream.find("event: content_block_stop"));
  stream += "event: error\ndata: {\"type\": \"error\", \"error\": {\"type\": \"overloaded_error\", "
            "\"message\": \"Overloaded\"}}\n\n";
  auto d = decode<AnthropicStream>(stream);
  CAF_CHECK_EQUAL(d.error, "provider error: overloaded_error: Overloaded");
  CAF_CHECK_EQUAL(d.text(), "Hello! I ran `echo hi` and it printed:\n\n```\nhi\n```");
  CAF_CHECK(!d.finished);
}

CAF_TEST(anthropic malformed JSON) {
  auto d = decode_data<AnthropicStream>({R"({"type":"content_block_delta","index":0,)"});
  CAF_CHECK(d.error.starts_with("malformed stream from the provider: invalid JSON"));
  CAF_CHECK(d.error.ends_with(R"( in event: {"type":"content_block_delta","index":0,)"));
}

// ---- Request bodies ----------------------------------------------------------

namespace {

ChatRequest conversation(std::string model, std::string tools_json) {
  ChatRequest r;
  r.model = std::move(model);
  r.system = "You run tools for the user.";
  r.tools_json = std::move(tools_json);
  r.max_tokens = 1000;
  r.messages.push_back(ChatMessage{chat_role::user, "Build it and say hi."});
  ChatMessage assistant{chat_role::assistant, "On it."};
  assistant.tool_calls = {call("call_1", "shell", R"({"action":"spawn","id":"build","command":"sleep 1"})"),
                          call("call_2", "shell", R"({"command":"echo hi"})")};
  r.messages.push_back(assistant);
  ChatMessage result1{chat_role::tool, R"({"id":"build","state":"running"})"};
  result1.tool_call_id = "call_1";
  result1.tool_name = "shell";
  r.messages.push_back(result1);
  ChatMessage result2{chat_role::tool, "refused: the user said no"};
  result2.tool_call_id = "call_2";
  result2.tool_name = "shell";
  result2.tool_error = true;
  r.messages.push_back(result2);
  r.messages.push_back(ChatMessage{chat_role::user, "Thanks. Now wait for the build."});
  return r;
}

} // namespace

CAF_TEST(openai request body) {
  auto tools = R"([{"type":"function","function":{"name":"shell","parameters":{"type":"object"}}}])";
  auto body = openai_request_body(conversation("gpt-4o", tools));
  CAF_CHECK_EQUAL(body,
    R"json({"model":"gpt-4o","stream":true,"stream_options":{"include_usage":true},"messages":[)json"
    R"json({"role":"system","content":"You run tools for the user."},)json"
    R"json({"role":"user","content":"Build it and say hi."},)json"
    R"json({"role":"assistant","content":"On it.","tool_calls":[)json"
      R"json({"id":"call_1","type":"function","function":{"name":"shell","arguments":"{\"action\":\"spawn\",\"id\":\"build\",\"command\":\"sleep 1\"}"}},)json"
      R"json({"id":"call_2","type":"function","function":{"name":"shell","arguments":"{\"command\":\"echo hi\"}"}}]},)json"
    R"json({"role":"tool","tool_call_id":"call_1","content":"{\"id\":\"build\",\"state\":\"running\"}"},)json"
    R"json({"role":"tool","tool_call_id":"call_2","content":"refused: the user said no"},)json"
    R"json({"role":"user","content":"Thanks. Now wait for the build."}],)json"
    R"json("tools":[{"type":"function","function":{"name":"shell","parameters":{"type":"object"}}}],)json"
    R"json("max_tokens":1000})json");
}

CAF_TEST(openai what the provider wants back goes back with its message and call and takes nothing of ours) {
  ChatRequest r;
  r.model = "m";
  r.max_tokens = 0;
  ChatMessage said{chat_role::assistant};
  said.tool_calls = {call("c", "shell", "{}")};
  said.tool_calls[0].provider_extra = R"({"extra_content":{"google":{"thought_signature":"s"}},"id":"not ours",)"
                                      R"("jp_model":"m"})";
  said.provider_extra = R"({"reasoning_content":"think","role":"user","jp_model":"m"})";
  ChatMessage result{chat_role::tool, "ok"};
  result.tool_call_id = "c";
  r.messages = {ChatMessage{chat_role::user, "hi"}, said, result};
  CAF_CHECK(jp::testing::contains(openai_request_body(r),
    R"json({"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"shell",)json"
    R"json("arguments":"{}"},"extra_content":{"google":{"thought_signature":"s"}}}],"reasoning_content":"think"})json"));
  // Another model, or another server behind the same API, may refuse them: they go
  // back to the model that asked alone.
  r.model = "other";
  auto to_other = openai_request_body(r);
  CAF_CHECK(!jp::testing::contains(to_other, "extra_content"));
  CAF_CHECK(!jp::testing::contains(to_other, "reasoning_content"));
  CAF_CHECK(!jp::testing::contains(to_other, "jp_model"));
  // And the decoder keeps them: a call's extra_content, the reasoning of a response
  // with calls, each naming the model asked.
  OpenAiStream stream("m");
  std::vector<ChatEvent> events;
  for (auto data : {
         R"({"choices":[{"index":0,"delta":{"reasoning_content":"think"}}]})",
         R"({"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c","extra_content":{"google":{"thought_signature":"s"}},"function":{"name":"shell","arguments":"{}"}}]}}]})",
         R"({"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]})"})
    CAF_CHECK(stream.on_event(SseEvent{"", data}, [&](ChatEvent e) { events.push_back(std::move(e)); }));
  Decoded d;
  d.events = events;
  auto calls = d.calls();
  CAF_REQUIRE_EQUAL(calls.size(), 1u);
  CAF_CHECK_EQUAL(calls[0].provider_extra, R"({"extra_content":{"google":{"thought_signature":"s"}},"jp_model":"m"})");
  for (auto& e : d.events)
    if (e.kind == chat_event_kind::done)
      CAF_CHECK_EQUAL(e.provider_extra, R"({"reasoning_content":"think","jp_model":"m"})");
  // Without calls too: the answer that ends a turn of calls is asked back with its
  // reasoning (DeepSeek: 400 "Missing `reasoning_content`" without it).
  auto text = decode_data<OpenAiStream>({
    R"({"choices":[{"index":0,"delta":{"reasoning_content":"think","content":"hi"}}]})",
    R"({"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]})",
  });
  for (auto& e : text.events)
    if (e.kind == chat_event_kind::done)
      CAF_CHECK_EQUAL(e.provider_extra, R"({"reasoning_content":"think","jp_model":""})");
}

CAF_TEST(openai reasoning_details streamed in pieces are merged by index and type) {
  ReasoningDetails merged;
  for (auto pieces : {
         // Anthropic behind OpenRouter: the text in pieces, the signature last.
         R"([{"type":"reasoning.text","text":"Let me ","signature":null,"id":null,"format":"anthropic-claude-v1","index":0}])",
         R"([{"type":"reasoning.text","text":"check.","index":0}])",
         R"([{"type":"reasoning.text","text":"","signature":"sig-1","index":0}])",
         // Gemini's signature at the same index as its text: another entry.
         R"([{"type":"reasoning.encrypted","data":"ENC","id":"call_1","format":"google-gemini-v1","index":0}])",
         // Two at once, a summary in pieces, and entries without an index: each whole.
         R"([{"type":"reasoning.summary","summary":"Plan ","index":1},{"type":"reasoning.summary","summary":"made.","index":1}])",
         R"([{"type":"reasoning.encrypted","data":"A"},{"type":"reasoning.encrypted","data":"B"},"not an object"])"}) {
    auto parsed = Json::parse(pieces);
    CAF_REQUIRE(parsed.ok());
    merged.add(*parsed);
  }
  CAF_CHECK_EQUAL(merged.merged().dump(),
    R"json([{"type":"reasoning.text","text":"Let me check.","signature":"sig-1","id":null,"format":"anthropic-claude-v1","index":0},)json"
    R"json({"type":"reasoning.encrypted","data":"ENC","id":"call_1","format":"google-gemini-v1","index":0},)json"
    R"json({"type":"reasoning.summary","summary":"Plan made.","index":1},)json"
    R"json({"type":"reasoning.encrypted","data":"A"},{"type":"reasoning.encrypted","data":"B"}])json");
}

CAF_TEST(openai reasoning_details of a response with calls come on done and go back to that model alone) {
  // OpenRouter's stream (Gemini 3 behind it): the reasoning text in two deltas, the
  // thought signature beside the call.
  auto d = decode<OpenAiStream>(fixture("openrouter_gemini3_reasoning_details.sse"));
  CAF_REQUIRE_EQUAL(d.error, "");
  CAF_CHECK_EQUAL(d.done_reason(), "tool_calls");
  CAF_CHECK(d.count(chat_event_kind::reasoning) == 2u);
  auto calls = d.calls();
  CAF_REQUIRE_EQUAL(calls.size(), 1u);
  CAF_CHECK_EQUAL(calls[0].id, "tool_describe_tools_Kq2bW7");
  std::string extra;
  for (auto& e : d.events)
    if (e.kind == chat_event_kind::done)
      extra = e.provider_extra;
  // Decoded without a model (decode<> makes its stream so): named "" as the model.
  auto details = R"json([{"type":"reasoning.text","text":"**Choosing the tool**\n\nThe user asks what the shell tool )json"
                 R"json(does. Describing it will tell me.","format":"google-gemini-v1","index":0},)json"
                 R"json({"id":"tool_describe_tools_Kq2bW7","format":"google-gemini-v1","index":0,)json"
                 R"json("type":"reasoning.encrypted","data":"CiQBjz1rX2Zha2UtdGhvdWdodC1zaWduYXR1cmUtZm9yLXRlc3Rz"}])json";
  CAF_CHECK_EQUAL(extra, fmt::format(R"({{"reasoning_details":{},"jp_model":""}})", details));
  // Back on the assistant message, unmodified, to the model that sent them.
  ChatRequest r;
  r.model = "google/gemini-3-pro-preview";
  r.max_tokens = 0;
  ChatMessage said{chat_role::assistant};
  said.tool_calls = calls;
  said.provider_extra = fmt::format(R"({{"reasoning_details":{},"jp_model":"google/gemini-3-pro-preview"}})", details);
  ChatMessage result{chat_role::tool, "ok"};
  result.tool_call_id = calls[0].id;
  r.messages = {ChatMessage{chat_role::user, "what does shell do?"}, said, result};
  auto body = *Json::parse(openai_request_body(r));
  auto accepted = jp::testing::openai_request_violation(body);
  CAF_CHECK_EQUAL(accepted ? accepted->message : "", "");
  auto& sent = body.find("messages")->as_array().at(1);
  CAF_REQUIRE(sent.find("reasoning_details"));
  CAF_CHECK_EQUAL(sent.find("reasoning_details")->dump(), details);
  // Without them, OpenRouter refuses it for Gemini 3, in Google's words.
  r.model = "google/gemini-3-flash-preview"; // another model: they are not its own
  auto v = jp::testing::openai_request_violation(*Json::parse(openai_request_body(r)));
  CAF_REQUIRE(v);
  CAF_CHECK_EQUAL(v->message, "Provider returned error");
  CAF_CHECK(jp::testing::contains(v->raw, "Gemini models require OpenRouter reasoning details to be preserved"));
  CAF_CHECK(jp::testing::contains(v->raw, "function call `default_api:describe_tools`"));
  // A response without calls keeps none.
  auto text = decode_data<OpenAiStream>({
    R"({"choices":[{"index":0,"delta":{"content":"hi","reasoning_details":[{"type":"reasoning.text","text":"t","index":0}]}}]})",
    R"({"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]})",
  });
  for (auto& e : text.events)
    if (e.kind == chat_event_kind::done)
      CAF_CHECK_EQUAL(e.provider_extra, "");
}

CAF_TEST(openai to a mistral model a user message after tool results goes with the last result) {
  // Mistral: "Unexpected role 'user' after role 'tool'" (HTTP 400).
  for (auto model : {"mistral-large-latest", "mistralai/Devstral-Small-2505", "gpt-4o"}) {
    auto r = conversation(model, "");
    auto body = *Json::parse(openai_request_body(r));
    auto v = jp::testing::openai_request_violation(body);
    CAF_CHECK(!v || v->message.find("after role 'tool'") == std::string::npos); // its ids are another matter
    auto& sent = body.find("messages")->as_array();
    bool mistral = model != std::string("gpt-4o");
    CAF_CHECK_EQUAL(sent.back().string_at("role"), mistral ? "tool" : "user");
    if (mistral)
      CAF_CHECK_EQUAL(sent.back().string_at("content"), "refused: the user said no\n\n[The user, after these "
                                                        "results:]\nThanks. Now wait for the build.");
  }
}

CAF_TEST(openai an assistant message after one with text alone joins it) {
  // The turn end's await (an inquiry answered "wait") follows the answer it waited
  // behind: two assistant messages in a row, which Mistral refuses ("Unexpected role
  // 'assistant' after role 'assistant'").
  ChatRequest r;
  r.model = "mistral-large-latest";
  ChatMessage waited{chat_role::assistant, "Started it."};
  ChatMessage await_call{chat_role::assistant};
  await_call.tool_calls = {call("jp0000000", "await", R"({"all":["w1"]})")};
  ChatMessage result{chat_role::tool, "w1: done", {}, "jp0000000", "await"};
  r.messages = {ChatMessage{chat_role::user, "go"}, waited, await_call, result};
  auto body = *Json::parse(openai_request_body(r, false)); // Mistral takes no stream_options
  auto v = jp::testing::openai_request_violation(body);
  CAF_CHECK_EQUAL(v ? v->message : "", "");
  auto& sent = body.find("messages")->as_array();
  CAF_REQUIRE_EQUAL(sent.size(), 3u);
  CAF_CHECK_EQUAL(sent[1].string_at("content"), "Started it.");
  CAF_CHECK_EQUAL(sent[1].find("tool_calls")->as_array().at(0).string_at("id"), "jp0000000");
  CAF_CHECK_EQUAL(sent[2].string_at("role"), "tool");
  // Two with text alone are one text; one with calls is not joined by the next.
  r.messages = {ChatMessage{chat_role::user, "go"}, waited, ChatMessage{chat_role::assistant, "More."}};
  auto texts = *Json::parse(openai_request_body(r));
  CAF_REQUIRE_EQUAL(texts.find("messages")->as_array().size(), 2u);
  CAF_CHECK_EQUAL(texts.find("messages")->as_array()[1].string_at("content"), "Started it.\n\nMore.");
  // What each carries besides (a provider's reasoning) is kept, in order.
  ChatMessage reasoned{chat_role::assistant, "First."};
  reasoned.provider_extra = R"({"reasoning_content":"think 1","jp_model":"deepseek-chat"})";
  ChatMessage reasoned_too{chat_role::assistant, "Second."};
  reasoned_too.provider_extra = R"({"reasoning_content":"think 2","jp_model":"deepseek-chat"})";
  r.model = "deepseek-chat";
  r.messages = {ChatMessage{chat_role::user, "go"}, reasoned, reasoned_too};
  auto kept = *Json::parse(openai_request_body(r));
  CAF_REQUIRE_EQUAL(kept.find("messages")->as_array().size(), 2u);
  CAF_CHECK_EQUAL(kept.find("messages")->as_array()[1].string_at("reasoning_content"), "think 1\n\nthink 2");
}

CAF_TEST(openai request body minimal) {
  ChatRequest r;
  r.model = "llama3";
  r.max_tokens = 0;
  ChatMessage only_calls{chat_role::assistant};
  only_calls.tool_calls = {call("c", "shell", "")};
  r.messages = {ChatMessage{chat_role::user, "hi"}, only_calls};
  CAF_CHECK_EQUAL(openai_request_body(r),
    R"json({"model":"llama3","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"hi"},)json"
    R"json({"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"shell","arguments":"{}"}}]},)json"
    // A call needs its answer right after it: one that has none says so.
    R"json({"role":"tool","tool_call_id":"c","content":"no result was recorded for this call"}]})json");
}

CAF_TEST(anthropic request body merges roles) {
  auto tools = R"([{"name":"shell","input_schema":{"type":"object"}}])";
  auto body = anthropic_request_body(conversation("claude-sonnet-4-5", tools));
  CAF_CHECK_EQUAL(body,
    R"json({"model":"claude-sonnet-4-5","max_tokens":1000,"stream":true,)json"
    R"json("system":[{"type":"text","text":"You run tools for the user.","cache_control":{"type":"ephemeral"}}],)json"
    R"json("messages":[)json"
    // A breakpoint where the previous request ended too (its last user turn).
    R"json({"role":"user","content":[{"type":"text","text":"Build it and say hi.","cache_control":{"type":"ephemeral"}}]},)json"
    R"json({"role":"assistant","content":[{"type":"text","text":"On it."},)json"
      R"json({"type":"tool_use","id":"call_1","name":"shell","input":{"action":"spawn","id":"build","command":"sleep 1"}},)json"
      R"json({"type":"tool_use","id":"call_2","name":"shell","input":{"command":"echo hi"}}]},)json"
    R"json({"role":"user","content":[)json"
      R"json({"type":"tool_result","tool_use_id":"call_1","content":"{\"id\":\"build\",\"state\":\"running\"}"},)json"
      R"json({"type":"tool_result","tool_use_id":"call_2","content":"refused: the user said no","is_error":true},)json"
      R"json({"type":"text","text":"Thanks. Now wait for the build.","cache_control":{"type":"ephemeral"}}]}],)json"
    R"json("tools":[{"name":"shell","input_schema":{"type":"object"}}]})json");
}

CAF_TEST(anthropic request body defaults and odd input) {
  ChatRequest r;
  r.model = "claude-haiku-4-5";
  r.max_tokens = 0;
  ChatMessage assistant{chat_role::assistant};
  assistant.tool_calls = {call("t", "shell", "not json"), call("u", "shell", "[1]")};
  // An empty assistant message is dropped; the users around it merge.
  r.messages = {ChatMessage{chat_role::user, "a"}, ChatMessage{chat_role::assistant},
                ChatMessage{chat_role::user, "b"}, assistant};
  CAF_CHECK_EQUAL(anthropic_request_body(r),
    R"json({"model":"claude-haiku-4-5","max_tokens":4096,"stream":true,"messages":[)json"
    R"json({"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b","cache_control":{"type":"ephemeral"}}]},)json"
    R"json({"role":"assistant","content":[{"type":"tool_use","id":"t","name":"shell","input":{}},)json"
    R"json({"type":"tool_use","id":"u","name":"shell","input":{}}]},)json"
    R"json({"role":"user","content":[)json"
      R"json({"type":"tool_result","tool_use_id":"t","content":"no result was recorded for this call","is_error":true},)json"
      R"json({"type":"tool_result","tool_use_id":"u","content":"no result was recorded for this call","is_error":true,)json"
      R"json("cache_control":{"type":"ephemeral"}}]}]})json");
}
