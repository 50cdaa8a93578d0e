// An embedder that ends without ending its runtime: `exit` (std::exit), `leak` (returns
// from main, the runtime never destroyed), `throw` (an uncaught exception) or `signal`
// (its own SIGTERM handler calls jp::kill_all_tools() and dies of the signal); or
// `escaped` (ends properly, its tool having left a process of its own session);
// `drop-in-callback` (and `-given`, on an actor system of its own), which destroys its last
// runtime inside one of its callbacks. Its tool
// prints the pids of two processes of its group, which this prints before it ends;
// tests/embedding_api_test.cpp checks they are gone once it is.
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <memory>
#include <stdexcept>
#include <string>
#include <unistd.h>

#include <caf/actor_system.hpp>
#include <jp/jp.hpp>
#include "runtime/actor_config.hpp"

#include "tests/program_assert.hpp"

// Never destroyed; held here, where a leak checker sees them still reachable.
jp::Runtime* rt = nullptr;
jp::Session* session = nullptr;

int main(int argc, char** argv) {
  std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "drop-in-callback") {
    // The last Runtime dropped in a callback: its end would wait for the callback's
    // own thread. It must say so (and abort), not hang. What it says goes to stdout,
    // which the test reads.
    ::dup2(1, 2);
    auto* own = new jp::Runtime(jp::builtin_config());
    auto* s = new jp::Session(own->session());
    std::promise<void> never;
    s->call("shell", *jp::Json::parse(R"({"command":"true"})"), [&](jp::CallResult) {
      delete s;
      delete own;
      never.set_value();
    });
    never.get_future().wait();
    return 0;
  }
  if (mode == "drop-in-callback-given") {
    // The same with an actor system of the program's own (one worker: a wait there
    // waited for good, unsaid).
    ::dup2(1, 2);
    auto* cfg = new jp::RuntimeActorConfig(1);
    auto* sys = new caf::actor_system(*cfg);
    auto* own = new jp::Runtime(jp::builtin_config(), *sys);
    auto* s = new jp::Session(own->session());
    std::promise<void> never;
    // Answered by the turn on a worker of that system (a process's end is told on
    // the io thread, where the check was already).
    s->call("describe_tools", jp::Json::object(), [&](jp::CallResult) {
      delete s;
      delete own;
      never.set_value();
    });
    never.get_future().wait();
    return 0;
  }
  if (mode == "escaped") {
    // Ended as it should be, its runtime destroyed; its tool left a process of its
    // own session behind (setsid: out of the tool's group) and exited.
    auto own = std::make_unique<jp::Runtime>(jp::builtin_config());
    auto s = own->session();
    auto r = s.call("shell", *jp::Json::parse(R"({"command":"setsid sh -c 'echo $$ > escaped.pid; exec sleep 302' >/dev/null 2>&1 & until [ -s escaped.pid ]; do sleep 0.01; done; echo \"pids $(cat escaped.pid) $$\""})"))
               .get();
    PROGRAM_ASSERT(r.ok && r.content.find("pids ") != std::string::npos);
    std::printf("%s\n", r.content.c_str());
    std::fflush(stdout);
    return 0;
  }
  rt = new jp::Runtime(jp::builtin_config());
  session = new jp::Session(rt->session());
  // One write: the look that answers the spawn holds both.
  auto params = jp::Json::parse(R"({"command":"sleep 301 & echo \"pids $! $$\"; exec sleep 300"})");
  auto spawned = session->spawn("shell", "sleepers", *params, 20000).get();
  PROGRAM_ASSERT(spawned.ok);
  auto state = jp::Json::parse(spawned.content);
  PROGRAM_ASSERT(state.ok());
  auto* content = state->find("content");
  // Both pids, running: else the test would check nothing.
  PROGRAM_ASSERT(content && content->is_string() && content->as_string().find("pids ") != std::string::npos);
  std::printf("%s\n", content->as_string().c_str());
  std::fflush(stdout);
  if (mode == "exit")
    std::exit(0);
  if (mode == "throw")
    throw std::runtime_error("not caught");
  if (mode == "signal") {
    std::signal(SIGTERM, [](int sig) {
      jp::kill_all_tools();
      std::signal(sig, SIG_DFL);
      std::raise(sig);
    });
    std::raise(SIGTERM);
  }
  return 0; // `leak`
}
