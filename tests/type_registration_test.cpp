// Protocol types survive CAF's serialization -- what crossing a node does to them.
#define CAF_SUITE type_registration
#include <caf/test/unit_test.hpp>

#include <caf/all.hpp>

#include "messages/call_result.hpp"
#include "messages/error_category.hpp"
#include "messages/handle_summary.hpp"
#include "messages/launch_spec.hpp"
#include "messages/permission_reply.hpp"
#include "messages/tool_state.hpp"
#include "messages/turn_result.hpp"
#include "messages/type_registration.hpp"

using namespace jp;

namespace {

struct config : caf::actor_system_config {
  config() {
    register_message_types(*this);
    set("logger.console", caf::atom("none"));
  }
};

template <class T>
T round_trip(caf::actor_system& sys, const T& x) {
  // As a message: exercises the registered type and its inspect overload.
  auto msg = caf::make_message(x);
  std::vector<char> buf;
  caf::binary_serializer sink{sys, buf};
  auto err = sink(msg);
  CAF_REQUIRE(!err);
  caf::message back;
  caf::binary_deserializer source{sys, buf};
  err = source(back);
  CAF_REQUIRE(!err);
  CAF_REQUIRE(back.match_element<T>(0));
  return back.get_as<T>(0);
}

} // namespace

CAF_TEST(every protocol type crosses serialization unchanged) {
  config cfg;
  caf::actor_system sys{cfg};
  Question q{"confirm", "Stage this hunk?", "diff --git", {answer_kind::select, {"y", "n"}}, "\"n\""};
  auto waiting = ToolState::waiting(q, "hunk 1/3");
  auto failed = ToolState::failure(ToolError{"exit status 101", {"a", "b"}, true}, "out");
  CAF_CHECK(round_trip(sys, waiting) == waiting);
  CAF_CHECK(round_trip(sys, failed) == failed);
  auto shown = ToolState::success("a chart");
  shown.images = {ToolImage{"image/png", "iVBORw0KGgo="}};
  CAF_CHECK(round_trip(sys, shown) == shown); // a remote MCP tool's image crosses a node
  ToolCommand cmd{action_kind::apply, "staging", "git", "{}", "true", LookOptions{1500, true, 40, 120}};
  CAF_CHECK(round_trip(sys, cmd) == cmd);
  HandleReport rep{"check", failed, 12, "/tmp/x.log"};
  CAF_CHECK(round_trip(sys, rep) == rep);
  HandleReport with_screen{"less", ToolState::running(), 0, "", Screen{{"line 1", "", "~"}, 2, 5, 24, 80, 9}};
  CAF_CHECK(round_trip(sys, with_screen) == with_screen);
  AwaitRequest req{{"a"}, {"b", "c"}, 2.5};
  CAF_CHECK(round_trip(sys, req) == req);
  AwaitResult res{{HandleStatus{"a", ToolState::success("ok")}}, {HandleStatus{"b", ToolState::running()}}, true};
  CAF_CHECK(round_trip(sys, res) == res);
  Outcome o{outcome_kind::needs_input, "", {}, q};
  CAF_CHECK(round_trip(sys, o) == o);
  LaunchSpec spec;
  spec.tool = "shell";
  spec.argv = {"bash", "-c", "echo"};
  spec.cwd = "/tmp";
  spec.env = {"A=1"};
  spec.stdin_pipe = true;
  spec.control_channel = true;
  spec.pty = true;
  spec.rows = 40;
  spec.prompt_pattern = "^>>> $";
  spec.wait_ms = 1000;
  spec.output_cap = 1024;
  spec.grace_ms = 500;
  spec.spill_dir = "/tmp/out";
  spec.notify_waiting = true;
  spec.child = {turn_end_policy::inquire, 1.5};
  CAF_CHECK(round_trip(sys, spec) == spec);
  Notification n{"tool", "tool.stopped", "warning", "failed", "x"};
  CAF_CHECK(round_trip(sys, n) == n);
  CallResult carried{true, "{}", true, {n}};
  CAF_CHECK(round_trip(sys, carried) == carried);
  CAF_CHECK(round_trip(sys, CallResult{false, "no"}) == (CallResult{false, "no"}));
  HandleSummary hs{"w", "shell", ToolState::success(""), turn_end_policy::inquire, 0,
                   HandleProgress{"last", "build1", 3, 2, 10, 4, 7, "50%"}, turn_end_outcome::inquired_wait};
  CAF_CHECK(round_trip(sys, hs) == hs);
  InquiryAnswers answers{{"a", inquiry_answer::wait}, {"b", inquiry_answer::abort}};
  CAF_CHECK(round_trip(sys, answers) == answers);
  PermissionReply no{permission_answer::no_with_reason, "not now"};
  CAF_CHECK(round_trip(sys, no) == no);
  TurnResult ended{turn_outcome::failed, error_code::provider_auth, "the provider refused the API key"};
  CAF_CHECK(round_trip(sys, ended) == ended);
}

CAF_TEST(our errors carry their code and sentence and render readably) {
  config cfg;
  register_error_category(cfg);
  caf::actor_system sys{cfg};
  auto err = make_error(error_code::unknown_handle, "Handle `x` not found");
  CAF_CHECK(code_of(err) == error_code::unknown_handle);
  CAF_CHECK_EQUAL(error_text(err), "Handle `x` not found");
  CAF_CHECK_EQUAL(sys.render(err), "jp: unknown_handle: Handle `x` not found");
  // Not ours: no code, and CAF's own words.
  caf::error timeout = caf::sec::request_timeout;
  CAF_CHECK(code_of(timeout) == error_code::none);
  CAF_CHECK_EQUAL(error_text(timeout), caf::to_string(timeout));
  // No error at all (a down message's reason for a normal exit): it read through a
  // null pointer (`call` of a node's tool crashed at its end).
  CAF_CHECK_EQUAL(error_text(caf::error{}), "no error");
  CAF_CHECK(code_of(caf::error{}) == error_code::none);
}
