#include "actors/node_gate.hpp"

#include <algorithm>
#include <caf/all.hpp>
#include <cstdio>
#include <fmt/format.h>

#include "actors/node_session.hpp"
#include "messages/atoms.hpp"
#include "messages/error_category.hpp"
#include "runtime/process/io_thread.hpp"
#include "runtime/node/node_heartbeat.hpp"
#include "runtime/node/node_refusal_log.hpp"
#include "runtime/node/node_token.hpp"
#include "runtime/process/private_file.hpp"

namespace jp {

namespace {

struct gate_state {
  std::shared_ptr<const Config> config;
  IoThread* io = nullptr;
  std::shared_ptr<NodeStopping> stopping;
  std::string token;
  std::vector<std::pair<node_session_actor, std::string>> sessions; // live ones, with their keys
  int refusals = 0; // of clients whose token did not match (told on stderr: refused())
  static inline const char* name = "jp.node_gate";
};

using gate_t = node_gate_actor::stateful_base<gate_state>;

/// The node's log says so too (its TLS refusals are, by node_handshake_report).
caf::error refused(gate_t* self, const char* what) {
  tell_refusal(++self->state.refusals,
               fmt::format("refused {} of a client whose token does not match the node's", what),
               "refused {} sessions or lists of clients whose token did not match");
  return make_error(error_code::bad_arguments,
                    fmt::format("the node refused {}: the token does not match the node's (a client on the node's "
                                "machine, as the node's user, reads it from the node-token file in "
                                "$XDG_STATE_HOME/jp-actors)",
                                what));
}

node_gate_actor::behavior_type gate(gate_t* self, std::shared_ptr<const Config> config, IoThread* io,
                                    std::shared_ptr<NodeStopping> stopping, std::string token) {
  auto& st = self->state;
  st.config = std::move(config);
  st.io = io;
  st.stopping = std::move(stopping);
  st.token = std::move(token);
  self->set_down_handler([self](caf::down_msg& dm) {
    auto& ss = self->state.sessions;
    ss.erase(std::remove_if(ss.begin(), ss.end(), [&](auto& s) { return s.first.address() == dm.source; }),
             ss.end());
  });
  return {
    [self](open_atom, const std::string& shown, caf::actor client, double client_heartbeat,
           double client_timeout) -> caf::result<caf::actor, std::string> {
      auto& st = self->state;
      if (!st.token.empty() && !same_token(shown, st.token))
        return refused(self, "the session");
      if (!client)
        return make_error(error_code::bad_arguments, "the node refused the session: no client to watch");
      if (auto why = heartbeat_mismatch({st.config->node.heartbeat_secs, st.config->node.timeout_secs},
                                        {client_heartbeat, client_timeout});
          !why.empty())
        return make_error(error_code::bad_arguments, "the node refused the session: " + why);
      auto key = random_name_part() + random_name_part(); // 128 bits
      auto session = spawn_node_session(self->system(), st.config, *st.io, st.stopping, std::move(client), key);
      self->monitor(session);
      st.sessions.emplace_back(session, key);
      return {caf::actor_cast<caf::actor>(session), key};
    },
    [self](list_atom, const std::string& shown) -> caf::result<std::vector<HandleSummary>> {
      auto& st = self->state;
      if (!st.token.empty() && !same_token(shown, st.token))
        return refused(self, "the list");
      if (st.sessions.empty())
        return std::vector<HandleSummary>{};
      // Every session's running handles, together.
      auto rp = self->make_response_promise<std::vector<HandleSummary>>();
      auto all = std::make_shared<std::vector<HandleSummary>>();
      auto left = std::make_shared<size_t>(st.sessions.size());
      auto one_done = [rp, all, left]() mutable {
        if (--*left == 0)
          rp.deliver(std::move(*all));
      };
      for (auto& [s, key] : st.sessions)
        self->request(s, caf::infinite, list_atom::value, key)
          .then(
            [all, one_done](std::vector<HandleSummary>& hs) mutable {
              all->insert(all->end(), hs.begin(), hs.end());
              one_done();
            },
            [one_done](caf::error&) mutable { one_done(); });
      return rp;
    },
  };
}

} // namespace

node_gate_actor spawn_node_gate(caf::actor_system& sys, std::shared_ptr<const Config> config, IoThread& io,
                                std::shared_ptr<NodeStopping> stopping, std::string token) {
  return sys.spawn(gate, std::move(config), &io, std::move(stopping), std::move(token));
}

} // namespace jp
