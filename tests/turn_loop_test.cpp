// The agent loop with capturing hooks, in CAF's deterministic scheduler: a fake
// provider that answers at once, built-in tools that run no process.
#define CAF_SUITE turn_loop
#include <caf/test/unit_test.hpp>

#include <thread>

#include "contains.hpp"

#include <algorithm>
#include <deque>
#include <mutex>
#include <fmt/format.h>

#include "actor_fixture.hpp"
#include "actors/io_thread_send.hpp"
#include "actors/subagent_handle.hpp"
#include "actors/turn_loop.hpp"
#include "messages/conversation_event_codec.hpp"
#include "config/config_loader.hpp"
#include "runtime/process/io_thread.hpp"
#include "runtime/process/process.hpp"
#include "tools/builtin_tools.hpp"

using namespace jp;
using namespace jp::testing;

namespace {

/// Responses the test scripts, one per request; keeps every request it was sent.
struct FakeProvider final : Provider {
  struct Reply {
    std::vector<std::string> text;
    std::vector<ToolCall> calls;
    std::string retry_first; // a retry (and its void partial text) before the reply
    std::vector<std::string> reasoning; // streamed before the text
    std::string finish; // the finish reason ("": stop, or tool_calls after calls)
  };
  std::deque<Reply> replies;
  std::vector<ChatRequest> requests;

  Status stream(const ChatRequest& req, const StreamHooks& hooks) override {
    requests.push_back(req);
    if (replies.empty())
      return Error{"the fake provider has no reply left"};
    auto r = replies.front();
    replies.pop_front();
    if (!r.retry_first.empty()) {
      hooks.emit(ChatEvent{chat_event_kind::text, "partial that is void", {}, {}});
      hooks.on_retry(r.retry_first);
    }
    for (auto& t : r.reasoning)
      hooks.emit(ChatEvent{chat_event_kind::reasoning, t, {}, {}});
    for (auto& t : r.text)
      hooks.emit(ChatEvent{chat_event_kind::text, t, {}, {}});
    for (auto& c : r.calls)
      hooks.emit(ChatEvent{chat_event_kind::tool_call, {}, c, {}});
    hooks.emit(ChatEvent{chat_event_kind::done, {}, {}, !r.finish.empty() ? r.finish : r.calls.empty() ? "stop" : "tool_calls"});
    return Status::success();
  }
  bool blocking() const override { return false; }
};

/// What the renderer was asked to do, in order.
struct CapturingRenderer final : ResponseRenderer {
  std::vector<std::string> log;
  void render(const std::string& chunk) override { log.push_back("render:" + chunk); }
  void flush() override { log.push_back("flush"); }
  void reset() override { log.push_back("reset"); }
  void render_reasoning(const std::string& chunk) override { log.push_back("reasoning:" + chunk); }
};

struct CapturingObserver final : TurnObserver {
  std::vector<std::string> log;
  void tool_call(int n, int index, const ToolCall& c) override {
    log.push_back(fmt::format("call {}.{} {}", n, index, c.name));
  }
  void tool_result(int n, int index, const std::string& tool, bool ok, const std::string&, double) override {
    log.push_back(fmt::format("result {}.{} {} {}", n, index, tool, ok ? "ok" : "failed"));
  }
  void retry(const std::string& why) override { log.push_back("retry " + why); }
  std::vector<double> round_ms; // each model round's elapsed_ms
  void model_round(int, const ModelRound& r) override { round_ms.push_back(r.elapsed_ms); }
  void turn_end(const std::vector<HandleSummary>&, const std::vector<Notification>&, const std::string&,
                bool) override {
    log.push_back("turn_end");
  }
};

/// A disk that fills up for one event: the first append of `fail_kind` fails, and
/// later appends would succeed again.
struct FillingStore final : MemoryConversationStore {
  std::string fail_kind;
  bool failed = false;
  Status append(const std::string& id, const Json& event) override {
    if (!failed && event.find("event")->as_string() == fail_kind) {
      failed = true;
      return Status::fail("No space left on device");
    }
    return MemoryConversationStore::append(id, event);
  }
};

std::vector<std::string> kinds(const std::vector<Json>& events) {
  std::vector<std::string> out;
  for (auto& e : events)
    out.push_back(e.find("event")->as_string());
  return out;
}

/// What the io thread makes ready (a process's output, its exit), handed over to
/// be enqueued by the test's thread: the test scheduler's queue takes no jobs from
/// another thread. Declared before the io thread, it outlives it.
struct IoHandoff {
  caf::scheduler::test_coordinator& sched;
  std::mutex mtx;
  std::deque<caf::resumable*> jobs;

  explicit IoHandoff(caf::scheduler::test_coordinator& s) : sched(s) {
    hand_foreign_jobs_to([this](caf::resumable* job) {
      std::lock_guard guard(mtx);
      jobs.push_back(job);
    });
  }
  ~IoHandoff() {
    hand_foreign_jobs_to({});
    take(); // their references are the scheduler's to let go
  }

