#define CAF_SUITE registry
#include <chrono>
#include <thread>

#include "actor_fixture.hpp"
#include "actors/function_handle.hpp"
#include "actors/remote_handle.hpp"
#include "contains.hpp"
#include "messages/error_category.hpp"
#include "messages/json_codec.hpp"

using namespace jp;
using namespace jp::testing;

CAF_TEST_FIXTURE_SCOPE(registry_tests, registry_fixture)

CAF_TEST(spawn then fetch routes to the handle) {
  auto [r, err] = ask<HandleReport>(registry, spawn_atom::value, std::string("build"), LaunchSpec{});
  CAF_REQUIRE_EQUAL(err, "");
  CAF_CHECK_EQUAL(r.id, "build");
  CAF_CHECK(r.state.kind == state_kind::running);
  auto [f, ferr] = ask<HandleReport>(registry, fetch_atom::value, std::string("build"), LookOptions{});
  CAF_CHECK_EQUAL(ferr, "");
  CAF_CHECK(f.state.kind == state_kind::running);
}

CAF_TEST(unknown ids are errors naming the id) {
  auto [r, err] = ask<HandleReport>(registry, fetch_atom::value, std::string("nope"), LookOptions{});
  CAF_CHECK_EQUAL(err, "Handle `nope` not found: there are no handles");
  auto [a, aerr] = ask<HandleReport>(registry, abort_atom::value, std::string("nope"));
  CAF_CHECK_EQUAL(aerr, "Handle `nope` not found: there are no handles");
}

CAF_TEST(a batch with a duplicate id is rejected whole) {
  std::vector<std::string> ids{"a", "b", "a"};
  auto [ok, err] = ask<bool>(registry, batch_atom::value, ids);
  CAF_CHECK_EQUAL(err, "Batch rejected: handle id `a` is spawned twice in one batch");
  // Nothing was reserved: `b` is unknown.
  auto [r, ferr] = ask<HandleReport>(registry, fetch_atom::value, std::string("b"), LookOptions{});
  CAF_CHECK_EQUAL(ferr, "Handle `b` not found: there are no handles");
}

CAF_TEST(a batch colliding with a live handle is rejected naming it) {
  ask<HandleReport>(registry, spawn_atom::value, std::string("x"), LaunchSpec{});
  std::vector<std::string> ids{"y", "x"};
  auto [ok, err] = ask<bool>(registry, batch_atom::value, ids);
  CAF_CHECK(err.find("handle `x` already exists") != std::string::npos);
  auto [r, ferr] = ask<HandleReport>(registry, fetch_atom::value, std::string("y"), LookOptions{});
  CAF_CHECK_EQUAL(ferr, "Handle `y` not found: the handles are `x`");
}

CAF_TEST(a stopped handle keeps its final state and its id can be reused) {
  ask<HandleReport>(registry, spawn_atom::value, std::string("x"), LaunchSpec{});
  finish("x", "done");
  auto [f, err] = ask<HandleReport>(registry, fetch_atom::value, std::string("x"), LookOptions{});
  CAF_CHECK(f.state.stopped());
  CAF_CHECK_EQUAL(f.state.content, "done");
  auto [again, aerr] = ask<HandleReport>(registry, fetch_atom::value, std::string("x"), LookOptions{});
  CAF_CHECK_EQUAL(again.state.content, "done");
  std::vector<std::string> ids{"x"};
  auto [ok, berr] = ask<bool>(registry, batch_atom::value, ids);
  CAF_CHECK_EQUAL(berr, "");
  CAF_CHECK(ok);
}

CAF_TEST(status reports states without subscribing the asker) {
  ask<HandleReport>(registry, spawn_atom::value, std::string("a"), LaunchSpec{});
  ask<HandleReport>(registry, spawn_atom::value, std::string("b"), LaunchSpec{});
  finish("a", "done");
  std::vector<std::string> ids{"a", "b"};
  auto [st, err] = ask<std::vector<HandleStatus>>(registry, status_atom::value, ids);
  CAF_REQUIRE_EQUAL(err, "");
  CAF_REQUIRE_EQUAL(st.size(), 2u);
  CAF_CHECK(st[0].state.stopped());
  CAF_CHECK_EQUAL(st[0].state.content, "done");
  CAF_CHECK(st[1].state.kind == state_kind::running);
  // Unlike watch, no update follows when b stops.
  finish("b", "later");
  CAF_CHECK(self->mailbox().empty());
  std::vector<std::string> unknown{"a", "zz"};
  auto [none, nerr] = ask<std::vector<HandleStatus>>(registry, status_atom::value, unknown);
  // (b changed last: it comes first)
  CAF_CHECK_EQUAL(nerr, "Handle `zz` not found: the handles are `b`, `a`");
}

CAF_TEST(watch subscribes the watcher to stops) {
  ask<HandleReport>(registry, spawn_atom::value, std::string("w"), LaunchSpec{});
  std::vector<std::string> ids{"w"};
  auto [st, err] = ask<std::vector<HandleStatus>>(registry, watch_atom::value, ids,
                                                  caf::actor_cast<watcher_actor>(self));
  CAF_REQUIRE_EQUAL(err, "");
  finish("w", "ok");
  bool told = false;
  // With whether it ended by itself: a node's client (remote_handle) reads it there.
  self->receive([&](update_atom, HandleStatus& s) { told = s.id == "w" && s.state.stopped() && s.own_end; },
                caf::after(std::chrono::seconds(0)) >> [] {});
  CAF_CHECK(told);
}

