#include "runtime/cli/nodes_command.hpp"

#include <caf/all.hpp>
#include <caf/io/middleman.hpp>
#include <caf/openssl/manager.hpp>
#include <cstdio>
#include <fmt/format.h>

#include "actors/interfaces.hpp"
#include "messages/error_category.hpp"
#include "messages/terminal_safe.hpp"
#include "messages/json_codec.hpp"
#include "runtime/actor_config.hpp"
#include "runtime/node/node_address.hpp"
#include "runtime/node/node_certificate_name.hpp"
#include "runtime/node/node_reach_failure.hpp"
#include "runtime/node/node_token.hpp"
#include "runtime/node/port_listener_owner.hpp"

namespace jp {

namespace {

// Long enough for a node under load; short enough that an unreachable one does
// not hold the listing up.
constexpr auto reach_timeout = std::chrono::seconds(5);

struct NodeStatus {
  std::string status;
  std::vector<HandleSummary> handles;
  bool reached = false; // it answered with its handles
};

NodeStatus ask_node(caf::actor_system& sys, caf::scoped_actor& self, const NodeConfig& node) {
  auto addr = node_address_to_reach(node);
  if (!addr)
    return {addr.error(), {}};
  std::string token;
  if (!node.tls.enabled()) {
    auto t = node_token(false);
    if (!t)
      return {t.error(), {}};
    token = *t;
  }
  if (node.tls.enabled() && !sys.has_openssl_manager()) // its files changed since checked
    return {check_tls(node.tls, "nodes." + node.name + ".tls"), {}};
  auto dial = addr->host;
  if (node.tls.enabled()) {
    auto checked = dial_node_checking_name(addr->host, addr->port);
    if (!checked)
      return {"unreachable: " + checked.error(), {}};
    dial = std::move(*checked);
  }
  auto mm = node.tls.enabled() ? sys.openssl_manager().actor_handle() : sys.middleman().actor_handle();
  NodeStatus out;
  self->request(mm, reach_timeout, caf::connect_atom::value, dial, addr->port)
    .receive(
      [&](caf::node_id&, caf::strong_actor_ptr& gate_ptr, std::set<std::string>&) {
        auto gate = caf::actor_cast<node_gate_actor>(gate_ptr);
        if (!gate) {
          out.status = "reachable, but it published no gate";
          return;
        }
        if (!token.empty())
          if (auto ours = token_may_go_to(addr->port); !ours) {
            out.status = "refused: " + ours.error;
            return;
          }
        self->request(gate, reach_timeout, list_atom::value, token)
          .receive(
            [&](std::vector<HandleSummary>& hs) {
              out.status = fmt::format("reachable, {} handle{} running", hs.size(), hs.size() == 1 ? "" : "s");
              out.reached = true;
              out.handles = std::move(hs);
            },
            [&](caf::error& err) { out.status = "reachable, but: " + error_text(err); });
      },
      [&](caf::error& err) {
        auto failure = reach_failure(node, err, addr->host, addr->port);
        out.status = failure.transient ? "unreachable: " + failure.why : "refused: it " + failure.text();
      });
  return out;
}

} // namespace

int list_nodes(std::shared_ptr<const Config> config) {
  if (config->nodes.empty()) {
    std::printf("no nodes configured: add [nodes.NAME] address = \"host:port\" to your config\n");
    return 0;
  }
  if (auto why = check_node_tls(*config); !why.empty()) {
    std::fprintf(stderr, "jp-actors: %s\n", shown_on(STDERR_FILENO, why).c_str());
    return 1;
  }
  const TlsConfig* tls = nullptr;
  for (auto& [name, node] : config->nodes)
    if (node.tls.enabled())
      tls = &node.tls;
  RuntimeActorConfig cfg{config->runtime.worker_threads, &config->node, tls};
  caf::actor_system sys{cfg};
  caf::scoped_actor self{sys};
  int rc = 0; // 1 when a node did not answer: a script's check sees it
  for (auto& [name, node] : config->nodes) {
    auto st = ask_node(sys, self, node);
    if (!st.reached)
      rc = 1;
    std::printf("%s  %s  (%s)  %s\n", name.c_str(), node.address.c_str(), node.tls.enabled() ? "tls" : "token",
                st.status.c_str());
    for (auto& h : st.handles)
      std::printf("  %s  %s  %s  %.1f s%s%s\n", h.id.c_str(), h.tool.c_str(), std::string(to_string(h.state.kind)).c_str(),
                  h.elapsed_secs, h.progress.last_line.empty() ? "" : "  ", cut_text(h.progress.last_line, 100).c_str());
  }
  return rc;
}

} // namespace jp
