// The public API (<jp/jp.hpp>) as an embedder uses it: function tools through the
// stateful protocol and await, their progress and abort, a turn on the scripted
// provider that calls one, and an executor supplied for a tool. Real threads and
// processes: every wait is on a future the runtime fulfils (a bounded wait guards
// against a hang only).
#define CAF_SUITE embedding_api
#include <caf/test/unit_test.hpp>

#include <atomic>
#include <chrono>
#include <cmath>
#include <fmt/format.h>
#include <future>
#include <jp/executor.hpp>
#include <jp/jp.hpp>
#include <mutex>
#include <thread>

#include "actors/function_handle.hpp"
#include "runtime/actor_config.hpp"
#include "runtime/embedding/runtime_access.hpp"
#include "runtime/store/conversation_store.hpp"
#include "tools/schema.hpp"
#include <caf/actor_system.hpp>
#include "run_argv.hpp"
#include "temp_dir.hpp"
#include <csignal>
#include <fstream>
#include <sstream>

using namespace jp;
using namespace jp::testing;

namespace {

// Only against a hang: every future here is fulfilled by the runtime.
constexpr auto hang_guard = std::chrono::seconds(60);

template <class T>
T get(std::future<T> f) {
  if (f.wait_for(hang_guard) != std::future_status::ready)
    CAF_FAIL("no answer within the hang guard");
  return f.get();
}

Json obj(const char* text) {
  auto j = Json::parse(text);
  return j ? *j : Json::object();
}

Json parsed(const CallResult& r) {
  auto j = Json::parse(r.content);
  if (!j)
    CAF_FAIL("not JSON: " << r.content);
  return *j;
}

/// The content of each tool result a turn reports, in order.
struct RecordedResults : TurnObserver {
  std::mutex mtx;
  std::vector<std::string> contents;
  void tool_result(int, int, const std::string&, bool, const std::string& content, double) override {
    std::lock_guard lock(mtx);
    contents.push_back(content);
  }
};

/// The completed entry of `id` in an await result ("": none).
const Json* completed(const Json& await_result, const std::string& id) {
  if (auto* list = await_result.find("completed"); list && list->is_array())
    for (auto& e : list->as_array())
      if (auto* eid = e.find("id"); eid && eid->as_string() == id)
        return &e;
  return nullptr;
}

std::string str(const Json* j, const char* key) {
  auto* v = j ? j->find(key) : nullptr;
  return v && v->is_string() ? v->as_string() : std::string{};
}

ParameterConfig number(std::string name) {
  ParameterConfig p;
  p.name = std::move(name);
  p.type = "number";
  p.required = true;
  return p;
}

/// A script whose one step spawns `work2` as `w` and awaits it.
constexpr const char* spawn_work2_and_await = R"(
[[agents]]
name = "main"
  [[agents.steps]]
  [[agents.steps.calls]]
  tool = "work2"
  arguments = { action = "spawn", id = "w" }
  [[agents.steps.calls]]
  tool = "await"
  arguments = { all = ["w"] }
)";

/// A script whose one step calls `work2` (a one-shot call).
constexpr const char* call_work2 = R"(
[[agents]]
name = "main"
  [[agents.steps]]
  [[agents.steps.calls]]
  tool = "work2"
  arguments = {}
)";

/// A script whose one step answers "Done.".
constexpr const char* done_script = R"(
[[agents]]
name = "main"
  [[agents.steps]]
  text = "Done."
)";

/// A scripted provider whose first step calls the `agent` tool and whose second
/// answers `then` (a sub-agent's request takes it while its parent waits).
Result<std::shared_ptr<Provider>> delegating_provider(const std::string& then) {
  return scripted_provider(fmt::format(R"(
[[agents]]
name = "main"
steps = [ {{ calls = [ {{ tool = "agent", arguments = {{ prompt = "help me" }} }} ] }},
          {{ text = "{}" }} ]
)",
                                       then));
}

/// A runtime in a fresh workspace.
struct fixture {
  temp_dir ws;
  Config config() {
    auto c = builtin_config();
    c.workspace = ws.path.string();
    return c;
  }
  /// The scripted provider on `script` (TOML, as in examples/).
  Config scripted(const char* script) {
    ws.write("script.toml", script);
    auto c = config();
    c.assistant.provider = "scripted";
    c.assistant.script = (ws.path / "script.toml").string();
    return c;
  }
};

/// `add`: done at once, with a + b.
Status add_adder(Runtime& rt) {
  return rt.add_function_tool(function_tool_config("add", "Adds two numbers", {number("a"), number("b")}),
                              [](const Json& args, const Progress&) {
                                auto sum = args.find("a")->as_number() + args.find("b")->as_number();
                                return Invocation{FunctionResult::ready(ToolState::success(fmt::format("{}", sum)))};
                              });
}

/// A function tool whose work the test drives: each call hands over its progress
/// and result, and counts the calls of its abort.
struct DrivenTool {
  std::mutex mtx;
  Progress progress;
  FunctionResult result;
  std::promise<void> started;
  std::atomic<int> aborts{0};
  std::promise<void> aborted;
  bool result_on_abort = true; // the abort sets the result (else it never comes)

  FunctionTool fn() {
    return [this](const Json&, const Progress& p) {
      Invocation inv;
      {
        std::lock_guard lock(mtx);
        progress = p;
        result = inv.result;
      }
      inv.abort = [this, r = inv.result] {
        if (++aborts == 1)
          aborted.set_value();
        if (result_on_abort)
          r.fail("stopped by its abort");
      };
      started.set_value();
      return inv;
    };
  }
};

} // namespace

CAF_TEST_FIXTURE_SCOPE(embedding_api_tests, fixture)

CAF_TEST(a function tool and a process tool are spawned and awaited together) {
  Runtime rt(config());
  CAF_REQUIRE(add_adder(rt));
  auto s = rt.session();
  auto sum = get(s.spawn("add", "sum", obj(R"({"a": 2, "b": 3})")));
  CAF_CHECK(sum.ok);
  auto hi = get(s.spawn("shell", "hi", obj(R"({"command": "echo hi"})"), 0));
  CAF_CHECK(hi.ok);
  auto all = parsed(get(s.await_all({"sum", "hi"}, 120)));
  CAF_CHECK_EQUAL(str(completed(all, "sum"), "result"), "5");
  CAF_CHECK_EQUAL(str(completed(all, "hi"), "result"), "hi\n");
  // Without `action`, a function tool answers the call itself; here to a callback.
  std::promise<CallResult> answered;
  s.call("add", obj(R"({"a": 1, "b": 0.5})"), [&answered](CallResult r) { answered.set_value(std::move(r)); });
  auto once = get(answered.get_future());
  CAF_CHECK(once.ok);
  CAF_CHECK_EQUAL(once.content, "1.5");
}

CAF_TEST(every session call that answers a call result also takes a callback) {
  Runtime rt(config());
  auto s = rt.session();
  auto by_callback = [](auto start) {
    std::promise<CallResult> p;
    auto f = p.get_future();
    start([&p](CallResult r) { p.set_value(std::move(r)); });
    return get(std::move(f));
  };
  auto spawned = by_callback([&](auto done) { s.spawn("shell", "r", obj(R"({"command": "read a; echo got $a"})"), 0, done); });
  CAF_CHECK(spawned.ok);
  auto typed = by_callback([&](auto done) { s.apply("r", Json("x\n"), 0, done); });
  CAF_CHECK(typed.ok);
  auto any = parsed(by_callback([&](auto done) { s.await_any({"r"}, 30, done); }));
  CAF_CHECK_EQUAL(str(completed(any, "r"), "result"), "got x\n");
  auto looked = by_callback([&](auto done) { s.fetch("r", 0, done); });
  CAF_CHECK(looked.ok);
  auto ended = by_callback([&](auto done) { s.abort("r", done); });
  CAF_CHECK(ended.ok);
  // An id this session has no handle of.
  auto unknown = by_callback([&](auto done) { s.fetch("nope", 0, done); });
  CAF_CHECK(!unknown.ok);
  CAF_CHECK_EQUAL(unknown.content, "Handle `nope` not found: this session has no handle of that id");
}