CAF_TEST(stops of handles nobody looks at are notified as configured) {
  // A registry whose notifications go to this test.
  auto reg = spawn_registry(sys, fake_factory(), caf::actor_cast<notification_sink>(self));
  LaunchSpec spec;
  spec.tool = "build";
  spec.notify_success = true;
  spec.notify_failure = true;
  spec.notify_content = true;
  auto ask_reg = [&](auto... xs) { return ask<HandleReport>(reg, xs...); };
  ask_reg(spawn_atom::value, std::string("quiet"), spec);
  ask_reg(spawn_atom::value, std::string("fetched"), spec);
  ask_reg(spawn_atom::value, std::string("failing"), spec);
  LaunchSpec silent = spec;
  silent.notify_success = false;
  ask_reg(spawn_atom::value, std::string("silent"), silent);
  ask_reg(fetch_atom::value, std::string("fetched"), LookOptions{});
  // New output of a handle nobody fetched: one notification; none once fetched.
  anon_send(reg, content_atom::value, std::string("quiet"));
  anon_send(reg, content_atom::value, std::string("fetched"));
  finish("quiet", "cc -o app main.c\n50%\r100%\rall built\n\n");
  finish("fetched", "done");
  finish("silent", "done");
  anon_send(handles.at("failing"), abort_atom::value);
  ask_reg(spawn_atom::value, std::string("red"), spec);
  anon_send(handles.at("red"), finish_atom::value, std::string("exit status 2"),
            std::string("make: *** [test] Error 2\n3 passed, 1 failed\n"));
  ask_reg(spawn_atom::value, std::string("blank"), spec);
  finish("blank", "\n \n");
  settle();
  std::vector<Notification> got;
  while (!self->mailbox().empty())
    self->receive([&](notify_atom, Notification& n) { got.push_back(n); });
  CAF_REQUIRE_EQUAL(got.size(), 5u);
  CAF_CHECK_EQUAL(got[4].message, "Handle `blank` (build) finished"); // blank lines: no last line to show
  CAF_CHECK_EQUAL(got[3].message, "Handle `red` (build) failed: exit status 2; its last line: 3 passed, 1 failed");
  CAF_CHECK_EQUAL(got[0].name, "tool.output");
  CAF_CHECK_EQUAL(got[0].handle, "quiet");
  CAF_CHECK_EQUAL(got[1].name, "tool.stopped");
  CAF_CHECK_EQUAL(got[1].message, "Handle `quiet` (build) finished: all built");
  CAF_CHECK_EQUAL(got[2].level, "warning");
  CAF_CHECK_EQUAL(got[2].message, "Handle `failing` (build) failed: aborted");
  anon_send_exit(reg, caf::exit_reason::user_shutdown);
  settle();
}

CAF_TEST(a handle nobody looks at that asks a question is notified) {
  auto reg = spawn_registry(sys, fake_factory(), caf::actor_cast<notification_sink>(self));
  LaunchSpec spec;
  spec.tool = "greet";
  spec.notify_waiting = true;
  ask<HandleReport>(reg, spawn_atom::value, std::string("g"), spec);
  // A question already carried by a response to the assistant is not notified...
  anon_send(reg, waiting_atom::value, std::string("g"), Question{"name", "Whom?", "", {}, ""}, true);
  settle();
  CAF_CHECK(self->mailbox().empty());
  anon_send(reg, waiting_atom::value, std::string("g"), Question{}, false);
  // ...one nobody has seen is.
  anon_send(reg, waiting_atom::value, std::string("g"), Question{"name", "Whom?", "", {}, ""}, false);
  settle();
  Notification got;
  self->receive([&](notify_atom, Notification& n) { got = n; });
  CAF_CHECK_EQUAL(got.name, "tool.waiting");
  CAF_CHECK_EQUAL(got.message, "Handle `g` (greet) asks: Whom? (answer with apply)");
  // It asks no more (answered, or it printed and runs on): the turn is told, once,
  // to drop the question if no answer carried it yet.
  anon_send(reg, waiting_atom::value, std::string("g"), Question{}, false);
  anon_send(reg, waiting_atom::value, std::string("g"), Question{}, false);
  settle();
  self->receive([&](notify_atom, Notification& n) { got = n; });
  CAF_CHECK_EQUAL(got.name, waiting_over_notification);
  CAF_CHECK_EQUAL(got.handle, "g");
  CAF_CHECK(self->mailbox().empty());
  anon_send_exit(reg, caf::exit_reason::user_shutdown);
  settle();
}

CAF_TEST(awaited handles and one-shot calls are not notified) {
  auto reg = spawn_registry(sys, fake_factory(), caf::actor_cast<notification_sink>(self));
  LaunchSpec spec;
  spec.notify_success = true;
  ask<HandleReport>(reg, spawn_atom::value, std::string("awaited"), spec);
  // Awaited by its own agent: the turn, the sink, watches it.
  ask<std::vector<HandleStatus>>(reg, watch_atom::value, std::vector<std::string>{"awaited"},
                                 caf::actor_cast<watcher_actor>(self));
  finish("awaited", "ok");
  self->receive([](update_atom, HandleStatus& s) { CAF_CHECK(s.state.stopped()); });
  CAF_CHECK(self->mailbox().empty());
  anon_send_exit(reg, caf::exit_reason::user_shutdown);
  settle();
}

CAF_TEST(another agent watching or fetching a handle leaves its owner the news) {
  // A shared registry: the other agent's await watches with its own turn, and its
  // fetch comes marked as not the owner's.
  auto reg = spawn_registry(sys, fake_factory(), caf::actor_cast<notification_sink>(self));
  caf::scoped_actor other{sys};
  LaunchSpec spec;
  spec.tool = "build";
  spec.notify_success = true;
  ask<HandleReport>(reg, spawn_atom::value, std::string("theirs"), spec);
  ask<std::vector<HandleStatus>>(reg, watch_atom::value, std::vector<std::string>{"theirs"},
                                 caf::actor_cast<watcher_actor>(other));
  LookOptions not_owner;
  not_owner.by_owner = false;
  ask<HandleReport>(reg, fetch_atom::value, std::string("theirs"), not_owner);
  finish("theirs", "built");
  settle();
  Notification got;
  self->receive([&](notify_atom, Notification& n) { got = n; },
                caf::after(std::chrono::seconds(10)) >> [] { CAF_FAIL("the owner was not told"); });
  CAF_CHECK_EQUAL(got.message, "Handle `theirs` (build) finished: built");
  anon_send_exit(reg, caf::exit_reason::user_shutdown);
  settle();
}

CAF_TEST(apply on a stopped handle is an error) {
  ask<HandleReport>(registry, spawn_atom::value, std::string("x"), LaunchSpec{});
  finish("x", "done");
  auto [r, err] = ask<HandleReport>(registry, apply_atom::value, std::string("x"), std::string("\"y\""), LookOptions{});
  CAF_CHECK_EQUAL(err, "Handle `x` has stopped; it takes no more input");
}

CAF_TEST(a handle actor that dies becomes stopped with an error) {
  ask<HandleReport>(registry, spawn_atom::value, std::string("x"), LaunchSpec{});
  anon_send_exit(handles.at("x"), caf::exit_reason::kill);
  run();
  auto [f, err] = ask<HandleReport>(registry, fetch_atom::value, std::string("x"), LookOptions{});
  CAF_CHECK_EQUAL(err, "");
  CAF_REQUIRE(f.state.stopped());
  CAF_CHECK(!f.state.ok);
  CAF_CHECK(f.state.error.message.find("died") != std::string::npos);
}