  /// Enqueues, on this thread, what the io thread handed over.
  void take() {
    std::lock_guard guard(mtx);
    for (auto* job : jobs)
      static_cast<caf::scheduler::abstract_coordinator&>(sched).enqueue(job); // public there
    jobs.clear();
  }
};

struct loop_fixture : test_coordinator_fixture<registered_config> {
  IoHandoff handoff{sched};
  IoThread io;
  std::shared_ptr<FakeProvider> provider = std::make_shared<FakeProvider>();
  std::shared_ptr<CapturingRenderer> renderer = std::make_shared<CapturingRenderer>();
  std::shared_ptr<CapturingObserver> observer = std::make_shared<CapturingObserver>();
  std::shared_ptr<MemoryConversationStore> store = std::make_shared<MemoryConversationStore>();
  std::string id = *store->create();

  TurnResult last; // how the last turn ended
  int64_t max_tokens = 4096; // assistant.max_tokens, as the loop is told it

  /// A loop on the fakes above, recording into `store` under `id`.
  TurnLoopContext context() {
    TurnLoopContext ctx;
    ctx.config = std::make_shared<const Config>(default_config());
    ctx.io = &io;
    ctx.provider = provider;
    ctx.model = "fake-model";
    ctx.store = store;
    ctx.conversation_id = id;
    ctx.renderer = renderer;
    ctx.observer = observer;
    ctx.max_tokens = max_tokens;
    return ctx;
  }

  /// Runs one message, what the io thread handed over included; false if none is queued.
  bool step() {
    handoff.take();
    return sched.try_run_once();
  }

  /// Runs every message queued and those they send; fires no timer.
  void run_all() {
    while (step()) {
    }
  }

  /// Runs messages until the observer logged `entry` (it must come of them), then
  /// what they sent.
  void run_until_observed(const std::string& entry) {
    while (std::find(observer->log.begin(), observer->log.end(), entry) == observer->log.end())
      CAF_REQUIRE(step());
    run_all();
  }

