#include "actors/remote_handle.hpp"

#include <caf/all.hpp>
#include <fmt/format.h>
#include <map>
#include <optional>

#include "actors/node_client.hpp"
#include "messages/atoms.hpp"
#include "messages/error_category.hpp"
#include "messages/json.hpp"

namespace jp {

namespace {

enum class remote_phase : uint8_t { connecting, live, stopped };

struct remote_state {
  std::string id;
  LaunchSpec spec;
  NodeConfig node;
  supervisor_actor supervisor;
  node_session_actor session;
  std::string key; // the session's: every message to it carries it
  remote_phase phase = remote_phase::connecting;
  std::vector<std::function<void()>> queued; // calls that came while connecting
  HandleReport final;
  std::string last_line;
  // Calls forwarded to the node and not yet answered, by number: a retired handle
  // goes only once they are (its stop can come first, through the watch). The node
  // lost, CAF never answers them; the loss answers each with the final state.
  std::map<uint64_t, caf::typed_response_promise<HandleReport>> in_flight;
  uint64_t next_call = 0;
  bool retired = false;
  std::string said_before_answers; // what the looks of a one-shot run's answers took
  Question told;                   // the question the supervisor was last told (id "": none)
  std::string asked_id;            // the last question's id it was told of (what an answer answers)
  Question shown;                  // the question the node's last answer to a look showed (id "": none)
  static inline const char* name = "jp.remote_handle";
};

// Besides the handle interface: the node's registry tells it of changes.
using remote_actor = handle_actor::extend<caf::reacts_to<update_atom, HandleStatus>>;
using remote_actor_t = remote_actor::stateful_base<remote_state>;

/// A report from the node as this side shows it: with the node, spill paths as NAME:path.
HandleReport from_node(const remote_state& st, HandleReport r) {
  r.node = st.node.name;
  if (!r.output_file.empty())
    r.output_file = st.node.name + ":" + r.output_file;
  return r;
}

/// Why the node's session went, in words (CAF's "exit_reason(remote_link_unreachable)"
/// is the common one).
std::string loss_of(const caf::error& reason) {
  if (!reason) // its session ended normally (the node ended it)
    return "it ended the session";
  if (reason == caf::exit_reason::remote_link_unreachable)
    return "the connection to it broke, or it was silent past [node] timeout_secs (as it is to a jp-actors "
           "that was itself stopped that long)";
  if (reason == caf::exit_reason::user_shutdown || reason == caf::exit_reason::kill)
    return "it ended the session";
  return error_text(reason);
}

void run_queued(remote_actor_t* self) {
  auto queued = std::move(self->state.queued);
  self->state.queued.clear();
  for (auto& call : queued)
    call();
}

void stop(remote_actor_t* self, HandleReport final) {
  auto& st = self->state;
  if (st.phase == remote_phase::stopped)
    return;
  st.phase = remote_phase::stopped;
  final.state.kind = state_kind::stopped;
  // A one-shot run shows all it printed: what the answers' looks took leads.
  if (!st.said_before_answers.empty())
    final.state.content = std::exchange(st.said_before_answers, {}) + final.state.content;
  st.final = std::move(final);
  // It exited asking (the node's registry kept the question on the failure it made of
  // that): told as a local tool that exited asking is, for this side's registry to run
  // a one-shot call again with the answer, or to say what a handle's caller can do.
  // (A look answered here meanwhile gets the node's own words for it.)
  auto told = st.final;
  if (!told.state.ok && !told.state.question.id.empty())
    told.state = ToolState::waiting(std::move(told.state.question), std::move(told.state.content));
  self->send(st.supervisor, stopped_atom::value, std::move(told));
  run_queued(self); // each answers with the final state
}

/// `refused`: the node refused the spawn (a tool it does not serve, arguments it does
/// not take), so the call fails, as a spawn refused here before anything ran does. (A
/// node not reached stops the handle, its error telling whether trying again may help.)
void fail(remote_actor_t* self, std::string why, bool transient, bool refused = false) {
  auto& st = self->state;
  HandleReport final{st.id, ToolState::failure(ToolError{std::move(why), {}, transient}), 0, {}, {}, st.node.name};
  final.refused = refused;
  final.own_end = refused; // stopped before anything could abort it
  stop(self, std::move(final));
}

/// Runs `call` once the remote handle exists (now, if it does), or answers `rp`
/// with the final state once stopped.
template <class F>
void when_live(remote_actor_t* self, caf::typed_response_promise<HandleReport> rp, F call) {
  auto& st = self->state;
  if (st.phase == remote_phase::stopped) {
    rp.deliver(st.final);
    return;
  }
  if (st.phase == remote_phase::connecting) {
    st.queued.push_back([self, rp, call]() mutable { when_live(self, rp, call); });
    return;
  }
  call(rp);
}

/// Tells the supervisor that the handle asks `q` (or, empty, asks nothing), once per
/// change, as a local handle tells it. `in_response`: a look's answer carries it.
void tell_question(remote_actor_t* self, const Question& q, bool in_response) {
  auto& st = self->state;
  if (q == st.told)
    return;
  st.told = q;
  if (!q.id.empty())
    st.asked_id = q.id;
  self->send(st.supervisor, waiting_atom::value, st.id, q, in_response);
}

/// A retired handle goes once no call to the node is out.
void quit_if_done(remote_actor_t* self) {
  if (self->state.retired && self->state.in_flight.empty())
    self->quit();
}

/// Forwards a look or input to the node (`atom`, the session's key, `xs`); its
/// answer, as this side shows it.
template <class Atom, class... Ts>
caf::result<HandleReport> forward(remote_actor_t* self, Atom atom, Ts... xs) {
  auto rp = self->make_response_promise<HandleReport>();
  when_live(self, rp, [self, atom, xs...](caf::typed_response_promise<HandleReport> rp) mutable {
    auto n = self->state.next_call++;
    self->state.in_flight.emplace(n, rp);
    // The promise of call `n`, unless the node's loss answered it already.
    auto take = [self, n]() -> std::optional<caf::typed_response_promise<HandleReport>> {
      auto it = self->state.in_flight.find(n);
      if (it == self->state.in_flight.end())
        return std::nullopt;
      auto rp = std::move(it->second);
      self->state.in_flight.erase(it);
      return rp;
    };
    self->request(self->state.session, caf::infinite, atom, self->state.key, xs...)
      .then(
        [self, take](HandleReport& r) {
          auto rp = take();
          if (!rp)
            return;
          auto shown = from_node(self->state, std::move(r));
          if (auto line = last_line_of(shown.state.content); !line.empty())
            self->state.last_line = std::move(line);
          self->state.shown = shown.state.kind == state_kind::waiting ? shown.state.question : Question{};
          // The supervisor hears of a stop first (an abort's answer comes after it),
          // and of a question asked or answered, as a local handle tells it before
          // its look's answer: an apply's answer said running while the registry
          // still held the question the node's update had told, and the await that
          // followed the apply answered at once with it.
          if (shown.state.stopped())
            stop(self, shown);
          else
            tell_question(self, self->state.shown, true);
          rp->deliver(std::move(shown));
          quit_if_done(self);
        },
        [self, take](caf::error& err) {
          if (auto rp = take()) {
            rp->deliver(std::move(err));
            quit_if_done(self);
          }
        });
  });
  return rp;
}

/// Spawns the tool on the node, in the session the turn's node client holds.
void connect(remote_actor_t* self, const node_client_actor& client) {
  self->request(client, caf::infinite, open_atom::value)
    .then(
      [self](caf::actor& session, std::string& key) {
        auto& st = self->state;
        if (st.phase == remote_phase::stopped)
          return;
        st.session = caf::actor_cast<node_session_actor>(session);
        st.key = std::move(key);
        // Lost with the node: the session's down message says so.
        self->monitor(session);
        self->request(st.session, caf::infinite, spawn_atom::value, st.key, st.id, st.spec.tool, st.spec.arguments,
                      st.spec.answers, caf::actor_cast<caf::actor>(self))
          .then(
            [self](HandleReport& r) {
              auto& st = self->state;
              if (st.phase != remote_phase::connecting)
                return;
              st.phase = remote_phase::live;
              if (r.state.stopped())
                stop(self, from_node(st, std::move(r)));
              run_queued(self);
            },
            [self](caf::error& err) {
              // The node's own refusal (a tool it does not serve, arguments it does
              // not take) fails the call; CAF's (the session gone, its connection
              // dropped) is the node lost, as the session's down message says it.
              if (code_of(err) != error_code::none)
                return fail(self, error_text(err), false, true);
              fail(self,
                   fmt::format("node `{}` was lost as the tool was spawned there ({}); it may have started there",
                               self->state.node.name, error_text(err)),
                   true);
            });
      },
      [self](caf::error& err) { fail(self, error_text(err), code_of(err) == error_code::node_unreachable); });
}

remote_actor::behavior_type remote_handle(remote_actor_t* self, std::string id, LaunchSpec spec, NodeConfig node,
                                          node_client_actor client, supervisor_actor supervisor) {
  auto& st = self->state;
  st.id = std::move(id);
  st.spec = std::move(spec);
  st.node = std::move(node);
  st.supervisor = std::move(supervisor);
  self->set_down_handler([self](caf::down_msg& dm) {
    auto& st = self->state;
    if (dm.source != st.session.address())
      return;
    fail(self,
         fmt::format("node `{}` was lost ({}): a node that notices its client gone ends the handle's work; "
                     "one that crashed leaves it running until jp-actors starts there again (which ends what a "
                     "crashed run left)",
                     st.node.name, loss_of(dm.reason)),
         true);
    // What was out at the node will never be answered by it.
    auto out = std::move(st.in_flight);
    st.in_flight.clear();
    for (auto& [n, rp] : out)
      rp.deliver(st.final);
    quit_if_done(self);
  });
  connect(self, client);
  return {
    [self](fetch_atom, const LookOptions& look) { return forward(self, fetch_atom::value, self->state.id, look); },
    [self](apply_atom, const std::string& input, const LookOptions& look) {
      return forward(self, apply_atom::value, self->state.id, input, look);
    },
    [self](abort_atom) { return forward(self, abort_atom::value, self->state.id); },
    [self](peek_atom) {
      HandleProgress p{self->state.last_line};
      p.node = self->state.node.name;
      return p;
    },
    [self](answer_atom, const std::string& answer_json) {
      // A one-shot run's question, answered here (the client's config, its terminal,
      // the assistant): the node's tool gets it as an apply gives it, one JSON line on
      // its stdin. ("": none comes; the registry aborts the run.) It was dropped, and
      // the call waited for good.
      if (answer_json.empty())
        return;
      auto give = [self, answer_json] {
        auto& st = self->state;
        if (st.phase != remote_phase::live)
          return;
        // A read of its stdin with no question asked takes the answer as a local
        // handle gives it, a JSON line: an apply types a JSON string as its text
        // without a newline, and the read went on waiting (16 rounds, each answered
        // again). A question of its own the node's handle answers as declared.
        auto input = st.asked_id == read_question_id ? Json(answer_json + "\n").dump() : answer_json;
        self->request(st.session, caf::infinite, apply_atom::value, st.key, st.id, input, LookOptions{})
          .then(
            [self](HandleReport& r) {
              auto& st = self->state;
              if (st.phase == remote_phase::stopped)
                return;
              auto shown = from_node(st, std::move(r));
              if (shown.state.stopped())
                return stop(self, std::move(shown));
              st.said_before_answers += shown.state.content;
            },
            [self](caf::error& err) {
              // Refused (or it stopped meanwhile): ended on the node, not left waiting
              // there for an answer; its own end, if it came first, is its result.
              auto& st = self->state;
              auto why = fmt::format("node `{}` did not take the answer to its question: {}", st.node.name,
                                     error_text(err));
              self->request(st.session, caf::infinite, abort_atom::value, st.key, st.id)
                .then(
                  [self, why](HandleReport& r) {
                    if (r.own_end)
                      return stop(self, from_node(self->state, std::move(r)));
                    fail(self, why, false);
                  },
                  [self, why](caf::error&) { fail(self, why, false); });
            });
      };
      if (self->state.phase == remote_phase::connecting)
        self->state.queued.push_back(give);
      else
        give();
    },
    [self](rename_atom, std::string& id) { self->state.id = std::move(id); },
    [self](retire_atom) {
      self->state.retired = true;
      quit_if_done(self);
    },
    [self](update_atom, HandleStatus& s) {
      auto& st = self->state;
      if (st.phase == remote_phase::stopped)
        return;
      if (s.state.stopped()) {
        HandleReport r{st.id, std::move(s.state), 0, std::move(s.output_file), {}, {}};
        r.own_end = s.own_end; // as the node's handle said it
        return stop(self, from_node(st, std::move(r)));
      }
      // Asks (waiting), or was answered (running again): as a local handle tells it,
      // once per change (the node tells every change of its status, output too: a
      // question told again would be answered again).
      auto q = s.state.kind == state_kind::waiting ? s.state.question : Question{};
      if (q.id.empty())
        st.shown = {};
      // A look's answer carries it (one out, or one that showed it already, the
      // node's update coming behind it), as a local handle's look does: no
      // notification tells it a second time.
      tell_question(self, q, !st.in_flight.empty() || (!q.id.empty() && q == st.shown));
    },
  };
}

} // namespace

handle_actor spawn_remote_handle(caf::local_actor* parent, const std::string& id, const LaunchSpec& spec,
                                 const NodeConfig& node, const node_client_actor& client,
                                 const supervisor_actor& supervisor) {
  return caf::actor_cast<handle_actor>(parent->spawn(remote_handle, id, spec, node, client, supervisor));
}

HandleFactory remote_handle_factory(NodeConfig node) {
  // One node client for every handle made here, started with the first of them.
  auto client = std::make_shared<node_client_actor>();
  return [node, client](caf::local_actor* parent, const std::string& id, const LaunchSpec& spec,
                        const supervisor_actor& supervisor) -> handle_actor {
    if (!*client)
      *client = spawn_node_client(parent, node);
    return spawn_remote_handle(parent, id, spec, node, *client, supervisor);
  };
}

} // namespace jp