CAF_TEST(a cancelled reservation stops with the reason) {
  std::vector<std::string> ids{"x"};
  ask<bool>(registry, batch_atom::value, ids);
  anon_send(registry, cancel_atom::value, std::string("x"), std::string("shell: parameter `command` is required"));
  run();
  auto [f, err] = ask<HandleReport>(registry, fetch_atom::value, std::string("x"), LookOptions{});
  CAF_REQUIRE(f.state.stopped());
  CAF_CHECK_EQUAL(f.state.error.message, "shell: parameter `command` is required");
}

CAF_TEST(a reservation aborted before its spawn refuses that spawn and not the next) {
  // [abort x, spawn x] in one batch: the abort said x stopped, so x must not run.
  std::vector<std::string> ids{"x"};
  ask<bool>(registry, batch_atom::value, ids);
  auto [aborted, aerr] = ask<HandleReport>(registry, abort_atom::value, std::string("x"));
  CAF_CHECK_EQUAL(aborted.state.error.message, "aborted before it started");
  auto [r, err] = ask<HandleReport>(registry, spawn_atom::value, std::string("x"), LaunchSpec{});
  CAF_CHECK_EQUAL(err, "Handle `x` was aborted before it started (an abort before its spawn in the same batch): "
                       "it did not run; spawn it again to run it");
  CAF_CHECK_EQUAL(handles.count("x"), 0u);
  // Spawned again, it runs.
  auto [again, again_err] = ask<HandleReport>(registry, spawn_atom::value, std::string("x"), LaunchSpec{});
  CAF_CHECK_EQUAL(again_err, "");
  CAF_CHECK_EQUAL(handles.count("x"), 1u);
  // A batch whose spawn never came (its arguments refused) leaves no refusal behind.
  std::vector<std::string> more{"y"};
  ask<bool>(registry, batch_atom::value, more);
  ask<HandleReport>(registry, abort_atom::value, std::string("y"));
  anon_send(registry, cancel_atom::value, std::string("y"), std::string("shell: parameter `command` is required"));
  run();
  auto [y, yerr] = ask<HandleReport>(registry, spawn_atom::value, std::string("y"), LaunchSpec{});
  CAF_CHECK_EQUAL(yerr, "");
}

CAF_TEST(one-shot replies once the handle stopped and leaves no entry) {
  auto h = self->request(registry, caf::infinite, oneshot_atom::value, LaunchSpec{});
  run();
  CAF_REQUIRE_EQUAL(handles.count("#1"), 1u);
  finish("#1", "out");
  bool got = false;
  h.receive([&](HandleReport& r) { got = true; CAF_CHECK_EQUAL(r.state.content, "out"); },
            [&](caf::error& e) { CAF_FAIL(error_text(e)); });
  CAF_CHECK(got);
  auto [f, err] = ask<HandleReport>(registry, fetch_atom::value, std::string("#1"), LookOptions{});
  CAF_CHECK_EQUAL(err, "Handle `#1` not found: there are no handles");
}

CAF_TEST(a one-shot run detached goes on as a handle under the first free id) {
  ask<HandleReport>(registry, spawn_atom::value, std::string("shell-1"), LaunchSpec{}); // taken
  ask<HandleReport>(registry, spawn_atom::value, std::string("shell-2"), LaunchSpec{});
  finish("shell-2", "kept"); // stopped, its result still the assistant's to fetch: taken too
  auto run_call = self->request(registry, caf::infinite, oneshot_atom::value, LaunchSpec{}, std::string("#call1"));
  run();
  auto [r, err] = ask<HandleReport>(registry, detach_atom::value, std::string("#call1"), std::string("shell"));
  CAF_CHECK_EQUAL(err, "");
  CAF_CHECK_EQUAL(r.id, "shell-3");
  CAF_CHECK(r.state.kind == state_kind::running);
  // Its caller hears it running under that id (and answers its call from the detach).
  bool got = false;
  run_call.receive([&](HandleReport& w) { got = w.id == "shell-3" && w.state.kind == state_kind::running; },
                   [&](caf::error& e) { CAF_FAIL(error_text(e)); });
  CAF_CHECK(got);
  // A handle now: fetched, listed, counted, ended by its stop under its new id.
  CAF_CHECK_EQUAL(ask<HandleReport>(registry, fetch_atom::value, std::string("shell-3"), LookOptions{}).second, "");
  CAF_CHECK_EQUAL(ask<HandleReport>(registry, fetch_atom::value, std::string("#call1"), LookOptions{}).second,
                  "Handle `#call1` not found: the handles are `shell-3`, `shell-2`, `shell-1`");
  CAF_CHECK(ask<HandleCounts>(registry, counts_atom::value).first == (HandleCounts{3, 2}));
  finish("#call1", "done");
  auto [f, ferr] = ask<HandleReport>(registry, fetch_atom::value, std::string("shell-3"), LookOptions{});
  CAF_CHECK(f.state.stopped());
  CAF_CHECK_EQUAL(f.state.content, "done");
}

CAF_TEST(a one-shot control run asking another question than the one answered gives its caller that one) {
  LaunchSpec spec;
  spec.control_channel = true;
  auto run_call = self->request(registry, caf::infinite, oneshot_atom::value, spec, std::string("#call1"));
  settle();
  // A read without a question: its caller is given `input`.
  anon_send(registry, waiting_atom::value, std::string("#call1"), Question{"input", "waiting for input", "", {}, ""},
            false);
  settle();
  run_call.receive([](HandleReport& w) { CAF_CHECK_EQUAL(w.state.question.id, "input"); },
                   [](caf::error& e) { CAF_FAIL(error_text(e)); });
  // While the caller finds an answer, the read ends and the tool asks on fd 3: the
  // answer to `input` would have gone to `name`.
  anon_send(registry, waiting_atom::value, std::string("#call1"), Question{}, false);
  anon_send(registry, waiting_atom::value, std::string("#call1"), Question{"name", "Whom?", "", {}, ""}, false);
  settle();
  auto [r, err] = ask<HandleReport>(registry, answer_atom::value, std::string("#call1"), std::string("\"bob\""));
  CAF_CHECK_EQUAL(err, "");
  CAF_CHECK(r.state.kind == state_kind::waiting);
  CAF_CHECK_EQUAL(r.state.question.id, "name");
  using fake = std::remove_pointer_t<fake_handle_actor::stateful_pointer<fake_handle_state>>;
  CAF_CHECK(deref<fake>(handles.at("#call1")).state.answers.empty());
  // Its answer goes in.
  auto answered = self->request(registry, caf::infinite, answer_atom::value, std::string("#call1"),
                                std::string("\"bob\""));
  settle();
  CAF_CHECK_EQUAL(deref<fake>(handles.at("#call1")).state.answers, std::vector<std::string>{"\"bob\""});
  finish("#call1", "hello, bob");
  answered.receive([](HandleReport& w) { CAF_CHECK_EQUAL(w.state.content, "hello, bob"); },
                   [](caf::error& e) { CAF_FAIL(error_text(e)); });
}

