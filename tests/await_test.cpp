#define CAF_SUITE await
#include "actor_fixture.hpp"

#include <optional>

#include "actors/await_actor.hpp"

using namespace jp;
using namespace jp::testing;
using namespace std::chrono_literals;

namespace {

struct await_fixture : registry_fixture {
  void spawn(const std::string& id) {
    auto [r, err] = ask<HandleReport>(registry, spawn_atom::value, id, LaunchSpec{});
    CAF_REQUIRE_EQUAL(err, "");
  }

  // Starts an await; the reply handle is read with result(). `resolver`: who is
  // asked to answer a waiting handle's question (none: nobody).
  using reply_handle =
    decltype(std::declval<caf::scoped_actor&>()->request(std::declval<await_actor>(), caf::infinite, run_atom::value));

  reply_handle start(AwaitRequest req, resolver_actor resolver = {}) {
    auto a = spawn_await(sys, registry, std::move(req), std::move(resolver));
    auto h = self->request(a, caf::infinite, run_atom::value);
    settle();
    return h;
  }

  // The reply, if one has arrived.
  std::optional<std::pair<AwaitResult, std::string>>
  result(reply_handle& h) {
    std::optional<std::pair<AwaitResult, std::string>> out;
    h.receive([&](AwaitResult& r) { out.emplace(std::move(r), ""); },
              [&](caf::error& e) {
                if (e != caf::sec::request_timeout)
                  out.emplace(AwaitResult{}, error_text(e));
              });
    return out;
  }

  bool has_reply() {
    return self->mailbox().size() > 0;
  }

  void ask_question(const std::string& id, const std::string& qid) {
    anon_send(registry, waiting_atom::value, id, Question{qid, "Whom?", "", {}, ""}, false);
    settle();
  }
};

/// A resolver, as the turn is one: it records what it is asked and answers
/// `answered` at once.
resolver_actor::behavior_type fake_resolver(bool answered, std::shared_ptr<std::vector<std::string>> asked) {
  return {[=](resolve_atom, const std::string& id, const Question& q) {
    asked->push_back(id + "/" + q.id);
    return answered;
  }};
}

std::vector<std::string> ids_of(const std::vector<HandleStatus>& xs) {
  std::vector<std::string> out;
  for (auto& x : xs)
    out.push_back(x.id);
  return out;
}

using strings = std::vector<std::string>;

} // namespace

CAF_TEST_FIXTURE_SCOPE(await_tests, await_fixture)

CAF_TEST(all waits for every handle) {
  spawn("check");
  spawn("test");
  auto h = start(AwaitRequest{{}, {"check", "test"}, -1});
  CAF_CHECK(!has_reply());
  finish("check", "ok, 0 warnings");
  CAF_CHECK(!has_reply());
  finish("test", "42 passed");
  CAF_REQUIRE(has_reply());
  auto r = result(h);
  CAF_REQUIRE(r);
  CAF_CHECK_EQUAL(ids_of(r->first.completed), strings({"check", "test"}));
  CAF_CHECK(r->first.pending.empty());
  CAF_CHECK(!r->first.timed_out);
  CAF_CHECK_EQUAL(r->first.completed[0].state.content, "ok, 0 warnings");
}

CAF_TEST(any returns on the first stop and reports the rest pending) {
  spawn("crates");
  spawn("github");
  auto h = start(AwaitRequest{{"crates", "github"}, {}, -1});
  finish("github", "found");
  CAF_REQUIRE(has_reply());
  auto r = result(h);
  CAF_REQUIRE(r);
  CAF_CHECK_EQUAL(ids_of(r->first.completed), strings({"github"}));
  CAF_CHECK_EQUAL(ids_of(r->first.pending), strings({"crates"}));
  CAF_CHECK(r->first.pending[0].state.kind == state_kind::running);
}

