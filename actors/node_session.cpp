#include "actors/node_session.hpp"

#include <caf/all.hpp>
#include <fmt/format.h>

#include "actors/registry_actor.hpp"
#include "messages/atoms.hpp"
#include "messages/error_category.hpp"
#include "runtime/process/io_thread.hpp"
#include "tools/argument_validation.hpp"
#include "tools/launch.hpp"
#include "tools/permission.hpp"

namespace jp {

namespace {

struct node_session_state {
  std::shared_ptr<const Config> config;
  registry_actor registry;
  caf::actor_addr client;
  // Which remote handle (the watcher given at spawn) owns each id: one gone while its
  // handle runs has that handle aborted. By id, so that a watcher of a reused id,
  // gone late, does not end the new owner's handle.
  std::map<std::string, caf::actor_addr> owners;
  static inline const char* name = "jp.node_session";
};

using node_session_t = node_session_actor::stateful_base<node_session_state>;

/// The launch spec of `tool` on this node for `args_json`, or why it is refused.
Result<LaunchSpec> node_spec(const Config& config, const std::string& tool_name, const std::string& args_json) {
  auto it = config.tools.find(tool_name);
  if (it == config.tools.end() || (it->second.source != "local" && it->second.source != "builtin")) {
    std::vector<std::string> names;
    for (auto& [n, t] : config.tools)
      if (t.source == "local" || n == "shell")
        names.push_back(n);
    return Error{fmt::format("this node has no tool `{}`; it runs: {}", cut_text(tool_name), fmt::join(names, ", "))};
  }
  auto& tool = it->second;
  if (tool.source == "builtin" && tool.name != "shell")
    return Error{fmt::format("`{}` is a built-in of the client's own runtime, not a tool a node runs", tool.name)};
  // Nobody can be asked here: what would ask is refused, naming the node's key.
  auto decision = decide_permission(tool, action_kind::spawn, PermissionPolicy{true, {}}, {});
  if (decision.kind != permission_kind::run)
    return Error{fmt::format("this node does not run `{}` for clients: its config says "
                             "conversation.tools.{}.run = \"{}\" and nobody can be asked on a node; set "
                             "it to \"unattended\" in the node's config to allow it",
                             tool.name, tool.name, to_string(tool.run))};
  auto args = Json::parse(args_json, duplicate_keys::refuse);
  if (!args || !args->is_object())
    return Error{fmt::format("{}: the arguments are not a JSON object", tool.name)};
  if (auto ok = validate_arguments(tool, *args); !ok)
    return Error{ok.error};
  return make_launch_spec(config, tool, *args, Json::object(), true);
}

node_session_actor::behavior_type node_session(node_session_t* self, std::shared_ptr<const Config> config,
                                               IoThread* io, caf::actor client) {
  self->state.config = std::move(config);
  self->state.registry = spawn_registry(self->system(), process_handle_factory(*io));
  self->link_to(self->state.registry);
  // The client gone: each handle gets its turn-end policy, then the session ends.
  self->state.client = client.address();
  self->monitor(client);
  self->set_down_handler([self](caf::down_msg& dm) {
    auto& st = self->state;
    if (dm.source != st.client) {
      // A remote handle gone: its handle here is aborted (nothing if it stopped).
      for (auto it = st.owners.begin(); it != st.owners.end(); ++it)
        if (it->second == dm.source) {
          self->request(st.registry, caf::infinite, abort_atom::value, it->first)
            .then([](HandleReport&) {}, [](caf::error&) {});
          st.owners.erase(it);
          break;
        }
      return;
    }
    self->request(st.registry, caf::infinite, turn_end_atom::value, InquiryAnswers{})
      .then([self](std::vector<HandleSummary>&) { self->quit(); }, [self](caf::error&) { self->quit(); });
  });
  return {
    [self](spawn_atom, const std::string& id, const std::string& tool, const std::string& args,
           caf::actor watcher) -> caf::result<HandleReport> {
      auto spec = node_spec(*self->state.config, tool, args);
      if (!spec)
        return make_error(error_code::bad_arguments, spec.error());
      auto rp = self->make_response_promise<HandleReport>();
      auto registry = self->state.registry;
      LookOptions now;
      now.wait_ms = 0;
      self->request(registry, caf::infinite, spawn_atom::value, id, *spec, now)
        .then(
          [self, rp, registry, id, watcher](HandleReport& r) mutable {
            // Spawned: its remote handle owns it from now on.
            if (watcher) {
              self->state.owners[id] = watcher.address();
              self->monitor(watcher);
            }
            // The watcher hears of every change from now on; a stop that came first
            // is in the watch's answer.
            auto w = caf::actor_cast<watcher_actor>(watcher);
            self->request(registry, caf::infinite, watch_atom::value, std::vector<std::string>{id}, w)
              .then(
                [self, w](std::vector<HandleStatus>& now) {
                  for (auto& s : now)
                    if (s.state.stopped())
                      self->send(w, update_atom::value, s);
                },
                [](caf::error&) {});
            rp.deliver(std::move(r));
          },
          [rp](caf::error& err) mutable { rp.deliver(std::move(err)); });
      return rp;
    },
    [self](fetch_atom, const std::string& id, const LookOptions& look) -> caf::result<HandleReport> {
      self->delegate(self->state.registry, fetch_atom::value, id, look);
      return caf::delegated<HandleReport>{};
    },
    [self](apply_atom, const std::string& id, const std::string& input,
           const LookOptions& look) -> caf::result<HandleReport> {
      self->delegate(self->state.registry, apply_atom::value, id, input, look);
      return caf::delegated<HandleReport>{};
    },
    [self](abort_atom, const std::string& id) -> caf::result<HandleReport> {
      self->delegate(self->state.registry, abort_atom::value, id);
      return caf::delegated<HandleReport>{};
    },
    [self](list_atom) -> caf::result<std::vector<HandleSummary>> {
      self->delegate(self->state.registry, list_atom::value);
      return caf::delegated<std::vector<HandleSummary>>{};
    },
  };
}

} // namespace

node_session_actor spawn_node_session(caf::actor_system& sys, std::shared_ptr<const Config> config, IoThread& io,
                                      caf::actor client) {
  return sys.spawn(node_session, std::move(config), &io, std::move(client));
}

} // namespace jp