  /// Runs messages until the turn ended: its end waits for its processes' (the io
  /// thread's news, in real time), so this polls, bounded.
  void run_until_turn_end() {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (std::find(observer->log.begin(), observer->log.end(), "turn_end") == observer->log.end() &&
           std::chrono::steady_clock::now() < deadline) {
      if (!step())
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    run_all();
  }

  /// Runs one turn to its end; the sentence of the loop's answer ("" = nothing failed).
  /// `interrupted`: the user interrupts it right after it starts.
  std::string turn(const std::string& prompt, bool interrupted = false) {
    auto loop = spawn_turn_loop(sys, context());
    std::optional<std::string> answer;
    auto h = self->request(loop, caf::infinite, run_atom::value, prompt);
    if (interrupted)
      self->send(loop, interrupt_atom::value);
    run_all(); // every message, in order, on this thread; no timer fires
    h.receive(
      [&](TurnResult& r) {
        last = r;
        answer = r.error;
      },
      [&](caf::error& e) { answer = caf::to_string(e); });
    return answer.value_or("no answer");
  }
};

} // namespace

CAF_TEST_FIXTURE_SCOPE(turn_loop_tests, loop_fixture)

CAF_TEST(a turn streams text runs the tool calls of a response and ends on an answer without calls) {
  provider->replies.push_back({{"Let me ", "look."}, {ToolCall{"c1", "describe_tools", R"({"tools":["shell"]})"}}, {}});
  provider->replies.push_back({{"Done."}, {}, {}});
  CAF_CHECK_EQUAL(turn("what can shell do?"), "");
  // The renderer saw the text as it came, and a flush before the tools ran.
  CAF_CHECK_EQUAL(renderer->log, (std::vector<std::string>{"render:Let me ", "render:look.", "flush", "render:Done.",
                                                          "flush"}));
  CAF_CHECK_EQUAL(observer->log, (std::vector<std::string>{"call 1.0 describe_tools", "result 1.0 describe_tools ok",
                                                          "turn_end"}));
  // The second request carried the tool's response to the call, by its id.
  CAF_REQUIRE_EQUAL(provider->requests.size(), 2u);
  auto& second = provider->requests[1].messages;
  CAF_REQUIRE_EQUAL(second.size(), 3u);
  CAF_CHECK(second[0].role == chat_role::user);
  CAF_CHECK_EQUAL(second[1].tool_calls.size(), 1u);
  CAF_CHECK(second[2].role == chat_role::tool);
  CAF_CHECK_EQUAL(second[2].tool_call_id, "c1");
  CAF_CHECK(second[2].text.find("shell") != std::string::npos);
  // Tools are declared to the provider.
  CAF_CHECK(provider->requests[0].tools_json.find("describe_tools") != std::string::npos);
  auto events = store->load(id)->events;
  CAF_CHECK_EQUAL(kinds(events), (std::vector<std::string>{"turn_start", "chat_request", "chat_response",
                                                          "tool_call_request", "tool_call_response", "chat_request",
                                                          "chat_response", "turn_end"}));
}

CAF_TEST(calls a provider gives one id are each given their own with their own result) {
  // Two calls named c1 (and one with none): each result must answer its own call,
  // and no id may be used twice in the history.
  provider->replies.push_back({{}, {ToolCall{"c1", "describe_tools", R"({"tools":["shell"]})"},
                                    ToolCall{"c1", "describe_tools", R"({"tools":["await"]})"},
                                    ToolCall{"", "describe_tools", R"({"tools":["shell"]})"}}, {}});
  provider->replies.push_back({{"Done."}, {}, {}});
  CAF_CHECK_EQUAL(turn("what can they do?"), "");
  CAF_REQUIRE_EQUAL(provider->requests.size(), 2u);
  auto& second = provider->requests[1].messages;
  CAF_REQUIRE_EQUAL(second.size(), 5u);
  CAF_REQUIRE_EQUAL(second[1].tool_calls.size(), 3u);
  std::vector<std::string> ids;
  for (auto& c : second[1].tool_calls)
    ids.push_back(c.id);
  // Ours: nine letters and digits, the only form Mistral takes.
  CAF_CHECK_EQUAL(ids, (std::vector<std::string>{"c1", "jp0000000", "jp0000001"}));
  for (size_t i = 0; i < 3; ++i)
    CAF_CHECK_EQUAL(second[2 + i].tool_call_id, ids[i]);
  CAF_CHECK(contains(second[3].text, "await"));
  // The next response's c1 is another call again.
  provider->replies.push_back({{}, {ToolCall{"c1", "describe_tools", R"({"tools":["shell"]})"}}, {}});
  provider->replies.push_back({{"Done."}, {}, {}});
  CAF_CHECK_EQUAL(turn("and again?"), "");
  CAF_REQUIRE_EQUAL(provider->requests.size(), 4u);
  auto& fourth = provider->requests[3].messages;
  CAF_REQUIRE(fourth.size() >= 2u);
  CAF_CHECK_EQUAL(fourth[fourth.size() - 2].tool_calls.at(0).id, "jp0000002");
}

CAF_TEST(a retry voids the partial response and the renderer is reset) {
  provider->replies.push_back({{"Hello."}, {}, "HTTP 429; retrying in 1.0 s"});
  auto before = std::chrono::steady_clock::now();
  CAF_CHECK_EQUAL(turn("hi"), "");
  // The round's time counts from its first attempt: within the turn, not since the
  // clock's epoch (a retry once reset it).
  auto turn_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - before).count();
  CAF_REQUIRE_EQUAL(observer->round_ms.size(), 1u);
  CAF_CHECK_LESS_OR_EQUAL(observer->round_ms[0], turn_ms);
  CAF_CHECK_EQUAL(renderer->log, (std::vector<std::string>{"render:partial that is void", "reset", "render:Hello.",
                                                          "flush"}));
  CAF_CHECK_EQUAL(observer->log, (std::vector<std::string>{"retry HTTP 429; retrying in 1.0 s", "turn_end"}));
  auto events = store->load(id)->events;
  CAF_CHECK_EQUAL(events[2].find("text")->as_string(), "Hello.");
}

CAF_TEST(reasoning is rendered apart and is no part of the answer or the history) {
  FakeProvider::Reply thinking{{"4."}, {}, {}};
  thinking.reasoning = {"2 + 2 ", "is 4"};
  provider->replies.push_back(thinking);
  CAF_CHECK_EQUAL(turn("2 + 2?"), "");
  CAF_CHECK_EQUAL(renderer->log, (std::vector<std::string>{"reasoning:2 + 2 ", "reasoning:is 4", "render:4.", "flush"}));
  auto events = store->load(id)->events;
  CAF_CHECK_EQUAL(events[2].find("text")->as_string(), "4.");
  // The next request carries the answer alone.
  provider->replies.push_back({{"Yes."}, {}, {}});
  CAF_CHECK_EQUAL(turn("sure?"), "");
  auto& sent = provider->requests.back().messages;
  CAF_REQUIRE_EQUAL(sent.size(), 3u);
  CAF_CHECK_EQUAL(sent[1].text, "4.");
}

namespace {

/// Each message's text, in order.
std::vector<std::string> texts(const std::vector<ChatMessage>& msgs) {
  std::vector<std::string> out;
  for (auto& m : msgs)
    out.push_back(m.text);
  return out;
}

} // namespace

CAF_TEST(the next turn continues the conversation from the store) {
  provider->replies.push_back({{"First answer."}, {}, {}});
  CAF_CHECK_EQUAL(turn("first"), "");
  provider->replies.push_back({{"Second answer."}, {}, {}});
  CAF_CHECK_EQUAL(turn("second"), "");
  CAF_CHECK_EQUAL(texts(provider->requests.back().messages),
                  (std::vector<std::string>{"first", "First answer.", "second"}));
}

