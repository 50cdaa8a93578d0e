// The foreach handle and the supervision cascade under CAF's deterministic scheduler:
// its sub-agents are fakes the test finishes (actor_fixture.hpp), started through the
// capability the foreach is given (a SubAgentStarter), inside a registry as the turn
// has it.
#define CAF_SUITE foreach_dsl
#include "actor_fixture.hpp"

#include "actors/foreach_handle.hpp"
#include "messages/json.hpp"
#include "contains.hpp"

using namespace jp;
using namespace jp::testing;

namespace {

struct foreach_fixture : registry_fixture {
  std::map<std::string, std::string> prompts; // sub-agent id -> the prompt it was started with
  std::map<std::string, handle_actor> foreaches; // by id
  uint64_t output_cap = 0;                       // what the foreaches started next are held to
  bool room = true; // whether the tree has room for another sub-agent ([agents] max_live)

  foreach_fixture() {
    // Replaces the fixture's registry: a foreach for sub-agent specs, fakes otherwise.
    anon_send_exit(registry, caf::exit_reason::user_shutdown);
    settle();
    auto fakes = fake_factory();
    SubAgentStarter start = [this](caf::local_actor* spawner, const std::string& id, const AgentSpec& spec,
                                   const supervisor_actor& supervisor) -> handle_actor {
      if (!room)
        return handle_actor{};
      prompts[id] = spec.prompt;
      auto h = spawner->spawn(fake_handle, id, supervisor);
      handles[id] = h;
      return h;
    };
    registry = spawn_registry(sys, [this, fakes, start](caf::local_actor* parent, const std::string& id,
                                                        LaunchSpec& spec, const supervisor_actor& sup) {
      if (!spec.subagent || !spec.agent.foreach)
        return fakes(parent, id, spec, sup);
      return foreaches[id] = spawn_foreach(parent, id, spec.agent, start, sup, output_cap);
    });
    settle();
  }

  static LaunchSpec foreach_of(std::vector<std::string> elements, int max_concurrent) {
    LaunchSpec spec;
    spec.subagent = true;
    spec.agent.foreach = true;
    spec.agent.prompt = "work on {{element}}";
    spec.agent.elements = std::move(elements);
    spec.agent.max_concurrent = max_concurrent;
    return spec;
  }

  HandleStatus status_of(const std::string& id) {
    auto [s, err] = ask<std::vector<HandleStatus>>(registry, status_atom::value, std::vector<std::string>{id});
    CAF_REQUIRE_EQUAL(err, "");
    CAF_REQUIRE_EQUAL(s.size(), 1u);
    return s.front();
  }

  HandleReport fetch(const std::string& id) {
    auto [r, err] = ask<HandleReport>(registry, fetch_atom::value, id, LookOptions{});
    CAF_REQUIRE_EQUAL(err, "");
    return r;
  }

  /// Whether fake `id` is still alive (a request to a dead actor fails).
  bool alive(const std::string& id) {
    auto [r, err] = ask<HandleReport>(handles.at(id), fetch_atom::value, LookOptions{});
    return err.empty();
  }
};

} // namespace

CAF_TEST_FIXTURE_SCOPE(foreach_dsl_tests, foreach_fixture)

CAF_TEST(a foreach starts at most max_concurrent sub-agents and the next as one stops) {
  auto [r, err] = ask<HandleReport>(registry, spawn_atom::value, std::string("each"), foreach_of({"a", "b", "c"}, 2));
  CAF_REQUIRE_EQUAL(err, "");
  CAF_CHECK_EQUAL(handles.count("each[0]"), 1u);
  CAF_CHECK_EQUAL(handles.count("each[1]"), 1u);
  CAF_CHECK_EQUAL(handles.count("each[2]"), 0u); // queued: two run
  CAF_CHECK_EQUAL(prompts["each[1]"], "work on b");
  finish("each[1]", "did b");
  CAF_REQUIRE_EQUAL(handles.count("each[2]"), 1u); // the next took its place
  CAF_CHECK(status_of("each").state.kind == state_kind::running);
  finish("each[2]", "did c");
  finish("each[0]", "did a");
  auto s = status_of("each");
  CAF_REQUIRE(s.state.stopped());
  CAF_CHECK(s.state.ok);
  CAF_CHECK_EQUAL(s.state.content, R"([{"element":"a","result":"did a"},{"element":"b","result":"did b"},)"
                                   R"({"element":"c","result":"did c"}])");
  auto [f, err2] = ask<HandleReport>(registry, fetch_atom::value, std::string("each"), LookOptions{});
  CAF_CHECK_EQUAL(err2, "");
  CAF_CHECK(f.own_end); // it ended by itself: a turn end's abort sent then would not relabel it
}

