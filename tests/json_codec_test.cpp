#define CAF_SUITE json_codec
#include <caf/test/unit_test.hpp>

#include "json_helpers.hpp"

#include <cmath>
#include <string>

#include "messages/answer_check.hpp"
#include "messages/json_codec.hpp"
#include "messages/plain_await_request.hpp"
#include "tools/argument_validation.hpp"
#include "tools/builtin_tools.hpp"
#include "contains.hpp"

using namespace jp;
using jp::testing::parse;

using jp::testing::contains;

namespace {


Question confirm_question() {
  Question q;
  q.id = "confirm";
  q.text = "Stage this hunk?";
  q.answer_type = {answer_kind::boolean, {}};
  q.default_json = "false";
  return q;
}

Question select_question() {
  Question q;
  q.id = "pick";
  q.text = "Which branch?";
  q.pre_amble = "Several branches match.";
  q.answer_type = {answer_kind::select, {"main", "dev"}};
  q.default_json = R"("main")";
  return q;
}

ToolError exit_error() {
  return {"exit status 101", {"line 1", "line 2"}, false};
}

// Writes s as ToolState JSON, checks the text, reads it back and compares.
void check_state_round_trip(const ToolState& s, std::string_view expected) {
  auto text = to_json(s).dump();
  CAF_CHECK_EQUAL(text, expected);
  auto back = tool_state_from_json(parse(text));
  CAF_REQUIRE(back.ok());
  CAF_CHECK(*back == s);
}

void check_report_round_trip(const HandleReport& r, std::string_view expected) {
  auto text = response_content(r);
  CAF_CHECK_EQUAL(text, expected);
  auto back = report_from_response(text);
  CAF_REQUIRE(back.ok());
  CAF_CHECK(*back == r);
}

std::string await_error(std::string_view args) {
  auto r = await_request_from_json(parse(args));
  CAF_REQUIRE(!r.ok());
  return r.error();
}

std::string command_error(std::string_view args) {
  auto c = command_from_arguments("git", parse(args));
  CAF_REQUIRE(!c.ok());
  return c.error();
}

} // namespace

// -- Question / ToolError ---------------------------------------------------------------

CAF_TEST(question writes the type form and round trips every answer type) {
  CAF_CHECK_EQUAL(to_json(confirm_question()).dump(),
                  R"({"id":"confirm","text":"Stage this hunk?",)"
                  R"("answer_type":{"type":"boolean"},"default":false})");
  CAF_CHECK_EQUAL(to_json(select_question()).dump(),
                  R"({"id":"pick","text":"Which branch?","pre_amble":"Several branches match.",)"
                  R"("answer_type":{"type":"select","options":["main","dev"]},"default":"main"})");
  Question text_q;
  text_q.id = "name";
  text_q.text = "Name?";
  CAF_CHECK_EQUAL(to_json(text_q).dump(),
                  R"({"id":"name","text":"Name?","answer_type":{"type":"text"}})");
  for (auto& q : {confirm_question(), select_question(), text_q}) {
    auto back = question_from_json(to_json(q));
    CAF_REQUIRE(back.ok());
    CAF_CHECK(*back == q);
  }
}

CAF_TEST(question reads JP legacy answer_type spellings) {
  auto b = question_from_json(parse(R"({"id":"a","text":"?","answer_type":"Boolean"})"));
  CAF_REQUIRE(b.ok());
  CAF_CHECK(b->answer_type == (AnswerType{answer_kind::boolean, {}}));
  auto t = question_from_json(parse(R"({"id":"a","text":"?","answer_type":"Text"})"));
  CAF_REQUIRE(t.ok());
  CAF_CHECK(t->answer_type == (AnswerType{answer_kind::text, {}}));
  auto s = question_from_json(
    parse(R"({"id":"a","text":"?","answer_type":{"Select":{"options":["x","y"]}}})"));
  CAF_REQUIRE(s.ok());
  CAF_CHECK(s->answer_type == (AnswerType{answer_kind::select, {"x", "y"}}));
  // Written back in the {"type":..} form.
  CAF_CHECK_EQUAL(to_json(*s).find("answer_type")->dump(),
                  R"({"type":"select","options":["x","y"]})");
  // A question without a type asks for text; a null default is no default.
  auto plain = question_from_json(parse(R"({"id":"a","text":"?","default":null})"));
  CAF_REQUIRE(plain.ok());
  CAF_CHECK(plain->answer_type == (AnswerType{answer_kind::text, {}}));
  CAF_CHECK_EQUAL(plain->default_json, "");
}