CAF_TEST(a turn the provider never answered is left out of the next turns requests) {
  // Its prompt went with every later request: one the provider refused (too long, an
  // attachment it takes no more) failed each of them, and an abandoned one was asked
  // again beside the next.
  provider->replies.push_back({{"First answer."}, {}, {}});
  CAF_CHECK_EQUAL(turn("first"), "");
  CAF_CHECK_EQUAL(turn("refused"), "the fake provider has no reply left");
  provider->replies.push_back({{"Second answer."}, {}, {}});
  CAF_CHECK_EQUAL(turn("second"), "");
  CAF_CHECK_EQUAL(texts(provider->requests.back().messages),
                  (std::vector<std::string>{"first", "First answer.", "second"}));
  // Its events stay in the log.
  auto events = store->load(id)->events;
  CAF_CHECK(std::any_of(events.begin(), events.end(), [](const Json& e) { return e.string_at("prompt") == "refused"; }));
}

CAF_TEST(a failing provider ends the turn with its error recorded) {
  CAF_CHECK_EQUAL(turn("hi"), "the fake provider has no reply left");
  auto events = store->load(id)->events;
  CAF_REQUIRE(!events.empty());
  CAF_CHECK_EQUAL(events.back().find("event")->as_string(), "turn_end");
  CAF_CHECK_EQUAL(events.back().find("error")->as_string(), "the fake provider has no reply left");
}

CAF_TEST(a call with arguments that are not JSON fails alone and the assistant hears why) {
  provider->replies.push_back({{}, {ToolCall{"c1", "describe_tools", "{nope"}, ToolCall{"c2", "describe_tools", "{}"}}, {}});
  provider->replies.push_back({{"ok"}, {}, {}});
  CAF_CHECK_EQUAL(turn("x"), "");
  auto& msgs = provider->requests[1].messages;
  CAF_REQUIRE_EQUAL(msgs.size(), 4u);
  CAF_CHECK(msgs[2].tool_error);
  CAF_CHECK(msgs[2].text.find("not valid JSON") != std::string::npos);
  CAF_CHECK(!msgs[3].tool_error);
}

CAF_TEST(the first failed append ends the recording and the turn) {
  auto filling = std::make_shared<FillingStore>();
  filling->fail_kind = "tool_call_response";
  id = *filling->create();
  store = filling;
  provider->replies.push_back({{}, {ToolCall{"c1", "describe_tools", "{}"}}, {}});
  provider->replies.push_back({{"never asked"}, {}, {}});
  auto answer = turn("x");
  CAF_CHECK(answer.find("cannot record the conversation: No space left on device") != std::string::npos);
  // Nothing after the lost response: no later request, no events it would explain.
  CAF_CHECK_EQUAL(provider->requests.size(), 1u);
  auto events = store->load(id)->events;
  CAF_CHECK_EQUAL(kinds(events), (std::vector<std::string>{"turn_start", "chat_request", "chat_response",
                                                          "tool_call_request"}));
  // Replayed, the call is not said to have not run.
  auto msgs = messages_of(events);
  CAF_REQUIRE_EQUAL(msgs.size(), 3u);
  CAF_CHECK(msgs[2].text.find("it may have run") != std::string::npos);
}

CAF_TEST(the turn result says how a turn ended and what kind of error ended it) {
  provider->replies.push_back({{"Fine."}, {}, {}});
  turn("a");
  CAF_CHECK(last == (TurnResult{turn_outcome::completed, error_code::none, "", "Fine.", false}));
  turn("b"); // no reply left: a provider that does not name the kind failed its stream
  CAF_CHECK(last == (TurnResult{turn_outcome::failed, error_code::provider_stream,
                                "the fake provider has no reply left"}));
}

CAF_TEST(an interrupted turn says so and has no error) {
  provider->replies.push_back({{"never asked"}, {}, {}});
  CAF_CHECK_EQUAL(turn("x", true), "");
  CAF_CHECK(last == (TurnResult{turn_outcome::interrupted, error_code::interrupted, ""}));
}

CAF_TEST(calls of a batch whose turn ends while its spawns are registered never run) {
  // A parent's abort or a person's interrupt can come after the response's calls
  // are known and their spawns sent for registering (RFD 037), before they run.
  // Found as a sub-agent's `sleep 600` left running after its turn had ended.
  provider->replies.push_back(
    {{}, {ToolCall{"c1", "shell", R"({"action":"spawn","id":"long","command":"exec sleep 600"})"}}, {}});
  auto loop = spawn_turn_loop(sys, context());
  auto h = self->request(loop, caf::infinite, run_atom::value, std::string("go"));
  // The renderer is flushed as the response ends, in the step that sends the batch.
  while (std::find(renderer->log.begin(), renderer->log.end(), "flush") == renderer->log.end())
    CAF_REQUIRE(step());
  self->send(loop, interrupt_atom::value);
  run_all();
  CAF_CHECK_EQUAL(live_process_group_count(), 0u);
  // Not requested, and answered as not run. (Checked before the answer is taken: a
  // turn that ran the call may never answer.)
  auto events = store->load(id)->events;
  CAF_REQUIRE_EQUAL(kinds(events), (std::vector<std::string>{"turn_start", "chat_request", "chat_response",
                                                            "tool_call_response", "turn_end"}));
  auto said = events[3].find("content");
  CAF_CHECK(said && said->is_string() && said->as_string().rfind("not run:", 0) == 0);
  CAF_CHECK_EQUAL(observer->log, (std::vector<std::string>{"turn_end"}));
  h.receive([&](TurnResult& r) { last = r; }, [&](caf::error& e) { CAF_FAIL(caf::to_string(e)); });
  CAF_CHECK(last.outcome == turn_outcome::interrupted);
}

