#define CAF_SUITE event_log
#include <caf/test/unit_test.hpp>

#include <regex>

#include <cstdio>

#include "file_contents.hpp"
#include "json_helpers.hpp"
#include "messages/terminal_safe.hpp"
#include "runtime/store/event_log.hpp"

using namespace jp;
using namespace jp::testing;

namespace {

std::string fixed_clock() {
  return "2026-11-23T01:02:03.456Z";
}

} // namespace

CAF_TEST(json events have the documented fields) {
  std::FILE* f = std::tmpfile();
  EventLog log(f, true, false, fixed_clock);
  log.tool_call("main", 1, 0, "shell", testing::parse(R"({"command":"ls"})"));
  log.tool_result("main", 1, 0, "shell", true, "x", 12.54);
  log.run_end(1, 530.21, 0);
  CAF_CHECK_EQUAL(contents(f),
                  R"({"event":"tool_call","time":"2026-11-23T01:02:03.456Z","agent":"main","step":1,"index":0,"tool":"shell","arguments":{"command":"ls"}})"
                  "\n"
                  R"({"event":"tool_result","time":"2026-11-23T01:02:03.456Z","agent":"main","step":1,"index":0,"tool":"shell","ok":true,"content":"x","elapsed_ms":12.5})"
                  "\n"
                  R"({"event":"run_end","time":"2026-11-23T01:02:03.456Z","agents":1,"elapsed_ms":530.2,"handles_left":0})"
                  "\n");
  std::fclose(f);
}

CAF_TEST(a live transcript shows the progress lines and clears them before the next line) {
  std::FILE* f = std::tmpfile();
  EventLog log(f, false, true);
  CAF_CHECK(log.live());
  log.progress({"build: Compiling jp v0.1.0", "test"});
  log.progress({"build: Compiling jp v0.1.0"});
  log.tool_result("main", 1, 0, "shell", true, "done", 5);
  log.set_call_lines(false); // a display that words the calls itself
  log.tool_result("main", 1, 1, "shell", true, "done", 5);
  log.line("its own words");
  auto out = contents(f);
  CAF_CHECK_EQUAL(out,
                  // two lines, then both erased (up one line) and one drawn, then erased
                  "build: Compiling jp v0.1.0\ntest"
                  "\r\x1b[K\x1b[1A\r\x1b[K"
                  "build: Compiling jp v0.1.0"
                  "\r\x1b[K[main] ← shell (5.0 ms): done\n"
                  "its own words\n");
  std::fclose(f);
}

CAF_TEST(progress lines are cut to the terminal s width so that none wraps) {
  // A wrapped line took two rows, the next redraw erased one, and frames piled up.
  std::FILE* f = std::tmpfile();
  EventLog log(f, false, true);
  log.set_columns(10);
  log.progress({"shell é 0.5 s running `make -j8 all`", "ok 123456"});
  CAF_CHECK_EQUAL(contents(f), "shell é …\nok 123456"); // 9 characters: the 10th column stays free
  std::fclose(f);
}

CAF_TEST(a transcript cuts a long argument and a long step text as it cuts a long result) {
  std::FILE* f = std::tmpfile();
  EventLog log(f, false);
  log.tool_call("main", 1, 0, "write", Json::object().set("text", std::string(200000, 'x')));
  auto out = contents(f);
  CAF_CHECK_LESS(out.size(), 2100u);
  CAF_CHECK(out.ends_with("… (200011 bytes)\n"));
  // A step's text too (a sub-agent's 2-MB answer was one line).
  log.step("main", 2, std::string(200000, 'y'));
  auto more = contents(f).substr(out.size());
  CAF_CHECK_LESS(more.size(), 2100u);
  CAF_CHECK(more.ends_with("… (200000 bytes)\n"));
  std::fclose(f);
}

