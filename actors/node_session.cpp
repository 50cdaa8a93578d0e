#include "actors/node_session.hpp"

#include <algorithm>
#include <chrono>
#include <caf/all.hpp>
#include <set>
#include <fmt/format.h>

#include "actors/node_stopping.hpp"
#include "actors/registry_actor.hpp"
#include "messages/atoms.hpp"
#include "messages/error_category.hpp"
#include "messages/json_codec.hpp"
#include "runtime/node/node_token.hpp"
#include "runtime/process/io_thread.hpp"
#include "tools/argument_validation.hpp"
#include "tools/launch.hpp"
#include "tools/permission.hpp"

namespace jp {

namespace {

/// How many of the session's handles the node's shutdown waits for: those watched
/// whose stop is not passed on yet; let go with the session.
struct WatchCount {
  std::shared_ptr<NodeStopping> stopping;
  int n = 0;
  void add(int delta) {
    n += delta;
    stopping->watching(delta);
  }
  ~WatchCount() {
    if (stopping && n != 0)
      stopping->watching(-n);
  }
};

struct node_session_state {
  std::shared_ptr<const Config> config;
  WatchCount watched;
  std::string key; // every message carries it
  registry_actor registry;
  caf::actor client;
  std::map<std::string, watcher_actor> watchers; // the client's remote handle of each id
  // Which remote handle (the watcher given at spawn) owns each id: one gone while its
  // handle runs has that handle aborted. By id, so that a watcher of a reused id,
  // gone late, does not end the new owner's handle.
  std::map<std::string, caf::actor_addr> owners;
  std::map<std::string, std::string> tools; // the tool of each id spawned: its permissions
  std::set<std::string> starting;           // ids whose spawn is not answered yet
  // Ids whose owner went while the id was being spawned again: if that spawn is
  // refused (the old handle still runs), the old handle has no owner left.
  std::set<std::string> orphaned;
  // Ids spawned whose first fetch (the spawn's own look) is not in yet, with when
  // that look must have ended: a spawn waits kMaxWaitMs at most.
  std::map<std::string, std::chrono::steady_clock::time_point> spawn_looks;
  static inline const char* name = "jp.node_session";
};

// Besides the session's interface: its registry's watch updates, passed on.
using session_impl = node_session_actor::extend<caf::reacts_to<update_atom, HandleStatus>>;
using node_session_t = session_impl::stateful_base<node_session_state>;

caf::error not_this_session() {
  return make_error(error_code::bad_arguments,
                    "the node refused the message: it does not carry the session's key (open a session at the "
                    "node's gate first)");
}

/// Asks the registry and answers the client itself: a delegated request would be
/// answered by the registry, whose handle would then reach the client.
template <class T, class... Ts>
caf::result<T> relay(node_session_t* self, Ts... xs) {
  auto rp = self->make_response_promise<T>();
  self->request(self->state.registry, caf::infinite, xs...)
    .then(
      [self, rp](T& r) mutable {
        if constexpr (std::is_same_v<T, HandleReport>)
          r.state = self->state.watched.stopping->as_told(std::move(r.state));
        rp.deliver(std::move(r));
      },
      [rp](caf::error& err) mutable { rp.deliver(std::move(err)); });
  return rp;
}

/// The session watches handle `id` for watcher `w` no more (no stop of it is left to
/// pass on); nothing when another watcher holds the id now.
void stop_watching(node_session_t* self, const std::string& id, const watcher_actor& w) {
  auto& st = self->state;
  if (auto it = st.watchers.find(id); it != st.watchers.end() && it->second == w) {
    st.watchers.erase(it);
    st.watched.add(-1);
  }
}

/// Tells watcher `w` of handle `s.id`'s stop, as the client is told of it; the
/// session watches it no more.
void pass_on_stop(node_session_t* self, const watcher_actor& w, HandleStatus s) {
  auto& stopping = self->state.watched.stopping;
  s.state = stopping->as_told(std::move(s.state));
  self->send(w, update_atom::value, s);
  if (!stopping->begun())
    return stop_watching(self, s.id, w);
  // The node ends once every stop is passed on: sent is not yet written to the
  // connection, and the client heard none of it when the process ended first. What
  // the client answers comes after the update over the same connection: CAF's own
  // question every actor answers (any jp-actors client, of any version); no answer
  // (the client gone) lets the stop go too (the node's grace bounds the wait anyway).
  self->request(self->state.client, std::chrono::seconds(5), caf::sys_atom::value, caf::get_atom::value,
                std::string("info"))
    .then([self, id = s.id, w](caf::ok_atom, std::string&, caf::strong_actor_ptr&, std::string&) {
            stop_watching(self, id, w);
          },
          [self, id = s.id, w](caf::error&) { stop_watching(self, id, w); });
}

/// Handle `id` has no owner any more: it is aborted (nothing if it stopped), and
/// nobody looks at it again, so what the session and the registry keep of it goes
/// once it stopped (a client's every one-shot call is a handle here).
void let_go(node_session_t* self, const std::string& id) {
  auto& st = self->state;
  self->request(st.registry, caf::infinite, abort_atom::value, id).then([](HandleReport&) {}, [](caf::error&) {});
  self->send(st.registry, retire_atom::value, id);
  st.tools.erase(id);
  st.spawn_looks.erase(id);
}

/// Nobody can be asked on a node: why `action` of `tool` is refused there, naming
/// the node's key that says so; nullopt when it runs.
std::optional<std::string> node_refusal(const ToolConfig& tool, action_kind action) {
  auto mode = permission_mode(tool, action);
  if (mode == run_mode::unattended)
    return std::nullopt;
  auto what = action == action_kind::spawn ? fmt::format("run `{}` for clients", tool.name)
                                           : fmt::format("let clients {} `{}`", to_string(action), tool.name);
  if (tool.shaped_by_workspace && mode == run_mode::ask)
    return fmt::format("this node does not {}: the node's workspace config (.jp/config.toml, someone's "
                       "repository) defines or changes it, and a node runs such a tool only when "
                       "`jp-actors node --allow {}` names it",
                       what, tool.name);
  auto key = permission_key(tool, action);
  if (mode == run_mode::ask)
    return fmt::format("this node does not {}: {} and nobody can be asked on a node; start the node with "
                       "--allow {}, or set it to \"unattended\" in the node's config",
                       what,
                       key.ends_with(".run") ? fmt::format("its {} is \"ask\" (as its config says, or by default)", key)
                                             : fmt::format("its config says {} = \"ask\"", key),
                       tool.name);
  return fmt::format("this node does not {}: its config says {} = \"{}\"; set it to \"unattended\" in the "
                     "node's config to allow it",
                     what, key, to_string(mode));
}

/// `action` on handle `id` through the registry, unless the node's config refuses it
/// for the handle's tool.
template <class... Ts>
caf::result<HandleReport> relay_action(node_session_t* self, action_kind action, const std::string& id, Ts... xs) {
  auto& st = self->state;
  // Its tool (and so its permissions) is known once its spawn is answered.
  if (st.starting.count(id))
    return make_error(error_code::bad_arguments,
                      fmt::format("Handle `{}` is still starting on this node; {} it once its spawn is answered",
                                  cut_text(id), to_string(action)));
  // A spawn's own look (wait_ms) is the client's first fetch of the handle, as a local
  // spawn answers with it: part of the spawn, which was allowed, not a fetch. Only
  // as long as a spawn's look could wait: a client holding it back to read the whole
  // run's output once is refused as any fetch.
  bool spawn_look = false;
  if (auto look = st.spawn_looks.find(id); look != st.spawn_looks.end()) {
    spawn_look = action == action_kind::fetch && std::chrono::steady_clock::now() < look->second;
    st.spawn_looks.erase(look);
  }
  if (auto t = st.tools.find(id); t != st.tools.end() && !spawn_look)
    if (auto tool = st.config->tools.find(t->second); tool != st.config->tools.end())
      if (auto why = node_refusal(tool->second, action))
        return make_error(error_code::bad_arguments, *why);
  return relay<HandleReport>(self, xs...);
}

/// The launch spec of `tool` on this node for `args_json` and the client's
/// `answers_json` ("" none), or why it is refused.
Result<LaunchSpec> node_spec(const Config& config, const std::string& tool_name, const std::string& args_json,
                             const std::string& answers_json) {
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
  if (auto why = node_refusal(tool, action_kind::spawn))
    return Error{*why};
  auto args = Json::parse(args_json, duplicate_keys::refuse);
  if (!args || !args->is_object())
    return Error{fmt::format("{}: the arguments are not a JSON object", tool.name)};
  if (auto ok = validate_arguments(tool, *args); !ok)
    return Error{ok.error};
  // Its questions' answers this node's config gives, from its first run, and those
  // the client gave since: one that asks by exiting (needs_input) is run again by the
  // client with its answer. The node's own answer is the one that counts.
  auto answers = Json::object();
  for (auto& [id, answer] : tool.answers)
    answers.set(id, answer);
  if (!answers_json.empty()) {
    auto given = Json::parse(answers_json, duplicate_keys::refuse);
    if (!given || !given->is_object())
      return Error{fmt::format("{}: the answers are not a JSON object of answers by question id", tool.name)};
    for (auto& [id, answer] : given->as_object())
      if (!answers.find(id))
        answers.set(id, answer);
  }
  return make_launch_spec(config, tool, *args, answers, true);
}

session_impl::behavior_type node_session(node_session_t* self, std::shared_ptr<const Config> config,
                                         HandleFactory handles, std::shared_ptr<NodeStopping> stopping,
                                         caf::actor client, std::string key) {
  self->state.config = std::move(config);
  self->state.watched.stopping = std::move(stopping);
  self->state.key = std::move(key);
  self->state.registry = spawn_registry(self->system(), std::move(handles));
  self->link_to(self->state.registry);
  // A normal exit does not travel a link: however the session ends, its registry
  // (and every handle left in it) ends with it.
  self->attach_functor([registry = self->state.registry] {
    caf::anon_send_exit(registry, caf::exit_reason::user_shutdown);
  });
  // The client gone: each handle gets its turn-end policy, then the session ends.
  self->state.client = client;
  self->monitor(client);
  self->set_down_handler([self](caf::down_msg& dm) {
    auto& st = self->state;
    if (dm.source != st.client.address()) {
      // A remote handle gone: its handle here is let go of. Not when its client is
      // lost with it (the connection gone): the client's own down gives each handle
      // its turn-end policy, which an abort here would cut. Nor while its id is being
      // spawned again, whose new handle an abort would end: its spawn's answer says
      // whether the old one is still there to let go of.
      for (auto it = st.owners.begin(); it != st.owners.end(); ++it)
        if (it->second == dm.source) {
          auto id = it->first;
          st.owners.erase(it);
          if (dm.reason == caf::exit_reason::remote_link_unreachable)
            break;
          if (st.starting.count(id))
            st.orphaned.insert(id);
          else
            let_go(self, id);
          break;
        }
      return;
    }
    self->request(st.registry, caf::infinite, turn_end_atom::value, InquiryAnswers{})
      .then([self](std::vector<HandleSummary>&) { self->quit(); }, [self](caf::error&) { self->quit(); });
  });
  return {
    [self](spawn_atom, const std::string& key, const std::string& id, const std::string& tool,
           const std::string& args, const std::string& answers, caf::actor watcher) -> caf::result<HandleReport> {
      if (!same_token(key, self->state.key))
        return not_this_session();
      auto spec = node_spec(*self->state.config, tool, args, answers);
      if (!spec)
        return make_error(error_code::bad_arguments, spec.error());
      // A client's one-shot run (its internal id, "#N"): its stdin as a local one-shot
      // run's, at its end at once (a control tool's answers come on it). A pipe there
      // made every read of it a question nobody answers (`cat`, a credential prompt).
      if (id.starts_with('#'))
        spec->stdin_pipe = spec->control_channel;
      // One spawn of an id at a time: a second one's answer would end the first's
      // `starting` while it is still unanswered. (Before the promise: once made, it
      // takes the request, and an error returned would reach nobody.)
      if (!self->state.starting.insert(id).second)
        return make_error(error_code::handle_exists,
                          fmt::format("Handle `{}` is still starting on this node", cut_text(id)));
      // Watched from the spawn on: a node stopped before the spawn is answered waits
      // for this handle's stop to be told too.
      self->state.watched.add(1);
      auto rp = self->make_response_promise<HandleReport>();
      auto registry = self->state.registry;
      LookOptions now;
      now.wait_ms = 0;
      self->request(registry, caf::infinite, spawn_atom::value, id, *spec, now)
        .then(
          [self, rp, registry, id, tool, watcher](HandleReport& r) mutable {
            // Spawned: its remote handle owns it from now on (an old handle of the
            // id had stopped, or the registry would have refused the spawn).
            self->state.starting.erase(id);
            self->state.orphaned.erase(id);
            self->state.tools[id] = tool;
            self->state.spawn_looks[id] = std::chrono::steady_clock::now() + std::chrono::milliseconds(kMaxWaitMs);
            if (watcher) {
              self->state.owners[id] = watcher.address();
              self->monitor(watcher);
            } else { // nobody's: not the old owner's, whose end would abort it
              self->state.owners.erase(id);
            }
            // The watcher hears of every change from now on, through the session; a
            // stop or a question that came first is in the watch's answer (a question
            // asked before the watch was lost: a one-shot call waited on it for good).
            auto w = caf::actor_cast<watcher_actor>(watcher);
            if (!self->state.watchers.insert_or_assign(id, w).second)
              self->state.watched.add(-1); // the id's watch was counted already
            self->request(registry, caf::infinite, watch_atom::value, std::vector<std::string>{id},
                          caf::actor_cast<watcher_actor>(self))
              .then(
                [self, w](std::vector<HandleStatus>& now) {
                  for (auto& s : now)
                    if (s.state.stopped())
                      pass_on_stop(self, w, std::move(s));
                    else if (s.state.kind == state_kind::waiting)
                      self->send(w, update_atom::value, std::move(s));
                },
                [self, id, w](caf::error&) { stop_watching(self, id, w); }); // no stop will come
            r.state = self->state.watched.stopping->as_told(std::move(r.state));
            rp.deliver(std::move(r));
          },
          [self, rp, id](caf::error& err) mutable {
            self->state.starting.erase(id);
            self->state.watched.add(-1); // nothing to watch
            // Refused, as the id's old handle still runs, whose owner went meanwhile.
            if (self->state.orphaned.erase(id))
              let_go(self, id);
            rp.deliver(std::move(err));
          });
      return rp;
    },
    [self](fetch_atom, const std::string& key, const std::string& id,
           const LookOptions& look) -> caf::result<HandleReport> {
      if (!same_token(key, self->state.key))
        return not_this_session();
      // A spawn's own look waits no longer than a spawn's may, from the spawn's answer.
      auto bounded = look;
      if (auto spawned = self->state.spawn_looks.find(id); spawned != self->state.spawn_looks.end()) {
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(spawned->second -
                                                                          std::chrono::steady_clock::now());
        bounded.wait_ms = std::min<int64_t>(bounded.wait_ms, std::max<int64_t>(0, left.count()));
      }
      return relay_action(self, action_kind::fetch, id, fetch_atom::value, id, bounded);
    },
    [self](apply_atom, const std::string& key, const std::string& id, const std::string& input,
           const LookOptions& look) -> caf::result<HandleReport> {
      if (!same_token(key, self->state.key))
        return not_this_session();
      return relay_action(self, action_kind::apply, id, apply_atom::value, id, input, look);
    },
    [self](abort_atom, const std::string& key, const std::string& id) -> caf::result<HandleReport> {
      if (!same_token(key, self->state.key))
        return not_this_session();
      return relay_action(self, action_kind::abort, id, abort_atom::value, id);
    },
    [self](list_atom, const std::string& key) -> caf::result<std::vector<HandleSummary>> {
      if (!same_token(key, self->state.key))
        return not_this_session();
      return relay<std::vector<HandleSummary>>(self, list_atom::value);
    },
    [self](update_atom, const HandleStatus& s) {
      // From the registry alone (a peer's would be local news it made up).
      auto& st = self->state;
      if (caf::actor_cast<caf::actor_addr>(self->current_sender()) != st.registry.address())
        return;
      auto it = st.watchers.find(s.id);
      if (it == st.watchers.end())
        return;
      if (s.state.stopped())
        return pass_on_stop(self, it->second, s);
      self->send(it->second, update_atom::value, s);
    },
  };
}

} // namespace

node_session_actor spawn_node_session(caf::actor_system& sys, std::shared_ptr<const Config> config, IoThread& io,
                                      std::shared_ptr<NodeStopping> stopping, caf::actor client, std::string key) {
  return spawn_node_session(sys, std::move(config), process_handle_factory(io), std::move(stopping), std::move(client),
                            std::move(key));
}

node_session_actor spawn_node_session(caf::actor_system& sys, std::shared_ptr<const Config> config,
                                      HandleFactory handles, std::shared_ptr<NodeStopping> stopping,
                                      caf::actor client, std::string key) {
  return caf::actor_cast<node_session_actor>(sys.spawn(node_session, std::move(config), std::move(handles),
                                                       std::move(stopping), std::move(client), std::move(key)));
}

} // namespace jp
