// The turn on a real runtime: its notification queue (notifications ride on the next
// answer, as a JSON field or a trailing block; output news are coalesced; what no
// answer carried is handed over at the end), and tagged calls ended by their tag (a
// one-shot run, or the handle a call names).
#define CAF_SUITE turn
#include <caf/test/unit_test.hpp>

#include <atomic>
#include <filesystem>
#include <semaphore>
#include <fmt/format.h>

#include "contains.hpp"
#include "marked_processes.hpp"
#include "actors/function_handle.hpp"
#include "real_turn.hpp"

using namespace jp;
using namespace jp::testing;

namespace {

/// The arguments of a shell spawn `id` of a marked sleep, answered at once.
Json sleeper_spawn(const marked_sleep& sleeper, const std::string& id) {
  return Json::object()
    .set("action", "spawn")
    .set("id", id)
    .set("command", "exec " + sleeper.program.string() + " 300")
    .set("wait_ms", 0);
}

} // namespace

CAF_TEST_FIXTURE_SCOPE(turn_tests, real_turn)

CAF_TEST(notifications ride on the next answer once and output news are coalesced) {
  notify("tool.output", "a", "Handle `a` (shell) has new output; fetch it to read it");
  notify("tool.output", "a", "Handle `a` (shell) has new output; fetch it to read it");
  notify("tool.stopped", "b", "Handle `b` (shell) finished: ok");
  auto r = call("shell", R"({"command":"echo hi"})");
  CAF_CHECK(r.ok);
  CAF_REQUIRE_EQUAL(r.notifications.size(), 2u);
  CAF_CHECK_EQUAL(r.content, "hi\n\n<notifications>\n"
                             "[info] tool.output: Handle `a` (shell) has new output; fetch it to read it\n"
                             "[info] tool.stopped: Handle `b` (shell) finished: ok\n"
                             "</notifications>");
  // Carried once: the next answer has none.
  auto again = call("shell", R"({"command":"echo again"})");
  CAF_CHECK_EQUAL(again.content, "again\n");
  CAF_CHECK(again.notifications.empty());
}

CAF_TEST(a handle s questions are coalesced to the newest and dropped by an answer showing it waiting) {
  // A tool printing while it waits asks anew each time it goes quiet.
  notify("tool.waiting", "w", "Handle `w` (shell) asks: one (answer with apply)");
  notify("tool.waiting", "v", "Handle `v` (shell) asks: x (answer with apply)");
  notify("tool.waiting", "w", "Handle `w` (shell) asks: two (answer with apply)");
  auto r = call("shell", R"({"command":"echo hi"})");
  CAF_CHECK_EQUAL(r.content, "hi\n\n<notifications>\n"
                             "[info] tool.waiting: Handle `v` (shell) asks: x (answer with apply)\n"
                             "[info] tool.waiting: Handle `w` (shell) asks: two (answer with apply)\n"
                             "</notifications>");
  // The answer that shows it waiting says it all.
  notify("tool.waiting", "q", "Handle `q` (shell) asks: name? (answer with apply)");
  auto spawned = call("shell", R"({"action":"spawn","id":"q","command":"printf 'name? '; read x","wait_ms":20000})");
  CAF_CHECK(contains(spawned.content, R"("state":"waiting")"));
  CAF_CHECK(spawned.notifications.empty());
  call("shell", R"({"action":"abort","id":"q"})");
}

