// refuse_new_processes and a spawn under way (issue 12, point 6): once it returns,
// every child a spawn_process call started is where kill_all_process_groups finds
// it. Before, the child of a spawn whose posix_spawn was in flight got its slot
// after the KILL and ran on. A runner of its own: the refusal lasts for the process.
#define CAF_SUITE spawn_refusal
#include <caf/test/unit_test.hpp>

#include <atomic>
#include <csignal>
#include <future>
#include <chrono>
#include <memory>
#include <thread>
#include <vector>

#include "actor_fixture.hpp"
#include "contains.hpp"
#include "real_runtime.hpp"
#include "messages/json_codec.hpp"
#include "runtime/process/io_thread.hpp"
#include "runtime/process/process.hpp"

using namespace jp;
using namespace jp::testing;

CAF_TEST(a spawn under way when new processes are refused is still killed) {
  IoThread io;
  // A command whose leader ends by the shutdown's TERM while the rest of its group
  // (ignoring TERM) still runs: those were not left behind by the command, and its
  // end says nothing of them (before, "the processes it left running").
  std::promise<ExitInfo> stubborn_end;
  std::promise<void> trapped;
  auto stubborn = spawn_process(
    io, SpawnSpec{.argv = {"sh", "-c", "(trap '' TERM; echo up; exec sleep 300) & sleep 300"}},
    ProcessEvents{.on_output = [&, said = std::make_shared<std::atomic<bool>>(false)](stream_kind, std::string_view) {
                    if (!said->exchange(true)) // "up"
                      trapped.set_value();
                  },
                  .on_exit = [&](const ExitInfo& e) { stubborn_end.set_value(e); }});
  CAF_REQUIRE(stubborn);
  trapped.get_future().wait();
  // Handles of a real registry that the shutdown's TERM ends before any turn's end:
  // one killed by it, one that exits 0 on it (a server's clean stop). The end lists
  // both (it listed neither: their stops came first, each taken for its own end).
  real_runtime rt;
  auto killed = rt.shell("exec sleep 300");
  killed.wait_ms = 0;
  auto clean = rt.shell("trap 'exit 0' TERM; echo up; sleep 300 & wait");
  clean.wait_ms = 0;
  CAF_REQUIRE_EQUAL(rt.ask<HandleReport>(rt.registry, spawn_atom::value, std::string("killed"), killed).second, "");
  CAF_REQUIRE_EQUAL(rt.ask<HandleReport>(rt.registry, spawn_atom::value, std::string("clean"), clean).second, "");
  CAF_REQUIRE(contains(rt.fetch_until("clean", [](const std::string& seen) { return contains(seen, "up"); }), "up"));
  std::atomic<size_t> started{0}, exited{0};
  std::vector<std::shared_ptr<Process>> handles; // the spawner's until joined; they kill what runs when dropped
  std::thread spawner([&] {
    for (;;) { // until refused
      auto p = spawn_process(io, SpawnSpec{.argv = {"sleep", "300"}},
                             ProcessEvents{.on_output = {}, .on_exit = [&](const ExitInfo&) { ++exited; }});
      if (!p)
        return;
      handles.push_back(*p);
      ++started;
    }
  });
  // Spawning at full speed: a spawn is nearly always under way.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (started < 20 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  refuse_new_processes();
  signal_all_process_groups(SIGTERM); // the shutdown's first signal
  auto end = stubborn_end.get_future().get();
  CAF_CHECK(end.signaled && end.signal == SIGTERM);
  CAF_CHECK_EQUAL(end.left_running, 0u);
  for (auto* id : {"killed", "clean"}) { // stopped before the end is asked
    rt.fetch_until(id, [](const std::string&) { return false; });
    auto [r, ferr] = rt.ask<HandleReport>(rt.registry, fetch_atom::value, std::string(id), LookOptions{0});
    CAF_REQUIRE(r.state.stopped());
  }
  auto [list, err] = rt.ask<std::vector<HandleSummary>>(rt.registry, turn_end_atom::value, InquiryAnswers{});
  CAF_CHECK_EQUAL(err, "");
  CAF_REQUIRE_EQUAL(list.size(), 2u);
  CAF_CHECK_EQUAL(list[0].id, "clean");
  CAF_CHECK_EQUAL(list[1].id, "killed");
  for (auto& h : list) {
    CAF_CHECK_EQUAL(std::string(to_string(h.outcome)), "abort");
    CAF_CHECK(h.state.stopped());
  }
  kill_all_process_groups(); // what a signal's shutdown does after the grace
  spawner.join();
  CAF_REQUIRE(started >= 20);
  // Every child was killed: each exits (bounded; a missed one would run 300 s).
  deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (exited < started && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  CAF_CHECK_EQUAL(exited.load(), started.load());
}

// After the test above, which spawns before it refuses: the refusal lasts for the runner.
CAF_TEST_FIXTURE_SCOPE(after_refusal, registry_fixture)

CAF_TEST(a handle a signal s shutdown ended before the turn s end came is listed by that end) {
  // The shutdown TERMs every group as it stops the turns: a handle whose stop reached
  // the registry before the turn's end did was left out of the end's list (`turn_end`
  // said no handle), and listed when the end came first.
  refuse_new_processes(); // as the shutdown does first (for the rest of this runner)
  ask<HandleReport>(registry, spawn_atom::value, std::string("x"), LaunchSpec{});
  ask<HandleReport>(registry, spawn_atom::value, std::string("own"), LaunchSpec{});
  // Stopped by no abort of the registry's, and not by itself.
  anon_send(handles.at("x"), abort_atom::value);
  finish("own", "done"); // its own end: none of the turn's end's
  settle();
  auto [list, err] = ask<std::vector<HandleSummary>>(registry, turn_end_atom::value, InquiryAnswers{});
  CAF_CHECK_EQUAL(err, "");
  CAF_REQUIRE_EQUAL(list.size(), 1u);
  CAF_CHECK_EQUAL(list[0].id, "x");
  CAF_CHECK_EQUAL(std::string(to_string(list[0].outcome)), "abort");
  CAF_CHECK(list[0].state.stopped() && !list[0].state.ok);
}

CAF_TEST_FIXTURE_SCOPE_END()