CAF_TEST(a one-shot run still going at the turn end is aborted whatever its tool policy) {
  // Its spec carries its tool's policy for the handle it might go on as; the run
  // itself (its call unanswered) ends with the turn, as it always did.
  LaunchSpec spec;
  spec.child.on_turn_end = turn_end_policy::await;
  self->request(registry, caf::infinite, oneshot_atom::value, spec, std::string("#call1"));
  run();
  auto [list, err] = ask<std::vector<HandleSummary>>(registry, turn_end_atom::value, InquiryAnswers{});
  CAF_CHECK_EQUAL(err, "");
  CAF_REQUIRE_EQUAL(list.size(), 1u);
  CAF_CHECK_EQUAL(std::string(to_string(list[0].outcome)), "abort");
  CAF_CHECK(list[0].state.stopped());
  auto [r, derr] = ask<HandleReport>(registry, detach_atom::value, std::string("#call1"), std::string("shell"));
  CAF_CHECK_EQUAL(derr, "no one-shot run `#call1` is running");
}

CAF_TEST(a one-shot run that stops as it is detached is answered once by its stop) {
  // Its stop comes first: the detach finds no run, and the call has its result.
  auto run_call = self->request(registry, caf::infinite, oneshot_atom::value, LaunchSpec{}, std::string("#call1"));
  run();
  finish("#call1", "out");
  auto [r, err] = ask<HandleReport>(registry, detach_atom::value, std::string("#call1"), std::string("shell"));
  CAF_CHECK_EQUAL(err, "no one-shot run `#call1` is running");
  bool got = false;
  run_call.receive([&](HandleReport& w) { got = w.id == "#call1" && w.state.content == "out"; },
                   [&](caf::error& e) { CAF_FAIL(error_text(e)); });
  CAF_CHECK(got);
}

CAF_TEST(a detached run whose stop was sent under its old id is stopped under its new one) {
  auto run_call = self->request(registry, caf::infinite, oneshot_atom::value, LaunchSpec{}, std::string("#call1"));
  run();
  // The handle stops (its report under "#call1") while the detach is on its way.
  anon_send(handles.at("#call1"), finish_atom::value, std::string("late"));
  auto detached = self->request(registry, caf::infinite, detach_atom::value, std::string("#call1"),
                                std::string("shell"));
  settle();
  detached.receive([](HandleReport& r) { CAF_CHECK_EQUAL(r.id, "shell-1"); },
                   [](caf::error& e) { CAF_FAIL(error_text(e)); });
  run_call.receive([](HandleReport& r) { CAF_CHECK_EQUAL(r.id, "shell-1"); },
                   [](caf::error& e) { CAF_FAIL(error_text(e)); });
  auto [f, ferr] = ask<HandleReport>(registry, fetch_atom::value, std::string("shell-1"), LookOptions{});
  CAF_CHECK_EQUAL(ferr, "");
  CAF_CHECK(f.state.stopped());
  CAF_CHECK_EQUAL(f.id, "shell-1");
}

CAF_TEST(turn end aborts live handles and lists them) {
  ask<HandleReport>(registry, spawn_atom::value, std::string("a"), LaunchSpec{});
  ask<HandleReport>(registry, spawn_atom::value, std::string("b"), LaunchSpec{});
  finish("b", "ok");
  auto [list, err] = ask<std::vector<HandleSummary>>(registry, turn_end_atom::value,
                                                   InquiryAnswers{});
  CAF_CHECK_EQUAL(err, "");
  CAF_REQUIRE_EQUAL(list.size(), 1u);
  CAF_CHECK_EQUAL(list[0].id, "a");
  CAF_CHECK_EQUAL(std::string(to_string(list[0].outcome)), "abort");
  CAF_CHECK(list[0].state.stopped());
}

CAF_TEST(handles an interrupt ended before the turn end came are listed by that end as their policies say) {
  // The turn asks its list before the end: a second interrupt (abort_all) sent after
  // the end can reach the registry first, and its handles stop before the end.
  LaunchSpec waited;
  waited.child.on_turn_end = turn_end_policy::await;
  ask<HandleReport>(registry, spawn_atom::value, std::string("a"), waited);
  ask<HandleReport>(registry, spawn_atom::value, std::string("b"), LaunchSpec{});
  ask<HandleReport>(registry, spawn_atom::value, std::string("c"), LaunchSpec{});
  finish("c", "done before"); // its own end: no handle of the turn's end
  anon_send(registry, abort_all_atom::value);
  settle();
  auto [list, err] = ask<std::vector<HandleSummary>>(registry, turn_end_atom::value, InquiryAnswers{});
  CAF_CHECK_EQUAL(err, "");
  CAF_REQUIRE_EQUAL(list.size(), 2u);
  CAF_CHECK_EQUAL(list[0].id, "a");
  CAF_CHECK_EQUAL(std::string(to_string(list[0].outcome)), "await");
  CAF_CHECK(list[0].state.stopped() && !list[0].state.ok);
  CAF_CHECK_EQUAL(list[0].state.error.message, "aborted");
  CAF_CHECK_EQUAL(list[1].id, "b");
  CAF_CHECK_EQUAL(std::string(to_string(list[1].outcome)), "abort");
  CAF_CHECK(list[1].state.stopped());
  // Listed once: the next turn's end has none of them.
  auto [again, aerr] = ask<std::vector<HandleSummary>>(registry, turn_end_atom::value, InquiryAnswers{});
  CAF_CHECK_EQUAL(aerr, "");
  CAF_CHECK(again.empty());
}