CAF_TEST(a question no longer asked is dropped and the same one again is no news until it is answered) {
  notify("tool.waiting", "w", "Handle `w` (shell) asks: q (answer with apply)");
  notify(waiting_over_notification, "w", ""); // it printed and runs on: not carried
  CAF_CHECK(call("shell", R"({"command":"echo a"})").notifications.empty());
  notify("tool.waiting", "w", "Handle `w` (shell) asks: q (answer with apply)");
  CAF_CHECK_EQUAL(call("shell", R"({"command":"echo b"})").notifications.size(), 1u);
  // Asked again as it went quiet again, nothing answered between: not told twice.
  notify(waiting_over_notification, "w", "");
  notify("tool.waiting", "w", "Handle `w` (shell) asks: q (answer with apply)");
  CAF_CHECK(call("shell", R"({"command":"echo c"})").notifications.empty());
  // Another question is news.
  notify("tool.waiting", "w", "Handle `w` (shell) asks: r (answer with apply)");
  CAF_CHECK_EQUAL(call("shell", R"({"command":"echo d"})").notifications.size(), 1u);
}

CAF_TEST(a JSON answer carries them as a notifications array) {
  notify("tool.stopped", "b", "Handle `b` (shell) finished: ok");
  auto r = call("shell", R"({"action":"spawn","id":"s","command":"true"})");
  CAF_REQUIRE(r.ok);
  auto j = Json::parse(r.content);
  CAF_REQUIRE(j.ok());
  CAF_CHECK_EQUAL(j->find("id")->as_string(), "s");
  auto* list = j->find("notifications");
  CAF_REQUIRE(list != nullptr);
  CAF_CHECK_EQUAL(list->dump(), R"([{"kind":{"source":"tool","name":"tool.stopped"},"level":"info",)"
                                R"("message":"Handle `b` (shell) finished: ok"}])");
}

CAF_TEST(an answer carries the notifications that fit the response cap and the next one the rest) {
  // 1,000 notifications of ~100 bytes: more than one answer of 64 KiB holds.
  constexpr int n = 1000;
  for (int i = 0; i < n; ++i)
    notify("tool.stopped", fmt::format("h{}", i), fmt::format("Handle `h{}` (shell) finished: ok{:>60}", i, ""));
  auto cap = default_config().runtime.response_cap_bytes;
  std::vector<std::string> carried;
  for (int calls = 0; calls < 3 && carried.size() < size_t{n}; ++calls) {
    auto r = call("shell", R"({"command":"echo hi"})");
    CAF_REQUIRE(r.ok);
    CAF_CHECK_LESS_OR_EQUAL(r.content.size(), cap);
    CAF_CHECK(!r.notifications.empty());
    CAF_CHECK(r.content.ends_with("\n</notifications>"));
    for (auto& note : r.notifications)
      carried.push_back(note.handle);
  }
  // Every one carried once, in the order queued, over two answers.
  CAF_REQUIRE_EQUAL(carried.size(), size_t{n});
  for (int i = 0; i < n; ++i)
    CAF_CHECK_EQUAL(carried[size_t(i)], fmt::format("h{}", i));
  CAF_CHECK(call("shell", R"({"command":"echo hi"})").notifications.empty());
}

CAF_TEST(what no answer carried is handed over at the end) {
  notify("tool.stopped", "late", "Handle `late` (shell) finished");
  auto [pending, err] = ask<std::vector<Notification>>(turn, pending_atom::value);
  CAF_REQUIRE_EQUAL(err, "");
  CAF_REQUIRE_EQUAL(pending.size(), 1u);
  CAF_CHECK_EQUAL(pending[0].handle, "late");
  auto [none, err2] = ask<std::vector<Notification>>(turn, pending_atom::value);
  CAF_CHECK(none.empty());
}

