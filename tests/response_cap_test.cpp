// The cap on a whole await response: ids, states and output files stay, results
// share the rest keeping their tails, and the response says how much was left out.
#define CAF_SUITE response_cap
#include <caf/test/unit_test.hpp>

#include <fmt/format.h>

#include "contains.hpp"
#include "messages/json.hpp"
#include "messages/json_codec.hpp"
#include "messages/response_cap.hpp"

using namespace jp;
using jp::testing::contains;

namespace {

std::string output_of(int i, size_t size) {
  std::string out(size, 'a' + i % 26);
  for (size_t k = 80; k < size; k += 81)
    out[k] = '\n';
  return out + fmt::format("\nEND of h{}\n", i);
}

} // namespace

CAF_TEST(an await over a hundred big results fits the cap and keeps every tail and output file) {
  AwaitResult r;
  uint64_t all_bytes = 0;
  for (int i = 0; i < 100; ++i) {
    HandleStatus s{fmt::format("h{}", i), ToolState::success(output_of(i, 32 * 1024)),
                   fmt::format("/ws/.jp/output/h{}.log", i)};
    all_bytes += s.state.content.size();
    r.completed.push_back(std::move(s));
  }
  r.completed[7].state = ToolState::success("small and whole");
  all_bytes -= 32 * 1024 + 12 - std::string("small and whole").size();
  r.completed[9].state = ToolState::failure(ToolError{"exit status 2", {"warning: x", std::string(50000, 'e'), "error: last line"}, false});
  r.pending.push_back(HandleStatus{"still", ToolState::waiting(Question{"input", "Name?", "", {}, ""})});
  CAF_REQUIRE_GREATER(await_result_text(r).size(), 3000000u);

  auto capped = cap_response(r, 64 * 1024);
  auto text = await_result_text(capped);
  CAF_CHECK_LESS_OR_EQUAL(text.size(), 64u * 1024);
  auto j = Json::parse(text);
  CAF_REQUIRE(j.ok());
  auto& completed = j->find("completed")->as_array();
  CAF_REQUIRE_EQUAL(completed.size(), 100u);
  for (int i = 0; i < 100; ++i) {
    auto& c = completed[static_cast<size_t>(i)];
    CAF_CHECK_EQUAL(c.find("id")->as_string(), fmt::format("h{}", i));
    CAF_CHECK_EQUAL(c.find("output_file")->as_string(), fmt::format("/ws/.jp/output/h{}.log", i));
    if (i == 7) {
      CAF_CHECK_EQUAL(c.find("result")->as_string(), "small and whole");
    } else if (i == 9) {
      auto& trace = c.find("error")->find("trace")->as_array();
      CAF_CHECK_EQUAL(c.find("error")->find("message")->as_string(), "exit status 2");
      CAF_CHECK_EQUAL(trace.back().as_string(), "error: last line");
      CAF_CHECK(trace.front().as_string().starts_with("…["));
    } else {
      auto result = c.find("result")->as_string();
      CAF_CHECK(result.starts_with("…["));
      CAF_CHECK(result.ends_with(fmt::format("\nEND of h{}\n", i)));
    }
  }
  auto& pending = j->find("pending")->as_array();
  CAF_REQUIRE_EQUAL(pending.size(), 1u);
  CAF_CHECK_EQUAL(pending[0].find("question")->find("text")->as_string(), "Name?");
  // What was left out, in all: what the response shows plus that is everything.
  auto omitted = static_cast<uint64_t>(j->find("omitted_bytes")->as_int());
  CAF_CHECK_EQUAL(omitted, capped.omitted_bytes);
  CAF_CHECK_GREATER(omitted, all_bytes - 64 * 1024);
  // It reads back.
  auto back = await_result_from_json(*j);
  CAF_REQUIRE(back.ok());
  CAF_CHECK(*back == capped);
}

