// The CLI's per-tool views (issue 19): each kind's live line from recorded progress
// (what its handle reports), the line a call gets as it starts and as it ends, and
// text from tools that cannot drive the terminal.
#define CAF_SUITE tool_views
#include <caf/test/unit_test.hpp>

#include <cstdio>
#include <memory>

#include "file_contents.hpp"
#include "runtime/cli/terminal_hooks.hpp"
#include "runtime/cli/tool_views.hpp"
#include "runtime/store/event_log.hpp"

using namespace jp;
using namespace jp::testing;

namespace {

HandleSummary running(const std::string& id, const std::string& tool, double secs, HandleProgress progress) {
  return HandleSummary{id, tool, ToolState::running(), turn_end_policy::abort, secs, std::move(progress)};
}

HandleProgress figures(int64_t done, int64_t run, int64_t total) {
  HandleProgress p;
  p.done = done;
  p.running = run;
  p.total = total;
  return p;
}

} // namespace

CAF_TEST(a shell shows its command its elapsed time and its last output line) {
  auto h = running("w", "shell", 4.25, HandleProgress{"Compiling jp v0.2.0"});
  HandleOrigin spawned{Json::object().set("action", "spawn").set("id", "w").set("command", "make test\nmake install")};
  CAF_CHECK_EQUAL(in_flight_line(h, spawned), "⋯ shell `w` 4.2 s $ make test │ Compiling jp v0.2.0");
  // Before its first line, and without the call that spawned it (another process').
  CAF_CHECK_EQUAL(in_flight_line(running("w", "shell", 0.5, {}), {}), "⋯ shell `w` 500.0 ms");
}

CAF_TEST(a terminal tool shows its last screen line) {
  HandleOrigin pty{Json::object().set("id", "r"), true};
  CAF_CHECK_EQUAL(in_flight_line(running("r", "repl", 12, HandleProgress{">>> 2 + 2"}), pty),
                  "⋯ repl `r` 12.0 s ▌ >>> 2 + 2");
}

CAF_TEST(an agent shows its rounds and tool calls) {
  HandleProgress p{"reading the tests"};
  p.rounds = 3;
  p.calls = 1;
  CAF_CHECK_EQUAL(in_flight_line(running("a", "agent", 75, p), {}),
                  "⋯ agent `a` 1m15s · 3 responses, 1 tool call │ reading the tests");
}

CAF_TEST(a foreach shows done running and total) {
  CAF_CHECK_EQUAL(in_flight_line(running("f", "foreach", 8, figures(3, 2, 10)), {}),
                  "⋯ foreach `f` 8.0 s · 3/10 done, 2 running");
}

CAF_TEST(an mcp call shows its last progress message) {
  HandleProgress p{"[info build] step 2 of 5"};
  p.message = "50% compiled";
  CAF_CHECK_EQUAL(in_flight_line(running("b", "ci__build", 2, p), {}), "⋯ ci__build `b` 2.0 s │ 50% compiled");
}

CAF_TEST(a remote handle shows its node) {
  HandleProgress p{"ok 12 tests"};
  p.node = "build1";
  HandleOrigin spawned{Json::object().set("command", "cargo test")};
  CAF_CHECK_EQUAL(in_flight_line(running("t", "shell", 3, p), spawned),
                  "⋯ shell `t` on build1 3.0 s $ cargo test │ ok 12 tests");
}

CAF_TEST(a line is cut to its width and control characters from tools are not passed on) {
  auto h = running("w", "shell", 1, HandleProgress{"\x1b]0;owned\x07 done \xC2\x9b" "2J"});
  auto line = in_flight_line(h, {});
  CAF_CHECK_EQUAL(line, "⋯ shell `w` 1.0 s │ \xEF\xBF\xBD]0;owned\xEF\xBF\xBD done \xEF\xBF\xBD" "2J");
  auto cut = in_flight_line(running("w", "shell", 1, HandleProgress{std::string(200, 'x')}), {}, 30);
  CAF_CHECK_EQUAL(cut, "⋯ shell `w` 1.0 s │ xxxxxxxxx…"); // 30 columns, the ellipsis included
}

CAF_TEST(a finished call gets one line with how it ended its size and duration) {
  // A one-shot call: its output, or why it failed first.
  CAF_CHECK_EQUAL(completed_line("shell", Json::object().set("command", "echo hi"), true, "hi\n", 3.14),
                  "✓ shell · ok · 3 B · 3.1 ms");
  CAF_CHECK_EQUAL(completed_line("shell", Json::object(), false, "exit status 3\noops\n", 1250),
                  "✗ shell · exit status 3 · 19 B · 1.2 s");
  // A stateful answer: its state, its result's size, its error.
  CAF_CHECK_EQUAL(completed_line("shell", Json::object().set("id", "w"), true,
                                 R"({"id":"w","state":"stopped","result":"built\n"})", 2048),
                  "✓ shell `w` · stopped · 6 B · 2.0 s");
  CAF_CHECK_EQUAL(completed_line("shell", Json::object().set("id", "w"), true, R"({"id":"w","state":"running"})", 0.8),
                  "⋯ shell `w` · running · 28 B · 0.8 ms"); // not done: no check mark
  CAF_CHECK_EQUAL(completed_line("shell", Json::object().set("id", "w"), true, R"({"id":"w","state":"waiting"})", 0.8),
                  "⋯ shell `w` · waiting · 28 B · 0.8 ms");
  CAF_CHECK_EQUAL(completed_line("await", Json::object(), true,
                                 R"j({"id":"x","state":"stopped","error":{"message":"aborted (killed by signal 15)"}})j",
                                 5),
                  "✓ await `x` · aborted (killed by signal 15) · 80 B · 5.0 ms");
}

CAF_TEST(a call starting shows what it runs) {
  CAF_CHECK_EQUAL(started_line("shell", Json::object().set("action", "spawn").set("id", "w").set("command", "make")),
                  "→ shell `w` spawn $ make");
  CAF_CHECK_EQUAL(started_line("await", Json::object().set("all", Json(JsonArray{Json("w")}))),
                  R"(→ await {"all":["w"]})");
  CAF_CHECK_EQUAL(started_line("shell", Json::object().set("action", "fetch").set("id", "w")), "→ shell `w` fetch");
}

CAF_TEST(a one shot call that runs has a live line of its own) {
  std::FILE* f = std::tmpfile();
  auto log = std::make_shared<EventLog>(f, false, true);
  EventLogObserver observer(log, "main", EventLogObserver::text_mode::none);
  observer.tool_call(1, 0, ToolCall{"c1", "shell", R"({"command":"make test"})"});
  observer.tool_call(1, 1, ToolCall{"c2", "shell", R"({"action":"fetch","id":"w"})"});
  observer.progress({}); // no handle listed: `w`'s line would come from the list
  auto first = contents(f); // the calls' transcript lines, then the progress line
  auto live = first.substr(first.rfind('\n') + 1);
  CAF_CHECK(live.find("[main] ⋯ shell ") == 0);
  CAF_CHECK(live.find(" $ make test") != std::string::npos);
  CAF_CHECK(live.find("fetch") == std::string::npos); // one line: the fetch has none
  observer.tool_result(1, 0, "shell", true, "ok\n", 5);
  observer.progress({});
  auto then = contents(f);
  CAF_CHECK(then.find("[main] ⋯ waiting on the step's calls") != std::string::npos);
  std::fclose(f);
}