CAF_TEST(a one-shot call moved to the background is fetched and aborted by its id) {
  auto c = config();
  c.tools.at("shell").background_after_secs = 0.2;
  Runtime rt(c);
  auto s = rt.session();
  auto moved = parsed(get(s.call("shell", obj(R"({"command": "echo start; exec sleep 300"})"))));
  auto id = str(&moved, "id");
  CAF_REQUIRE(!id.empty());
  CAF_CHECK_EQUAL(str(&moved, "state"), "running");
  auto looked = get(s.fetch(id, 0));
  CAF_CHECK_EQUAL(looked.ok ? "" : looked.content, "");
  auto ended = get(s.abort(id));
  CAF_CHECK_EQUAL(ended.ok ? "" : ended.content, "");
  auto after = parsed(get(s.await_all({id}, 120)));
  CAF_CHECK(completed(after, id) != nullptr);
  // Stopped, it is still looked at through its tool: the fetch says how it ended.
  auto stopped = get(s.fetch(id, 0));
  CAF_CHECK(stopped.ok);
  CAF_CHECK(stopped.content.find("stopped") != std::string::npos);
  // One first looked at once it stopped: its result.
  auto later = parsed(get(s.call("shell", obj(R"({"command": "sleep 1; echo finished"})"))));
  auto later_id = str(&later, "id");
  CAF_REQUIRE(!later_id.empty());
  CAF_REQUIRE(completed(parsed(get(s.await_all({later_id}, 120))), later_id) != nullptr);
  auto result = get(s.fetch(later_id, 0));
  CAF_CHECK_EQUAL(result.ok ? "" : result.content, "");
  CAF_CHECK(result.content.find("finished") != std::string::npos);
  // A spawn that failed leaves its id naming nothing, not the tool it named.
  CAF_CHECK(!get(s.spawn("nosuch", "x", obj("{}"))).ok);
  auto x = get(s.fetch("x", 0));
  CAF_CHECK_EQUAL(x.content, "Handle `x` not found: this session has no handle of that id");
}

CAF_TEST(a session dropped while its spawn is pending lets its runtime end) {
  // The spawn's answer never comes: its future breaks, and nothing of the session's
  // (its callbacks) keeps the runtime from ending.
  auto rt = std::make_unique<Runtime>(config());
  std::future<CallResult> pending;
  {
    auto s = rt->session();
    pending = s.spawn("shell", "slow", obj(R"({"command": "exec sleep 300"})"), 60000);
  }
  bool broken = false;
  try {
    get(std::move(pending));
  } catch (const std::future_error&) {
    broken = true;
  }
  CAF_CHECK(broken);
  rt.reset(); // returns: the session's state went with it
}

CAF_TEST(a spawn whose params are no object and an await whose timeout is no number are refused) {
  Runtime rt(config());
  auto s = rt.session();
  auto text = get(s.spawn("shell", "t", Json("echo hi")));
  CAF_CHECK(!text.ok);
  CAF_CHECK(text.content.find("params must be a JSON object") != std::string::npos);
  for (double t : {std::nan(""), HUGE_VAL, -HUGE_VAL}) {
    auto r = get(s.await_all({"t"}, t));
    CAF_CHECK(!r.ok);
    CAF_CHECK(r.content.find("expected a finite number of seconds") != std::string::npos);
  }
  // null is no parameters: the tool's own check speaks (the shell needs a command).
  auto none = get(s.spawn("shell", "n", Json(), 0));
  CAF_CHECK_EQUAL(none.content, "shell: parameter `command` is required");
}

CAF_TEST(a call or a spawn that names no tool is refused and runs nothing again) {
  Runtime rt(config());
  auto s = rt.session();
  auto first = get(s.spawn("shell", "t", *Json::parse(R"({"command":"echo first"})")));
  CAF_REQUIRE(first.ok);
  CAF_REQUIRE(get(s.await_all({"t"}, 30)).ok);
  // An id the session used: a nameless spawn of it ran its old tool with new params.
  auto again = get(s.spawn("", "t", *Json::parse(R"({"command":"echo again"})")));
  CAF_CHECK(!again.ok);
  CAF_CHECK(again.content.find("the call names no tool") != std::string::npos);
  auto called = get(s.call("", *Json::parse(R"({"action":"fetch","id":"t"})")));
  CAF_CHECK(!called.ok);
  CAF_CHECK(called.content.find("the call names no tool") != std::string::npos);
  auto looked = get(s.fetch("t", 0));
  CAF_CHECK(looked.content.find("again") == std::string::npos);
}