CAF_TEST(a handle nobody looks at is notified when it stops) {
  // End to end through the registry: spawn, never fetch, and the next answer says so.
  // It stops once the spawn has answered (an answer that shows the stop is news enough).
  auto s = call("shell", R"({"action":"spawn","id":"bg","wait_ms":0,"command":"until [ -e go ]; do sleep 0.01; done; echo done"})");
  CAF_REQUIRE(s.ok);
  CAF_REQUIRE(contains(s.content, R"("state":"running")"));
  dir.write("go", "");
  // Wait (bounded) for the stop by asking for the turn's queue through calls.
  std::string seen;
  auto deadline = std::chrono::steady_clock::now() + bound;
  while (seen.find("Handle `bg` (shell) finished: done") == std::string::npos &&
         std::chrono::steady_clock::now() < deadline) {
    auto r = call("shell", R"({"command":"sleep 0.01"})");
    seen += r.content;
  }
  // As a block after a plain answer, or in the spawn's own JSON answer.
  CAF_CHECK(seen.find("[info] tool.stopped: Handle `bg` (shell) finished: done") != std::string::npos ||
            seen.find(R"("name":"tool.stopped"},"level":"info","message":"Handle `bg` (shell) finished: done")") !=
              std::string::npos);
}

CAF_TEST(a tagged one shot call is ended by its tag) {
  marked_sleep sleeper(dir.path);
  auto args = Json::object().set("command", "exec " + sleeper.program.string() + " 300").dump();
  auto pending = self->request(turn, caf::infinite, call_atom::value, std::string("shell"), args, std::string("t1"));
  CAF_REQUIRE_EQUAL(sleeper.wait_alive(1), 1u);
  self->send(turn, abort_atom::value, std::string("t1"));
  CallResult r;
  pending.receive([&](CallResult& x) { r = std::move(x); }, [&](caf::error& err) { r = {false, to_string(err)}; });
  CAF_CHECK(!r.ok);
  CAF_CHECK(r.content.find("abort") != std::string::npos);
  CAF_CHECK_EQUAL(sleeper.wait_none(), 0u);
  // Another tag, or none, is not touched; a tag aborted before its call keeps it from running.
  self->send(turn, abort_atom::value, std::string("t2"));
  auto early = ask<CallResult>(turn, call_atom::value, std::string("shell"),
                               std::string(R"({"command":"echo ran"})"), std::string("t2")).first;
  CAF_CHECK(!early.ok);
  CAF_CHECK_EQUAL(early.content, "`shell` was aborted before it ran; nothing was run");
  CAF_CHECK_EQUAL(call("shell", R"({"command":"echo ran"})").content, "ran\n");
  // Its answer given, the tag is free again.
  auto again = ask<CallResult>(turn, call_atom::value, std::string("shell"),
                               std::string(R"({"command":"echo ran"})"), std::string("t2")).first;
  CAF_CHECK_EQUAL(again.content, "ran\n");
}

CAF_TEST(an abort of a tag that came after its call was answered is forgotten once its caller retires the tag) {
  // An MCP client's cancel crossing the answer: the server, which knows the call was
  // answered, retires the tag; a later call under it (the id used again) runs.
  auto echo = std::string(R"({"command":"echo ran"})");
  CAF_CHECK_EQUAL(ask<CallResult>(turn, call_atom::value, std::string("shell"), echo, std::string("late")).first.content,
                  "ran\n");
  self->send(turn, abort_atom::value, std::string("late"));
  self->send(turn, retire_atom::value, std::string("late"));
  auto again = ask<CallResult>(turn, call_atom::value, std::string("shell"), echo, std::string("late")).first;
  CAF_CHECK(again.ok);
  CAF_CHECK_EQUAL(again.content, "ran\n");
}