CAF_TEST(aborting a foreach aborts its running sub-agents and starts none of the rest) {
  ask<HandleReport>(registry, spawn_atom::value, std::string("each"), foreach_of({"a", "b", "c"}, 1));
  CAF_REQUIRE_EQUAL(handles.count("each[0]"), 1u);
  auto [r, err] = ask<HandleReport>(registry, abort_atom::value, std::string("each"));
  CAF_REQUIRE_EQUAL(err, "");
  CAF_REQUIRE(r.state.stopped());
  CAF_CHECK(!r.state.ok);
  CAF_CHECK(!r.own_end);
  CAF_CHECK_EQUAL(handles.count("each[1]"), 0u);
  auto results = Json::parse(r.state.content);
  CAF_REQUIRE(results.ok());
  auto& items = results->as_array();
  CAF_REQUIRE_EQUAL(items.size(), 3u);
  CAF_CHECK_EQUAL(items[0].find("error")->as_string(), "aborted");
  CAF_CHECK_EQUAL(items[1].find("error")->as_string(), "not started: the foreach was aborted");
}

CAF_TEST(when the registry goes its foreach and the sub-agents under it go too) {
  ask<HandleReport>(registry, spawn_atom::value, std::string("each"), foreach_of({"a", "b"}, 2));
  ask<HandleReport>(registry, spawn_atom::value, std::string("proc"), LaunchSpec{});
  CAF_REQUIRE(alive("each[0]") && alive("each[1]") && alive("proc"));
  anon_send_exit(registry, caf::exit_reason::user_shutdown);
  settle();
  // Supervisors all the way down: the registry's children, and the foreach's.
  CAF_CHECK(!alive("proc"));
  CAF_CHECK(!alive("each[0]"));
  CAF_CHECK(!alive("each[1]"));
}

CAF_TEST(a question of a running sub-agent is the foreach question until it is answered) {
  ask<HandleReport>(registry, spawn_atom::value, std::string("each"), foreach_of({"a", "b"}, 2));
  CAF_CHECK(status_of("each").state.kind == state_kind::running);
  // each[1] asks, as a sub-agent handle tells its supervisor (the foreach).
  auto foreach_as_supervisor = caf::actor_cast<supervisor_actor>(foreaches.at("each"));
  anon_send(foreach_as_supervisor, waiting_atom::value, std::string("each[1]"), Question{"proceed", "Go on?", "", {}, ""},
            true);
  settle();
  auto s = status_of("each");
  CAF_REQUIRE(s.state.kind == state_kind::waiting);
  CAF_CHECK_EQUAL(s.state.question.text, "[1] b: Go on?");
  // apply on the foreach goes to the element that asked (the fake echoes it).
  auto [r, err] = ask<HandleReport>(registry, apply_atom::value, std::string("each"), std::string("true"), LookOptions{});
  CAF_CHECK_EQUAL(err, "");
  // Answered: the foreach waits on nothing again.
  anon_send(foreach_as_supervisor, waiting_atom::value, std::string("each[1]"), Question{}, false);
  settle();
  CAF_CHECK(status_of("each").state.kind == state_kind::running);
  // With nothing waiting, input is refused, saying what it is for.
  auto [r2, err2] = ask<HandleReport>(registry, apply_atom::value, std::string("each"), std::string("true"), LookOptions{});
  CAF_CHECK(err2.find("it takes input only to answer the question one of its sub-agents waits on") != std::string::npos);
}