CAF_TEST(an await over a thousand results whose shares hold no note leaves them out and fits the cap) {
  // Each result cut to its note alone ("…[2005 bytes omitted; fetch `h0` for all of
  // it]…") made an answer of 100 kB under a cap of 64 kB.
  AwaitResult r;
  for (int i = 0; i < 1000; ++i)
    r.completed.push_back(HandleStatus{fmt::format("h{}", i), ToolState::success(output_of(i, 2000)), ""});
  r.completed[5].state = ToolState::success("ok\n"); // no longer than what it would be left out for: it stays
  r.completed[3].state = ToolState::failure(ToolError{"exit status 1: " + std::string(3000, 'm'), {"trace line"}, false});
  auto capped = cap_response(r, 64 * 1024);
  auto text = await_result_text(capped);
  CAF_CHECK_LESS_OR_EQUAL(text.size(), 64u * 1024);
  auto j = Json::parse(text);
  CAF_REQUIRE(j.ok());
  auto& completed = j->find("completed")->as_array();
  CAF_REQUIRE_EQUAL(completed.size(), 1000u);
  CAF_CHECK_EQUAL(completed[0].find("result")->as_string(), "…"); // left out, not empty
  CAF_CHECK(!contains(text, "bytes omitted"));
  CAF_CHECK_EQUAL(completed[5].find("result")->as_string(), "ok\n");
  auto message = completed[3].find("error")->find("message")->as_string();
  CAF_CHECK(message.ends_with("mmm"));
  CAF_CHECK_LESS(message.size(), 3000u);
  CAF_CHECK_GREATER(capped.omitted_bytes, 1000u * 2000u);
}

CAF_TEST(a result the output cap cut already says what both cuts left out) {
  // A look kept 32 KiB of 109 KB (its marker says how much went); the response's share
  // then cut its head with that marker: the count said only what the second cut took.
  auto content = std::string(20000, 'h') + "\n…[76132 bytes omitted]…\n" + std::string(12000, 't') + "TAIL";
  AwaitResult r;
  r.completed.push_back(HandleStatus{"a", ToolState::success(content), "/spill.log"});
  auto capped = cap_response(r, 4096);
  auto& kept = capped.completed[0].state.content;
  CAF_REQUIRE(kept.ends_with("TAIL"));
  auto tail = kept.size() - kept.find('\n') - 1; // what is kept after the new marker
  uint64_t whole = 20000 + 76132 + 12000 + 4; // the output the look stood for
  CAF_CHECK_EQUAL(capped.omitted_bytes, whole - tail);
  CAF_CHECK(kept.starts_with(fmt::format("…[{} bytes omitted]…\n", whole - tail)));
  // A text that quotes a marker (not the output cap's own, on a line of its own) is text.
  AwaitResult quoted;
  quoted.completed.push_back(HandleStatus{
    "q", ToolState::success("it said …[999999 bytes omitted]… there" + std::string(20000, 'x') + "TAIL"), ""});
  auto q = cap_response(quoted, 4096);
  CAF_CHECK_LESS(q.omitted_bytes, 20100u);
}

CAF_TEST(a response within the cap is left as it is) {
  AwaitResult r;
  r.completed.push_back(HandleStatus{"a", ToolState::success("ok"), ""});
  r.completed.push_back(HandleStatus{"b", ToolState::success(std::string(1000, 'b')), "/f.log"});
  r.timed_out = true;
  auto capped = cap_response(r, 64 * 1024);
  CAF_CHECK(capped == r);
  CAF_CHECK_EQUAL(await_result_text(capped), to_json(capped).dump());
  CAF_CHECK(await_result_text(capped).find("omitted_bytes") == std::string::npos);
}