CAF_TEST(a handle an interrupt ends while a turn end waits on it is listed by that end alone) {
  // The end lists it when it stops; the interrupt's flag must not list it again at
  // a later end of the same registry (a node session's, an MCP server's).
  LaunchSpec waited;
  waited.child.on_turn_end = turn_end_policy::await;
  ask<HandleReport>(registry, spawn_atom::value, std::string("a"), waited);
  auto end = self->request(registry, caf::infinite, turn_end_atom::value, InquiryAnswers{});
  settle(); // the end waits on `a`
  anon_send(registry, abort_all_atom::value);
  settle();
  end.receive(
    [](std::vector<HandleSummary>& l) {
      CAF_REQUIRE_EQUAL(l.size(), 1u);
      CAF_CHECK_EQUAL(l[0].id, "a");
      CAF_CHECK(l[0].state.stopped() && !l[0].state.ok);
    },
    [](caf::error& e) { CAF_FAIL(error_text(e)); });
  auto [again, err] = ask<std::vector<HandleSummary>>(registry, turn_end_atom::value, InquiryAnswers{});
  CAF_CHECK_EQUAL(err, "");
  CAF_CHECK(again.empty());
}

CAF_TEST(a second turn end while the first waits on a handle is answered by the same stop and so is the first) {
  // An embedder's Session::end twice: the second must not replace the first's wait.
  LaunchSpec waited;
  waited.child.on_turn_end = turn_end_policy::await;
  ask<HandleReport>(registry, spawn_atom::value, std::string("a"), waited);
  auto first = self->request(registry, caf::infinite, turn_end_atom::value, InquiryAnswers{});
  settle();
  auto second = self->request(registry, caf::infinite, turn_end_atom::value, InquiryAnswers{});
  settle();
  finish("a", "done");
  for (auto* end : {&first, &second})
    end->receive(
      [](std::vector<HandleSummary>& l) {
        CAF_REQUIRE_EQUAL(l.size(), 1u);
        CAF_CHECK_EQUAL(l[0].id, "a");
        CAF_CHECK_EQUAL(l[0].state.content, "done");
      },
      [](caf::error& e) { CAF_FAIL(error_text(e)); });
}

CAF_TEST(a turn end wait runs out by its own timer alone) {
  // Waited for at one turn end, stopped in time, spawned again and waited for at
  // the next: the first wait's timer (never cancelled) must not cut the second short.
  LaunchSpec waited;
  waited.child.on_turn_end = turn_end_policy::await;
  waited.child.await_timeout_secs = 4;
  auto turn_end = [&] { return self->request(registry, caf::infinite, turn_end_atom::value, InquiryAnswers{}); };
  ask<HandleReport>(registry, spawn_atom::value, std::string("a"), waited);
  auto first = turn_end(); // its timer: at 4 s
  settle();
  finish("a", "in time");
  first.receive([](std::vector<HandleSummary>& l) { CAF_CHECK_EQUAL(l.at(0).state.content, "in time"); },
                [](caf::error& e) { CAF_FAIL(error_text(e)); });
  sched.advance_time(std::chrono::seconds(2));
  ask<HandleReport>(registry, spawn_atom::value, std::string("a"), waited);
  auto second = turn_end(); // its timer: at 6 s
  settle();
  sched.advance_time(std::chrono::seconds(2)); // 4 s: the first timer fires
  settle();
  auto [now, err] = ask<HandleReport>(registry, fetch_atom::value, std::string("a"), LookOptions{});
  CAF_CHECK_EQUAL(err, "");
  CAF_CHECK(!now.state.stopped());
  sched.advance_time(std::chrono::seconds(2)); // 6 s: its own
  settle();
  // Aborted by the timeout, and said to be: not its own end.
  second.receive(
    [](std::vector<HandleSummary>& l) {
      CAF_CHECK(l.at(0).state.stopped());
      CAF_CHECK(!l.at(0).state.ok);
      CAF_CHECK_EQUAL(l.at(0).state.error.message,
                      "aborted as the turn ended: still running after its await_timeout_secs (4 s) (aborted)");
    },
    [](caf::error& e) { CAF_FAIL(error_text(e)); });
}

CAF_TEST(a handle that ends by itself as its turn end wait runs out keeps its own end) {
  LaunchSpec waited;
  waited.child.on_turn_end = turn_end_policy::await;
  waited.child.await_timeout_secs = 4;
  ask<HandleReport>(registry, spawn_atom::value, std::string("a"), waited);
  auto ended = self->request(registry, caf::infinite, turn_end_atom::value, InquiryAnswers{});
  settle();
  // It ends (its report on the way) as its timer fires: the registry hears the
  // timer first, and sends an abort that comes after the end.
  anon_send(handles.at("a"), finish_atom::value, std::string("done in time"));
  sched.advance_time(std::chrono::seconds(4));
  CAF_REQUIRE(sched.prioritize(handles.at("a")));
  sched.run_once(); // the handle ends: its report queued behind the timer's message
  settle();
  ended.receive(
    [](std::vector<HandleSummary>& l) {
      CAF_REQUIRE_EQUAL(l.size(), 1u);
      CAF_CHECK(l[0].state.ok);
      CAF_CHECK_EQUAL(l[0].state.content, "done in time");
    },
    [](caf::error& e) { CAF_FAIL(error_text(e)); });
}

CAF_TEST(a handle the turn end waits for that asks a question is aborted at once saying so) {
  // Nobody answers after the turn: the wait would last its whole timeout for nothing.
  LaunchSpec waited;
  waited.tool = "greet";
  waited.child.on_turn_end = turn_end_policy::await;
  waited.child.await_timeout_secs = 300;
  auto turn_end = [&] { return self->request(registry, caf::infinite, turn_end_atom::value, InquiryAnswers{}); };
  auto check_aborted = [](std::vector<HandleSummary>& l) {
    CAF_REQUIRE_EQUAL(l.size(), 1u);
    CAF_CHECK(l[0].state.stopped() && !l[0].state.ok);
    CAF_CHECK_EQUAL(l[0].state.error.message,
                    "aborted as the turn ended: it asks \"Whom?\" (question `name`), and nobody answers a question "
                    "after the turn's end; answer it with apply before the turn ends, or configure its answer "
                    "(questions.name.answer) (aborted)");
  };
  auto spawn = [&](const char* id) { ask<HandleReport>(registry, spawn_atom::value, std::string(id), waited); };
  auto asks = [&](const char* id, Question q) {
    anon_send(registry, waiting_atom::value, std::string(id), std::move(q), false);
    settle();
  };
  const Question whom{"name", "Whom?", "", {}, ""};
  // Asking as the turn ends...
  spawn("g");
  asks("g", whom);
  auto asking = turn_end();
  settle();
  asking.receive(check_aborted, [](caf::error& e) { CAF_FAIL(error_text(e)); });
  // ...or while the turn end waits: no time passes either way.
  spawn("h");
  auto later = turn_end();
  settle();
  asks("h", whom);
  later.receive(check_aborted, [](caf::error& e) { CAF_FAIL(error_text(e)); });
  // A program's prompt (the "input" a line of its output looks like) is no such question.
  spawn("p");
  auto prompt = turn_end();
  settle();
  asks("p", Question{"input", "Continue? [y/N]", "", {}, ""});
  finish("p", "went on");
  prompt.receive([](std::vector<HandleSummary>& l) { CAF_CHECK_EQUAL(l.at(0).state.content, "went on"); },
                 [](caf::error& e) { CAF_FAIL(error_text(e)); });
}