CAF_TEST(a foreach fetch waits for news and a question it does not carry is told as not carried) {
  // A foreach under a supervisor that records what it is told; its sub-agents are fakes.
  auto told = std::make_shared<std::vector<std::pair<std::string, bool>>>(); // question text, carried
  auto recorder = sys.spawn([told]() -> supervisor_actor::behavior_type {
    return {
      [](stopped_atom, const HandleReport&) {},
      [told](waiting_atom, const std::string&, const Question& q, bool carried) { told->emplace_back(q.text, carried); },
      [](content_atom, const std::string&) {},
    };
  });
  SubAgentStarter start = [this](caf::local_actor* spawner, const std::string& id, const AgentSpec&,
                                 const supervisor_actor& supervisor) -> handle_actor {
    auto h = spawner->spawn(fake_handle, id, supervisor);
    handles[id] = h;
    return h;
  };
  auto each = sys.spawn([&](caf::event_based_actor* spawner) {
    foreaches["each"] = spawn_foreach(spawner, "each", foreach_of({"a", "b"}, 2).agent, start, recorder, 0);
  });
  settle();
  auto as_supervisor = caf::actor_cast<supervisor_actor>(foreaches.at("each"));
  // Nobody looks: its question is told as one no answer carries (a notification follows).
  anon_send(as_supervisor, waiting_atom::value, std::string("each[0]"), Question{"go", "Go?", "", {}, ""}, false);
  settle();
  CAF_REQUIRE_EQUAL(told->size(), 1u);
  CAF_CHECK_EQUAL(told->back().first, "[0] a: Go?");
  CAF_CHECK(!told->back().second);
  // Answered; then a fetch that waits: nothing new, it waits.
  anon_send(as_supervisor, waiting_atom::value, std::string("each[0]"), Question{}, false);
  settle();
  auto look = self->request(foreaches.at("each"), caf::infinite, fetch_atom::value, LookOptions{60000});
  settle();
  CAF_CHECK(self->mailbox().empty());
  // A question: it answers the fetch, which carries it.
  anon_send(as_supervisor, waiting_atom::value, std::string("each[1]"), Question{"go", "Go?", "", {}, ""}, false);
  settle();
  CAF_CHECK_EQUAL(told->back().first, "[1] b: Go?");
  CAF_CHECK(told->back().second);
  bool answered = false;
  look.receive(
    [&](HandleReport& r) {
      answered = true;
      CAF_CHECK(r.state.kind == state_kind::waiting);
      CAF_CHECK_EQUAL(r.state.question.text, "[1] b: Go?");
    },
    [](caf::error& err) { CAF_FAIL(to_string(err)); });
  CAF_CHECK(answered);
  // A fetch that waits is answered when an element ends.
  anon_send(as_supervisor, waiting_atom::value, std::string("each[1]"), Question{}, false);
  settle();
  auto next = self->request(foreaches.at("each"), caf::infinite, fetch_atom::value, LookOptions{60000});
  settle();
  CAF_CHECK(self->mailbox().empty());
  finish("each[0]", "did a");
  bool ended = false;
  next.receive([&](HandleReport& r) { ended = contains(r.state.content, "1 of 2 done"); },
               [](caf::error& err) { CAF_FAIL(to_string(err)); });
  CAF_CHECK(ended);
  anon_send_exit(each, caf::exit_reason::user_shutdown);
  anon_send_exit(foreaches.at("each"), caf::exit_reason::user_shutdown);
  anon_send_exit(recorder, caf::exit_reason::user_shutdown);
  settle();
}

CAF_TEST(a foreach look lists what it can within the output cap and counts the rest) {
  // A foreach of thousands listed every element, queued ones too, in every look.
  output_cap = 400;
  std::vector<std::string> elements;
  for (int i = 0; i < 300; ++i)
    elements.push_back(fmt::format("element-{}", i));
  auto [r, err] = ask<HandleReport>(registry, spawn_atom::value, std::string("each"), foreach_of(elements, 2));
  CAF_REQUIRE_EQUAL(err, "");
  CAF_CHECK(contains(r.state.content, "0 of 300 done, 2 running (at most 2), 298 queued"));
  CAF_CHECK(contains(r.state.content, "[1] element-1: running"));
  CAF_CHECK(!contains(r.state.content, ": queued")); // counted, not listed
  for (int i = 0; i < 40; ++i)
    finish(fmt::format("each[{}]", i), "did it");
  auto look = fetch("each");
  CAF_CHECK(contains(look.state.content, "40 of 300 done, 2 running (at most 2), 258 queued"));
  CAF_CHECK(contains(look.state.content, "[40] element-40: running")); // running ones first
  CAF_CHECK(contains(look.state.content, "more not shown, past the output cap"));
  CAF_CHECK_LESS_OR_EQUAL(look.state.content.size(), 400u + 100u); // the cap and its note
}