CAF_TEST(question errors name the field) {
  auto no_text = question_from_json(parse(R"({"id":"a"})"));
  CAF_REQUIRE(!no_text.ok());
  CAF_CHECK_EQUAL(no_text.error(), "missing `question.text` (expected a string)");
  auto bad_id = question_from_json(parse(R"({"id":3,"text":"?"})"));
  CAF_REQUIRE(!bad_id.ok());
  CAF_CHECK_EQUAL(bad_id.error(), "`question.id` must be a string, got integer 3");
  auto bad_type = question_from_json(parse(R"({"id":"a","text":"?","answer_type":"Number"})"));
  CAF_REQUIRE(!bad_type.ok());
  CAF_CHECK(contains(bad_type.error(), "`question.answer_type` must be"));
  CAF_CHECK(contains(bad_type.error(), "\"Number\""));
  auto no_options =
    question_from_json(parse(R"({"id":"a","text":"?","answer_type":{"type":"select"}})"));
  CAF_REQUIRE(!no_options.ok());
  CAF_CHECK_EQUAL(no_options.error(),
                  "missing `question.answer_type.options` (expected an array of strings)");
  auto bad_option = question_from_json(
    parse(R"({"id":"a","text":"?","answer_type":{"Select":{"options":["x",1]}}})"));
  CAF_REQUIRE(!bad_option.ok());
  CAF_CHECK_EQUAL(bad_option.error(),
                  "`question.answer_type.Select.options[1]` must be a string, got integer 1");
}

CAF_TEST(tool error round trips and defaults trace and transient) {
  ToolError e{"network down", {"a", "b"}, true};
  CAF_CHECK_EQUAL(to_json(e).dump(),
                  R"({"message":"network down","trace":["a","b"],"transient":true})");
  auto back = tool_error_from_json(to_json(e));
  CAF_REQUIRE(back.ok());
  CAF_CHECK(*back == e);
  auto minimal = tool_error_from_json(parse(R"({"message":"boom"})"));
  CAF_REQUIRE(minimal.ok());
  CAF_CHECK(*minimal == (ToolError{"boom", {}, false}));
  auto bad = tool_error_from_json(parse(R"({"message":"boom","transient":"yes"})"));
  CAF_REQUIRE(!bad.ok());
  CAF_CHECK_EQUAL(bad.error(), "`error.transient` must be a boolean, got string \"yes\"");
}

// -- ToolState / Outcome -------------------------------------------------------------------

CAF_TEST(tool state JSON round trips every variant) {
  check_state_round_trip(ToolState::running(), R"({"type":"running"})");
  check_state_round_trip(ToolState::running("Compiling\n"),
                         R"({"type":"running","content":"Compiling\n"})");
  check_state_round_trip(ToolState::waiting(confirm_question()),
                         R"({"type":"waiting","question":{"id":"confirm",)"
                         R"("text":"Stage this hunk?","answer_type":{"type":"boolean"},)"
                         R"("default":false}})");
  check_state_round_trip(ToolState::waiting(select_question(), "diff ..."),
                         R"({"type":"waiting","content":"diff ...","question":{"id":"pick",)"
                         R"("text":"Which branch?","pre_amble":"Several branches match.",)"
                         R"("answer_type":{"type":"select","options":["main","dev"]},)"
                         R"("default":"main"}})");
  check_state_round_trip(ToolState::success("ok, 0 warnings"),
                         R"({"type":"stopped","result":"ok, 0 warnings"})");
  check_state_round_trip(ToolState::success(""), R"({"type":"stopped","result":""})");
  check_state_round_trip(ToolState::failure(exit_error()),
                         R"({"type":"stopped","error":{"message":"exit status 101",)"
                         R"("trace":["line 1","line 2"],"transient":false}})");
  check_state_round_trip(ToolState::failure(exit_error(), "partial"),
                         R"({"type":"stopped","error":{"message":"exit status 101",)"
                         R"("trace":["line 1","line 2"],"transient":false},)"
                         R"("content":"partial"})");
}

CAF_TEST(tool state reads spawned and serde spellings) {
  auto spawned = tool_state_from_json(parse(R"({"type":"spawned","content":"hi"})"));
  CAF_REQUIRE(spawned.ok());
  CAF_CHECK(*spawned == ToolState::running("hi"));
  auto ok = tool_state_from_json(parse(R"({"type":"stopped","result":{"Ok":"done"}})"));
  CAF_REQUIRE(ok.ok());
  CAF_CHECK(*ok == ToolState::success("done"));
  auto err =
    tool_state_from_json(parse(R"({"type":"stopped","result":{"Err":{"message":"x"}}})"));
  CAF_REQUIRE(err.ok());
  CAF_CHECK(*err == ToolState::failure({"x", {}, false}));
  auto content = tool_state_from_json(parse(R"({"type":"stopped","content":"c","error":null})"));
  CAF_REQUIRE(content.ok());
  CAF_CHECK(*content == ToolState::success("c"));
}

