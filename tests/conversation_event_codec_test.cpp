#define CAF_SUITE conversation_event_codec
#include <caf/test/unit_test.hpp>

#include "json_helpers.hpp"

#include <string>

#include "messages/conversation_event_codec.hpp"
#include "messages/json_codec.hpp"

using namespace jp;
using jp::testing::parse;

namespace {

// Each kind as events.jsonl has always held it (keys in this order), and read back
// to the same line.
void check_line(const ConversationEvent& e, std::string_view line) {
  auto text = to_json(e).dump();
  CAF_CHECK_EQUAL(text, line);
  auto back = conversation_event_from(parse(line));
  CAF_REQUIRE(back.ok());
  CAF_CHECK_EQUAL(to_json(*back).dump(), line);
}

Notification stopped_note() {
  return Notification{"tool", "tool.stopped", "warning", "Handle `b` (shell) failed", "b"};
}

} // namespace

CAF_TEST(every kind is written in the order of its keys and read back) {
  check_line(TurnStartEvent{"go", "m", {}}, R"({"event":"turn_start","prompt":"go","model":"m"})");
  check_line(TurnStartEvent{"go", "m", {stopped_note()}},
             R"({"event":"turn_start","prompt":"go","model":"m","notifications":[{"kind":{"source":"tool",)"
             R"("name":"tool.stopped"},"level":"warning","message":"Handle `b` (shell) failed"}]})");
  check_line(ChatRequestEvent{"m", 3}, R"({"event":"chat_request","model":"m","messages":3})");
  ToolCall ls{"c1", "shell", R"({"command":"ls"})"};
  check_line(ChatResponseEvent{"hi", {ls}, "tool_use"},
             R"({"event":"chat_response","text":"hi","tool_calls":[{"id":"c1","name":"shell",)"
             R"("arguments":{"command":"ls"}}],"finish_reason":"tool_use"})");
  check_line(ChatResponseEvent{"h", {}, "", true},
             R"({"event":"chat_response","text":"h","tool_calls":[],"finish_reason":"","interrupted":true})");
  check_line(ChatResponseEvent{"", {}, "", false, "reset"},
             R"({"event":"chat_response","text":"","tool_calls":[],"finish_reason":"","error":"reset"})");
  check_line(ChatResponseEvent{"ok", {}, "stop", false, "", "", 12, 3},
             R"({"event":"chat_response","text":"ok","tool_calls":[],"finish_reason":"stop","tokens_in":12,)"
             R"("tokens_out":3})");
  check_line(ToolCallRequestEvent{ls},
             R"({"id":"c1","name":"shell","arguments":{"command":"ls"},"event":"tool_call_request"})");
  check_line(ToolCallRequestEvent{ToolCall{"c2", "shell", "{oops"}},
             R"({"id":"c2","name":"shell","arguments":"{oops","event":"tool_call_request"})");
  check_line(ToolCallResponseEvent{"c1", "shell", false, "x"},
             R"({"event":"tool_call_response","id":"c1","name":"shell","ok":false,"content":"x"})");
  HandleSummary running;
  running.id = "h";
  running.tool = "shell";
  running.elapsed_secs = 1.5;
  running.state = ToolState::running("");
  running.progress.last_line = "Compiling jp";
  // As the inquiry was asked: its state and output's last line too.
  check_line(InquiryRequestEvent{{running}},
             R"({"event":"inquiry_request","handles":[{"id":"h","tool":"shell","state":"running",)"
             R"("elapsed_secs":1.5,"output_preview":"Compiling jp"}]})");
  Question q;
  q.id = "confirm";
  q.text = "Stage this hunk?";
  q.answer_type = {answer_kind::boolean, {}};
  check_line(InquiryRequestEvent{{}, "git", q},
             R"({"event":"inquiry_request","tool":"git","question":)" + to_json(q).dump() + "}");
  check_line(InquiryResponseEvent{InquiryAnswers{{"b", inquiry_answer::wait}, {"a", inquiry_answer::abort}}, ""},
             R"({"event":"inquiry_response","answers":{"a":"abort","b":"wait"},"error":""})");
  check_line(InquiryResponseEvent{InquiryAnswers{}, "no answer"},
             R"({"event":"inquiry_response","answers":{},"error":"no answer"})");
  check_line(InquiryResponseEvent{std::nullopt, "", "confirm", Json(true)},
             R"({"event":"inquiry_response","question_id":"confirm","answer":true})");
  check_line(InquiryResponseEvent{std::nullopt, "", "confirm", Json()},
             R"({"event":"inquiry_response","question_id":"confirm","answer":null})");
  check_line(SystemNotificationEvent{stopped_note(), true},
             R"({"kind":{"source":"tool","name":"tool.stopped"},"level":"warning",)"
             R"("message":"Handle `b` (shell) failed","event":"system_notification","delivered":true})");
  check_line(SystemNotificationEvent{stopped_note()},
             R"({"kind":{"source":"tool","name":"tool.stopped"},"level":"warning",)"
             R"("message":"Handle `b` (shell) failed","event":"system_notification"})");
  HandleSummary awaited;
  awaited.id = "b";
  awaited.tool = "shell";
  awaited.outcome = turn_end_outcome::awaited;
  awaited.state = ToolState::success("built");
  HandleSummary aborted;
  aborted.id = "c";
  aborted.tool = "shell";
  aborted.outcome = turn_end_outcome::aborted;
  aborted.state = ToolState::success("");
  check_line(TurnEndEvent{std::vector<HandleSummary>{awaited, aborted}, false, ""},
             R"({"event":"turn_end","handles":[{"id":"b","tool":"shell","policy":"await","state":"stopped",)"
             R"("result":"built"},{"id":"c","tool":"shell","policy":"abort","state":"stopped"}]})");
  check_line(TurnEndEvent{std::vector<HandleSummary>{}, true, "cut"},
             R"({"event":"turn_end","handles":[],"interrupted":true,"error":"cut"})");
  // A turn end that never got to its handles always says why.
  check_line(TurnEndEvent{std::nullopt, false, ""}, R"({"event":"turn_end","error":""})");
  check_line(TurnEndEvent{std::nullopt, true, "twice"}, R"({"event":"turn_end","error":"twice","interrupted":true})");
}

CAF_TEST(reading is lenient about fields and strict about the kind) {
  auto bare = conversation_event_from(parse(R"({"event":"chat_response","time":"t","tool_calls":[{"id":1}]})"));
  CAF_REQUIRE(bare.ok());
  auto* response = std::get_if<ChatResponseEvent>(&*bare);
  CAF_REQUIRE(response != nullptr);
  CAF_CHECK_EQUAL(response->text, "");
  CAF_CHECK(response->tool_calls.empty()); // a call without a string id and name is left out
  auto result = conversation_event_from(parse(R"({"event":"tool_call_response","id":"c1"})"));
  CAF_REQUIRE(result.ok());
  CAF_CHECK(std::get<ToolCallResponseEvent>(*result).ok); // only "ok": false fails
  auto unknown = conversation_event_from(parse(R"({"event":"chat","text":"x"})"));
  CAF_CHECK(!unknown);
  CAF_CHECK_NOT_EQUAL(unknown.error().find("unknown conversation event \"chat\""), std::string::npos);
  CAF_CHECK(!conversation_event_from(parse(R"({"text":"x"})")));
  CAF_CHECK(!conversation_event_from(parse(R"({"event":"system_notification","text":"hi"})")));
  auto delivered = conversation_event_from(
    parse(R"({"kind":{"source":"tool","name":"n"},"message":"m","event":"system_notification","delivered":false})"));
  CAF_REQUIRE(delivered.ok());
  CAF_CHECK(std::get<SystemNotificationEvent>(*delivered).delivered); // present counts, as replay read it
}