CAF_TEST(a call running when its turn is aborted is reported with its result interrupted) {
  // The observer (and the report it feeds) hears of every call's end, an
  // interrupted one too: else its time was left out.
  provider->replies.push_back({{}, {ToolCall{"c1", "shell", R"({"command":"exec sleep 600"})"}}, {}});
  auto loop = spawn_turn_loop(sys, context());
  auto h = self->request(loop, caf::infinite, run_atom::value, std::string("go"));
  run_until_observed("call 1.0 shell"); // the call under way (its process lives on the io thread)
  // Twice, as a sub-agent's abort does: the turn ends at once, the call unanswered.
  self->send(loop, interrupt_atom::value);
  self->send(loop, interrupt_atom::value);
  // The turn's end waits for the process's (the io thread's news, in real time).
  run_until_turn_end();
  CAF_CHECK_EQUAL(observer->log, (std::vector<std::string>{"call 1.0 shell", "result 1.0 shell failed", "turn_end"}));
  h.receive([&](TurnResult& r) { last = r; }, [&](caf::error& e) { CAF_FAIL(caf::to_string(e)); });
  CAF_CHECK(last.outcome == turn_outcome::interrupted);
}

CAF_TEST(a turn interrupted twice between its requests aborts its handles at its end without waiting on them) {
  // A sub-agent's abort is two interrupts; both may come while the loop waits to send
  // its next request (tools done, the turn's notifications asked for). Its end then
  // aborted nothing: a handle whose tool says on_turn_end = "await" held the abort
  // until that handle ended by itself (a server: never).
  Config config = default_config();
  config.tools["shell"].lifecycle.on_turn_end = turn_end_policy::await;
  provider->replies.push_back(
    {{}, {ToolCall{"c1", "shell", R"({"action":"spawn","id":"long","wait_ms":0,"command":"exec sleep 600"})"}}, {}});
  provider->replies.push_back({{"never asked"}, {}, {}});
  auto ctx = context();
  ctx.config = std::make_shared<const Config>(config);
  auto loop = spawn_turn_loop(sys, ctx);
  auto h = self->request(loop, caf::infinite, run_atom::value, std::string("go"));
  // The step that observes the call's result asks the turn for its notifications,
  // before the next request: the interrupts come while that answer is on its way.
  while (std::find(observer->log.begin(), observer->log.end(), "result 1.0 shell ok") == observer->log.end())
    CAF_REQUIRE(step());
  self->send(loop, interrupt_atom::value);
  self->send(loop, interrupt_atom::value);
  run_until_turn_end();
  CAF_REQUIRE_EQUAL(observer->log.back(), "turn_end");
  CAF_CHECK_EQUAL(provider->requests.size(), 1u);
  // Its end says how the handle ended (it was aborted by it, not gone before it).
  auto loaded = store->load(id);
  CAF_REQUIRE(loaded.ok());
  auto& end = loaded->events.back();
  CAF_REQUIRE_EQUAL(end.find("event")->as_string(), "turn_end");
  CAF_CHECK(contains(end.dump(), R"("id":"long")"));
  CAF_CHECK(contains(end.dump(), "aborted"));
  CAF_CHECK_EQUAL(live_process_group_count(), 0u);
  h.receive([&](TurnResult& r) { last = r; }, [&](caf::error& e) { CAF_FAIL(caf::to_string(e)); });
  CAF_CHECK(last.outcome == turn_outcome::interrupted);
}

CAF_TEST(an await running when its turn is interrupted is recorded as interrupted whichever answers first) {
  // The turn's end aborts the handle the await waits on: the await may answer (its
  // handle stopped) before the turn records its unanswered calls. Either way the
  // record says the turn was interrupted, not a plain result of the handle's own.
  provider->replies.push_back(
    {{}, {ToolCall{"c1", "shell", R"({"action":"spawn","id":"long","wait_ms":0,"command":"exec sleep 600"})"},
          ToolCall{"c2", "await", R"({"all":["long"]})"}}, {}});
  auto loop = spawn_turn_loop(sys, context());
  auto h = self->request(loop, caf::infinite, run_atom::value, std::string("go"));
  run_until_observed("result 1.0 shell ok");
  self->send(loop, interrupt_atom::value);
  run_until_turn_end();
  std::string said;
  auto loaded = store->load(id);
  CAF_REQUIRE(loaded.ok());
  for (auto& e : loaded->events)
    if (e.find("event")->as_string() == "tool_call_response" && e.find("id")->as_string() == "c2")
      said = e.find("content")->as_string();
  CAF_CHECK(said.find("interrupted") != std::string::npos);
  h.receive([&](TurnResult& r) { last = r; }, [&](caf::error& e) { CAF_FAIL(caf::to_string(e)); });
  CAF_CHECK(last.outcome == turn_outcome::interrupted);
  CAF_CHECK_EQUAL(live_process_group_count(), 0u);
}