CAF_TEST(a tagged await is answered at once by its tag s abort and its handle runs on) {
  // An MCP client's cancel of an await: it answers now with what it waits on (the
  // server drops that answer), rather than live on until its handle stops.
  marked_sleep sleeper(dir.path);
  CAF_REQUIRE(call("shell", sleeper_spawn(sleeper, "w").set("wait_ms", 0).dump()).ok);
  auto pending = self->request(turn, std::chrono::seconds(60), call_atom::value, std::string("await"),
                               std::string(R"({"all":["w"]})"), std::string("a1"));
  // (The turn runs calls through its mailbox in order: the await waits by then.)
  CAF_REQUIRE_EQUAL(call("shell", R"({"command":"echo in between"})").content, "in between\n");
  self->send(turn, abort_atom::value, std::string("a1"));
  CallResult r;
  pending.receive([&](CallResult& x) { r = std::move(x); }, [&](caf::error& err) { r = {false, to_string(err)}; });
  CAF_CHECK(contains(r.content, R"("pending")"));
  CAF_CHECK(contains(r.content, R"("id":"w")"));
  // An await ends nothing (its exec may still be on its way: the spawn did not wait).
  CAF_CHECK_EQUAL(sleeper.wait_alive(1), 1u);
  // The tag is free again once the caller retired it: an await under it runs.
  self->send(turn, retire_atom::value, std::string("a1"));
  auto again = ask<CallResult>(turn, call_atom::value, std::string("await"),
                               std::string(R"({"all":["w"],"timeout_secs":0})"), std::string("a1")).first;
  CAF_CHECK(contains(again.content, R"("timed_out":true)"));
}

CAF_TEST(a tagged spawn has its handle aborted by its tag) {
  marked_sleep sleeper(dir.path);
  // A spawn that waits, tagged: its abort while it waits stops the handle it started.
  // (The call after it has run once it answers: the turn runs calls through its
  // mailbox in order, so the spawn is waiting by then.)
  auto spawn = sleeper_spawn(sleeper, "h").set("wait_ms", 60000);
  auto pending = self->request(turn, caf::infinite, call_atom::value, std::string("shell"), spawn.dump(), std::string("s1"));
  CAF_REQUIRE_EQUAL(call("shell", R"({"command":"echo in between"})").content, "in between\n");
  self->send(turn, abort_atom::value, std::string("s1"));
  CallResult r;
  pending.receive([&](CallResult& x) { r = std::move(x); }, [&](caf::error& err) { r = {false, to_string(err)}; });
  CAF_CHECK(r.content.find(R"("state":"stopped")") != std::string::npos);
  CAF_CHECK_EQUAL(sleeper.wait_none(), 0u);
  // A tagged spawn aborted before it came is not run.
  self->send(turn, abort_atom::value, std::string("s2"));
  spawn.set("id", "h2");
  auto early = ask<CallResult>(turn, call_atom::value, std::string("shell"), spawn.dump(), std::string("s2")).first;
  CAF_CHECK(!early.ok);
  CAF_CHECK_EQUAL(early.content, "`shell` was aborted before it ran; nothing was done");
  CAF_CHECK(sleeper.alive().empty());
}

CAF_TEST(the protocol s parameters given as null are left out) {
  // Clients send null for what they leave out: no action is a one-shot call.
  CAF_CHECK_EQUAL(call("shell", R"({"command":"echo one","action":null})").content, "one\n");
  auto spawned = call("shell", R"({"action":"spawn","id":"n","command":"echo two","input":null,"wait_ms":null,)"
                               R"("screen":null,"rows":null,"cols":null})");
  CAF_CHECK(spawned.ok);
  CAF_CHECK(contains(spawned.content, R"("id":"n")"));
  auto unnamed = call("shell", R"({"action":"spawn","id":null,"command":"echo three"})");
  CAF_CHECK(!unnamed.ok);
  CAF_CHECK(contains(unnamed.content, "missing `id`"));
  call("shell", R"({"action":"abort","id":"n"})");
}