CAF_TEST(any and all together need both conditions) {
  spawn("a");
  spawn("b");
  spawn("c");
  auto h = start(AwaitRequest{{"a", "b"}, {"c"}, -1});
  finish("a", "x");
  CAF_CHECK(!has_reply());
  finish("c", "y");
  CAF_REQUIRE(has_reply());
  auto r = result(h);
  CAF_CHECK_EQUAL(ids_of(r->first.completed), strings({"a", "c"}));
  CAF_CHECK_EQUAL(ids_of(r->first.pending), strings({"b"}));
}

CAF_TEST(already stopped handles count immediately) {
  spawn("done");
  finish("done", "r");
  auto h = start(AwaitRequest{{}, {"done"}, -1});
  CAF_REQUIRE(has_reply());
  auto r = result(h);
  CAF_CHECK_EQUAL(ids_of(r->first.completed), strings({"done"}));
}

CAF_TEST(timeout returns current states and aborts nothing) {
  spawn("slow");
  spawn("fast");
  finish("fast", "r");
  auto h = start(AwaitRequest{{}, {"slow", "fast"}, 1.5});
  CAF_CHECK(!has_reply());
  advance_time(1s);
  settle();
  CAF_CHECK(!has_reply());
  advance_time(1s);
  settle();
  CAF_REQUIRE(has_reply());
  auto r = result(h);
  CAF_CHECK(r->first.timed_out);
  CAF_CHECK_EQUAL(ids_of(r->first.completed), strings({"fast"}));
  CAF_CHECK_EQUAL(ids_of(r->first.pending), strings({"slow"}));
  // Still running: fetch says so.
  auto [f, err] = ask<HandleReport>(registry, fetch_atom::value, std::string("slow"), LookOptions{});
  CAF_CHECK(f.state.kind == state_kind::running);
}

CAF_TEST(unknown handle and empty request are errors) {
  spawn("a");
  auto h = start(AwaitRequest{{}, {"a", "typo"}, -1});
  auto r = result(h);
  CAF_REQUIRE(r);
  CAF_CHECK_EQUAL(r->second, "Handle `typo` not found");
  auto h2 = start(AwaitRequest{});
  auto r2 = result(h2);
  CAF_REQUIRE(r2);
  CAF_CHECK_EQUAL(r2->second, "At least one handle ID required");
}

CAF_TEST(same-batch spawn and await: await on a reserved id waits for the spawn) {
  strings ids{"build"};
  auto [ok, err] = ask<bool>(registry, batch_atom::value, ids);
  CAF_REQUIRE(ok);
  // The await of the batch runs before the spawn of the batch.
  auto h = start(AwaitRequest{{}, {"build"}, -1});
  CAF_CHECK(!has_reply());
  spawn("build");
  CAF_CHECK(!has_reply());
  finish("build", "built");
  CAF_REQUIRE(has_reply());
  auto r = result(h);
  CAF_CHECK_EQUAL(r->first.completed[0].state.content, "built");
}

CAF_TEST(a dying handle completes the await with an error state) {
  spawn("x");
  auto h = start(AwaitRequest{{}, {"x"}, -1});
  anon_send_exit(handles.at("x"), caf::exit_reason::kill);
  settle();
  CAF_REQUIRE(has_reply());
  auto r = result(h);
  CAF_REQUIRE_EQUAL(r->first.completed.size(), 1u);
  CAF_CHECK(!r->first.completed[0].state.ok);
}

CAF_TEST(a waiting handle nobody else can answer ends the await at once with its question) {
  // The assistant is blocked in this await: only it can answer, so it hears now.
  spawn("asker");
  spawn("other");
  auto h = start(AwaitRequest{{}, {"asker", "other"}, -1});
  CAF_CHECK(!has_reply());
  // Its tool asks through the control channel (as the handle actor reports it).
  ask_question("asker", "name");
  CAF_REQUIRE(has_reply());
  auto r = result(h);
  CAF_REQUIRE(r);
  CAF_CHECK(!r->first.timed_out);
  CAF_REQUIRE_EQUAL(r->first.pending.size(), 2u);
  CAF_CHECK(r->first.pending[0].state.kind == state_kind::waiting);
  CAF_CHECK_EQUAL(r->first.pending[0].state.question.id, "name");
  CAF_CHECK(r->first.pending[1].state.kind == state_kind::running);
  // The registry's own status says so too; answered, it is running again.
  auto [st, err] = ask<std::vector<HandleStatus>>(registry, status_atom::value, strings{"asker"});
  CAF_CHECK(st.at(0).state.kind == state_kind::waiting);
  anon_send(registry, waiting_atom::value, std::string("asker"), Question{}, false);
  settle();
  auto [st2, err2] = ask<std::vector<HandleStatus>>(registry, status_atom::value, strings{"asker"});
  CAF_CHECK(st2.at(0).state.kind == state_kind::running);
}