CAF_TEST(progress lines are held while a dialog is open on the terminal) {
  // Redrawn every half second, they wrote over a permission's question and its answer.
  std::FILE* f = std::tmpfile();
  EventLog log(f, false, true);
  log.progress({"shell 0.5 s"});
  log.hold_progress(true); // erases the line shown
  log.progress({"shell 1.0 s"});
  log.line("another call ended"); // waits until the dialog closes
  log.progress({"shell 1.5 s"});
  log.hold_progress(false);
  log.progress({"shell 2.0 s"});
  CAF_CHECK_EQUAL(contents(f), "shell 0.5 s\r\x1b[Kanother call ended\nshell 2.0 s");
  std::fclose(f);
}

CAF_TEST(a transcript on a terminal shows no control bytes of what tools printed and a pipe gets them) {
  for (bool live : {true, false}) {
    std::FILE* f = std::tmpfile();
    EventLog log(f, false, live);
    log.tool_result("main", 1, 0, "shell", true, "A\x1b]0;PWNED\x07" "B\xc2\x9b" "2J\tC\xE2\x80\xAE" "D", 5);
    auto out = contents(f);
    CAF_CHECK_EQUAL(out, live ? "[main] ← shell (5.0 ms): A\xEF\xBF\xBD]0;PWNED\xEF\xBF\xBD" "B\xEF\xBF\xBD" "2J\tC\xEF\xBF\xBD" "D\n"
                              : "[main] ← shell (5.0 ms): A\x1b]0;PWNED\x07" "B\xc2\x9b" "2J\tC\xE2\x80\xAE" "D\n");
    std::fclose(f);
  }
}