CAF_TEST(tool state errors name the field) {
  auto unknown = tool_state_from_json(parse(R"({"type":"paused"})"));
  CAF_REQUIRE(!unknown.ok());
  CAF_CHECK_EQUAL(unknown.error(),
                  R"(`type` must be "running", "waiting" or "stopped", got "paused")");
  auto no_question = tool_state_from_json(parse(R"({"type":"waiting"})"));
  CAF_REQUIRE(!no_question.ok());
  CAF_CHECK(contains(no_question.error(), "missing `question`"));
  auto bad_content = tool_state_from_json(parse(R"({"type":"running","content":[1]})"));
  CAF_REQUIRE(!bad_content.ok());
  CAF_CHECK_EQUAL(bad_content.error(), "`content` must be a string, got array");
}

CAF_TEST(outcome JSON round trips every variant) {
  Outcome success{outcome_kind::success, "all good", {}, {}};
  Outcome error{outcome_kind::error, {}, exit_error(), {}};
  Outcome needs{outcome_kind::needs_input, {}, {}, confirm_question()};
  CAF_CHECK_EQUAL(to_json(success).dump(), R"({"type":"success","content":"all good"})");
  CAF_CHECK_EQUAL(to_json(error).dump(), R"({"type":"error","message":"exit status 101",)"
                                         R"("trace":["line 1","line 2"],"transient":false})");
  CAF_CHECK_EQUAL(to_json(needs).dump(),
                  R"({"type":"needs_input","question":{"id":"confirm","text":"Stage this hunk?",)"
                  R"("answer_type":{"type":"boolean"},"default":false}})");
  for (auto& o : {success, error, needs}) {
    auto back = outcome_from_json(to_json(o));
    CAF_REQUIRE(back.ok());
    CAF_CHECK(*back == o);
  }
  // trace and transient are optional on read.
  auto bare = outcome_from_json(parse(R"({"type":"error","message":"boom"})"));
  CAF_REQUIRE(bare.ok());
  CAF_CHECK(bare->error == (ToolError{"boom", {}, false}));
  auto no_message = outcome_from_json(parse(R"({"type":"error"})"));
  CAF_REQUIRE(!no_message.ok());
  CAF_CHECK_EQUAL(no_message.error(), "missing `message` (expected a string)");
}

CAF_TEST(tool output reads Outcome JSON as the mapped ToolState) {
  auto success = parse_tool_output("  {\"type\":\"success\",\"content\":\"done\"}\n");
  CAF_REQUIRE(success.ok());
  CAF_CHECK(*success == ToolState::success("done"));
  auto error = parse_tool_output(
    R"({"type":"error","message":"boom","trace":["t"],"transient":true})");
  CAF_REQUIRE(error.ok());
  CAF_CHECK(*error == ToolState::failure({"boom", {"t"}, true}));
  auto needs = parse_tool_output(
    R"({"type":"needs_input","question":{"id":"confirm","text":"Stage this hunk?",)"
    R"("answer_type":"Boolean","default":false}})");
  CAF_REQUIRE(needs.ok());
  CAF_CHECK(*needs == ToolState::waiting(confirm_question()));
}

CAF_TEST(tool output reads ToolState JSON) {
  for (auto& s : {ToolState::running(), ToolState::running("out"),
                  ToolState::waiting(select_question(), "c"), ToolState::success("r"),
                  ToolState::failure(exit_error(), "c")}) {
    auto back = parse_tool_output("\n" + to_json(s).dump() + "\n\n");
    CAF_REQUIRE(back.ok());
    CAF_CHECK(*back == s);
  }
  auto spawned = parse_tool_output(R"({"type":"spawned"})");
  CAF_REQUIRE(spawned.ok());
  CAF_CHECK(*spawned == ToolState::running());
}

CAF_TEST(tool output that is not Outcome or ToolState is an error for plain text fallback) {
  for (auto text : {"", "   \n", "hello world\n", "42", "[1,2]", R"("text")",
                    R"({"type":"success"} trailing)", R"({"result":"x"})",
                    R"({"type":7})", R"({"type":"done","content":"x"})",
                    R"({"type":"success","content":5})", R"({"type":"waiting"})"}) {
    CAF_MESSAGE("output: " << text);
    CAF_CHECK(!parse_tool_output(text).ok());
  }
}

// -- Stateful response content -------------------------------------------------------------