CAF_TEST(a tagged call aborted while its permission is asked does not run) {
  // An MCP client cancels after the person said yes, before the yes reached the
  // turn: nothing starts only to be killed (a command's first effects would stay).
  marked_sleep sleeper(dir.path);
  auto config = default_config();
  config.workspace = dir.path.string();
  config.tools.at("shell").run = run_mode::ask;
  config.tools.at("shell").action_permissions[action_kind::spawn] = run_mode::ask;
  std::counting_semaphore<8> asked{0}, answered{0};
  std::atomic<permission_answer> answer{permission_answer::yes};
  TurnContext ctx{std::make_shared<const Config>(std::move(config)), &io};
  ctx.ask_permission = [&](const std::string&, const Json&, const std::string&) -> std::optional<PermissionReply> {
    asked.release();
    answered.acquire(); // the person answers once the test has aborted the call
    return PermissionReply{answer.load(), ""};
  };
  auto asking = spawn_turn(sys, std::move(ctx));
  auto abort_while_asked = [&](const Json& args, const std::string& tag) {
    auto pending = self->request(asking, caf::infinite, call_atom::value, std::string("shell"), args.dump(), tag);
    asked.acquire();
    self->send(asking, abort_atom::value, tag);
    ask<std::vector<HandleSummary>>(asking, list_atom::value); // the abort is in: it came first
    answered.release();
    CallResult r;
    pending.receive([&](CallResult& x) { r = std::move(x); }, [&](caf::error& err) { r = {false, to_string(err)}; });
    return r;
  };
  auto spawned = abort_while_asked(sleeper_spawn(sleeper, "h"), "p1");
  CAF_CHECK(!spawned.ok);
  CAF_CHECK_EQUAL(spawned.content, "`shell` was aborted while its permission was asked; nothing was run");
  answer = permission_answer::yes_for_turn;
  auto ran = abort_while_asked(Json::object().set("command", "exec " + sleeper.program.string() + " 300"), "p2");
  CAF_CHECK(!ran.ok);
  CAF_CHECK_EQUAL(ran.content, "`shell` was aborted while its permission was asked; nothing was run");
  CAF_CHECK(sleeper.alive().empty());
  // The yes for the turn still holds: the next call is not asked about.
  auto next = ask<CallResult>(asking, call_atom::value, std::string("shell"), std::string(R"({"command":"echo ran"})"));
  CAF_CHECK_EQUAL(next.first.content, "ran\n");
  self->send_exit(asking, caf::exit_reason::user_shutdown);
}

CAF_TEST(a tagged look aborted by its tag leaves the handle running) {
  // A fetch only looks at a handle it did not start (an MCP client cancels one that
  // timed out while a build runs): its abort must not end the handle.
  auto spawn = Json::object().set("action", "spawn").set("id", "h").set("command", R"(read x; echo "got $x")").set("wait_ms", 0);
  CAF_REQUIRE(call("shell", spawn.dump()).ok);
  auto look = std::string(R"({"action":"fetch","id":"h","wait_ms":60000})");
  // Aborted before it ran, it does not run.
  self->send(turn, abort_atom::value, std::string("f1"));
  auto before = ask<CallResult>(turn, call_atom::value, std::string("shell"), look, std::string("f1")).first;
  CAF_CHECK_EQUAL(before.content, "`shell` was aborted before it ran; nothing was done");
  // Aborted while it waits (the handle says nothing until it reads a line).
  auto pending = self->request(turn, caf::infinite, call_atom::value, std::string("shell"), look, std::string("f2"));
  self->send(turn, abort_atom::value, std::string("f2"));
  // Had either abort reached the handle, it would be ended before this input.
  CAF_CHECK(call("shell", R"({"action":"apply","id":"h","input":"hello\n","wait_ms":0})").ok);
  CallResult r;
  pending.receive([&](CallResult& x) { r = std::move(x); }, [&](caf::error& err) { r = {false, to_string(err)}; });
  auto done = call("await", R"({"all":["h"],"timeout_secs":60})");
  CAF_CHECK((r.content + done.content).find("got hello") != std::string::npos);
  CAF_CHECK(done.content.find("abort") == std::string::npos);
}