CAF_TEST(a turn the store failed ends with the store error code) {
  auto filling = std::make_shared<FillingStore>();
  filling->fail_kind = "chat_request";
  id = *filling->create();
  store = filling;
  provider->replies.push_back({{"never asked"}, {}, {}});
  turn("x");
  CAF_CHECK(last.outcome == turn_outcome::failed);
  CAF_CHECK(last.code == error_code::store);
}

CAF_TEST(messages of a refused turn leave it out but keep the notifications it carried) {
  auto note = [](const std::string& text) { return Notification{"tool", "tool.stopped", "info", text, "b"}; };
  auto call = ToolCall{"c1", "shell", "{}"};
  std::vector<Json> events{
    to_json(TurnStartEvent{"first", "m", {}}),
    to_json(ChatResponseEvent{"ok", {}, "stop"}),
    to_json(TurnStartEvent{"bad", "m", {note("Handle `a` stopped")}}),
    to_json(ChatResponseEvent{"", {call}, "tool_calls"}),
    to_json(ToolCallResponseEvent{"c1", "shell", true, "out"}),
    to_json(SystemNotificationEvent{note("Handle `b` stopped"), true}),
    to_json(ChatResponseEvent{"I can't", {}, "refusal"}),
    to_json(TurnStartEvent{"next", "m", {}}),
    to_json(ChatResponseEvent{"fine", {}, "stop"}),
  };
  auto msgs = messages_of(events);
  CAF_REQUIRE_EQUAL(msgs.size(), 5u);
  CAF_CHECK_EQUAL(msgs[0].text, "first");
  CAF_CHECK_EQUAL(msgs[1].text, "ok");
  CAF_CHECK(contains(msgs[2].text, "Handle `a` stopped"));
  CAF_CHECK(contains(msgs[2].text, "Handle `b` stopped"));
  CAF_CHECK(contains(msgs[2].text, "refused by the provider and is left out"));
  CAF_CHECK(!contains(msgs[2].text, "bad"));
  CAF_CHECK_EQUAL(msgs[3].text, "next");
  CAF_CHECK_EQUAL(msgs[4].text, "fine");
}

CAF_TEST(messages of a turn cut short answer every call) {
  auto call = Json::object().set("id", "c9").set("name", "shell").set("arguments", Json::object());
  std::vector<Json> events{
    Json::object().set("event", "turn_start").set("prompt", "go"),
    Json::object().set("event", "chat_response").set("text", "").set("tool_calls", Json(JsonArray{call})),
    Json::object().set("event", "turn_end"),
    Json::object().set("event", "turn_start").set("prompt", "again"),
    Json::object().set("event", "chat_response").set("text", "ok"),
  };
  auto msgs = messages_of(events);
  CAF_REQUIRE_EQUAL(msgs.size(), 5u);
  CAF_CHECK(msgs[2].role == chat_role::tool);
  CAF_CHECK_EQUAL(msgs[2].tool_call_id, "c9");
  CAF_CHECK(msgs[2].tool_error);
  CAF_CHECK_EQUAL(msgs[3].text, "again");
}