CAF_TEST(response content matches DESIGN examples and round trips) {
  check_report_round_trip({"check", ToolState::running("Compiling jp v0.1.0\n"), 0, ""},
                          R"({"id":"check","state":"running","content":"Compiling jp v0.1.0\n"})");
  check_report_round_trip({"check", ToolState::running(), 0, ""},
                          R"({"id":"check","state":"running"})");
  check_report_round_trip({"staging", ToolState::waiting(confirm_question(), "..."), 0, ""},
                          R"({"id":"staging","state":"waiting","content":"...","question":)"
                          R"({"id":"confirm","text":"Stage this hunk?",)"
                          R"("answer_type":{"type":"boolean"},"default":false}})");
  check_report_round_trip({"check", ToolState::success("ok, 0 warnings"), 0, ""},
                          R"({"id":"check","state":"stopped","result":"ok, 0 warnings"})");
  check_report_round_trip({"check", ToolState::failure({"exit status 101", {"..."}, false}),
                           0, ""},
                          R"({"id":"check","state":"stopped","error":{"message":)"
                          R"("exit status 101","trace":["..."],"transient":false}})");
  check_report_round_trip({"check", ToolState::failure(exit_error(), "stderr tail"), 0, ""},
                          R"({"id":"check","state":"stopped","error":{"message":)"
                          R"("exit status 101","trace":["line 1","line 2"],)"
                          R"("transient":false},"content":"stderr tail"})");
}

CAF_TEST(response content reports the spill file when the cap cut the content) {
  check_report_round_trip({"log", ToolState::running("head…[1200 bytes omitted]…tail"), 1200,
                           "/tmp/jp/log.out"},
                          R"({"id":"log","state":"running","content":)"
                          R"("head…[1200 bytes omitted]…tail",)"
                          R"("output_file":"/tmp/jp/log.out","omitted_bytes":1200})");
  check_report_round_trip({"log", ToolState::success("…"), 7, "/tmp/jp/log.out"},
                          R"({"id":"log","state":"stopped","result":"…",)"
                          R"("output_file":"/tmp/jp/log.out","omitted_bytes":7})");
  HandleReport all{"t", ToolState::running("a\tb"), 5, "/tmp/x"};
  all.node = "gpu-box";
  all.screen = Screen{{"$ ls", "a \"b\""}, 1, 3, 24, 80};
  check_report_round_trip(all, R"({"id":"t","state":"running","content":"a\tb","node":"gpu-box",)"
                               R"("output_file":"/tmp/x","omitted_bytes":5,"screen":{"rows":["$ ls","a \"b\""],)"
                               R"("cursor":{"row":1,"col":3},"size":{"rows":24,"cols":80}}})");
  auto bad = report_from_response(R"({"id":"x","state":"running","omitted_bytes":-1})");
  CAF_REQUIRE(!bad.ok());
  CAF_CHECK_EQUAL(bad.error(), "`omitted_bytes` must be a non-negative integer, got integer -1");
  auto no_state = report_from_response(R"({"id":"x"})");
  CAF_REQUIRE(!no_state.ok());
  CAF_CHECK_EQUAL(no_state.error(), "missing `state` (expected a string)");
  CAF_CHECK(!report_from_response("not json").ok());
}

// -- command_from_arguments ----------------------------------------------------------------

CAF_TEST(arguments become commands for every action) {
  auto spawn = command_from_arguments(
    "git", parse(R"({"action":"spawn","id":"staging","command":"stage","args":["--patch"]})"));
  CAF_REQUIRE(spawn.ok());
  CAF_CHECK(spawn->action == action_kind::spawn);
  CAF_CHECK_EQUAL(spawn->id, "staging");
  CAF_CHECK_EQUAL(spawn->tool, "git");
  CAF_CHECK_EQUAL(spawn->args_json, R"({"command":"stage","args":["--patch"]})");
  CAF_CHECK_EQUAL(to_arguments(*spawn).dump(),
                  R"({"action":"spawn","id":"staging","command":"stage","args":["--patch"]})");

  auto bare_spawn = command_from_arguments("t", parse(R"({"action":"spawn","id":"a"})"));
  CAF_REQUIRE(bare_spawn.ok());
  CAF_CHECK_EQUAL(bare_spawn->args_json, "{}");

  auto fetch = command_from_arguments("git", parse(R"({"action":"fetch","id":"check"})"));
  CAF_REQUIRE(fetch.ok());
  CAF_CHECK(*fetch == (ToolCommand{action_kind::fetch, "check", "git", "{}", ""}));
  CAF_CHECK_EQUAL(to_arguments(*fetch).dump(), R"({"action":"fetch","id":"check"})");

  auto apply =
    command_from_arguments("git", parse(R"({"action":"apply","id":"staging","input":"y\n"})"));
  CAF_REQUIRE(apply.ok());
  CAF_CHECK(*apply == (ToolCommand{action_kind::apply, "staging", "git", "{}", R"("y\n")"}));
  CAF_CHECK_EQUAL(to_arguments(*apply).dump(),
                  R"({"action":"apply","id":"staging","input":"y\n"})");
  // Any JSON value is an input, null included.
  for (auto input : {"true", "null", R"({"a":[1]})"}) {
    auto c = command_from_arguments(
      "git", parse(std::string(R"({"action":"apply","id":"s","input":)") + input + "}"));
    CAF_REQUIRE(c.ok());
    CAF_CHECK_EQUAL(c->input_json, input);
  }

  auto abort = command_from_arguments("git", parse(R"({"action":"abort","id":"check"})"));
  CAF_REQUIRE(abort.ok());
  CAF_CHECK(abort->action == action_kind::abort);
  CAF_CHECK_EQUAL(to_arguments(*abort).dump(), R"({"action":"abort","id":"check"})");

  for (auto& c : {*spawn, *fetch, *apply, *abort}) {
    auto back = command_from_arguments("git", to_arguments(c));
    CAF_REQUIRE(back.ok());
    CAF_CHECK(*back == c);
  }
}

