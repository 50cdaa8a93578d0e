#include "runtime/cli/node_command.hpp"

#include <caf/all.hpp>
#include <caf/io/middleman.hpp>
#include <caf/openssl/publish.hpp>
#include <cstdio>
#include <fmt/format.h>
#include <unistd.h>

#include "actors/node_gate.hpp"
#include "actors/node_stopping.hpp"
#include "messages/error_category.hpp"
#include "messages/terminal_safe.hpp"
#include "runtime/actor_config.hpp"
#include "runtime/cli/command_failure.hpp"
#include "runtime/cli/node_handshake_report.hpp"
#include "runtime/cli/signal_shutdown.hpp"
#include "runtime/node/loopback_peer_check.hpp"
#include "runtime/node/node_address.hpp"
#include "runtime/node/node_token.hpp"
#include "runtime/process/io_thread.hpp"

namespace jp {

namespace {

int fail(const std::string& reason) {
  return command_failed(reason, "node");
}

} // namespace

Config node_served_config(const Config& config, const std::set<std::string>& allow) {
  Config served = config;
  for (auto& [name, tool] : served.tools) {
    bool allowed = allow.count(name) > 0;
    auto apply = [&](run_mode& mode) {
      if (allowed && mode == run_mode::ask)
        mode = run_mode::unattended;
      else if (!allowed && tool.shaped_by_workspace && mode == run_mode::unattended)
        mode = run_mode::ask; // refused on a node, saying why (node_refusal)
    };
    apply(tool.run);
    for (auto& [action, mode] : tool.action_permissions)
      apply(mode);
    // A tool's node is where its clients send it (a config shared with them says so):
    // here is that place, and it runs here.
    tool.node.clear();
  }
  return served;
}

int run_node(std::shared_ptr<const Config> given, const std::string& listen, const std::set<std::string>& allow) {
  auto config = std::make_shared<const Config>(node_served_config(*given, allow));
  auto addr = parse_listen_address(listen.empty() ? config->node.listen : listen,
                                   listen.empty() ? "node.listen" : "--listen");
  if (!addr)
    return fail(addr.error());
  auto& tls = config->node.tls;
  if (tls.enabled()) {
    if (auto why = check_tls(tls, "node.tls"); !why.empty())
      return fail(why);
  } else if (!is_loopback(addr->host)) {
    return fail(fmt::format("refusing to listen on {}: off loopback a node requires mutual TLS ([node.tls] "
                            "certificate, key and ca), and CAF's unauthenticated TLS fallback is never used; "
                            "set them, or listen on 127.0.0.1",
                            addr->text()));
  }
  // Plain transport (loopback): only a client of this user, who can read the token,
  // gets in. With TLS the client's certificate is checked against the CA instead.
  std::string token;
  if (!tls.enabled()) {
    auto t = node_token(true);
    if (!t)
      return fail(t.error());
    token = *t;
  }
  // Before anyone can connect: another user's connection from loopback is closed
  // at once (before its token, and before CAF's own messages reach an actor).
  if (auto ok = admit_only_this_users_loopback_peers(); !ok)
    return fail(ok.error);
  IoThread io{io_poll(config->runtime)};
  install_signal_shutdown(config->runtime.abort_grace_secs);
  install_crash_cleanup();
  RuntimeActorConfig cfg{config->runtime.worker_threads, &config->node, tls.enabled() ? &tls : nullptr};
  if (tls.enabled() && !cfg.tls_pinned) // changed since checked above
    return fail(cfg.tls_refused);
  caf::actor_system sys{cfg};
  auto stopping = std::make_shared<NodeStopping>();
  auto gate = spawn_node_gate(sys, config, io, stopping, token);
  auto port = tls.enabled() ? caf::openssl::publish(gate, addr->port, addr->host.c_str(), true)
                            : sys.middleman().publish(gate, addr->port, addr->host.c_str(), true);
  if (!port) {
    caf::anon_send_exit(gate, caf::exit_reason::user_shutdown);
    auto why = why_cannot_bind(*addr);
    return fail(fmt::format("cannot listen on {}: {}", addr->text(), why.empty() ? error_text(port.error()) : why));
  }
  addr->port = *port;
  if (tls.enabled())
    report_refused_handshakes();
  std::printf("jp-actors node: listening on %s\n", addr->text().c_str());
  std::fflush(stdout);
  // Until a signal: its shutdown ends the tools (TERM, grace, KILL), then the
  // process, once the sessions told their clients of each tool's end (bounded by
  // the grace: await_signal_shutdown).
  StopOnSignal stop_on_signal{[stopping] { stopping->begin(); }};
  stopping->wait_passed_on();
  await_signal_shutdown();
  for (;;)
    ::pause();
}

} // namespace jp