namespace {

/// Text and two calls, the second's arguments cut, ended with `finish`.
FakeProvider::Reply cut_batch(std::string finish) {
  FakeProvider::Reply cut{{"Let me look."}, {ToolCall{"c1", "describe_tools", R"({"tools":["shell"]})"},
                                             ToolCall{"c2", "describe_tools", R"({"tools":["aw)"}}};
  cut.finish = std::move(finish);
  return cut;
}

} // namespace

CAF_TEST(a response cut at the token limit runs none of its calls and the turn fails naming assistant.max_tokens) {
  // The first call is complete, the last one's arguments were cut: a batch cut short
  // is not run in part.
  provider->replies.push_back(cut_batch("length"));
  auto said = "the response was cut off at the token limit (assistant.max_tokens = 4096) before its tool calls "
              "were complete: none of them ran (describe_tools, describe_tools); raise assistant.max_tokens (e.g. to "
              "8192, up to what the model allows) and ask again";
  CAF_CHECK_EQUAL(turn("what can shell do?"), said);
  CAF_CHECK(last.outcome == turn_outcome::failed);
  CAF_CHECK(last.code == error_code::limit_reached);
  CAF_CHECK_EQUAL(last.answer, "Let me look.");
  CAF_CHECK_EQUAL(renderer->log, (std::vector<std::string>{"render:Let me look.", "flush"}));
  CAF_CHECK_EQUAL(observer->log, (std::vector<std::string>{"turn_end"}));
  CAF_CHECK_EQUAL(provider->requests.size(), 1u);
  // Recorded without its calls (none ran, none is replayed), with the error.
  auto events = store->load(id)->events;
  CAF_CHECK_EQUAL(kinds(events), (std::vector<std::string>{"turn_start", "chat_request", "chat_response", "turn_end"}));
  CAF_CHECK_EQUAL(events[2].find("tool_calls")->as_array().size(), 0u);
  CAF_CHECK_EQUAL(events[2].find("finish_reason")->as_string(), "length");
  CAF_CHECK_EQUAL(events[2].find("error")->as_string(), said);
  CAF_CHECK_EQUAL(events[3].find("error")->as_string(), said);
  // Anthropic says it as max_tokens.
  provider->replies.push_back(cut_batch("max_tokens"));
  CAF_CHECK_EQUAL(turn("again"), said);
  CAF_CHECK_EQUAL(observer->log, (std::vector<std::string>{"turn_end", "turn_end"}));
}

CAF_TEST(a text answer cut at the token limit is kept and shown with the note) {
  FakeProvider::Reply cut{{"The steps are: 1. Open"}, {}};
  cut.finish = "length";
  provider->replies.push_back(cut);
  CAF_CHECK_EQUAL(turn("steps?"), "the response was cut off at the token limit (assistant.max_tokens = 4096): the "
                                  "answer is incomplete; raise assistant.max_tokens (e.g. to 8192, up to what the "
                                  "model allows) and ask again");
  CAF_CHECK_EQUAL(renderer->log, (std::vector<std::string>{"render:The steps are: 1. Open", "flush"}));
  CAF_CHECK_EQUAL(last.answer, "The steps are: 1. Open");
  // The next turn carries what it said.
  provider->replies.push_back({{"2. Save it."}, {}});
  CAF_CHECK_EQUAL(turn("go on"), "");
  auto& sent = provider->requests.back().messages;
  CAF_REQUIRE_EQUAL(sent.size(), 3u);
  CAF_CHECK_EQUAL(sent[1].text, "The steps are: 1. Open");
}

CAF_TEST(a reasoning model that spent the whole limit before answering is told apart) {
  // Nothing to show: the line alone says what happened. With no limit sent, the
  // model's own applied.
  max_tokens = 0;
  FakeProvider::Reply cut{{}, {}};
  cut.reasoning = {"Let me think"};
  cut.finish = "length";
  provider->replies.push_back(cut);
  CAF_CHECK_EQUAL(turn("hard question"),
                  "the response was cut off at the token limit (assistant.max_tokens = 0, so none was sent and the "
                  "model's own limit applied) before it gave any answer (a reasoning model can spend the whole limit "
                  "on its hidden reasoning); raise assistant.max_tokens (e.g. to 16384, up to what the model allows) "
                  "and ask again");
  CAF_CHECK(last.code == error_code::limit_reached);
}

CAF_TEST(a response cut at a full context window runs none of its calls and the turn fails saying so) {
  // Anthropic's stop reason: the conversation filled the window, so a higher token
  // limit would not help and the sentence does not ask for one.
  provider->replies.push_back(cut_batch("model_context_window_exceeded"));
  auto said = "the response was cut off because the model's context window was full (stop reason "
              "\"model_context_window_exceeded\") before its tool calls were complete: none of them ran "
              "(describe_tools, describe_tools); start a new conversation (or ask for a shorter answer) and ask again";
  CAF_CHECK_EQUAL(turn("what can shell do?"), said);
  CAF_CHECK(last.outcome == turn_outcome::failed);
  CAF_CHECK(last.code == error_code::limit_reached);
  CAF_CHECK_EQUAL(last.answer, "Let me look.");
  CAF_CHECK_EQUAL(observer->log, (std::vector<std::string>{"turn_end"}));
  CAF_CHECK_EQUAL(provider->requests.size(), 1u);
  auto events = store->load(id)->events;
  CAF_CHECK_EQUAL(kinds(events), (std::vector<std::string>{"turn_start", "chat_request", "chat_response", "turn_end"}));
  CAF_CHECK_EQUAL(events[2].find("tool_calls")->as_array().size(), 0u);
  CAF_CHECK_EQUAL(events[3].find("error")->as_string(), said);
  // A text answer it cut is kept, said to be incomplete.
  FakeProvider::Reply text{{"The steps are: 1. Open"}, {}};
  text.finish = "model_context_window_exceeded";
  provider->replies.push_back(text);
  CAF_CHECK_EQUAL(turn("steps?"), "the response was cut off because the model's context window was full (stop "
                                  "reason \"model_context_window_exceeded\"): the answer is incomplete; start a new "
                                  "conversation (or ask for a shorter answer) and ask again");
  CAF_CHECK(last.code == error_code::limit_reached);
  CAF_CHECK_EQUAL(last.answer, "The steps are: 1. Open");
}

CAF_TEST(a refusal or a content filter fails the turn saying so and runs no call) {
  FakeProvider::Reply refused{{"I can't help with that request."}, {}};
  refused.finish = "refusal";
  provider->replies.push_back(refused);
  CAF_CHECK_EQUAL(turn("x"), R"(the provider refused to answer (stop reason "refusal"); rephrase the request )"
                             R"((this turn is left out of what the model is sent next))");
  CAF_CHECK(last.outcome == turn_outcome::failed);
  CAF_CHECK(last.code == error_code::provider_refused);
  CAF_CHECK_EQUAL(last.answer, "I can't help with that request.");
  CAF_CHECK_EQUAL(renderer->log, (std::vector<std::string>{"render:I can't help with that request.", "flush"}));
  FakeProvider::Reply filtered{{}, {ToolCall{"c1", "describe_tools", R"({"tools":["shell"]})"}}};
  filtered.finish = "content_filter";
  provider->replies.push_back(filtered);
  CAF_CHECK_EQUAL(turn("y"), R"(the provider's content filter stopped the response (finish reason )"
                             R"("content_filter"): none of its tool calls ran (describe_tools); rephrase the request)");
  // The refused turn is not sent again (Anthropic would refuse every later request
  // that holds it), only said to be left out.
  CAF_REQUIRE_EQUAL(provider->requests.back().messages.size(), 2u);
  CAF_CHECK(contains(provider->requests.back().messages[0].text, "refused by the provider and is left out"));
  CAF_CHECK_EQUAL(provider->requests.back().messages[1].text, "y");
  CAF_CHECK(last.code == error_code::provider_refused);
  CAF_CHECK_EQUAL(observer->log, (std::vector<std::string>{"turn_end", "turn_end"}));
  filtered.calls.clear();
  provider->replies.push_back(filtered);
  CAF_CHECK_EQUAL(turn("z"), R"(the provider's content filter stopped the response (finish reason )"
                             R"("content_filter") before it gave any answer; rephrase the request)");
  // The filtered turn answered nothing (its calls never ran): left out, as the
  // rephrased request comes instead of it.
  CAF_REQUIRE_EQUAL(provider->requests.back().messages.size(), 2u);
  CAF_CHECK_EQUAL(provider->requests.back().messages[1].text, "z");
}

/// A sub-agent's assistant on the fake provider, watched by `observer`.
struct FakeSubAgentHost final : SubAgentHost {
  std::shared_ptr<Provider> provider;
  std::shared_ptr<TurnObserver> observer;
  Status prepare(const std::string&, const AgentSpec&, TurnLoopContext& ctx) override {
    ctx.provider = provider;
    ctx.observer = observer;
    return Status::success();
  }
};

/// Runs `at_counts` in the last step of a turn (its handle counts come just before
/// it ends).
struct LastStepObserver final : TurnObserver {
  std::function<void()> at_counts;
  void handle_counts(const HandleCounts&) override {
    if (at_counts)
      at_counts();
  }
};

CAF_TEST(a sub-agent whose turn completes as its abort comes keeps its answer) {
  // The abort's interrupts reach a loop that has ended (and drop there) while the
  // turn's result is on its way: the answer it gave is the result, not lost behind
  // "aborted".
  provider->replies.push_back({{"The answer."}, {}, {}});
  auto watcher = std::make_shared<LastStepObserver>();
  auto host = std::make_shared<FakeSubAgentHost>();
  host->provider = provider;
  host->observer = watcher;
  auto parent = context();
  parent.subagents = host;
  parent.agent_path = "main";
  auto agents = subagent_factory(parent);
  handle_actor sub;
  auto registry = spawn_registry(sys, [&](caf::local_actor* spawner, const std::string& id, LaunchSpec& spec,
                                          const supervisor_actor& sup) {
    return sub = agents(spawner, id, spec, sup);
  });
  watcher->at_counts = [&] { caf::anon_send(sub, abort_atom::value); };
  LaunchSpec spec;
  spec.subagent = true;
  spec.agent.prompt = "go";
  auto spawned = self->request(registry, caf::infinite, spawn_atom::value, std::string("w"), spec);
  run_all();
  spawned.receive([](HandleReport&) {}, [](caf::error& e) { CAF_FAIL(caf::to_string(e)); });
  auto h = self->request(registry, caf::infinite, fetch_atom::value, std::string("w"), LookOptions{});
  run_all();
  h.receive(
    [&](HandleReport& r) {
      CAF_CHECK(r.state.stopped());
      CAF_CHECK(r.state.ok);
      CAF_CHECK_EQUAL(r.state.content, "The answer.");
      CAF_CHECK(r.own_end);
    },
    [](caf::error& e) { CAF_FAIL(caf::to_string(e)); });
  anon_send_exit(registry, caf::exit_reason::user_shutdown);
  run_all();
}


CAF_TEST_FIXTURE_SCOPE_END()