CAF_TEST(handle ids accept the allowed characters up to 64) {
  auto id = std::string(64, 'a');
  CAF_CHECK(command_from_arguments("t", Json::object().set("action", "fetch").set("id", id)).ok());
  CAF_CHECK(command_from_arguments(
              "t", parse(R"({"action":"fetch","id":"Build_release.v2:x-1"})")).ok());
  auto long_id = std::string(65, 'a');
  auto c = command_from_arguments("t", Json::object().set("action", "fetch").set("id", long_id));
  CAF_REQUIRE(!c.ok());
  CAF_CHECK(contains(c.error(), "1 to 64 characters"));
}

CAF_TEST(a look input or abort refuses keys that are not its own) {
  // input on a fetch would be dropped without a word: the model would think it typed.
  auto said = command_error(R"({"action":"fetch","id":"k","input":"hello\n"})");
  CAF_CHECK(said.find("action `fetch` takes action, id, wait_ms, screen, rows, cols; `input` is not one of them "
                      "(`input` is for action `apply`)") != std::string::npos);
  CAF_CHECK(command_error(R"({"action":"abort","id":"k","wait_ms":100})")
              .find("action `abort` takes action, id; `wait_ms` is not one of them (`wait_ms` is a look's: spawn, "
                    "fetch and apply take it; an abort answers once the tool stopped)") != std::string::npos);
  CAF_CHECK(command_error(R"({"action":"apply","id":"k","input":"y","message":"x"})")
              .find("(a tool's own parameters go with action `spawn` only)") != std::string::npos);
  // Null is absent (a flat schema's caller sends every field).
  auto flat = command_from_arguments("git", parse(R"({"action":"fetch","id":"k","input":null,"message":null})"));
  CAF_CHECK(flat.ok());
}

CAF_TEST(argument errors name the field and what is expected) {
  CAF_CHECK(contains(command_error(R"({"action":"fetch"})"), "missing `id`"));
  CAF_CHECK(contains(command_error(R"({"action":"fetch","id":null})"), "missing `id`"));
  CAF_CHECK_EQUAL(command_error(R"({"action":"fetch","id":7})"),
                  "`id` must be a handle ID string, got integer 7");
  CAF_CHECK_EQUAL(command_error(R"({"action":"fetch","id":"my id"})"),
                  R"(`id` must be 1 to 64 characters of A-Z a-z 0-9 _ . : -, got "my id")");
  CAF_CHECK(contains(command_error(R"({"action":"fetch","id":""})"), "1 to 64 characters"));
  CAF_CHECK_EQUAL(command_error(R"({"action":"run","id":"x"})"),
                  "unknown action `run` for tool `git`; expected one of "
                  "spawn, fetch, apply, abort");
  CAF_CHECK_EQUAL(command_error(R"({"action":1,"id":"x"})"),
                  "`action` must be a string, got integer 1");
  CAF_CHECK(contains(command_error(R"({"action":"apply","id":"x"})"), "missing `input`"));
  CAF_CHECK_EQUAL(command_error("[1]"), "`arguments` must be an object, got array");
}

// -- await ------------------------------------------------------------------------------------

