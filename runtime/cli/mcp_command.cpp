#include "runtime/cli/mcp_command.hpp"

#include "actors/mcp_tools.hpp"

#include <caf/all.hpp>
#include <cstdio>
#include <iostream>
#include <mutex>
#include <string>

#include "actors/mcp_server.hpp"
#include "actors/turn_actor.hpp"
#include "messages/error_category.hpp"
#include "runtime/actor_config.hpp"
#include "runtime/cli/signal_shutdown.hpp"
#include "runtime/process/io_thread.hpp"

namespace jp {

int run_mcp(std::shared_ptr<const Config> config, PermissionPolicy permissions) {
  IoThread io;
  auto mcp = start_mcp_tools(config, io); // an MCP server's tools are served on too
  config = mcp.config;
  install_signal_shutdown(config->runtime.abort_grace_secs);
  // stdout is the protocol's: one message per line, whole, in the order sent.
  auto out = std::make_shared<std::mutex>();
  auto write = [out](const std::string& line) {
    std::lock_guard lock(*out);
    std::fwrite(line.data(), 1, line.size(), stdout);
    std::fputc('\n', stdout);
    std::fflush(stdout);
  };
  RuntimeActorConfig cfg{config->runtime.worker_threads, uses_nodes(*config) ? &config->node : nullptr,
                         client_tls(*config)};
  caf::actor_system sys{cfg};
  // The calls are a model's: permissions apply, asked through the client if it can.
  auto make_turn = [&sys, &io, &mcp, config, permissions](AskPermission ask) {
    TurnContext ctx;
    ctx.config = config;
    ctx.io = &io;
    ctx.executors = mcp.executors;
    ctx.permissions = permissions;
    ctx.ask_permission = std::move(ask);
    ctx.agent = "mcp";
    return spawn_turn(sys, std::move(ctx));
  };
  auto server = spawn_mcp_server(sys, make_turn, config, write);
  std::string line;
  while (std::getline(std::cin, line))
    if (line.find_first_not_of(" \t\r") != std::string::npos)
      caf::anon_send(server, message_atom::value, line);
  // The session is over: what still runs gets its turn-end policy.
  int rc = 0;
  caf::scoped_actor self{sys};
  self->request(server, caf::infinite, turn_end_atom::value)
    .receive([](std::vector<HandleSummary>&, std::string&) {},
             [&rc](caf::error& err) {
               std::fprintf(stderr, "jp-actors: mcp: ending the session's handles failed: %s\n",
                            error_text(err).c_str());
               rc = 1;
             });
  caf::anon_send_exit(server, caf::exit_reason::user_shutdown); // and its turn with it
  return rc;
}

} // namespace jp