CAF_TEST(a foreach result past the output cap cuts only the long results) {
  output_cap = 512;
  ask<HandleReport>(registry, spawn_atom::value, std::string("each"), foreach_of({"a", "b", "c"}, 3));
  finish("each[0]", "short");
  finish("each[1]", std::string(3000, 'x') + "END-b");
  finish("each[2]", std::string(3000, 'y') + "END-c");
  auto r = fetch("each");
  CAF_REQUIRE(r.state.stopped());
  CAF_CHECK_LESS_OR_EQUAL(r.state.content.size(), 512u);
  auto results = Json::parse(r.state.content);
  CAF_REQUIRE(results.ok()); // still JSON
  auto& items = results->as_array();
  CAF_REQUIRE_EQUAL(items.size(), 3u);
  CAF_CHECK_EQUAL(items[0].find("result")->as_string(), "short");
  auto b = items[1].find("result")->as_string();
  CAF_CHECK(contains(b, "bytes omitted") && b.ends_with("END-b"));
  CAF_CHECK(r.omitted_bytes > 5000u);
}

CAF_TEST(a foreach result past the output cap never makes a short result longer) {
  // Many short results: their array alone is past the cap. Each cut to an omission
  // note made the result longer than it was.
  output_cap = 256;
  std::vector<std::string> elements;
  for (int i = 0; i < 40; ++i)
    elements.push_back(fmt::format("e{}", i));
  ask<HandleReport>(registry, spawn_atom::value, std::string("each"), foreach_of(elements, 40));
  for (int i = 0; i < 40; ++i)
    finish(fmt::format("each[{}]", i), fmt::format("r{}", i));
  auto r = fetch("each");
  CAF_REQUIRE(r.state.stopped());
  CAF_CHECK(!contains(r.state.content, "omitted"));
  CAF_CHECK(contains(r.state.content, R"({"element":"e39","result":"r39"})"));
  CAF_CHECK_EQUAL(r.omitted_bytes, 0u);
}

CAF_TEST(a foreach result whose array alone fills the cap leaves long results out and stays JSON) {
  // Each long result cut to an omission note made the "capped" result 2.5 times the
  // cap (its notes alone), and await's cap then cut it into something not JSON.
  output_cap = 4096;
  std::vector<std::string> elements;
  for (int i = 0; i < 200; ++i)
    elements.push_back(fmt::format("src/module_{:03}/file_{:03}.cpp", i, i));
  ask<HandleReport>(registry, spawn_atom::value, std::string("each"), foreach_of(elements, 200));
  for (int i = 0; i < 200; ++i)
    finish(fmt::format("each[{}]", i), std::string(300, 'r'));
  auto r = fetch("each");
  CAF_REQUIRE(r.state.stopped());
  auto results = Json::parse(r.state.content);
  CAF_REQUIRE(results.ok());
  CAF_REQUIRE_EQUAL(results->as_array().size(), 200u);
  CAF_CHECK_EQUAL(results->as_array()[7].find("result")->as_string(), "");
  CAF_CHECK(!contains(r.state.content, "omitted"));
  CAF_CHECK_EQUAL(r.omitted_bytes, 200u * 300u);
}