CAF_TEST(await requests parse any all and both) {
  auto any = await_request_from_json(parse(R"({"any":["a","b"]})"));
  CAF_REQUIRE(any.ok());
  CAF_CHECK(*any == (AwaitRequest{{"a", "b"}, {}, -1}));
  auto all = await_request_from_json(parse(R"({"all":["check","test"],"timeout_secs":30})"));
  CAF_REQUIRE(all.ok());
  CAF_CHECK(*all == (AwaitRequest{{}, {"check", "test"}, 30}));
  auto both = await_request_from_json(parse(R"({"any":["a"],"all":[],"timeout_secs":null})"));
  CAF_REQUIRE(both.ok());
  CAF_CHECK(*both == (AwaitRequest{{"a"}, {}, -1}));
  auto both_full = await_request_from_json(parse(R"({"any":["a"],"all":["b","c"]})"));
  CAF_REQUIRE(both_full.ok());
  CAF_CHECK(*both_full == (AwaitRequest{{"a"}, {"b", "c"}, -1}));
  auto fractional = await_request_from_json(parse(R"({"all":["x"],"timeout_secs":0.5})"));
  CAF_REQUIRE(fractional.ok());
  CAF_CHECK_EQUAL(fractional->timeout_secs, 0.5);
  auto zero = await_request_from_json(parse(R"({"all":["x"],"timeout_secs":0})"));
  CAF_REQUIRE(zero.ok());
  CAF_CHECK_EQUAL(zero->timeout_secs, 0.0);
}