CAF_TEST(counts say how many handles started and the most live at once) {
  auto counts = [&] { return ask<HandleCounts>(registry, counts_atom::value).first; };
  CAF_CHECK(counts() == (HandleCounts{0, 0}));
  ask<HandleReport>(registry, spawn_atom::value, std::string("a"), LaunchSpec{});
  ask<HandleReport>(registry, spawn_atom::value, std::string("b"), LaunchSpec{});
  finish("a", "ok");
  ask<HandleReport>(registry, spawn_atom::value, std::string("c"), LaunchSpec{});
  CAF_CHECK(counts() == (HandleCounts{3, 2})); // b and c, or a and b, at once
  finish("b", "ok");
  finish("c", "ok");
  ask<HandleReport>(registry, spawn_atom::value, std::string("a"), LaunchSpec{}); // an id reused
  ask<HandleReport>(registry, spawn_atom::value, std::string("d"), LaunchSpec{});
  ask<HandleReport>(registry, spawn_atom::value, std::string("e"), LaunchSpec{});
  CAF_CHECK(counts() == (HandleCounts{6, 3}));
  // A one-shot run is no handle.
  self->request(registry, caf::infinite, oneshot_atom::value, LaunchSpec{});
  run();
  CAF_CHECK(counts() == (HandleCounts{6, 3}));
}

CAF_TEST(a refused spawn gives back its place in every peak since it started) {
  // A refusal (a sub-agent past a limit) comes after its spawn, and others of its batch
  // may start first: the report said 2 spawned and a peak of 4.
  auto refusing = [this](caf::local_actor* parent, const std::string& id, const LaunchSpec&,
                         const supervisor_actor& supervisor) -> handle_actor {
    if (!id.starts_with("refused")) {
      auto h = parent->spawn(fake_handle, id, supervisor);
      handles[id] = h;
      return h;
    }
    auto h = parent->spawn([id, supervisor](fake_handle_actor::pointer self) -> fake_handle_actor::behavior_type {
      HandleReport refused{id, ToolState::failure(ToolError{"past a limit", {}, false}), 0, {}};
      refused.refused = true;
      refused.own_end = true;
      auto running = HandleReport{id, ToolState::running(), 0, {}};
      return {
        [running](fetch_atom, const LookOptions&) { return running; },
        [running](apply_atom, const std::string&, const LookOptions&) { return running; },
        [](answer_atom, const std::string&) {},
        [self, supervisor, refused](finish_atom, const std::string&) {
          self->send(supervisor, stopped_atom::value, refused);
        },
        [](finish_atom, const std::string&, const std::string&) {},
        [](peek_atom) { return HandleProgress{}; },
        [](rename_atom, const std::string&) {},
        [self](retire_atom) { self->quit(); },
        [refused](abort_atom) { return refused; },
      };
    });
    handles[id] = h;
    return h;
  };
  auto own = spawn_registry(sys, refusing);
  settle();
  for (auto id : {"a", "refused1", "refused2", "b"})
    ask<HandleReport>(own, spawn_atom::value, std::string(id), LaunchSpec{});
  finish("refused1", "");
  finish("refused2", "");
  // a and b, live at once; neither refusal ran.
  CAF_CHECK(ask<HandleCounts>(own, counts_atom::value).first == (HandleCounts{2, 2}));
  anon_send_exit(own, caf::exit_reason::user_shutdown);
  settle();
}

namespace {

/// A node session whose spawns all fail with `err`, opened by a node client that
/// hands it out.
caf::error session_error; // what the next fake session answers its spawn with

node_session_actor::behavior_type failing_session() {
  return {
    [](spawn_atom, const std::string&, const std::string&, const std::string&, const std::string&, const std::string&,
       const caf::actor&) -> caf::result<HandleReport> { return session_error; },
    [](fetch_atom, const std::string&, const std::string&, const LookOptions&) -> caf::result<HandleReport> {
      return session_error;
    },
    [](apply_atom, const std::string&, const std::string&, const std::string&,
       const LookOptions&) -> caf::result<HandleReport> { return session_error; },
    [](abort_atom, const std::string&, const std::string&) -> caf::result<HandleReport> { return session_error; },
    [](list_atom, const std::string&) { return std::vector<HandleSummary>{}; },
  };
}

node_client_actor::behavior_type client_of(node_client_actor::pointer self, node_session_actor session) {
  return {[session](open_atom) -> caf::result<caf::actor, std::string> {
    return {caf::actor_cast<caf::actor>(session), std::string("key")};
  }};
}

} // namespace

CAF_TEST(a node spawn refused by the node fails the call and one lost to CAF is the node lost) {
  auto session = sys.spawn(failing_session);
  auto client = sys.spawn(client_of, session);
  NodeConfig node;
  node.name = "far";
  anon_send_exit(registry, caf::exit_reason::user_shutdown);
  settle();
  registry = spawn_registry(sys, [&](caf::local_actor* parent, const std::string& id, const LaunchSpec& spec,
                                     const supervisor_actor& sup) {
    return spawn_remote_handle(parent, id, spec, node, client, sup);
  });
  settle();
  LaunchSpec spec;
  spec.tool = "build";
  spec.node = "far";
  // The node's own word: a refusal, not worth trying again as it was.
  session_error = make_error(error_code::bad_arguments, "node `far` does not serve `build`");
  auto [refused, err] = ask<HandleReport>(registry, spawn_atom::value, std::string("r"), spec);
  CAF_CHECK_EQUAL(err, "");
  CAF_CHECK(refused.refused);
  CAF_CHECK(!refused.state.error.transient);
  CAF_CHECK(contains(refused.state.error.message, "does not serve"));
  // CAF's own (the session's connection dropped): the node lost, worth trying again.
  session_error = caf::make_error(caf::sec::request_receiver_down);
  auto [lost, lerr] = ask<HandleReport>(registry, spawn_atom::value, std::string("l"), spec);
  CAF_CHECK_EQUAL(lerr, "");
  CAF_CHECK(!lost.refused);
  CAF_CHECK(lost.state.stopped());
  CAF_CHECK(lost.state.error.transient);
  CAF_CHECK(contains(lost.state.error.message, "node `far` was lost as the tool was spawned there"));
  anon_send_exit(client, caf::exit_reason::user_shutdown);
  anon_send_exit(session, caf::exit_reason::user_shutdown);
  settle();
}