CAF_TEST(on a terminal a byte that is no part of valid UTF-8 shows as U+FFFD) {
  // 0x80..0x9F alone are the 8-bit C1 controls (0x9B is CSI) to a terminal that
  // reads them; the UTF-8 form of C1 was caught, the single byte passed.
  CAF_CHECK_EQUAL(terminal_safe("A\x9b" "31mB\n"), "A\xEF\xBF\xBD" "31mB\n");
  CAF_CHECK_EQUAL(terminal_safe("\x80\x9f\xff\xc3"), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");
  // Overlong forms and surrogates too (0xC0 0x9B would read as CSI to a lax decoder).
  CAF_CHECK_EQUAL(terminal_safe("\xC0\x9b" "x\xED\xA0\x80"), "\xEF\xBF\xBD\xEF\xBF\xBD" "x\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");
  // Valid UTF-8 as it is.
  CAF_CHECK_EQUAL(terminal_safe("caf\xC3\xA9 \xE2\x9C\x93 \xF0\x9F\x98\x80\n\tx"), "caf\xC3\xA9 \xE2\x9C\x93 \xF0\x9F\x98\x80\n\tx");
  // What a tool printed, in a transcript on a terminal.
  std::FILE* f = std::tmpfile();
  EventLog log(f, false, true);
  log.tool_result("main", 1, 0, "shell", true, "A\x9b" "31mB", 5);
  CAF_CHECK_EQUAL(contents(f), "[main] ← shell (5.0 ms): A\xEF\xBF\xBD" "31mB\n");
  std::fclose(f);
}

CAF_TEST(json output is never live) {
  std::FILE* f = std::tmpfile();
  EventLog log(f, true, true);
  CAF_CHECK(!log.live());
  log.progress({"x"});
  log.line("words");
  CAF_CHECK_EQUAL(contents(f), "");
  std::fclose(f);
}

CAF_TEST(notification events and undelivered notifications at turn end) {
  std::FILE* f = std::tmpfile();
  EventLog log(f, true, false, fixed_clock);
  Notification n{"tool", "tool.stopped", "info", "Handle `b` (shell) finished: ok", "b"};
  log.notification("main", n);
  log.turn_end("main", {}, {n});
  CAF_CHECK_EQUAL(contents(f),
                  R"({"event":"notification","time":"2026-11-23T01:02:03.456Z","agent":"main","kind":{"source":"tool","name":"tool.stopped"},)"
                  R"("level":"info","message":"Handle `b` (shell) finished: ok"})"
                  "\n"
                  R"({"event":"turn_end","time":"2026-11-23T01:02:03.456Z","agent":"main","handles":[],"undelivered":[{"kind":{"source":"tool",)"
                  R"("name":"tool.stopped"},"level":"info","message":"Handle `b` (shell) finished: ok"}]})"
                  "\n");
  std::fclose(f);
  // Every notification carried: an empty list, as DESIGN shows the event.
  std::FILE* none = std::tmpfile();
  EventLog quiet(none, true, false, fixed_clock);
  quiet.turn_end("main", {}, {});
  CAF_CHECK_EQUAL(contents(none), R"({"event":"turn_end","time":"2026-11-23T01:02:03.456Z","agent":"main",)"
                                  R"("handles":[],"undelivered":[]})"
                                  "\n");
  std::fclose(none);
  std::FILE* t = std::tmpfile();
  EventLog transcript(t, false);
  transcript.notification("main", n);
  transcript.turn_end("main", {}, {n});
  CAF_CHECK_EQUAL(contents(t), "[main] ! info tool.stopped: Handle `b` (shell) finished: ok\n"
                               "[main] turn end: no handle left running\n"
                               "[main] turn end: undelivered info tool.stopped: Handle `b` (shell) finished: ok\n");
  std::fclose(t);
}

CAF_TEST(an interrupted turn end says so) {
  std::FILE* f = std::tmpfile();
  EventLog log(f, true, false, fixed_clock);
  log.turn_end("main", {}, {}, "", true);
  CAF_CHECK_EQUAL(contents(f), R"({"event":"turn_end","time":"2026-11-23T01:02:03.456Z","agent":"main",)"
                               R"("handles":[],"undelivered":[],"interrupted":true})"
                               "\n");
  std::fclose(f);
  std::FILE* t = std::tmpfile();
  EventLog transcript(t, false);
  transcript.turn_end("main", {}, {}, "", true);
  CAF_CHECK_EQUAL(contents(t), "[main] turn end: interrupted\n"
                               "[main] turn end: no handle left running\n");
  std::fclose(t);
}

CAF_TEST(a handle waited for at the turn end shows what it ended with and says when that was nothing) {
  std::FILE* t = std::tmpfile();
  EventLog transcript(t, false);
  HandleSummary said{"s", "shell", ToolState::success("built\n")};
  said.outcome = turn_end_outcome::awaited;
  HandleSummary quiet{"q", "shell", ToolState::success("")};
  quiet.outcome = turn_end_outcome::awaited;
  transcript.turn_end("main", {said, quiet}, {});
  CAF_CHECK_EQUAL(contents(t), "[main] turn end: `s` (shell) was still running: await -> built\n"
                               "[main] turn end: `q` (shell) was still running: await -> (no output)\n");
  std::fclose(t);
}

CAF_TEST(a second interrupt s turn end says so once and names each handle it aborted) {
  // It said "interrupted", then the error saying so again, then "no handle left
  // running" for the handle it had just aborted.
  std::FILE* t = std::tmpfile();
  EventLog transcript(t, false);
  HandleSummary w{"w", "shell", ToolState::running("")};
  w.outcome = turn_end_outcome::aborted;
  transcript.turn_end("main", {w}, {}, "interrupted twice: every handle was aborted", true);
  CAF_CHECK_EQUAL(contents(t), "[main] turn end: interrupted twice: every handle was aborted\n"
                               "[main] turn end: `w` (shell) was still running: aborted\n");
  std::fclose(t);
}

CAF_TEST(json events are stamped with the time as RFC 3339 UTC with milliseconds) {
  std::FILE* f = std::tmpfile();
  EventLog log(f, true);
  log.run_end(1, 1, 0);
  auto line = contents(f);
  std::fclose(f);
  auto e = testing::parse(line);
  auto time = e.find("time")->as_string();
  CAF_CHECK_EQUAL(time.size(), 24u); // 2026-11-23T01:02:03.456Z
  CAF_CHECK(std::regex_match(time, std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z)")));
  CAF_CHECK(line.starts_with(R"({"event":"run_end","time":")"));
}