CAF_TEST(awaits on one handle are answered alike when it stops and a timeout ends only its own) {
  marked_sleep sleeper(dir.path);
  CAF_REQUIRE(call("shell", sleeper_spawn(sleeper, "one").dump()).ok);
  // 50 awaits on it at once, and one that times out.
  using pending_call = decltype(self->request(turn, caf::infinite, call_atom::value, std::string(), std::string()));
  std::vector<pending_call> waiting;
  for (int i = 0; i < 50; ++i)
    waiting.push_back(self->request(turn, caf::infinite, call_atom::value, std::string("await"),
                                    std::string(R"({"any":["one"]})")));
  auto timed = call("await", R"({"any":["one"],"timeout_secs":0.05})");
  CAF_REQUIRE(timed.ok);
  CAF_CHECK_EQUAL(timed.content, R"({"completed":[],"pending":[{"id":"one","state":"running"}],"timed_out":true})");
  // It aborted nothing: the handle still runs, and the 50 still wait.
  CAF_REQUIRE_EQUAL(sleeper.wait_alive(1), 1u);
  CAF_CHECK(self->mailbox().empty());
  CAF_REQUIRE(call("shell", R"({"action":"abort","id":"one"})").ok);
  std::vector<std::string> answers;
  for (auto& w : waiting)
    w.receive([&](CallResult& r) { answers.push_back(r.ok ? r.content : "failed: " + r.content); },
              [&](caf::error& err) { answers.push_back(to_string(err)); });
  CAF_REQUIRE_EQUAL(answers.size(), 50u);
  CAF_CHECK(answers[0].starts_with(R"({"completed":[{"id":"one","state":"stopped","error":)"));
  CAF_CHECK(answers[0].ends_with(R"("pending":[]})"));
  for (auto& a : answers)
    CAF_CHECK_EQUAL(a, answers[0]);
  CAF_CHECK_EQUAL(sleeper.wait_none(), 0u);
}

CAF_TEST(an answer that shows a handle stopped is not followed by news of its stop) {
  // RFD 037: notifications are for handles the assistant has not looked at. The
  // spawn's look waits for the stop of a tool that prints nothing; the registry's
  // notice of the stop reaches the turn before the fetch's answer, and is dropped.
  auto s = call("shell", R"({"action":"spawn","id":"t","wait_ms":30000,"command":"true"})");
  CAF_REQUIRE(contains(s.content, R"({"id":"t","state":"stopped")"));
  auto f = call("shell", R"({"action":"fetch","id":"t"})");
  CAF_CHECK(f.notifications.empty());
  // A notice queued before an await that shows the stop is dropped (queued here by
  // hand: whether the registry's own comes first is the stop's race with the await).
  CAF_REQUIRE(call("shell", R"({"action":"spawn","id":"q","wait_ms":0,"command":"until [ -e q.go ]; do sleep 0.01; done"})").ok);
  notify("tool.stopped", "q", "Handle `q` (shell) finished");
  dir.write("q.go", "");
  auto a = call("await", R"({"all":["q"]})");
  CAF_CHECK(contains(a.content, R"({"completed":[{"id":"q","state":"stopped")"));
  CAF_CHECK(a.notifications.empty());
  auto [left, err] = ask<std::vector<Notification>>(turn, pending_atom::value);
  CAF_CHECK(left.empty());
  // Spawned again under its id, the new handle's news are news.
  CAF_REQUIRE(call("shell", R"({"action":"spawn","id":"t","wait_ms":0,"command":"until [ -e t.go ]; do sleep 0.01; done"})").ok);
  dir.write("t.go", "");
  std::string seen;
  auto deadline = std::chrono::steady_clock::now() + bound;
  while (!contains(seen, "Handle `t` (shell) finished") && std::chrono::steady_clock::now() < deadline)
    seen += call("shell", R"({"command":"sleep 0.01"})").content;
  CAF_CHECK(contains(seen, "Handle `t` (shell) finished"));
}