CAF_TEST(small results stay whole while large ones share the rest) {
  AwaitResult r;
  r.completed.push_back(HandleStatus{"small", ToolState::success("tiny"), ""});
  r.completed.push_back(HandleStatus{"big1", ToolState::success(std::string(10000, 'x') + "tail1"), ""});
  r.completed.push_back(HandleStatus{"big2", ToolState::success(std::string(10000, 'y') + "tail2"), ""});
  auto capped = cap_response(r, 4096);
  auto text = await_result_text(capped);
  CAF_CHECK_LESS_OR_EQUAL(text.size(), 4096u);
  CAF_CHECK_EQUAL(capped.completed[0].state.content, "tiny");
  // No spill file: the marker says where the whole result is.
  CAF_CHECK(capped.completed[1].state.content.starts_with("…[") &&
            capped.completed[1].state.content.find("bytes omitted; fetch `big1` for all of it]…\n") !=
              std::string::npos);
  CAF_CHECK(capped.completed[1].state.content.ends_with("tail1"));
  CAF_CHECK(capped.completed[2].state.content.ends_with("tail2"));
  // Both big ones got about half of what was left.
  CAF_CHECK_GREATER(capped.completed[1].state.content.size(), 1500u);
  CAF_CHECK_GREATER(capped.completed[2].state.content.size(), 1500u);
  CAF_CHECK_EQUAL(await_result_text(capped), to_json(capped).dump());
}

CAF_TEST(a failure keeps its message and stderr tail and its output gets what they leave) {
  AwaitResult r;
  auto failed = ToolState::failure({"exit status 1", {"error: t4 failed"}, false},
                                   std::string(20000, 'o') + "FAILED t4");
  r.completed.push_back(HandleStatus{"test", failed, ""});
  auto capped = cap_response(r, 2048);
  auto text = await_result_text(capped);
  CAF_CHECK_LESS_OR_EQUAL(text.size(), 2048u);
  auto& s = capped.completed[0].state;
  CAF_CHECK_EQUAL(s.error.message, "exit status 1");
  CAF_CHECK_EQUAL(s.error.trace, std::vector<std::string>{"error: t4 failed"});
  CAF_CHECK(s.content.starts_with("…[") && s.content.ends_with("FAILED t4"));
  CAF_CHECK_GREATER(s.content.size(), 1500u);
  auto kept = s.content.size() - (s.content.find('\n') + 1); // after the marker's line
  CAF_CHECK_EQUAL(capped.omitted_bytes + kept, 20009u);          // what was cut is counted
  // With no room beside the error, the output goes first.
  auto tight = cap_response(r, 200);
  CAF_CHECK(tight.completed[0].state.content.empty());
  CAF_CHECK_LESS_OR_EQUAL(await_result_text(tight).size(), 200u);
}

CAF_TEST(a binary output is capped as it will be written) {
  // Each byte that starts no UTF-8 sequence is written as U+FFFD, 3 bytes.
  AwaitResult r;
  r.completed.push_back(HandleStatus{"bin", ToolState::success(std::string(30000, '\xff')), ""});
  r.completed.push_back(HandleStatus{"bad", ToolState::failure({"exit status 1", {}, false}, std::string(30000, '\xfe')), ""});
  auto text = await_result_text(cap_response(r, 4096));
  CAF_CHECK_LESS_OR_EQUAL(text.size(), 4096u);
}

CAF_TEST(a failure whose output is left out keeps its error as it was) {
  // Whatever room is left, no marker of nothing omitted goes into its trace.
  AwaitResult r;
  r.completed.push_back(
    HandleStatus{"t", ToolState::failure({"exit status 1", {"error: boom"}, false}, std::string(5000, 'o')), ""});
  for (uint64_t cap = 200; cap < 600; ++cap) { // from what always stays (ids, states, the marker)
    auto capped = cap_response(r, cap);
    CAF_CHECK_LESS_OR_EQUAL(await_result_text(capped).size(), cap);
    for (auto& line : capped.completed[0].state.error.trace)
      CAF_CHECK(line.find("…[0 bytes omitted") == std::string::npos);
  }
}