CAF_TEST(await takes only ids a handle can have) {
  // "#1" is the runtime's own id of a blocking call: it was awaited as any handle.
  auto internal = await_request_from_json(parse(R"({"all":["a","#1"]})"));
  CAF_REQUIRE(!internal.ok());
  CAF_CHECK_EQUAL(internal.error(),
                  R"(`all` holds "#1", which is no handle's id: ids are 1 to 64 characters of A-Z a-z 0-9 _ . : -)");
  CAF_CHECK(!await_request_from_json(parse(R"({"any":[""]})")).ok());
}

CAF_TEST(await request round trips) {
  for (auto& r : {AwaitRequest{{"a"}, {}, -1}, AwaitRequest{{}, {"b", "c"}, 30},
                  AwaitRequest{{"a"}, {"b"}, 1.5}}) {
    auto back = await_request_from_json(to_json(r));
    CAF_REQUIRE(back.ok());
    CAF_CHECK(*back == r);
  }
  // Whole seconds are written as integers, as the await schema declares.
  CAF_CHECK_EQUAL(to_json(AwaitRequest{{}, {"b", "c"}, 30}).dump(),
                  R"({"all":["b","c"],"timeout_secs":30})");
  CAF_CHECK_EQUAL(to_json(AwaitRequest{{"a"}, {"b"}, 1.5}).dump(),
                  R"({"any":["a"],"all":["b"],"timeout_secs":1.5})");
}

CAF_TEST(await request errors) {
  CAF_CHECK_EQUAL(await_error("{}"), "At least one handle ID required: `all` or `any`, an array of ids");
  CAF_CHECK_EQUAL(await_error(R"({"any":[],"all":[]})"), "At least one handle ID required: `all` or `any`, an array of ids");
  CAF_CHECK_EQUAL(await_error(R"({"timeout_secs":5})"), "At least one handle ID required: `all` or `any`, an array of ids");
  CAF_CHECK_EQUAL(await_error(R"({"any":"check"})"),
                  "`any` must be an array of handle ID strings, got string \"check\"");
  CAF_CHECK_EQUAL(await_error(R"({"all":["a",2]})"), "`all[1]` must be a string, got integer 2");
  CAF_CHECK_EQUAL(await_error(R"({"all":["a"],"timeout_secs":"10"})"),
                  "`timeout_secs` must be a number, got string \"10\"");
  CAF_CHECK_EQUAL(await_error(R"({"all":["a"],"timeout_secs":-1})"),
                  "`timeout_secs` must be a finite number of seconds >= 0 (NaN, infinities and "
                  "negative numbers are not durations), got -1");
  CAF_CHECK_EQUAL(await_error(R"({"all":["a"],"timeout_secs":-0.5})"),
                  "`timeout_secs` must be a finite number of seconds >= 0 (NaN, infinities and "
                  "negative numbers are not durations), got -0.5");
  CAF_CHECK_EQUAL(await_error("[]"), "`await arguments` must be an object, got array");
}

CAF_TEST(an await read straight from its text takes exactly what the usual path takes) {
  static const auto tool = default_config().tools.at("await");
  // The usual path: a Json tree (twice-given keys refused), the request read from it,
  // the arguments validated against the await tool's schema.
  auto usual = [](std::string_view text) -> std::optional<AwaitRequest> {
    auto args = Json::parse(text, duplicate_keys::refuse);
    if (!args)
      return std::nullopt;
    auto r = await_request_from_json(*args);
    if (!r || !validate_arguments(tool, *args))
      return std::nullopt;
    return *r;
  };
  // Taken by both, as the same request: the short cut must take these (W3, W7).
  for (auto text : {R"({"any":["a","b"]})", R"({"all":["check","test"],"timeout_secs":30})",
                    R"({"any":["a"],"all":[],"timeout_secs":null})", R"({"any":["a"],"all":["b","c"]})",
                    R"({"all":["x"],"timeout_secs":0.5})", R"({"all":["x"],"timeout_secs":0})",
                    R"( {"any" : ["a\u0062", "x"], "all": null} )", R"({"an\u0079":["a"]})",
                    R"({"any":["a"],"timeout_secs":18446744073709551615})", R"({"any":["a","a"]})"}) {
    CAF_MESSAGE(text);
    auto plain = plain_await_request(text);
    CAF_REQUIRE(plain.has_value());
    CAF_CHECK(usual(text) == plain);
  }
  // Refused by both: the usual path then says what is wrong.
  for (auto text : {"", "{", "[]", "null", R"("any")", "{}", R"({"any":[],"all":[]})", R"({"timeout_secs":5})",
                    R"({"any":null,"all":null})", R"({"any":"check"})", R"({"all":["a",2]})", R"({"all":[["a"]]})",
                    R"({"all":["a"],"timeout_secs":"10"})", R"({"all":["a"],"timeout_secs":-1})",
                    R"({"all":["a"],"timeout_secs":true})", R"({"any":["a"],"any":["b"]})",
                    R"({"any":["a"],"timeout_secs":1,"timeout_secs":2})", R"({"any":["a"],"all":null,"all":null})",
                    R"({"any":["a"],"id":"x"})", R"({"any":["a"],"action":"spawn"})", R"({"any":["a"]} x)",
                    "{\"any\":[\"\xff\"]}", R"({"any":["a\"b"]})", R"({"any":["\u00e9"]})", R"({"any":["a",""]})",
                    R"({"all":["#1"]})"}) {
    CAF_MESSAGE(text);
    CAF_CHECK(!plain_await_request(text));
    CAF_CHECK(!usual(text));
  }
}

CAF_TEST(non finite durations are refused not taken as no timeout) {
  // JSON text has no NaN, but arguments built elsewhere (a lenient parser, TOML) can.
  for (double bad : {std::nan(""), HUGE_VAL, -HUGE_VAL}) {
    auto args = Json::object();
    args.set("all", Json::array().push("a"));
    args.set("timeout_secs", Json(bad));
    auto r = await_request_from_json(args);
    CAF_REQUIRE(!r.ok());
    CAF_CHECK(contains(r.error(), "`timeout_secs` must be a finite number of seconds >= 0"));
    auto fetch = Json::object();
    fetch.set("action", "fetch").set("id", "x").set("wait_ms", Json(bad));
    auto c = command_from_arguments("shell", fetch);
    CAF_REQUIRE(!c.ok());
    CAF_CHECK(contains(c.error(), "`wait_ms` must be a finite number of milliseconds >= 0"));
  }
}

CAF_TEST(a number out of a look s range is shown as it was written) {
  // 9223372036854775807 was shown as 9.223372036854776e+18.
  auto refused = [](const std::string& args) {
    auto c = command_from_arguments("shell", *Json::parse(args));
    return c.ok() ? std::string("accepted") : c.error();
  };
  CAF_CHECK(contains(refused(R"({"action":"fetch","id":"x","wait_ms":9223372036854775807})"),
                     "`wait_ms` must be from 0 to 60000 (milliseconds), got 9223372036854775807"));
  CAF_CHECK(contains(refused(R"({"action":"fetch","id":"x","rows":501})"),
                     "`rows` must be from 2 to 500 (terminal rows), got 501"));
}

CAF_TEST(await result JSON as RFD 037) {
  // A failure carries its output too, as a fetch shows it: a failed test run's
  // says which tests failed.
  AwaitResult done{{{"check", ToolState::success("ok, 0 warnings")},
                    {"test", ToolState::failure({"exit status 101", {}, false}, "3 passed, 1 failed: t4")}},
                   {},
                   false};
  auto text = to_json(done).dump();
  CAF_CHECK_EQUAL(text, R"({"completed":[{"id":"check","state":"stopped","result":)"
                        R"("ok, 0 warnings"},{"id":"test","state":"stopped","error":)"
                        R"({"message":"exit status 101","trace":[],"transient":false},)"
                        R"("content":"3 passed, 1 failed: t4"}],"pending":[]})");
  auto back = await_result_from_json(parse(text));
  CAF_REQUIRE(back.ok());
  CAF_CHECK(*back == done);

  // Pending entries are id and state only, whatever else the state holds -- but a
  // waiting one carries its question: the assistant answers it with apply.
  AwaitResult timed_out{{{"check", ToolState::success("ok")}},
                        {{"test", ToolState::running("lots of output")},
                         {"staging", ToolState::waiting(confirm_question())}},
                        true};
  text = to_json(timed_out).dump();
  CAF_CHECK_EQUAL(text, R"({"completed":[{"id":"check","state":"stopped","result":"ok"}],)"
                        R"("pending":[{"id":"test","state":"running"},)"
                        R"({"id":"staging","state":"waiting","question":{"id":"confirm",)"
                        R"("text":"Stage this hunk?","answer_type":{"type":"boolean"},"default":false}}],)"
                        R"("timed_out":true})");
  back = await_result_from_json(parse(text));
  CAF_REQUIRE(back.ok());
  CAF_CHECK(back->timed_out);
  CAF_CHECK(back->pending.at(1).state.question == confirm_question());
  // The direct writer the turn answers with says exactly the same.
  CAF_CHECK_EQUAL(await_result_text(timed_out), text);
  CAF_CHECK_EQUAL(await_result_text(done), to_json(done).dump());
  AwaitResult odd{{{"a\"b\n", ToolState::success("caf\xC3\xA9 \xFF")}}, {}, false};
  CAF_CHECK_EQUAL(await_result_text(odd), to_json(odd).dump());
  CAF_CHECK_EQUAL(await_result_text(AwaitResult{}), to_json(AwaitResult{}).dump());
  // A handle that ran on a node says which, with its spill file as NAME:path.
  AwaitResult remote{{{"far", ToolState::success("built"), "box:/tmp/jp/far.log", "box"}}, {}, false};
  CAF_CHECK_EQUAL(await_result_text(remote), R"({"completed":[{"id":"far","state":"stopped","result":"built",)"
                                             R"("output_file":"box:/tmp/jp/far.log","node":"box"}],"pending":[]})");
  auto remote_back = await_result_from_json(parse(await_result_text(remote)));
  CAF_REQUIRE(remote_back.ok());
  CAF_CHECK(*remote_back == remote);
  CAF_REQUIRE_EQUAL(back->pending.size(), 2u);
  CAF_CHECK_EQUAL(back->pending[0].id, "test");
  CAF_CHECK(back->pending[0].state == ToolState::running());
  CAF_CHECK(back->pending[1].state.kind == state_kind::waiting);
  CAF_CHECK(back->completed == timed_out.completed);

  auto bad = await_result_from_json(parse(R"({"completed":[{"id":"x","state":"gone"}]})"));
  CAF_REQUIRE(!bad.ok());
  CAF_CHECK(contains(bad.error(), "`completed[0].state` must be"));
}

CAF_TEST(state kinds print as their wire names) {
  CAF_CHECK_EQUAL(to_string(state_kind::running), "running");
  CAF_CHECK_EQUAL(to_string(state_kind::waiting), "waiting");
  CAF_CHECK_EQUAL(to_string(state_kind::stopped), "stopped");
}

CAF_TEST(an answer is taken as its question declared) {
  Question pick{"env", "Where?", "", AnswerType{answer_kind::select, {"staging", "prod"}}, ""};
  CAF_CHECK_EQUAL(answer_as_declared(pick, Json("staging"))->dump(), "\"staging\"");
  auto dev = answer_as_declared(pick, Json("dev"));
  CAF_CHECK_EQUAL(dev.error(),
                  "question `env` (\"Where?\") takes one of \"staging\", \"prod\"; got \"dev\"");
  Question text{"name", "Whom?", "", AnswerType{answer_kind::text, {}}, ""};
  CAF_CHECK(answer_as_declared(text, Json("Ada")).ok());
  auto three = answer_as_declared(text, Json(int64_t{3}));
  CAF_CHECK_EQUAL(three.error(), "question `name` (\"Whom?\") takes a string; got 3");
  // A boolean: true or false, as JSON or as the strings a string-typed `input` sends.
  Question yes_no{"ok", "Go?", "", AnswerType{answer_kind::boolean, {}}, ""};
  CAF_CHECK_EQUAL(answer_as_declared(yes_no, Json(false))->dump(), "false");
  CAF_CHECK_EQUAL(answer_as_declared(yes_no, Json("true"))->dump(), "true");
  CAF_CHECK(!answer_as_declared(yes_no, Json("yes")).ok());
}