CAF_TEST(an assistant awaiting the rest after each stop hears every stop once) {
  // W3's pattern: await any over what is pending, again after each answer (the turn
  // starts such an await from the answer before it).
  marked_sleep sleeper(dir.path);
  for (auto id : {"a", "b", "c"})
    CAF_REQUIRE(call("shell", sleeper_spawn(sleeper, id).dump()).ok);
  CAF_REQUIRE_EQUAL(sleeper.wait_alive(3), 3u);
  auto await_then_abort = [&](const std::string& args, const std::string& id) {
    auto waiting = self->request(turn, caf::infinite, call_atom::value, std::string("await"), args);
    CAF_REQUIRE(call("shell", fmt::format(R"({{"action":"abort","id":"{}"}})", id)).ok);
    std::string answer;
    waiting.receive([&](CallResult& r) { answer = r.ok ? r.content : "failed: " + r.content; },
                    [&](caf::error& err) { answer = to_string(err); });
    return answer;
  };
  auto first = await_then_abort(R"({"any":["a","b","c"]})", "b");
  CAF_CHECK(first.starts_with(R"({"completed":[{"id":"b","state":"stopped","error":)"));
  // (each stop is seen by its abort's answer: no notification rides on these)
  CAF_CHECK(first.ends_with(R"("pending":[{"id":"a","state":"running"},{"id":"c","state":"running"}]})"));
  auto second = await_then_abort(R"({"any":["a","c"]})", "c");
  CAF_CHECK(second.starts_with(R"({"completed":[{"id":"c","state":"stopped","error":)"));
  CAF_CHECK(second.ends_with(R"("pending":[{"id":"a","state":"running"}]})"));
  // Not yet stopped, the rest waits (its timeout answers with it pending).
  CAF_CHECK_EQUAL(call("await", R"({"any":["a"],"timeout_secs":0.05})").content,
                  R"({"completed":[],"pending":[{"id":"a","state":"running"}],"timed_out":true})");
  auto last = await_then_abort(R"({"any":["a"]})", "a");
  CAF_CHECK(last.starts_with(R"({"completed":[{"id":"a","state":"stopped","error":)"));
  CAF_CHECK(last.ends_with(R"("pending":[]})"));
  CAF_CHECK_EQUAL(sleeper.wait_none(), 0u);
}

CAF_TEST(an await names the handle it does not know) {
  CAF_REQUIRE(call("shell", R"({"action":"spawn","id":"a","command":"true"})").ok);
  auto r = call("await", R"({"all":["a","typo"]})");
  CAF_CHECK(!r.ok);
  CAF_CHECK(r.content.starts_with("Handle `typo` not found")); // (a notification may follow)
}