namespace {

caf::actor asked_watcher; // what the asking session's last spawn was given to tell of changes

/// A node session whose handle asks "Go?" at once: each look shows it waiting.
node_session_actor::behavior_type asking_session() {
  auto asks = [](const std::string& id) {
    return HandleReport{id, ToolState::waiting(Question{"go", "Go?", "", {}, ""}), 0, {}};
  };
  return {
    [](spawn_atom, const std::string&, const std::string& id, const std::string&, const std::string&,
       const std::string&, const caf::actor& watcher) -> caf::result<HandleReport> {
      asked_watcher = watcher;
      return HandleReport{id, ToolState::running(), 0, {}};
    },
    [asks](fetch_atom, const std::string&, const std::string& id, const LookOptions&) -> caf::result<HandleReport> {
      return asks(id);
    },
    [asks](apply_atom, const std::string&, const std::string& id, const std::string&,
           const LookOptions&) -> caf::result<HandleReport> { return asks(id); },
    [](abort_atom, const std::string&, const std::string& id) -> caf::result<HandleReport> {
      return HandleReport{id, ToolState::failure(ToolError{"aborted", {}, false}), 0, {}};
    },
    [](list_atom, const std::string&) { return std::vector<HandleSummary>{}; },
  };
}

} // namespace

CAF_TEST(a node handle s question its spawn s answer showed is not notified again when the node s update follows) {
  auto session = sys.spawn(asking_session);
  auto client = sys.spawn(client_of, session);
  NodeConfig node;
  node.name = "far";
  auto reg = spawn_registry(
    sys,
    [&](caf::local_actor* parent, const std::string& id, const LaunchSpec& spec, const supervisor_actor& sup) {
      return spawn_remote_handle(parent, id, spec, node, client, sup);
    },
    caf::actor_cast<notification_sink>(self));
  settle();
  LaunchSpec spec;
  spec.tool = "ctl";
  spec.node = "far";
  spec.notify_waiting = true;
  auto [spawned, err] = ask<HandleReport>(reg, spawn_atom::value, std::string("c"), spec);
  CAF_REQUIRE_EQUAL(err, "");
  CAF_CHECK_EQUAL(spawned.state.question.text, "Go?"); // the assistant sees it in the spawn's answer
  CAF_REQUIRE(asked_watcher);
  // The node's registry tells the same question behind the look's answer.
  auto go = HandleStatus{"c", ToolState::waiting(Question{"go", "Go?", "", {}, ""})};
  anon_send(caf::actor_cast<watcher_actor>(asked_watcher), update_atom::value, go);
  settle();
  CAF_CHECK(self->mailbox().empty());
  // A question no answer showed is told.
  auto name = HandleStatus{"c", ToolState::waiting(Question{"name", "Whom?", "", {}, ""})};
  anon_send(caf::actor_cast<watcher_actor>(asked_watcher), update_atom::value, name);
  settle();
  Notification got;
  self->receive([&](notify_atom, Notification& n) { got = n; });
  CAF_CHECK_EQUAL(got.name, "tool.waiting");
  CAF_CHECK(contains(got.message, "asks: Whom?"));
  asked_watcher = nullptr;
  for (auto& a : {caf::actor_cast<caf::actor>(reg), caf::actor_cast<caf::actor>(client), caf::actor_cast<caf::actor>(session)})
    anon_send_exit(a, caf::exit_reason::user_shutdown);
  settle();
}

CAF_TEST_FIXTURE_SCOPE_END()

namespace {

/// A registry of function tools that run until the test ends, `progress` set to
/// the last one's way to report output.
registry_actor progress_registry(caf::actor_system& sys, Progress& progress) {
  return spawn_registry(sys, function_handle_factory([&progress](const Json&, const Progress& p) {
                          progress = p;
                          return Invocation{};
                        }));
}

/// A function tool's spec whose waiting looks are answered once its output was
/// quiet for 1 ms.
LaunchSpec settling_spec() {
  LaunchSpec spec;
  spec.tool = "work";
  spec.settle_ms = 1;
  return spec;
}

} // namespace

CAF_TEST_FIXTURE_SCOPE(function_handle_tests, registry_fixture)

CAF_TEST(a fetch that finds the output of a function tool still coming gets what follows it too) {
  // An MCP call's progress and its log line come as two messages; a fetch between
  // them answered with the first only (mcp_client_test, with 4 worker threads).
  Progress progress;
  auto functions = progress_registry(sys, progress);
  settle();
  auto [r, err] = ask<HandleReport>(functions, spawn_atom::value, std::string("w"), settling_spec());
  CAF_REQUIRE_EQUAL(err, "");
  progress("step 1\n");
  settle();
  LookOptions wait;
  wait.wait_ms = 60000;
  auto look = self->request(functions, caf::infinite, fetch_atom::value, std::string("w"), wait);
  settle();
  progress("step 2\n");
  settle();
  // The settle timer answers once the output has been quiet for settle_ms (1 ms of
  // the steady clock, which this scheduler does not move).
  auto guard = std::chrono::steady_clock::now() + std::chrono::seconds(30); // against a hang only
  while (self->mailbox().empty() && sched.has_pending_timeout() && std::chrono::steady_clock::now() < guard) {
    sched.trigger_timeout(); // the earliest: the settle timer, not the look's own
    settle();
  }
  std::string content;
  look.receive([&](HandleReport& r) { content = r.state.content; },
               [&](caf::error& e) { CAF_FAIL(error_text(e)); });
  CAF_CHECK_EQUAL(content, "step 1\nstep 2\n");
  anon_send_exit(functions, caf::exit_reason::user_shutdown);
  settle();
}