CAF_TEST(a handle already waiting when the await starts ends it at once) {
  spawn("asker");
  ask_question("asker", "name");
  auto h = start(AwaitRequest{{}, {"asker"}, -1});
  CAF_REQUIRE(has_reply());
  auto r = result(h);
  CAF_REQUIRE(r);
  CAF_REQUIRE_EQUAL(r->first.pending.size(), 1u);
  CAF_CHECK_EQUAL(r->first.pending[0].state.question.id, "name");
}

CAF_TEST(a question the resolver answers keeps the await waiting until the handle stops) {
  auto asked = std::make_shared<std::vector<std::string>>();
  auto resolver = sys.spawn(fake_resolver, true, asked);
  spawn("asker");
  auto h = start(AwaitRequest{{}, {"asker"}, -1}, resolver);
  ask_question("asker", "name");
  CAF_CHECK_EQUAL(*asked, strings({"asker/name"}));
  CAF_CHECK(!has_reply()); // someone answers it: the await waits on
  // The answer reached the tool: running again, then it finishes.
  anon_send(registry, waiting_atom::value, std::string("asker"), Question{}, false);
  settle();
  CAF_CHECK(!has_reply());
  finish("asker", "hello, world");
  CAF_REQUIRE(has_reply());
  auto r = result(h);
  CAF_REQUIRE(r);
  CAF_REQUIRE_EQUAL(r->first.completed.size(), 1u);
  CAF_CHECK_EQUAL(r->first.completed[0].state.content, "hello, world");
  anon_send_exit(resolver, caf::exit_reason::user_shutdown);
  settle();
}

CAF_TEST(a question the resolver cannot answer ends the await with it pending) {
  auto asked = std::make_shared<std::vector<std::string>>();
  auto resolver = sys.spawn(fake_resolver, false, asked);
  spawn("asker");
  auto h = start(AwaitRequest{{}, {"asker"}, -1}, resolver);
  ask_question("asker", "name");
  CAF_CHECK_EQUAL(*asked, strings({"asker/name"}));
  CAF_REQUIRE(has_reply());
  auto r = result(h);
  CAF_REQUIRE(r);
  CAF_REQUIRE_EQUAL(r->first.pending.size(), 1u);
  CAF_CHECK(r->first.pending[0].state.kind == state_kind::waiting);
  anon_send_exit(resolver, caf::exit_reason::user_shutdown);
  settle();
}

CAF_TEST(an await ends when the registry it watches goes) {
  // A second Ctrl-C kills the turn and its registry: an await without a timeout
  // must not outlive them (the actor system would wait for it forever).
  spawn("x");
  auto h = start(AwaitRequest{{}, {"x"}, -1});
  CAF_CHECK(!has_reply());
  anon_send_exit(registry, caf::exit_reason::kill);
  settle();
  CAF_REQUIRE(has_reply());
  auto r = result(h);
  CAF_REQUIRE(r);
  CAF_CHECK_EQUAL(r->second, "the turn ended while this await waited");
}

CAF_TEST(waiting counts as pending) {
  std::vector<HandleStatus> st{{"w", ToolState::waiting(Question{"q", "ok?", "", {}, ""})}};
  CAF_CHECK(!await_condition_met(AwaitRequest{{}, {"w"}, -1}, st));
  st[0].state = ToolState::success("x");
  CAF_CHECK(await_condition_met(AwaitRequest{{}, {"w"}, -1}, st));
}

CAF_TEST_FIXTURE_SCOPE_END()