CAF_TEST(a function tool gets an object parameter sent as JSON text as the object) {
  // The gemini dialect declares a free-form object as a string of JSON.
  Runtime rt(config());
  ParameterConfig o;
  o.name = "o";
  o.type = "object";
  CAF_REQUIRE(rt.add_function_tool(function_tool_config("level", "Its level", {o}),
                                   [](const Json& args, const Progress&) {
                                     auto* obj = args.find("o");
                                     auto* level = obj && obj->is_object() ? obj->find("level") : nullptr;
                                     return Invocation{FunctionResult::ready(ToolState::success(
                                       level && level->is_string() ? level->as_string() : "no object"))};
                                   }));
  auto s = rt.session();
  auto r = get(s.call("level", obj(R"({"o": "{\"level\": \"3\"}"})")));
  CAF_CHECK(r.ok);
  CAF_CHECK_EQUAL(r.content, "3");
}

CAF_TEST(a session callback that throws leaves the session working) {
  Runtime rt(config());
  CAF_REQUIRE(add_adder(rt));
  auto s = rt.session();
  std::promise<void> called;
  s.call("add", obj(R"({"a": 1, "b": 2})"), [&called](CallResult) {
    called.set_value();
    throw std::runtime_error("the program's own bug");
  });
  get(called.get_future());
  auto after = get(s.spawn("add", "sum", obj(R"({"a": 2, "b": 3})")));
  CAF_CHECK(after.ok);
}

CAF_TEST(a refused call s callback that throws does not leave the call) {
  // A refusal is answered at once, on the calling thread: its exception came out of
  // spawn and await_all, though the header says a callback's is dropped.
  Runtime rt(config());
  CAF_REQUIRE(add_adder(rt));
  auto s = rt.session();
  int refused = 0;
  auto throwing = [&refused](CallResult r) {
    refused += !r.ok;
    throw std::runtime_error("the program's own bug");
  };
  s.spawn("add", "x", Json(3), -1, throwing);
  s.await_all({"x"}, std::nan(""), throwing);
  CAF_CHECK_EQUAL(refused, 2);
}

CAF_TEST(a session s destructor returns once its running callback has) {
  // A callback in flight ran on after the destructor returned, using what its owner
  // freed next. Here the destructor is given a moment to return before the callback
  // is let go (a bounded wait: the callback's end is only looked at once released).
  Runtime rt(config());
  CAF_REQUIRE(add_adder(rt));
  auto s = std::make_unique<Session>(rt.session());
  std::promise<void> entered, release;
  auto released = release.get_future().share();
  std::atomic<bool> destroyed{false};
  std::atomic<bool> seen_destroyed{false};
  s->call("add", obj(R"({"a": 1, "b": 2})"), [&, released](CallResult) {
    entered.set_value();
    released.wait();
    seen_destroyed = destroyed.load();
  });
  entered.get_future().wait();
  std::thread ender([&] {
    s.reset();
    destroyed = true;
  });
  for (int i = 0; i < 100 && !destroyed; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  release.set_value();
  ender.join();
  CAF_CHECK(destroyed.load());
  CAF_CHECK(!seen_destroyed.load());
}

CAF_TEST(a session destroyed in its own callback does not wait for itself) {
  Runtime rt(config());
  CAF_REQUIRE(add_adder(rt));
  auto s = std::make_unique<Session>(rt.session());
  std::promise<void> done;
  s->call("add", obj(R"({"a": 1, "b": 2})"), [&](CallResult) {
    s.reset();
    done.set_value();
  });
  get(done.get_future());
  CAF_CHECK(!s);
}

CAF_TEST(a function tool has the schema of its declared parameters and of the protocol) {
  Runtime rt(config());
  CAF_REQUIRE(add_adder(rt));
  auto decl = tool_declaration(rt.config().tools.at("add"), dialect::openai);
  auto text = decl.dump();
  // Its own parameters, required ones named, and the stateful actions it offers.
  for (auto* part : {R"("a":{"type":"number")", R"("b":{"type":"number")", R"("spawn")", R"("fetch")", R"("abort")"})
    if (text.find(part) == std::string::npos)
      CAF_FAIL("the declaration lacks " << part << ": " << text);
  CAF_CHECK(text.find(R"("apply")") == std::string::npos);
}

CAF_TEST(what a function reports before it returns a failure is that failure s content) {
  // Its progress went as messages, which the failure set at once overtook: the
  // failure's content was empty.
  Runtime rt(config());
  CAF_REQUIRE(rt.add_function_tool(function_tool_config("check", "Checks", {}), [](const Json&, const Progress& p) {
    p("checking disk\n");
    return Invocation{FunctionResult::ready(ToolState::failure(ToolError{"disk full", {}, false}))};
  }));
  CAF_REQUIRE(rt.add_function_tool(function_tool_config("thrower", "Throws", {}), [](const Json&, const Progress& p) {
    p("about to throw\n");
    throw std::runtime_error("no luck");
    return Invocation{};
  }));
  auto s = rt.session();
  get(s.spawn("check", "c", Json::object()));
  get(s.spawn("thrower", "t", Json::object()));
  auto done = parsed(get(s.await_all({"c", "t"}, 120)));
  auto* c = completed(done, "c");
  auto* t = completed(done, "t");
  CAF_REQUIRE(c && t);
  CAF_CHECK_EQUAL(str(c, "content"), "checking disk\n");
  CAF_CHECK_EQUAL(str(t, "content"), "about to throw\n");
}

CAF_TEST(the progress of a function tool is what fetch returns and its result what await returns) {
  Runtime rt(config());
  DrivenTool tool;
  CAF_REQUIRE(rt.add_function_tool(function_tool_config("work", "Works for a while", {}), tool.fn()));
  auto s = rt.session();
  auto first = get(s.spawn("work", "w", Json::object()));
  auto first_state = parsed(first);
  CAF_CHECK_EQUAL(str(&first_state, "state"), "running");
  get(tool.started.get_future());
  tool.progress("step 1\n");
  tool.progress("step 2\n");
  // The fetch waits for output; both steps came before it.
  auto look = parsed(get(s.fetch("w", 30000)));
  CAF_CHECK_EQUAL(str(&look, "state"), "running");
  CAF_CHECK_EQUAL(str(&look, "content"), "step 1\nstep 2\n");
  tool.progress("step 3\n");
  auto listed = get(s.list());
  CAF_REQUIRE_EQUAL(listed.size(), 1u);
  CAF_CHECK_EQUAL(listed[0].tool, "work");
  // An await that times out answers with the handle still pending; one of an id
  // the session never spawned names it.
  auto timed = parsed(get(s.await_any({"w"}, 0.05)));
  CAF_CHECK(timed.find("timed_out") && timed.find("timed_out")->as_bool());
  CAF_REQUIRE_EQUAL(timed.find("pending")->as_array().size(), 1u);
  CAF_CHECK_EQUAL(str(&timed.find("pending")->as_array()[0], "id"), "w");
  auto unknown = get(s.await_any({"w", "nosuch"}, 120));
  CAF_CHECK(!unknown.ok);
  CAF_CHECK_EQUAL(unknown.content, "Handle `nosuch` not found: the handles are `w`");
  auto no_id = get(s.await_any({"w", "no \"such\" id"}, 120));
  CAF_CHECK(!no_id.ok);
  CAF_CHECK(no_id.content.starts_with(R"(`any` holds "no \"such\" id", which is no handle's id)"));
  tool.result.succeed("all done");
  auto all = parsed(get(s.await_all({"w"}, 120)));
  CAF_CHECK_EQUAL(str(completed(all, "w"), "result"), "all done");
  // Set twice: the first counts.
  CAF_CHECK(!tool.result.succeed("again"));
  CAF_CHECK_EQUAL(tool.aborts.load(), 0);
}

CAF_TEST(a function tool that fails carries the progress nobody looked at yet) {
  // As a process's failure carries its last output: the last words say why.
  Runtime rt(config());
  DrivenTool tool;
  CAF_REQUIRE(rt.add_function_tool(function_tool_config("work", "Works for a while", {}), tool.fn()));
  auto s = rt.session();
  get(s.spawn("work", "w", Json::object()));
  get(tool.started.get_future());
  tool.progress("error detail: disk full\n");
  tool.result.fail("failed");
  auto all = parsed(get(s.await_all({"w"}, 120)));
  auto* w = completed(all, "w");
  CAF_REQUIRE(w);
  CAF_CHECK_EQUAL(str(w, "content"), "error detail: disk full\n");
  CAF_CHECK(w->dump().find(R"("message":"failed")") != std::string::npos);
}

CAF_TEST(aborting a function tool calls its abort once however often it is aborted) {
  Runtime rt(config());
  DrivenTool tool;
  CAF_REQUIRE(rt.add_function_tool(function_tool_config("work", "Works for a while", {}), tool.fn()));
  auto s = rt.session();
  get(s.spawn("work", "w", Json::object()));
  get(tool.started.get_future());
  auto a1 = s.abort("w");
  auto a2 = s.abort("w");
  auto r1 = parsed(get(std::move(a1)));
  auto r2 = parsed(get(std::move(a2)));
  CAF_CHECK_EQUAL(str(&r1, "state"), "stopped");
  auto* err = r1.find("error");
  CAF_REQUIRE(err != nullptr);
  CAF_CHECK_EQUAL(str(err, "message"), "aborted: stopped by its abort");
  CAF_CHECK(r1 == r2);
  // Aborted again after it stopped, and the session's end: still once.
  get(s.abort("w"));
  get(s.end());
  CAF_CHECK_EQUAL(tool.aborts.load(), 1);
}

CAF_TEST(a function tool still running when its session ends is aborted) {
  Runtime rt(config());
  DrivenTool tool;
  CAF_REQUIRE(rt.add_function_tool(function_tool_config("work", "Works for a while", {}), tool.fn()));
  {
    auto s = rt.session();
    get(s.spawn("work", "w", Json::object()));
    get(tool.started.get_future());
    // The default policy of a function tool: aborted at the turn end.
    auto ended = get(s.end());
    CAF_REQUIRE_EQUAL(ended.first.size(), 1u);
    CAF_CHECK_EQUAL(ended.first[0].id, "w");
  }
  get(tool.aborted.get_future());
  CAF_CHECK_EQUAL(tool.aborts.load(), 1);

  DrivenTool dropped;
  CAF_REQUIRE(rt.add_function_tool(function_tool_config("work2", "Works for a while", {}), dropped.fn()));
  {
    auto s = rt.session();
    get(s.spawn("work2", "w", Json::object()));
    get(dropped.started.get_future());
  } // destroyed while the work runs
  get(dropped.aborted.get_future());
  CAF_CHECK_EQUAL(dropped.aborts.load(), 1);
}

CAF_TEST(a turn destroyed while it runs or before it ran says so in its result) {
  // Its kept future said "interrupted twice", or (dropped at once) CAF's words with
  // no error code.
  auto c = scripted(spawn_work2_and_await);
  for (bool at_once : {false, true}) {
    CAF_MESSAGE("dropped " << (at_once ? "at once" : "while it runs"));
    DrivenTool tool; // outlives the runtime, which aborts it as it ends
    Runtime rt(c);
    CAF_REQUIRE(rt.add_function_tool(function_tool_config("work2", "Works for a while", {}), tool.fn()));
    std::future<TurnResult> kept;
    if (at_once) {
      kept = std::move(rt.run_turn("go").result());
    } else {
      auto t = rt.run_turn("go");
      get(tool.started.get_future());
      kept = std::move(t.result());
    }
    auto r = get(std::move(kept));
    CAF_CHECK_EQUAL(to_string(r.outcome), std::string("interrupted"));
    CAF_CHECK(r.code == error_code::interrupted);
    if (at_once) // before it ran, or as it began
      CAF_CHECK(r.error.starts_with("its jp::Turn was destroyed"));
    else
      CAF_CHECK_EQUAL(r.error, "its jp::Turn was destroyed while it ran: every handle it started was aborted");
  }
}

namespace {

/// Each turn's start and end, in order, as `name`.
struct TurnOrder : TurnObserver {
  TurnOrder(std::shared_ptr<std::mutex> m, std::shared_ptr<std::vector<std::string>> s, std::string n)
      : mtx(std::move(m)), seen(std::move(s)), name(std::move(n)) {}
  std::shared_ptr<std::mutex> mtx;
  std::shared_ptr<std::vector<std::string>> seen;
  std::string name;
  void turn_start() override {
    std::lock_guard lock(*mtx);
    seen->push_back(name + " start");
  }
  void turn_end(const std::vector<HandleSummary>&, const std::vector<Notification>&, const std::string&,
                bool) override {
    std::lock_guard lock(*mtx);
    seen->push_back(name + " end");
  }
};

} // namespace

CAF_TEST(turns of one conversation run one after the other) {
  // Two at once in the runtime's own conversation interleaved their events, each
  // reading a history the other was writing. The first waits on its tool; the
  // second is given a moment to start (a bounded wait: the order is only looked at
  // once both ended).
  auto c = scripted(call_work2);
  DrivenTool tool;
  tool.result_on_abort = false;
  Runtime rt(c);
  CAF_REQUIRE(rt.add_function_tool(function_tool_config("work2", "Works for a while", {}), tool.fn()));
  auto mtx = std::make_shared<std::mutex>();
  auto seen = std::make_shared<std::vector<std::string>>();
  TurnHooks first_hooks, second_hooks;
  first_hooks.observer = std::make_shared<TurnOrder>(mtx, seen, "first");
  second_hooks.observer = std::make_shared<TurnOrder>(mtx, seen, "second");
  second_hooks.provider = *scripted_provider(done_script);
  auto first = rt.run_turn("go", first_hooks);
  get(tool.started.get_future());
  auto second = rt.run_turn("next", second_hooks);
  auto started = [&] {
    std::lock_guard lock(*mtx);
    return std::find(seen->begin(), seen->end(), "second start") != seen->end();
  };
  for (int i = 0; i < 100 && !started(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  {
    std::lock_guard lock(tool.mtx);
    tool.result.succeed("worked");
  }
  CAF_CHECK_EQUAL(to_string(get(std::move(first.result())).outcome), std::string("completed"));
  CAF_CHECK_EQUAL(to_string(get(std::move(second.result())).outcome), std::string("completed"));
  std::lock_guard lock(*mtx);
  CAF_CHECK_EQUAL(*seen, (std::vector<std::string>{"first start", "first end", "second start", "second end"}));
}

CAF_TEST(a turn whose actor ends without answering fails and the next turn of its conversation runs) {
  // Its waiter heard nothing: the turn's result never came, and the turns queued
  // behind it never started. The loop is killed from outside, as a bug would end it.
  auto c = scripted(call_work2);
  DrivenTool tool;
  tool.result_on_abort = false;
  Runtime rt(c);
  CAF_REQUIRE(rt.add_function_tool(function_tool_config("work2", "Works for a while", {}), tool.fn()));
  TurnHooks second_hooks;
  second_hooks.provider = *scripted_provider(done_script);
  auto first = rt.run_turn("go");
  get(tool.started.get_future());
  auto second = rt.run_turn("next", second_hooks);
  caf::anon_send_exit(RuntimeAccess::loop_of(first), caf::exit_reason::kill);
  auto r = get(std::move(first.result()));
  CAF_CHECK_EQUAL(to_string(r.outcome), std::string("failed"));
  CAF_CHECK_EQUAL(r.error, "the turn's actor ended without answering (exit_reason(kill)): the handles it started "
                           "went with it; run the turn again");
  CAF_CHECK_EQUAL(to_string(get(std::move(second.result())).outcome), std::string("completed"));
}

CAF_TEST(a store may use its runtime while it makes the conversation) {
  // create() ran under the runtime's lock: a store that read its config there (or
  // added a tool) waited for itself for good, and a slow one held every session up.
  Runtime rt(scripted(done_script));
  struct Asking : MemoryConversationStore {
    Runtime* rt = nullptr;
    Result<std::string> create() override {
      rt->config();
      return MemoryConversationStore::create();
    }
  };
  auto store = std::make_shared<Asking>();
  store->rt = &rt;
  TurnHooks hooks;
  hooks.store = store;
  auto r = std::async(std::launch::async, [&] { return get(std::move(rt.run_turn("go", hooks).result())); });
  bool in_time = r.wait_for(hang_guard) == std::future_status::ready;
  CAF_CHECK(in_time);
  if (!in_time)
    std::_Exit(1); // the hung thread would keep the runner from ending at all
  CAF_CHECK_EQUAL(to_string(r.get().outcome), std::string("completed"));
}

CAF_TEST(a session or a turn assigned over a live one ends it as its destructor would) {
  auto c = scripted(spawn_work2_and_await);
  auto rt = std::make_unique<Runtime>(c);
  DrivenTool in_session, in_turn;
  CAF_REQUIRE(rt->add_function_tool(function_tool_config("work", "Works for a while", {}), in_session.fn()));
  CAF_REQUIRE(rt->add_function_tool(function_tool_config("work2", "Works for a while", {}), in_turn.fn()));
  {
    auto s = rt->session();
    get(s.spawn("work", "w", Json::object()));
    get(in_session.started.get_future());
    s = rt->session();
    get(in_session.aborted.get_future());
    auto other = rt->session();
    s = std::move(other); // a session with no handles, replaced: its actors end too
    CAF_CHECK(get(s.list()).empty());
  }
  {
    auto t = rt->run_turn("go");
    get(in_turn.started.get_future());
    TurnHooks done;
    done.provider = *scripted_provider(done_script);
    t = rt->run_turn("go again", done);
    get(in_turn.aborted.get_future());
    CAF_CHECK_EQUAL(to_string(get(std::move(t.result())).outcome), std::string("completed"));
  }
  auto ended = std::async(std::launch::async, [&] { rt.reset(); });
  bool in_time = ended.wait_for(hang_guard) == std::future_status::ready;
  CAF_CHECK(in_time);
  if (!in_time)
    std::_Exit(1); // the hung thread would keep the runner from ending at all
}

CAF_TEST(a function tool whose result never comes is reported aborted after the grace) {
  auto c = config();
  c.runtime.abort_grace_secs = 0.05;
  Runtime rt(c);
  DrivenTool tool;
  tool.result_on_abort = false;
  CAF_REQUIRE(rt.add_function_tool(function_tool_config("stuck", "Never ends", {}), tool.fn()));
  auto s = rt.session();
  get(s.spawn("stuck", "w", Json::object()));
  auto r = parsed(get(s.abort("w")));
  auto* err = r.find("error");
  CAF_REQUIRE(err != nullptr);
  CAF_CHECK(str(err, "message").find("did not come within the grace of 50 ms") != std::string::npos);
  CAF_CHECK_EQUAL(tool.aborts.load(), 1);
}

CAF_TEST(a function tool without an abort is no longer waited for as soon as it is aborted) {
  // Its work runs on; the abort's answer does not wait a grace for a result that
  // nothing asked to come (here a minute's).
  auto c = config();
  c.runtime.abort_grace_secs = 60;
  Runtime rt(c);
  FunctionResult running;
  CAF_REQUIRE(rt.add_function_tool(function_tool_config("endless", "Runs to its end", {}),
                                   [&running](const Json&, const Progress&) {
                                     Invocation inv;
                                     running = inv.result;
                                     return inv;
                                   }));
  auto s = rt.session();
  get(s.spawn("endless", "e", Json::object()));
  auto r = parsed(get(s.abort("e")));
  CAF_CHECK_EQUAL(str(&r, "state"), "stopped");
  auto* err = r.find("error");
  CAF_REQUIRE(err != nullptr);
  CAF_CHECK_EQUAL(str(err, "message"), "aborted: the tool has no way to stop its work, which runs on to its end; "
                                       "its result is no longer waited for");
  CAF_CHECK(running.succeed("late")); // its own to set still; nobody waits for it
}

CAF_TEST(a function tool is refused what it cannot do with a message saying why) {
  Runtime rt(config());
  CAF_REQUIRE(add_adder(rt));
  auto taken = rt.add_function_tool(function_tool_config("shell", "Mine", {}), [](const Json&, const Progress&) {
    return Invocation{};
  });
  CAF_CHECK_EQUAL(taken.error, "function tool `shell`: a tool of that name exists already (builtin); choose "
                               "another name");
  CAF_CHECK(!taken.ok()); // a check, as Result's: not the factory (Status::success())
  auto bad = rt.add_function_tool(function_tool_config("a b", "Mine", {}), [](const Json&, const Progress&) {
    return Invocation{};
  });
  CAF_CHECK(bad.error.find("expected 1 to 64 of A-Z a-z 0-9 _ -") != std::string::npos);
  // Parameters as the config loader checks them: a type no provider knows, a name
  // the stateful protocol uses itself.
  auto typo = number("x");
  typo.type = "numbr";
  auto mistyped = rt.add_function_tool(function_tool_config("typo", "Mine", {typo}),
                                       [](const Json&, const Progress&) { return Invocation{}; });
  CAF_CHECK(mistyped.error.find("function tool `typo`: definition.parameters.x.type: expected one of") !=
            std::string::npos);
  auto reserved = rt.add_function_tool(function_tool_config("mine", "Mine", {number("id")}),
                                       [](const Json&, const Progress&) { return Invocation{}; });
  CAF_CHECK(reserved.error.find("reserved for the stateful protocol") != std::string::npos);
  CAF_CHECK_EQUAL(rt.config().tools.count("typo") + rt.config().tools.count("mine"), 0u);
  CAF_REQUIRE(rt.add_function_tool(function_tool_config("boom", "Throws", {}),
                                   [](const Json&, const Progress&) -> Invocation {
                                     throw std::runtime_error("no disk");
                                   }));
  auto s = rt.session();
  auto thrown = get(s.call("boom", Json::object()));
  CAF_CHECK(!thrown.ok);
  CAF_CHECK_EQUAL(thrown.content, "boom failed to start: no disk");
  // Its declared parameters are checked before it runs.
  auto missing = get(s.call("add", obj(R"({"a": 1})")));
  CAF_CHECK(!missing.ok);
  CAF_CHECK(missing.content.find("`b`") != std::string::npos);
  // No input callback: apply is not offered.
  get(s.spawn("add", "sum", obj(R"({"a": 1, "b": 2})")));
  auto typed = get(s.apply("sum", Json("more\n")));
  CAF_CHECK(!typed.ok);
  CAF_CHECK(typed.content.find("apply") != std::string::npos);
}

CAF_TEST(turns given a store and no conversation continue the runtime conversation there) {
  Runtime rt(scripted(done_script));
  auto store = std::make_shared<MemoryConversationStore>();
  TurnHooks hooks;
  hooks.store = store;
  CAF_CHECK_EQUAL(to_string(get(std::move(rt.run_turn("first", hooks).result())).outcome), std::string("completed"));
  CAF_CHECK_EQUAL(to_string(get(std::move(rt.run_turn("second", hooks).result())).outcome), std::string("completed"));
  auto listed = store->list();
  CAF_REQUIRE(listed.ok());
  CAF_REQUIRE_EQUAL(listed->size(), 1u); // one conversation, both turns in it
  auto loaded = store->load(listed->at(0).id);
  CAF_REQUIRE(loaded.ok());
  int turns = 0;
  for (auto& e : loaded->events)
    turns += e.find("event") && e.find("event")->as_string() == "turn_start";
  CAF_CHECK_EQUAL(turns, 2);
}

CAF_TEST(a spawn refused for a key given twice leaves no id reserved) {
  // The batch reserves each spawn's id before its calls run; a call refused as it is
  // read must not leave one behind that an await would see as running forever.
  struct Raw : Provider {
    int round = 0;
    bool blocking() const override { return false; }
    Status stream(const ChatRequest&, const StreamHooks& hooks) override {
      if (round++ == 0) {
        hooks.emit(ChatEvent{chat_event_kind::tool_call, {},
                             ToolCall{"c1", "shell", R"({"action":"spawn","id":"b","id":"b","command":"echo hi"})"}});
        hooks.emit(ChatEvent{chat_event_kind::tool_call, {},
                             ToolCall{"c2", "await", R"({"all":["b"],"timeout_secs":1})"}});
        hooks.emit(ChatEvent{chat_event_kind::done, {}, {}, "tool_calls"});
      } else {
        hooks.emit(ChatEvent{chat_event_kind::text, "Done.", {}, {}});
        hooks.emit(ChatEvent{chat_event_kind::done, {}, {}, "stop"});
      }
      return Status::success();
    }
  };
  Runtime rt(config());
  auto seen = std::make_shared<RecordedResults>();
  TurnHooks hooks;
  hooks.provider = std::make_shared<Raw>();
  hooks.observer = seen;
  get(std::move(rt.run_turn("go", hooks).result()));
  std::lock_guard lock(seen->mtx);
  CAF_REQUIRE_EQUAL(seen->contents.size(), 2u);
  CAF_CHECK(seen->contents[0].find("appears twice") != std::string::npos);
  CAF_CHECK(seen->contents[1].find(R"("state":"running")") == std::string::npos);
  CAF_MESSAGE(seen->contents[1]);
}

CAF_TEST(what a later turn end waited for as the inquiry chose reaches the next turn) {
  // The turn's one synthetic await answers the first end's waits; a handle spawned
  // after it and waited for at the turn's next end must still reach the assistant.
  struct Script : Provider {
    int round = 0;
    std::vector<std::string> seen; // every request's messages, joined
    bool blocking() const override { return false; }
    Status stream(const ChatRequest& req, const StreamHooks& hooks) override {
      std::string all;
      for (auto& m : req.messages)
        all += m.text + "\n";
      seen.push_back(all);
      auto call = [&](const char* args) {
        hooks.emit(ChatEvent{chat_event_kind::tool_call, {}, ToolCall{fmt::format("c{}", round), "job", args}});
        hooks.emit(ChatEvent{chat_event_kind::done, {}, {}, "tool_calls"});
      };
      auto text = [&](const char* t) {
        hooks.emit(ChatEvent{chat_event_kind::text, t, {}, {}});
        hooks.emit(ChatEvent{chat_event_kind::done, {}, {}, "stop"});
      };
      switch (round++) {
        // Each ends once its turn's end asked about it (the gate): still running then,
        // however slow the machine.
        case 0: call(R"({"action":"spawn","id":"a","script":"until [ -e gate ]; do sleep 0.01; done; echo first-done","wait_ms":0})"); break;
        case 2: call(R"({"action":"spawn","id":"a","script":"until [ -e gate ]; do sleep 0.01; done; echo second-done","wait_ms":0})"); break;
        default: text("ok"); break;
      }
      return Status::success();
    }
  };
  struct Wait : InquiryBackend {
    std::filesystem::path gate;
    explicit Wait(std::filesystem::path g) : gate(std::move(g)) {}
    Result<InquiryAnswers> turn_end(const std::vector<HandleSummary>& outstanding,
                                    const std::vector<ChatMessage>&) override {
      InquiryAnswers out;
      for (auto& h : outstanding)
        out[h.id] = inquiry_answer::wait;
      std::ofstream{gate};
      return out;
    }
    std::optional<Json> answer(const std::string&, const Question&) override { return std::nullopt; }
  };
  auto c = config_from_toml(R"([conversation.tools.job]
summary = "Runs a script"
command = { program = "/bin/sh", args = ["-c", "{{tool.arguments.script}}"] }
run = "unattended"
spawn.stateful = true
spawn.lifecycle.on_turn_end = "inquire"
parameters.script = { type = "string", required = true }
)");
  CAF_REQUIRE(c.ok());
  c->workspace = ws.path.string();
  Runtime rt(*c);
  auto provider = std::make_shared<Script>();
  TurnHooks hooks;
  hooks.provider = provider;
  hooks.inquiry = std::make_shared<Wait>(ws.path / "gate");
  get(std::move(rt.run_turn("go", hooks).result()));
  std::filesystem::remove(ws.path / "gate");
  get(std::move(rt.run_turn("next", hooks).result()));
  CAF_REQUIRE(!provider->seen.empty());
  CAF_CHECK(provider->seen.back().find("second-done") != std::string::npos);
}

CAF_TEST(a store that throws fails the turn instead of the call) {
  struct Throwing : MemoryConversationStore {
    Result<std::string> create() override { throw std::runtime_error("disk on fire"); }
  };
  Runtime rt(scripted(done_script));
  TurnHooks hooks;
  hooks.store = std::make_shared<Throwing>();
  TurnResult r;
  try {
    r = get(std::move(rt.run_turn("go", hooks).result()));
  } catch (const std::exception& e) {
    CAF_FAIL("run_turn threw: " << e.what());
  }
  CAF_CHECK_EQUAL(to_string(r.outcome), std::string("failed"));
  CAF_CHECK(r.error.find("disk on fire") != std::string::npos);
}

CAF_TEST(a turn on the scripted provider calls a function tool and awaits it) {
  auto c = scripted(R"(
[[agents]]
name = "main"
  [[agents.steps]]
  [[agents.steps.calls]]
  tool = "add"
  arguments = { action = "spawn", id = "sum", a = 40, b = 2 }
  [[agents.steps.calls]]
  tool = "await"
  arguments = { all = ["sum"], timeout_secs = 30 }
  [[agents.steps]]
  text = "The sum is ready."
)");
  Runtime rt(c);
  CAF_REQUIRE(add_adder(rt));
  auto seen = std::make_shared<RecordedResults>();
  TurnHooks hooks;
  hooks.observer = seen;
  auto turn = rt.run_turn("add them", hooks);
  auto result = get(std::move(turn.result()));
  CAF_CHECK_EQUAL(to_string(result.outcome), std::string("completed"));
  CAF_CHECK_EQUAL(result.answer, "The sum is ready.");
  std::lock_guard lock(seen->mtx);
  CAF_REQUIRE_EQUAL(seen->contents.size(), 2u);
  auto awaited = Json::parse(seen->contents[1]);
  CAF_REQUIRE(awaited.ok());
  CAF_CHECK_EQUAL(str(completed(*awaited, "sum"), "result"), "42");
}

CAF_TEST(a turn whose observer throws fails and says what it threw) {
  Runtime rt(scripted(done_script));
  struct Throwing : TurnObserver {
    void response(int, const std::string&) override { throw std::runtime_error("the program's own bug"); }
  };
  TurnHooks hooks;
  hooks.observer = std::make_shared<Throwing>();
  auto result = get(std::move(rt.run_turn("go", hooks).result()));
  CAF_CHECK_EQUAL(to_string(result.outcome), std::string("failed"));
  CAF_CHECK_EQUAL(result.error, "the turn failed: a hook of the program threw: the program's own bug");
  CAF_CHECK(result.code == error_code::hook_threw);
}

CAF_TEST(a turn whose prompts throw takes it as no answer) {
  auto c = scripted(R"(
[[agents]]
name = "main"
  [[agents.steps]]
  [[agents.steps.calls]]
  tool = "asked"
  arguments = {}
  [[agents.steps]]
  text = "Done."
)");
  Runtime rt(c);
  auto tool = function_tool_config("asked", "Runs once it is allowed", {});
  tool.run = run_mode::ask;
  CAF_REQUIRE(rt.add_function_tool(tool, [](const Json&, const Progress&) {
    return Invocation{FunctionResult::ready(ToolState::success("ran"))};
  }));
  struct Throwing : PromptBackend {
    std::optional<Json> ask(const std::string&, const Question&) override { throw std::runtime_error("no tty"); }
    std::optional<PermissionReply> permit(const std::string&, const Json&) override {
      throw std::runtime_error("no tty");
    }
  };
  auto seen = std::make_shared<RecordedResults>();
  TurnHooks hooks;
  hooks.prompts = std::make_shared<Throwing>();
  hooks.observer = seen;
  auto result = get(std::move(rt.run_turn("go", hooks).result()));
  CAF_CHECK_EQUAL(result.answer, "Done.");
  std::lock_guard lock(seen->mtx);
  CAF_REQUIRE_EQUAL(seen->contents.size(), 1u);
  CAF_CHECK(seen->contents[0].find("ran") == std::string::npos); // refused, not run
}

CAF_TEST(a turn whose provider throws fails and says what it threw) {
  struct Throwing : Provider {
    Status stream(const ChatRequest&, const StreamHooks&) override { throw std::runtime_error("no route to the model"); }
  };
  Runtime rt(config());
  TurnHooks hooks;
  hooks.provider = std::make_shared<Throwing>();
  auto result = get(std::move(rt.run_turn("go", hooks).result()));
  CAF_CHECK_EQUAL(to_string(result.outcome), std::string("failed"));
  CAF_CHECK(result.code == error_code::provider_stream);
  CAF_CHECK_EQUAL(result.error, "the provider failed: no route to the model");
}

CAF_TEST(a turn starts sub-agents that its own provider answers) {
  // The provider is shared: the sub-agent's request takes the narration steps while
  // its parent waits on the blocking `agent` call.
  auto provider = delegating_provider("from the sub-agent");
  CAF_REQUIRE(provider.ok());
  Runtime rt(config());
  auto seen = std::make_shared<RecordedResults>();
  std::vector<std::string> watched;
  std::mutex watched_mtx;
  TurnHooks hooks;
  hooks.provider = *provider;
  hooks.observer = seen;
  hooks.subagent_observer = [&](const std::string& path) {
    std::lock_guard lock(watched_mtx);
    watched.push_back(path);
    return std::shared_ptr<TurnObserver>{};
  };
  auto result = get(std::move(rt.run_turn("delegate", hooks).result()));
  CAF_CHECK_EQUAL(to_string(result.outcome), std::string("completed"));
  std::lock_guard lock(seen->mtx);
  CAF_REQUIRE_EQUAL(seen->contents.size(), 1u);
  CAF_CHECK_EQUAL(seen->contents[0], "from the sub-agent");
  std::lock_guard lock2(watched_mtx);
  CAF_REQUIRE_EQUAL(watched.size(), 1u);
  CAF_CHECK(watched[0].rfind("assistant/", 0) == 0);
}

CAF_TEST(a sub-agent whose observer cannot be made is refused with the reason) {
  auto provider = delegating_provider("on my own, then");
  CAF_REQUIRE(provider.ok());
  Runtime rt(config());
  auto seen = std::make_shared<RecordedResults>();
  TurnHooks hooks;
  hooks.provider = *provider;
  hooks.observer = seen;
  hooks.subagent_observer = [](const std::string&) -> std::shared_ptr<TurnObserver> {
    throw std::runtime_error("no display for it");
  };
  auto result = get(std::move(rt.run_turn("delegate", hooks).result()));
  CAF_CHECK_EQUAL(result.answer, "on my own, then");
  std::lock_guard lock(seen->mtx);
  CAF_REQUIRE_EQUAL(seen->contents.size(), 1u);
  CAF_MESSAGE(seen->contents[0]);
  CAF_CHECK(seen->contents[0].find("no display for it") != std::string::npos);
}

CAF_TEST(a turn dropped while a sub-agent waits on a question lets the runtime end) {
  // The question of the sub-agent's tool blocks a thread of its turn on the handle's
  // answer. Dropping the turn ends the sub-agent by an exit (not an abort): the
  // question must still end unanswered, else that thread and ~Runtime wait forever.
  // The sub-agent plays the script's [[subagents]] entry, its parent the first agent.
  ws.write("script.toml", R"(
[[agents]]
name = "main"
  [[agents.steps]]
  [[agents.steps.calls]]
  tool = "agent"
  arguments = { action = "spawn", id = "w", prompt = "x", script = "cleaner" }
  [[agents.steps.calls]]
  tool = "await"
  arguments = { all = ["w"] }
  [[agents.steps]]
  [[agents.steps.calls]]
  tool = "shell"
  arguments = { command = "sleep 30" }
[[subagents]]
name = "cleaner"
  [[subagents.steps]]
  [[subagents.steps.calls]]
  tool = "clean"
  arguments = {}
)");
  auto c = config_from_toml(fmt::format("[conversation.tools.clean]\nsummary = \"Cleans\"\nrun = \"unattended\"\n"
                                        "command = {{ program = \"{}/examples/tools/confirm.sh\" }}\n",
                                        JP_SOURCE_DIR));
  CAF_REQUIRE(c.ok());
  c->workspace = ws.path.string();
  c->assistant.provider = "scripted";
  c->assistant.script = (ws.path / "script.toml").string();
  struct WaitingSeen : TurnObserver {
    std::promise<std::string> awaited;
    void tool_result(int, int, const std::string& tool, bool, const std::string& content, double) override {
      if (tool == "await")
        awaited.set_value(content);
    }
  };
  auto seen = std::make_shared<WaitingSeen>();
  auto awaited = seen->awaited.get_future();
  auto rt = std::make_unique<Runtime>(*c);
  {
    TurnHooks hooks;
    hooks.observer = seen;
    auto turn = rt->run_turn("go", hooks);
    auto said = get(std::move(awaited));
    CAF_CHECK(said.find(R"("state":"waiting")") != std::string::npos);
    CAF_MESSAGE(said);
  } // dropped in its second step
  auto ended = std::async(std::launch::async, [&] { rt.reset(); });
  bool in_time = ended.wait_for(hang_guard) == std::future_status::ready;
  CAF_CHECK(in_time);
  if (!in_time)
    std::_Exit(1); // the hung thread would keep the runner from ending at all
}

CAF_TEST(a runtime in a given actor system ends its handles before the system) {
  RuntimeActorConfig cfg;
  caf::actor_system sys{cfg};
  DrivenTool tool;
  {
    Runtime rt(config(), sys);
    CAF_REQUIRE(rt.add_function_tool(function_tool_config("work", "Works for a while", {}), tool.fn()));
    auto s = rt.session();
    get(s.spawn("work", "w", Json::object()));
    get(tool.started.get_future());
    get(s.spawn("shell", "hi", obj(R"({"command": "echo hi"})"), 0));
    auto awaited = parsed(get(s.await_all({"hi"}, 120)));
    auto* hi = completed(awaited, "hi");
    CAF_REQUIRE(hi != nullptr);
    CAF_CHECK_EQUAL(str(hi, "result"), "hi\n");
  } // the session, then the runtime, while the system runs on
  get(tool.aborted.get_future());
  CAF_CHECK_EQUAL(tool.aborts.load(), 1);
}

CAF_TEST(a runtime ends while a thread that made and used it still runs) {
  // An embedder's pool thread makes the runtime, starts a session and a turn, and
  // lives on; another thread ends the runtime. CAF leaves a thread that spawned an
  // actor holding its system's logger, which ~actor_system waits for.
  auto c = scripted(done_script);
  std::unique_ptr<Runtime> rt;
  std::promise<std::string> used;
  std::promise<void> release;
  std::thread pool_thread([&] {
    // No CAF_ macros here: they report from the test's own thread only.
    rt = std::make_unique<Runtime>(c);
    std::string outcome = "add_function_tool failed";
    if (add_adder(*rt)) {
      auto s = rt->session();
      auto sum = s.spawn("add", "sum", obj(R"({"a": 2, "b": 3})"));
      auto turn = rt->run_turn("go");
      auto& answer = turn.result();
      if (sum.wait_for(hang_guard) != std::future_status::ready ||
          answer.wait_for(hang_guard) != std::future_status::ready)
        outcome = "no answer within the hang guard";
      else if (auto r = sum.get(); !r.ok)
        outcome = "the spawn failed: " + r.content;
      else
        outcome = answer.get().answer;
    }
    used.set_value(outcome);
    release.get_future().wait();
  });
  CAF_CHECK_EQUAL(get(used.get_future()), "Done.");
  auto ended = std::async(std::launch::async, [&] { rt.reset(); });
  bool in_time = ended.wait_for(hang_guard) == std::future_status::ready;
  release.set_value();
  pool_thread.join();
  CAF_CHECK(in_time);
}

CAF_TEST(a runtime ends while an actor of another system that used it lives on) {
  // The embedder's own actors: one of them starts a session of a runtime that has
  // its own system, and runs on after the runtime ends.
  RuntimeActorConfig cfg;
  auto theirs = std::make_unique<caf::actor_system>(cfg);
  auto rt = std::make_unique<Runtime>(config());
  CAF_REQUIRE(add_adder(*rt));
  std::promise<bool> used;
  auto user = theirs->spawn([&](caf::event_based_actor*) -> caf::behavior {
    return {[&](int) {
      auto s = rt->session();
      used.set_value(true);
    }};
  });
  caf::anon_send(user, 1);
  CAF_CHECK(get(used.get_future()));
  auto ended = std::async(std::launch::async, [&] { rt.reset(); });
  bool in_time = ended.wait_for(hang_guard) == std::future_status::ready;
  caf::anon_send_exit(user, caf::exit_reason::user_shutdown);
  user = nullptr;
  theirs.reset(); // its workers end: a runtime's end that waited on them ends too
  CAF_CHECK(in_time);
}

CAF_TEST(a turn whose provider cannot be made fails with a code and the reason) {
  auto c = config();
  c.assistant.provider = "scripted";
  c.assistant.script.clear();
  Runtime rt(c);
  auto result = get(std::move(rt.run_turn("hello").result()));
  CAF_CHECK_EQUAL(to_string(result.outcome), std::string("failed"));
  CAF_CHECK(result.code == error_code::bad_arguments);
  CAF_CHECK(result.error.find("assistant.script") != std::string::npos);
  CAF_CHECK(result.error.find("TurnHooks::provider") != std::string::npos); // what a program can do
  // A key not there is the provider's missing key, as a key refused is (it was
  // bad_arguments: a program branching on the code misread it).
  auto keyless = config();
  keyless.assistant.provider = "openai";
  keyless.assistant.model = "gpt-x";
  keyless.assistant.api_key_env = "JP_EMBEDDING_TEST_NO_SUCH_KEY";
  ::unsetenv("JP_EMBEDDING_TEST_NO_SUCH_KEY");
  Runtime keyless_rt(keyless);
  auto unkeyed = get(std::move(keyless_rt.run_turn("hello").result()));
  CAF_CHECK_EQUAL(to_string(unkeyed.outcome), std::string("failed"));
  CAF_CHECK(unkeyed.code == error_code::provider_auth);
  CAF_CHECK(unkeyed.error.find("JP_EMBEDDING_TEST_NO_SUCH_KEY is not set") != std::string::npos);
}

CAF_TEST(a tool that asks in a turn without prompts is refused saying what the program can do) {
  auto c = scripted(R"(
[[agents]]
name = "main"
  [[agents.steps]]
  [[agents.steps.calls]]
  tool = "shell"
  arguments = { command = "echo ran" }
)");
  c.tools["shell"].run = run_mode::ask;
  Runtime rt(c);
  auto seen = std::make_shared<RecordedResults>();
  TurnHooks hooks;
  hooks.observer = seen;
  auto result = get(std::move(rt.run_turn("go", hooks).result()));
  CAF_CHECK_EQUAL(to_string(result.outcome), std::string("completed"));
  std::lock_guard lock(seen->mtx);
  CAF_REQUIRE_EQUAL(seen->contents.size(), 1u);
  CAF_CHECK_EQUAL(seen->contents[0],
                  "`shell` needs the user's permission to run (run = \"ask\") and this turn has no PromptBackend to "
                  "ask the user through (TurnHooks::prompts); nothing was run. Allow it with "
                  "TurnHooks::permissions.allowed holding \"shell\", or set conversation.tools.shell.run = "
                  "\"unattended\"");
}

CAF_TEST(an executor supplied for a tool runs its calls instead of a process) {
  Runtime rt(config());
  auto fake = function_handle_factory([](const Json& args, const Progress&) {
    return Invocation{FunctionResult::ready(ToolState::success("would run: " + args.find("command")->as_string()))};
  });
  CAF_REQUIRE(set_executor(rt, "shell", fake));
  CAF_CHECK_EQUAL(set_executor(rt, "nope", fake).error, "set_executor: no tool `nope` in this runtime's config");
  auto s = rt.session();
  auto r = get(s.call("shell", obj(R"({"command": "rm -rf /"})")));
  CAF_CHECK(r.ok);
  CAF_CHECK_EQUAL(r.content, "would run: rm -rf /");
}

CAF_TEST_FIXTURE_SCOPE_END()

namespace {

/// Whether `pid` is gone: no process, or one that died and waits to be reaped.
bool pid_gone(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line))
    return true;
  auto close = line.rfind(')');
  return close != std::string::npos && close + 2 < line.size() && line[close + 2] == 'Z';
}

/// The command line of `pid` ("" when gone).
std::string cmdline(pid_t pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/cmdline");
  return std::string(std::istreambuf_iterator<char>(f), {});
}

} // namespace

CAF_TEST(a runtime dropped inside its own callback says so and aborts rather than hang) {
  temp_dir ws;
  for (auto* mode : {"drop-in-callback", "drop-in-callback-given"}) {
    CAF_MESSAGE("mode " << mode);
    auto r = run_argv({JP_ENDING_EMBEDDER, mode}, ws.path.string());
    CAF_CHECK_EQUAL(r.status, 128 + SIGABRT);
    CAF_CHECK(r.out.find("the last jp::Runtime was destroyed inside one of its own callbacks") != std::string::npos);
  }
}

CAF_TEST(an embedder that ends without ending its runtime leaves no tool running) {
  // std::exit, a runtime never destroyed, an uncaught exception: the library's own
  // exit hooks kill the tools; a signal: the embedder's handler, with kill_all_tools.
  // `escaped`: ended properly, a process its tool left in a session of its own goes too.
  for (auto [mode, status] : {std::pair{"exit", 0}, std::pair{"leak", 0}, std::pair{"throw", 128 + SIGABRT},
                              std::pair{"signal", 128 + SIGTERM}, std::pair{"escaped", 0}}) {
    CAF_MESSAGE("mode " << mode);
    temp_dir ws;
    auto r = run_argv({JP_ENDING_EMBEDDER, mode}, ws.path.string());
    CAF_CHECK_EQUAL(r.status, status);
    std::istringstream said(r.out.substr(std::min(r.out.size(), r.out.find("pids "))));
    std::string word;
    pid_t background = 0, leader = 0;
    said >> word >> background >> leader;
    CAF_REQUIRE(background > 0 && leader > 0);
    // SIGKILL was sent before the embedder ended; its death may take a moment.
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (!(pid_gone(background) && pid_gone(leader)) && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    for (auto pid : {background, leader}) {
      CAF_CHECK(pid_gone(pid));
      if (!pid_gone(pid) && cmdline(pid).starts_with("sleep")) // the test's own to end
        ::kill(pid, SIGKILL);
    }
  }
}