CAF_TEST(a waiting look after the output was taken waits for new output past the old settle timer) {
  Progress progress;
  auto functions = progress_registry(sys, progress);
  settle();
  auto [r, err] = ask<HandleReport>(functions, spawn_atom::value, std::string("w"), settling_spec());
  CAF_REQUIRE_EQUAL(err, "");
  progress("step 1\n"); // its settle timer is out
  settle();
  auto taken = ask<HandleReport>(functions, fetch_atom::value, std::string("w"), LookOptions{});
  CAF_CHECK_EQUAL(taken.first.state.content, "step 1\n");
  LookOptions wait;
  wait.wait_ms = 60000;
  auto look = self->request(functions, caf::infinite, fetch_atom::value, std::string("w"), wait);
  settle();
  // The settle checks the steady clock, which this scheduler does not move: 1 ms is
  // let pass for real, so the output counts as quiet when the timer fires.
  auto quiet = [] { std::this_thread::sleep_for(std::chrono::milliseconds(2)); };
  quiet();
  sched.trigger_timeout(); // the earliest: step 1's settle timer, not the look's own
  settle();
  CAF_CHECK(self->mailbox().empty()); // nothing new came: the look waits on
  progress("step 2\n");
  settle();
  quiet();
  sched.trigger_timeout(); // step 2's settle timer
  settle();
  CAF_REQUIRE(!self->mailbox().empty());
  std::string content;
  look.receive([&](HandleReport& rep) { content = rep.state.content; },
               [&](caf::error& e) { CAF_FAIL(error_text(e)); });
  CAF_CHECK_EQUAL(content, "step 2\n");
  anon_send_exit(functions, caf::exit_reason::user_shutdown);
  settle();
}

CAF_TEST(a waiting look at a quiet handle answers at its deadline and not before) {
  auto functions = spawn_registry(sys, function_handle_factory([](const Json&, const Progress&) {
                                    return Invocation{}; // runs, silent, until the test ends
                                  }));
  settle();
  LaunchSpec spec;
  spec.tool = "quiet";
  auto [r, err] = ask<HandleReport>(functions, spawn_atom::value, std::string("q"), spec);
  CAF_REQUIRE_EQUAL(err, "");
  LookOptions wait;
  wait.wait_ms = 60000;
  auto look = self->request(functions, caf::infinite, fetch_atom::value, std::string("q"), wait);
  settle();
  CAF_CHECK(self->mailbox().empty()); // nothing came, and its deadline has not
  sched.clock().advance_time(std::chrono::seconds(59));
  settle();
  CAF_CHECK(self->mailbox().empty()); // a second before it: still nothing
  sched.clock().advance_time(std::chrono::seconds(1));
  settle();
  CAF_REQUIRE(!self->mailbox().empty()); // at it (else the receive below would wait forever)
  look.receive([&](HandleReport& rep) { CAF_CHECK(rep.state.kind == state_kind::running); },
               [&](caf::error& e) { CAF_FAIL(error_text(e)); });
  anon_send_exit(functions, caf::exit_reason::user_shutdown);
  settle();
}

CAF_TEST(a function tool s report says whether it ended by itself or by its abort) {
  std::vector<FunctionResult> calls;
  auto functions = spawn_registry(sys, function_handle_factory([&](const Json&, const Progress&) {
                                    Invocation inv;
                                    inv.abort = [r = inv.result] { r.fail("stopped by its abort"); };
                                    calls.push_back(inv.result);
                                    return inv;
                                  }));
  settle();
  LaunchSpec spec;
  spec.tool = "work";
  ask<HandleReport>(functions, spawn_atom::value, std::string("done"), spec);
  ask<HandleReport>(functions, spawn_atom::value, std::string("stopped"), spec);
  CAF_REQUIRE_EQUAL(calls.size(), 2u);
  calls[0].succeed("all done");
  settle();
  auto [own, err] = ask<HandleReport>(functions, fetch_atom::value, std::string("done"), LookOptions{});
  CAF_CHECK_EQUAL(err, "");
  CAF_CHECK(own.state.stopped());
  CAF_CHECK(own.own_end);
  auto [aborted, aerr] = ask<HandleReport>(functions, abort_atom::value, std::string("stopped"));
  CAF_CHECK_EQUAL(aerr, "");
  CAF_CHECK(aborted.state.stopped());
  CAF_CHECK(!aborted.own_end);
  anon_send_exit(functions, caf::exit_reason::user_shutdown);
  settle();
}

CAF_TEST_FIXTURE_SCOPE_END()

CAF_TEST_FIXTURE_SCOPE(registry_exit_tests, registry_fixture)

CAF_TEST(a stateful handle that exits asking a question is stopped with an error) {
  ask<HandleReport>(registry, spawn_atom::value, std::string("q"), LaunchSpec{});
  auto waiting = ToolState::waiting(Question{"proceed", "Go on?", "", {}, ""});
  anon_send(registry, stopped_atom::value, HandleReport{"q", waiting, 0, {}});
  settle();
  auto [f, err] = ask<HandleReport>(registry, fetch_atom::value, std::string("q"), LookOptions{});
  CAF_REQUIRE(f.state.stopped());
  CAF_CHECK(!f.state.ok);
  CAF_CHECK(f.state.error.message.find("question `proceed`") != std::string::npos);
  CAF_CHECK(f.state.error.message.find("or configure questions.proceed.answer") != std::string::npos);
}

CAF_TEST(a stateful handle that exits asking a configured question is not told to configure it) {
  // Its configured answer went to no rerun: a handle is not run again, a call
  // without `action` is.
  LaunchSpec spec;
  spec.fixed_answers["proceed"] = "true";
  ask<HandleReport>(registry, spawn_atom::value, std::string("q"), spec);
  auto waiting = ToolState::waiting(Question{"proceed", "Go on?", "", {}, ""});
  anon_send(registry, stopped_atom::value, HandleReport{"q", waiting, 0, {}});
  settle();
  auto [f, err] = ask<HandleReport>(registry, fetch_atom::value, std::string("q"), LookOptions{});
  CAF_REQUIRE(f.state.stopped());
  CAF_CHECK(!f.state.ok);
  CAF_CHECK_EQUAL(f.state.error.message,
                  "handle `q` asked \"Go on?\" (question `proceed`) and exited; a handle is not run again with its "
                  "configured answer (questions.proceed.answer): call the tool without `action`, which runs it "
                  "again with that answer");
}

CAF_TEST_FIXTURE_SCOPE_END()
