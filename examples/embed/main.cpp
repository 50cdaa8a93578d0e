// jp-actors embedded: a turn in this program's own actor system runs a process tool
// as a handle -- spawn it, await it, print what the assistant would see.
// (Issue 15's public API, <jp/jp.hpp>, will make this shorter.)
#include <caf/all.hpp>
#include <cstdio>
#include <string>

#include <jp/actors/turn_actor.hpp>
#include <jp/messages/atoms.hpp>
#include <jp/messages/call_result.hpp>
#include <jp/runtime/actor_config.hpp>
#include <jp/runtime/process/io_thread.hpp>
#include <jp/tools/builtin_tools.hpp>

int main() {
  auto config = std::make_shared<const jp::Config>(jp::default_config());
  jp::IoThread io; // children's pipes and exits
  jp::RuntimeActorConfig cfg;
  caf::actor_system sys{cfg};
  auto turn = jp::spawn_turn(sys, jp::TurnContext{config, &io, {}});
  caf::scoped_actor self{sys};
  int failures = 0;
  auto call = [&](const std::string& tool, const std::string& args) {
    self->request(turn, caf::infinite, jp::call_atom::value, tool, args)
      .receive(
        [&](jp::CallResult& r) {
          std::printf("%s %s -> %s\n", tool.c_str(), args.c_str(), r.content.c_str());
          failures += !r.ok;
        },
        [&](caf::error& e) {
          std::printf("%s failed: %s\n", tool.c_str(), caf::to_string(e).c_str());
          ++failures;
        });
  };
  call("shell", R"({"action":"spawn","id":"hello","command":"echo hello from an embedded jp-actors"})");
  call("await", R"({"all":["hello"],"timeout_secs":30})");
  self->send_exit(turn, caf::exit_reason::user_shutdown);
  return failures == 0 ? 0 : 1;
}