CAF_TEST(a foreach result past the output cap cuts long elements too) {
  // Each entry gives its element back: 20 elements of 1000 bytes made a result of
  // 20 kB under a cap of 8 kB, short results and all.
  output_cap = 8192;
  std::vector<std::string> elements;
  for (int i = 0; i < 20; ++i)
    elements.push_back(fmt::format("path/to/file{:03}_", i) + std::string(1000, 'y'));
  ask<HandleReport>(registry, spawn_atom::value, std::string("each"), foreach_of(elements, 20));
  for (int i = 0; i < 20; ++i)
    finish(fmt::format("each[{}]", i), "done");
  auto r = fetch("each");
  CAF_REQUIRE(r.state.stopped());
  CAF_CHECK_LESS_OR_EQUAL(r.state.content.size(), 8192u);
  auto results = Json::parse(r.state.content);
  CAF_REQUIRE(results.ok());
  auto& items = results->as_array();
  CAF_REQUIRE_EQUAL(items.size(), 20u);
  auto element = items[7].find("element")->as_string();
  CAF_CHECK(element.starts_with("path/to/file007_yyy"));
  CAF_CHECK(contains(element, "…(1016 bytes)"));
  CAF_CHECK_EQUAL(items[7].find("result")->as_string(), "done");
  CAF_CHECK(r.omitted_bytes > 10000u);
}

CAF_TEST(a foreach result names where an element whole answer went when it was cut) {
  ask<HandleReport>(registry, spawn_atom::value, std::string("each"), foreach_of({"a"}, 1));
  // As a sub-agent whose answer passed the output cap reports its stop.
  auto foreach_as_supervisor = caf::actor_cast<supervisor_actor>(foreaches.at("each"));
  anon_send(foreach_as_supervisor, stopped_atom::value,
            HandleReport{"each[0]", ToolState::success("head…tail"), 100, "/spill/each_0.log", {}});
  settle();
  auto r = fetch("each");
  CAF_REQUIRE(r.state.stopped());
  CAF_CHECK_EQUAL(r.state.content, R"([{"element":"a","result":"head…tail","output_file":"/spill/each_0.log"}])");
}

CAF_TEST(a foreach element with no room under the top-level agent waits instead of failing) {
  // At [agents] max_live each element failed at once, the foreach going through all.
  room = false;
  ask<HandleReport>(registry, spawn_atom::value, std::string("each"), foreach_of({"a", "b", "c", "d"}, 2));
  CAF_CHECK_EQUAL(handles.count("each[0]"), 0u);
  CAF_CHECK(contains(fetch("each").state.content, "0 of 4 done, 0 running (at most 2), 4 queued"));
  // Nothing of its own runs to wake it: it tries again after a while.
  room = true;
  sched.advance_time(std::chrono::milliseconds(200));
  settle();
  CAF_REQUIRE_EQUAL(handles.count("each[0]"), 1u);
  CAF_REQUIRE_EQUAL(handles.count("each[1]"), 1u);
  // Room made elsewhere while one of its own still runs: the retry takes it (it
  // waited for its own to end).
  room = false;
  finish("each[0]", "did a");
  CAF_CHECK_EQUAL(handles.count("each[2]"), 0u);
  room = true;
  sched.advance_time(std::chrono::milliseconds(200));
  settle();
  CAF_REQUIRE_EQUAL(handles.count("each[2]"), 1u);
  // One of its own ending tries at once.
  room = false;
  finish("each[1]", "did b");
  CAF_CHECK_EQUAL(handles.count("each[3]"), 0u);
  room = true;
  finish("each[2]", "did c");
  CAF_REQUIRE_EQUAL(handles.count("each[3]"), 1u);
  finish("each[3]", "did d");
  auto r = fetch("each");
  CAF_REQUIRE(r.state.stopped());
  CAF_CHECK(r.state.ok);
  CAF_CHECK(contains(r.state.content, R"({"element":"d","result":"did d"})"));
}

CAF_TEST(a foreach element that finds no room for long fails naming the limit) {
  // Sub-agents that each await a foreach can fill the tree and wait on each other.
  room = false;
  ask<HandleReport>(registry, spawn_atom::value, std::string("each"), foreach_of({"a", "b", "c"}, 1));
  sched.advance_time(std::chrono::seconds(31));
  settle();
  // Every element then, not one per 30 s.
  auto r = fetch("each");
  CAF_REQUIRE(r.state.stopped());
  auto results = Json::parse(r.state.content);
  CAF_REQUIRE(results.ok());
  CAF_REQUIRE_EQUAL(results->as_array().size(), 3u);
  for (auto& item : results->as_array())
    CAF_CHECK(contains(item.find("error")->as_string(), "no room for its sub-agent for 30 s"));
  CAF_CHECK(contains(r.state.content, "([agents] max_live)"));
}

CAF_TEST_FIXTURE_SCOPE_END()
