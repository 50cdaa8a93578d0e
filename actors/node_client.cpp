#include "actors/node_client.hpp"

#include <caf/all.hpp>
#include <caf/io/middleman.hpp>
#include <caf/openssl/manager.hpp>
#include <fmt/format.h>

#include "messages/atoms.hpp"
#include "messages/error_category.hpp"
#include "runtime/node/node_address.hpp"
#include "runtime/node/node_certificate_name.hpp"
#include "runtime/node/node_heartbeat.hpp"
#include "runtime/node/node_reach_failure.hpp"
#include "runtime/node/node_token.hpp"
#include "runtime/node/port_listener_owner.hpp"

namespace jp {

namespace {

struct node_client_state {
  NodeConfig node;
  node_session_actor session;                                              // none: not connected
  std::string key;                                                         // the session's
  std::vector<caf::typed_response_promise<caf::actor, std::string>> waiting; // opens while connecting
  caf::actor_addr opening; // the gate asked for a session: its loss answers the waiting
  static inline const char* name = "jp.node_client";
};

using node_client_t = node_client_actor::stateful_base<node_client_state>;

/// This side's [node] heartbeat_secs and timeout_secs, as its middleman was given them
/// (RuntimeActorConfig), for the node to check against its own.
NodeHeartbeat own_heartbeat(caf::actor_system& sys) {
  auto secs = [&](const char* key) {
    return std::chrono::duration<double>(caf::get_or(sys.config(), key, caf::timespan{0})).count();
  };
  return {secs("middleman.heartbeat-interval"), secs("middleman.connection-timeout")};
}

void answer_all(node_client_t* self, const caf::error& err) {
  auto waiting = std::move(self->state.waiting);
  self->state.waiting.clear();
  for (auto& rp : waiting) {
    if (err)
      rp.deliver(err);
    else
      rp.deliver(caf::actor_cast<caf::actor>(self->state.session), self->state.key);
  }
}

void connect(node_client_t* self) {
  auto& node = self->state.node;
  auto refused = [self](std::string why) { answer_all(self, make_error(error_code::bad_arguments, std::move(why))); };
  auto addr = node_address_to_reach(node);
  if (!addr)
    return refused(addr.error());
  if (!self->system().has_middleman())
    return refused(fmt::format("node `{}`: this runtime was started without networking", node.name));
  // With TLS the certificates authenticate both sides; without, the token does.
  bool tls = node.tls.enabled();
  if (tls && !self->system().has_openssl_manager()) {
    // Its files, when they are why (RuntimeActorConfig leaves TLS off for them).
    auto why = check_tls(node.tls, fmt::format("nodes.{}.tls", node.name));
    return refused(why.empty() ? fmt::format("node `{}` takes TLS, and this runtime was started without it", node.name)
                               : fmt::format("node `{}`: {}", node.name, why));
  }
  std::string token;
  if (!tls) {
    auto t = node_token(false);
    if (!t)
      return refused(fmt::format("node `{}`: {}", node.name, t.error()));
    token = std::move(*t);
  }
  // With TLS: the address the node's name resolves to, which its certificate must name.
  auto dial = addr->host;
  if (tls) {
    auto checked = dial_node_checking_name(addr->host, addr->port);
    if (!checked)
      return answer_all(self, make_error(error_code::node_unreachable,
                                         fmt::format("node `{}` ({}) cannot be reached: {}", node.name, addr->text(),
                                                     checked.error())));
    dial = std::move(*checked);
  }
  auto mm = tls ? self->system().openssl_manager().actor_handle() : self->system().middleman().actor_handle();
  self->request(mm, caf::infinite, caf::connect_atom::value, dial, addr->port)
    .then(
      [self, token, refused, port = addr->port](caf::node_id&, caf::strong_actor_ptr& gate_ptr, std::set<std::string>&) {
        auto gate = caf::actor_cast<node_gate_actor>(gate_ptr);
        if (!gate)
          return refused(fmt::format("node `{}` published no gate", self->state.node.name));
        if (!token.empty())
          if (auto ours = token_may_go_to(port); !ours)
            return refused(fmt::format("node `{}`: {}", self->state.node.name, ours.error));
        // CAF never answers a request whose connection dropped: the gate's loss does.
        self->state.opening = gate.address();
        self->monitor(gate);
        auto opened = [self, gate] {
          self->state.opening = caf::actor_addr{};
          self->demonitor(gate.address());
        };
        auto own = own_heartbeat(self->system());
        self->request(gate, caf::infinite, open_atom::value, token, caf::actor_cast<caf::actor>(self),
                      own.heartbeat_secs, own.timeout_secs)
          .then(
            [self, opened](caf::actor& session, std::string& key) {
              opened();
              self->state.session = caf::actor_cast<node_session_actor>(session);
              self->state.key = std::move(key);
              self->monitor(session); // lost with the node: the next open connects again
              answer_all(self, {});
            },
            [self, refused, opened](caf::error& err) {
              opened();
              // The node's own refusal (a token that does not match) is one; CAF's
              // (the gate gone, the connection dropped) is a node not reached.
              if (code_of(err) != error_code::none)
                return refused(error_text(err));
              answer_all(self, make_error(error_code::node_unreachable,
                                          fmt::format("node `{}` did not open a session: {}", self->state.node.name,
                                                      error_text(err))));
            });
      },
      [self, addr = *addr](caf::error& err) {
        auto failure = reach_failure(self->state.node, err, addr.host, addr.port);
        answer_all(self, make_error(failure.transient ? error_code::node_unreachable : error_code::bad_arguments,
                                    fmt::format("node `{}` ({}) {}", self->state.node.name, addr.text(),
                                                failure.text())));
      });
}

node_client_actor::behavior_type node_client(node_client_t* self, NodeConfig node, caf::actor_addr owner) {
  self->state.node = std::move(node);
  // The node holds this actor (its session watches it), so it goes with its owner,
  // not when the last handle here lets go.
  self->monitor(owner);
  self->set_down_handler([self, owner](caf::down_msg& dm) {
    if (dm.source == owner)
      self->quit();
    else if (dm.source == self->state.session.address())
      self->state.session = node_session_actor{};
    else if (dm.source == self->state.opening) {
      self->state.opening = caf::actor_addr{};
      answer_all(self, make_error(error_code::node_unreachable,
                                  fmt::format("node `{}` was lost while a session was opened there ({}); the next "
                                              "use connects again",
                                              self->state.node.name, error_text(dm.reason))));
    }
  });
  return {
    [self](open_atom) -> caf::result<caf::actor, std::string> {
      auto& st = self->state;
      if (st.session)
        return {caf::actor_cast<caf::actor>(st.session), st.key};
      auto rp = self->make_response_promise<caf::actor, std::string>();
      st.waiting.push_back(rp);
      if (st.waiting.size() == 1)
        connect(self);
      return rp;
    },
  };
}

} // namespace

node_client_actor spawn_node_client(caf::local_actor* owner, NodeConfig node) {
  return owner->spawn(node_client, std::move(node), owner->address());
}

} // namespace jp
