// A turn over a real runtime (default config, the test's temp dir as the workspace),
// and the calls a test makes through it as an assistant would.
#pragma once

#include "real_runtime.hpp"

#include "actors/turn_actor.hpp"
#include "config/config_loader.hpp"
#include "messages/call_result.hpp"
#include "messages/notification.hpp"
#include "tools/builtin_tools.hpp"

namespace jp::testing {

struct real_turn : real_runtime {
  turn_actor turn;
  real_turn() {
    auto config = default_config();
    config.workspace = dir.path.string();
    turn = spawn_turn(sys, TurnContext{std::make_shared<const Config>(std::move(config)), &io});
  }
  ~real_turn() { self->send_exit(turn, caf::exit_reason::user_shutdown); }

  void notify(std::string name, std::string handle, std::string message) {
    self->send(turn, notify_atom::value, Notification{"tool", std::move(name), "info", std::move(message), std::move(handle)});
  }
  CallResult call(const std::string& tool, const std::string& args) {
    return ask<CallResult>(turn, call_atom::value, tool, args).first;
  }
};

} // namespace jp::testing