CAF_TEST(an await on an id spawned again waits for the new handle) {
  // The turn answers awaits on handles it heard of without asking the registry;
  // a spawn (or a batch's reservation) under the id makes it ask again.
  CAF_REQUIRE(call("shell", R"({"action":"spawn","id":"x","command":"echo first"})").ok);
  // (A notification of its stop may ride on either answer.)
  auto first_result = R"({"completed":[{"id":"x","state":"stopped","result":"first\n"}],"pending":[])";
  CAF_CHECK(call("await", R"({"all":["x"]})").content.starts_with(first_result));
  CAF_CHECK(call("await", R"({"all":["x"]})").content.starts_with(first_result)); // as known
  auto [reserved, err] = ask<bool>(turn, batch_atom::value, std::vector<std::string>{"x"});
  CAF_REQUIRE_EQUAL(err, "");
  CAF_CHECK_EQUAL(call("await", R"({"any":["x"],"timeout_secs":0.05})").content,
                  R"({"completed":[],"pending":[{"id":"x","state":"running"}],"timed_out":true})");
  marked_sleep sleeper(dir.path);
  CAF_REQUIRE(call("shell", sleeper_spawn(sleeper, "x").dump()).ok);
  CAF_CHECK_EQUAL(call("await", R"({"any":["x"],"timeout_secs":0.05})").content,
                  R"({"completed":[],"pending":[{"id":"x","state":"running"}],"timed_out":true})");
  CAF_REQUIRE(call("shell", R"({"action":"abort","id":"x"})").ok);
  auto second = call("await", R"({"all":["x"]})");
  CAF_CHECK(second.content.starts_with(R"({"completed":[{"id":"x","state":"stopped","error":)"));
  CAF_CHECK_EQUAL(sleeper.wait_none(), 0u);
  // Spawned again without a batch, straight away: the new one is awaited.
  CAF_REQUIRE(call("shell", R"({"action":"spawn","id":"x","command":"echo third","wait_ms":0})").ok);
  auto third = call("await", R"({"all":["x"]})");
  CAF_CHECK(third.content.starts_with(R"({"completed":[{"id":"x","state":"stopped","result":"third)"));
}

CAF_TEST(a spawn whose first look asks for a screen on pipes runs nothing) {
  // Refused by the handle once it ran, the call answered an error while its
  // command went on (a model told it failed would run it again).
  auto marker = dir.path / "started";
  auto args = Json::object()
                .set("action", "spawn")
                .set("id", "x")
                .set("command", "touch '" + marker.string() + "'")
                .set("screen", true)
                .dump();
  auto r = call("shell", args);
  CAF_CHECK(!r.ok);
  CAF_CHECK(contains(r.content, "`screen`, `rows` and `cols` are for a handle on a terminal, and `shell` would run "
                                "this one on pipes (give \"tty\": true for a terminal); nothing was run"));
  // Nothing runs under its id.
  auto awaited = call("await", R"({"all":["x"],"timeout_secs":30})");
  CAF_CHECK_EQUAL(awaited.content, "Handle `x` not found: there are no handles");
  CAF_CHECK(!std::filesystem::exists(marker));
}

CAF_TEST(an await of handles known stopped brings the images of those shown stopped for the first time) {
  // A function tool whose result (with an image) the test sets.
  FunctionResult result;
  auto config = default_config();
  config.workspace = dir.path.string();
  config.tools["img"] = function_tool_config("img", "Shows an image when told", {});
  TurnContext ctx{std::make_shared<const Config>(std::move(config)), &io};
  ctx.executors["img"] = function_handle_factory([result](const Json&, const Progress&) { return Invocation{result}; });
  auto with_images = spawn_turn(sys, std::move(ctx));
  auto call_it = [&](const std::string& tool, const std::string& args) {
    return ask<CallResult>(with_images, call_atom::value, tool, args).first;
  };
  CAF_REQUIRE(call_it("img", R"({"action":"spawn","id":"m","wait_ms":0})").ok);
  // Awaited once, pending: the turn hears of its stop from then on.
  auto pending = call_it("await", R"({"all":["m"],"timeout_secs":0})");
  CAF_CHECK(contains(pending.content, R"("pending":[{"id":"m","state":"running"}])"));
  auto stopped = ToolState::success("a picture");
  stopped.images.push_back(ToolImage{"image/png", "iVBORw0KGgo="});
  result.set(stopped);
  // Its stop told the turn (the registry lists it no more), the await is answered
  // from what the turn knows: with the image, as the first answer showing it stopped.
  for (int i = 0; i < 10000; ++i) {
    auto [live, err] = ask<std::vector<HandleSummary>>(with_images, list_atom::value);
    if (live.empty())
      break;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  auto awaited = call_it("await", R"({"all":["m"]})");
  CAF_CHECK(contains(awaited.content, R"("id":"m","state":"stopped","result":"a picture")"));
  CAF_REQUIRE_EQUAL(awaited.images.size(), 1u);
  CAF_CHECK_EQUAL(awaited.images[0].base64, "iVBORw0KGgo=");
  // Once: the next answer showing it stopped brings none.
  CAF_CHECK(call_it("await", R"({"all":["m"]})").images.empty());
  self->send_exit(with_images, caf::exit_reason::user_shutdown);
}

CAF_TEST_FIXTURE_SCOPE_END()
