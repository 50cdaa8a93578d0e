#include "actors/turn_actor.hpp"
#include "tools/builtin_tools.hpp"

#include <caf/all.hpp>
#include <fmt/format.h>
#include <algorithm>
#include <set>

#include "actors/await_hub.hpp"
#include "actors/registry_actor.hpp"
#include "actors/shared_registry.hpp"
#include "actors/remote_handle.hpp"
#include "actors/send_after_queued.hpp"
#include "actors/stopped_handle.hpp"
#include "messages/answer_check.hpp"
#include "messages/blank.hpp"
#include "messages/atoms.hpp"
#include "messages/call_result.hpp"
#include "messages/json_codec.hpp"
#include "messages/last_line.hpp"
#include "messages/plain_await_request.hpp"
#include "messages/response_cap.hpp"
#include "messages/thrown_text.hpp"
#include "tools/argument_validation.hpp"
#include "tools/describe_tools.hpp"
#include "tools/permission.hpp"
#include "tools/schema.hpp"
#include "tools/launch.hpp"

namespace jp {

namespace {

// A one-shot tool asking more questions than this is looping.
constexpr int max_question_rounds = 16;

struct turn_state;
// As its awaits' watcher it hears what their handles do (update), and their timers.
using turn_impl = turn_actor::extend<caf::reacts_to<timeout_atom, uint64_t>, caf::reacts_to<settle_atom>,
                                     caf::reacts_to<background_atom, std::string>>::extend_with<watcher_actor>;
using turn_actor_t = turn_impl::stateful_base<turn_state>;

void forget_call(turn_actor_t* self, const std::string& tag);
void handle_started_by(turn_actor_t* self, const std::string& tag, const std::string& id);
void carry_notifications(turn_actor_t* self, CallResult& r);
bool shown_stopped(turn_actor_t* self, const std::string& id);

/// Where one call's answer goes: to its caller, carrying the notifications queued by
/// then (the one place they are attached), its tag forgotten. Called once, on this
/// actor, whether the call answers at once or later.
struct CallReply {
  turn_actor_t* self;
  caf::typed_response_promise<CallResult> rp;
  std::string tag;
  // The call's tool: its continuations point at it, so it lives as long as one of
  // them can answer (an MCP server may change its tools meanwhile, and the turn's
  // config with them). Shares its config's ownership: no copy.
  std::shared_ptr<const ToolConfig> tool;
  void operator()(CallResult r);
};

struct turn_state {
  TurnContext ctx;
  // The tools on offer as last read (ctx.tools_now; null: they never change).
  std::shared_ptr<const ToolSet> tools;
  registry_actor registry;
  handle_view_actor view; // what awaits and looks ask: the registry, or a shared view
  std::set<std::string> allowed_this_turn; // "yes for this turn" answers
  std::vector<Notification> notifications; // not yet carried by a response
  // Handles an answer showed stopped: no news of them is carried (RFD 037: they are
  // for handles the assistant has not looked at), until the id is spawned again.
  std::set<std::string> stop_shown;
  // The question each handle's last carried tool.waiting told: the same again, with
  // no apply between, is no news (a tool printing while it waits asks anew each time
  // it goes quiet).
  std::map<std::string, std::string> waiting_told;
  // A handle's tool: its name, and its entry as it was spawned (a fetch, apply or
  // abort of it is run with that entry once its MCP server dropped the tool). The
  // entry shares the turn's config while that has the tool (read_tools), so old
  // configs are not kept for it.
  struct HandleTool {
    std::string name;
    std::shared_ptr<const ToolConfig> entry;
    bool own = false; // `entry` is a copy, of a tool since dropped (not a config's)
  };
  std::map<std::string, HandleTool> handle_tools; // by handle id
  // Tagged calls (an MCP request): the one-shot run each has going, the handle each
  // spawned (once the registry took the spawn), and the tags aborted before or while
  // they ran.
  std::map<std::string, std::string> oneshot_of_call;
  std::map<std::string, std::string> handle_of_call;
  std::set<std::string> aborted_calls;
  // Tagged awaits that wait: aborted, one answers now, as at its timeout, rather
  // than live on (its watch with it) until its handles stop.
  std::map<std::string, AwaitHub::Key> await_of_call;
  uint64_t next_oneshot = 0;
  // One-shot runs that may go on as handles (their tool's background_after_secs), by
  // run id: the call's reply, until the run ends or the detach answers it.
  struct LongRun {
    CallReply reply;
    const ToolConfig* tool; // an entry of the config `reply` holds
  };
  std::map<std::string, LongRun> long_runs;
  // Waiting questions being answered for awaits, by "id\nquestion id": who hears.
  std::map<std::string, std::vector<std::function<void(bool)>>> resolving;
  // Its awaits: the turn is the one watcher of their handles (AwaitHub), and holds
  // each one's reply by key (as itself, not in a std::function: a stop answering
  // 1,000 awaits reads 1,000 fewer heap blocks).
  AwaitHub awaits;
  std::unordered_map<AwaitHub::Key, CallReply> await_replies;
  // Updates taken in at the next settle: all that queued up meanwhile, at once.
  std::vector<HandleStatus> updates;
  AwaitHub::Key next_await = 0;
  // Applies on their way, by handle id, and the questions of awaits held until they
  // answer: the apply may be the very answer (a batch of [apply, await]).
  std::map<std::string, int> applying;
  std::map<std::string, std::vector<AwaitHub::Ask>> held_asks;
  // Whether an await's text may be read straight into its request
  // (plain_await_request): the config's await tool validates as the built-in one.
  bool plain_awaits = false;
  static inline const char* name = "jp.turn";
};

void CallReply::operator()(CallResult r) {
  forget_call(self, tag);
  carry_notifications(self, r);
  rp.deliver(std::move(r));
}

CallResult failed(std::string msg) {
  return {false, std::move(msg)};
}

// What the assistant sees when a one-shot tool fails.
std::string error_content(const ToolState& s) {
  std::string out = s.error.message;
  // The trace is its stderr's last lines: said again only where the output that
  // follows does not hold them (cut by the cap), not twice.
  bool shown_below = !s.content.empty() && std::all_of(s.error.trace.begin(), s.error.trace.end(), [&](auto& line) {
    return s.content.find(line) != std::string::npos;
  });
  if (!shown_below)
    for (auto& line : s.error.trace)
      out += "\n" + line;
  // The model must know a failure is worth retrying.
  if (s.error.transient)
    out += "\n(transient: the same call may succeed if retried)";
  if (!s.content.empty())
    out += "\n\n" + s.content;
  // An empty failure tells the model nothing (and Anthropic refuses an error result
  // without content).
  if (is_blank(out))
    out = failed_saying_nothing;
  return out;
}

void run_oneshot(turn_actor_t* self, const ToolConfig& tool, Json args, Json answers, int round,
                 CallReply reply, std::string tag);

/// Runs `blocking` (it asks a person, or an LLM: it may block) on a detached actor,
/// never on this one, and hands its answer to `k` here, or its error to `k_error`.
template <class T>
void ask_detached(turn_actor_t* self, std::function<caf::expected<T>()> blocking, std::function<void(T&)> k,
                  std::function<void(caf::error&)> k_error) {
  auto asker = self->spawn<caf::detached>([blocking]() -> caf::behavior {
    return {[blocking](run_atom) -> caf::result<T> {
      // The asking is the program's (its prompts, its inquiry): one that throws is
      // no answer. Left to CAF, this actor would end and the call wait forever.
      try {
        return blocking();
      } catch (...) {
        return make_error(error_code::inquiry_failed, fmt::format("the question's answerer failed: {}", thrown_text()));
      }
    }};
  });
  self->request(asker, caf::infinite, run_atom::value)
    .then(
      [self, asker, k](T& answer) {
        self->send_exit(asker, caf::exit_reason::user_shutdown);
        k(answer);
      },
      [self, asker, k_error](caf::error& err) {
        self->send_exit(asker, caf::exit_reason::user_shutdown);
        k_error(err);
      });
}

/// A question answered as JSON text ("": no answer). Its asker never fails; if it
/// died anyway, that is no answer either.
void ask_detached(turn_actor_t* self, std::function<std::string()> blocking, std::function<void(std::string&)> k) {
  ask_detached<std::string>(self, std::move(blocking), k, [k](caf::error&) {
    std::string none;
    k(none);
  });
}

/// Permission for a call (the one place decide_permission's answer is applied):
/// `go` runs it, `refuse` returns the tool error instead. Asks the user when the
/// policy says so and someone can be asked.
void with_permission(turn_actor_t* self, const ToolConfig& tool, std::optional<action_kind> action,
                     const Json& args, const std::string& tag, std::function<void()> go,
                     std::function<void(std::string)> refuse) {
  auto& st = self->state;
  auto decision = decide_permission(tool, action, st.ctx.permissions, st.allowed_this_turn);
  if (decision.kind == permission_kind::run)
    return go();
  if (decision.kind == permission_kind::refuse)
    return refuse(decision.message);
  auto& ask = st.ctx.ask_permission;
  if (!ask)
    return refuse(no_one_to_ask(tool, action, st.ctx.permissions));
  // No answer (the question could not be put) is a no.
  ask_detached<PermissionReply>(
    self,
    [ask, name = tool.name, args, tag]() -> caf::expected<PermissionReply> {
      auto r = ask(name, args, tag);
      return r ? *r : PermissionReply{};
    },
    [self, name = tool.name, tag, go, refuse](PermissionReply& reply) {
      if (reply.answer == permission_answer::yes_for_turn)
        self->state.allowed_this_turn.insert(name);
      else if (reply.answer != permission_answer::yes)
        return refuse(denied(name, reply));
      // Aborted (an MCP client's cancel) while the person was asked: the yes comes
      // too late, and nothing starts only to be killed (a command's first effects).
      if (!tag.empty() && self->state.aborted_calls.count(tag))
        return refuse(fmt::format("`{}` was aborted while its permission was asked; nothing was run", name));
      go();
    },
    [name = tool.name, refuse](caf::error&) { refuse(denied(name, PermissionReply{})); });
}

// A one-shot tool asked a question: answer from config, else from a person, else fail.
// `given` gets the answer as the question declared it takes; `fail` why there is none.
void answer_question(turn_actor_t* self, const ToolConfig& tool, int round, const Question& q,
                     std::function<void(Json)> given, std::function<void(std::string)> fail) {
  if (round >= max_question_rounds) {
    fail(fmt::format("{}: gave up after {} rounds of questions", tool.name, round));
    return;
  }
  // Whoever gave it, the answer is checked as `apply`'s and a control channel's
  // configured answers are: the tool gets (in JP_TOOL_ANSWERS, {{tool.answers}} or
  // on stdin) only what its question takes. `by`: who gave it, for the refusal.
  auto checked = [name = tool.name, q, given, fail](std::string by) {
    return [=](Json answer) mutable {
      auto fits = answer_as_declared(q, answer);
      if (!fits)
        return fail(fmt::format("{}: {} is not an answer the tool takes: {}", name, by, fits.error()));
      given(std::move(*fits));
    };
  };
  if (auto it = tool.answers.find(q.id); it != tool.answers.end())
    return checked(fmt::format("conversation.tools.{}.questions.{}.answer", tool.name, q.id))(it->second);
  auto target = tool.question_targets.count(q.id) ? tool.question_targets.at(q.id) : "user";
  if (target == "assistant") {
    auto assistant = self->state.ctx.ask_assistant;
    if (!assistant) {
      fail(fmt::format("{}: the tool asks \"{}\" (question `{}`, target = \"assistant\") and "
                       "no assistant answers questions here",
                       tool.name, q.text, q.id));
      return;
    }
    // The assistant may be an LLM round trip away: off the actor threads.
    ask_detached(
      self,
      [assistant, name = tool.name, q] {
        auto a = assistant(name, q);
        return a ? a->dump() : std::string{};
      },
      [tool, q, answered = checked("the assistant's answer"), fail](std::string& answer) mutable {
        auto parsed = Json::parse(answer);
        if (answer.empty() || !parsed) {
          fail(fmt::format("{}: the tool asks \"{}\" (question `{}`, target = \"assistant\") "
                           "and the assistant gave no answer it allows",
                           tool.name, q.text, q.id));
          return;
        }
        answered(std::move(*parsed));
      });
    return;
  }
  auto& ask = self->state.ctx.ask_user;
  if (!ask) {
    // What the model can do itself comes first: where nobody is asked (an MCP
    // client, a pipe), a handle's question is answered with apply.
    fail(fmt::format(
      "{}: the tool asks \"{}\" (question `{}`) and nobody here answers a one-shot call's question; {}set "
      "conversation.tools.{}.questions.{}.answer, or run on a terminal to be asked",
      tool.name, q.text, q.id,
      tool.stateful ? "spawn it as a handle (action \"spawn\") and answer its question with apply, or " : "",
      tool.name, q.id));
    return;
  }
  // Asking a person blocks: do it on a detached actor, never on this one.
  ask_detached(
    self,
    [ask, name = tool.name, q] {
      auto a = ask(name, q);
      return a ? a->dump() : std::string{};
    },
    [tool, q, answered = checked("the answer given"), fail](std::string& answer) mutable {
      auto parsed = Json::parse(answer);
      if (answer.empty() || !parsed) {
        fail(fmt::format("{}: question `{}` was not answered", tool.name, q.id));
        return;
      }
      answered(std::move(*parsed));
    });
}

/// What the caller of a one-shot run reads at its end: its result or error, and
/// where its whole output went when it was cut.
std::string ended_content(const HandleReport& r) {
  auto content = r.state.ok ? r.state.content : error_content(r.state);
  if (!r.output_file.empty())
    content += fmt::format("\n[full output: {}]", r.output_file);
  return content;
}

/// The end of a one-shot run: its result, or its question answered and the run
/// continued. `live`: it asks while it runs (answered_while_running: io = "control",
/// or a node's tool): the answer goes to it (`id` is its one-shot entry). Any other
/// asks by exiting with needs_input: it is run again with the answers
/// (JP_TOOL_ANSWERS, tool.answers).
void oneshot_reply(turn_actor_t* self, const ToolConfig& tool, bool live, Json args, Json answers, int round,
                   CallReply reply, HandleReport& r, std::string tag) {
  auto& s = r.state;
  if (s.kind == state_kind::waiting) {
    auto q = s.question;
    auto fail = [reply](std::string msg) mutable { reply(failed(std::move(msg))); };
    // The tool by address, as in run_oneshot: a copy held here would die with this
    // continuation while the rerun's own continuation still points at it.
    auto rerun = [self, tp = &tool, args, answers, round, reply, q, tag](Json answer) mutable {
      answers.set(q.id, std::move(answer));
      run_oneshot(self, *tp, std::move(args), std::move(answers), round + 1, reply, tag);
    };
    if (live) {
      auto registry = self->state.registry;
      auto id = r.id;
      auto next = [self, tp = &tool, args, answers, round, reply, tag](HandleReport& next) mutable {
        oneshot_reply(self, *tp, true, std::move(args), std::move(answers), round + 1, reply, next, tag);
      };
      answer_question(
        self, tool, round, q,
        [self, registry, id, next, rerun](Json answer) mutable {
          // The running tool reads it; one already gone (it asked by exiting with
          // needs_input, its entry with it) is run again with it.
          self->request(registry, caf::infinite, answer_atom::value, id, answer.dump())
            .then(next, [rerun, answer](caf::error&) mutable { rerun(answer); });
        },
        [self, registry, id, fail](std::string msg) mutable {
          // Unanswered, the tool would wait forever: it ends with the call, which
          // fails with `msg` once it has ended (answered at once, the turn's end found
          // it still running, and listed the run's own `#N` as a handle it aborted).
          // Its report does not matter. An error means its entry is gone already (the
          // tool ended by itself): nothing is left to end.
          self->request(registry, caf::infinite, answer_atom::value, id, std::string{})
            .then([fail, msg](HandleReport&) mutable { fail(msg); },
                  [fail, msg](caf::error&) mutable { fail(msg); });
        });
      return;
    }
    answer_question(self, tool, round, q, rerun, fail);
    return;
  }
  if (!s.stopped()) {
    // It spoke the protocol but ended mid-way: nothing can continue a one-shot call.
    reply(failed(fmt::format(
      "{}: the tool exited after reporting state `{}`, which only a handle can continue; "
      "a tool called without `action` must end with a stopped state or an Outcome. Its "
      "last state, as read from its output: {}",
      tool.name, to_string(s.kind), to_json(s).dump())));
    return;
  }
  CallResult result{s.ok, ended_content(r)};
  result.images = std::move(s.images);
  reply(std::move(result));
}

/// One-shot run `id`'s call, taken to be answered once: by the run's end or by its
/// detach, whichever comes first (nothing for the other).
std::optional<turn_state::LongRun> take_long_run(turn_actor_t* self, const std::string& id) {
  auto it = self->state.long_runs.find(id);
  if (it == self->state.long_runs.end())
    return std::nullopt;
  auto run = std::move(it->second);
  self->state.long_runs.erase(it);
  return run;
}

/// A new handle of `tool` under `id` (a spawn's, or a run gone on as a handle): the
/// calls that drive it go through that tool; what the turn knew of the id is old.
void new_handle(turn_actor_t* self, const std::string& id, const std::string& tool,
                std::shared_ptr<const ToolConfig> entry) {
  self->state.handle_tools[id] = {tool, std::move(entry), false};
  self->state.awaits.forget(id);
  self->state.stop_shown.erase(id); // its news are new
  self->state.waiting_told.erase(id);
}

// RFD 009 one-shot wrapping: spawn, wait for Stopped, one response.
void run_oneshot(turn_actor_t* self, const ToolConfig& tool, Json args, Json answers, int round,
                 CallReply reply, std::string tag) {
  auto& st = self->state;
  auto spec = make_launch_spec(*st.ctx.config, tool, args, answers, false);
  if (!spec)
    return reply(failed(spec.error()));
  // The tool by its address: `tool` is always an entry of the config the call's
  // reply holds (CallReply::tool), as the permission's wait before this already
  // relies on (a copy is a few thousand instructions per call). Every continuation
  // of a one-shot run (its questions' too) passes that entry on with the reply,
  // never a copy.
  bool live = answered_while_running(*spec);
  auto ended = [self, tp = &tool, live, args, answers, round, reply, tag](HandleReport& r) mutable {
    oneshot_reply(self, *tp, live, std::move(args), std::move(answers), round, reply, r, tag);
  };
  auto fail = [reply](caf::error& err) mutable { reply(failed(error_text(err))); };
  auto after_secs = background_after_secs(tool);
  bool may_go_on = after_secs > 0;
  if (tag.empty() && !may_go_on) {
    self->request(st.registry, caf::infinite, oneshot_atom::value, std::move(*spec)).then(std::move(ended), std::move(fail));
    return;
  }
  // A tagged call can be aborted by its tag, and a run that may go on as a handle is
  // detached by its id: its run goes under an id of ours.
  if (!tag.empty() && st.aborted_calls.count(tag))
    return reply(failed(fmt::format("`{}` was aborted before it ran; nothing was run", tool.name)));
  auto id = fmt::format("#call{}", ++st.next_oneshot);
  if (!tag.empty())
    st.oneshot_of_call[tag] = id;
  if (!may_go_on) {
    self->request(st.registry, caf::infinite, oneshot_atom::value, std::move(*spec), id).then(std::move(ended), std::move(fail));
    return;
  }
  // Should it go on as a handle, it is one of its tool's, as a spawn's would be.
  set_handle_settings(*spec, tool);
  st.long_runs.emplace(id, turn_state::LongRun{reply, &tool});
  // Whoever comes first answers the call: the run's end, or the detach (background).
  self->request(st.registry, caf::infinite, oneshot_atom::value, std::move(*spec), id)
    .then(
      [self, tp = &tool, live, args, answers, round, tag, id](HandleReport& r) mutable {
        if (r.id != id)
          return; // it went on as handle r.id: the detach answers the call
        if (auto reply = take_long_run(self, id))
          oneshot_reply(self, *tp, live, std::move(args), std::move(answers), round, reply->reply, r, tag);
      },
      [self, id](caf::error& err) {
        if (auto reply = take_long_run(self, id))
          reply->reply(failed(error_text(err)));
      });
  self->delayed_send(self, std::chrono::nanoseconds(static_cast<int64_t>(after_secs * 1e9)),
                     background_atom::value, id);
}

/// One-shot run `id` ran its tool's background_after_secs: it goes on as a handle,
/// and its call answers now with the handle's id and its output so far.
void go_on_in_background(turn_actor_t* self, const std::string& id) {
  auto& st = self->state;
  auto it = st.long_runs.find(id);
  if (it == st.long_runs.end())
    return; // it ended first
  auto base = it->second.tool->name.substr(0, 56); // ids are at most 64: "-N" follows
  self->request(st.registry, caf::infinite, detach_atom::value, id, base)
    .then(
      [self, id](HandleReport& r) {
        auto run = take_long_run(self, id);
        if (!run)
          return;
        auto& tool = *run->tool;
        new_handle(self, r.id, tool.name, run->reply.tool);
        // A tagged call's handle: aborted with the call (forget_call), though the
        // abort came while the run was being detached.
        if (!run->reply.tag.empty())
          self->state.handle_of_call[run->reply.tag] = r.id;
        auto policy = tool.lifecycle.on_turn_end;
        r.state.content = with_last_line(
          std::move(r.state.content),
          fmt::format("[jp-actors: still running after {:g} s, so it goes on in the background as handle `{}`: "
                      "fetch it for its output, await it, or abort it{}. At the turn's end it is {}.]",
                      background_after_secs(tool), r.id,
                      r.state.kind == state_kind::waiting ? ", or apply its input" : "",
                      policy == turn_end_policy::abort   ? "aborted"
                      : policy == turn_end_policy::await ? "awaited"
                                                         : "asked about"));
        run->reply(CallResult{true, response_content(r), true, {}});
      },
      [self, id](caf::error& err) {
        // It ended before (its end answered the call), or its look failed.
        if (auto run = take_long_run(self, id))
          run->reply(failed(error_text(err)));
      });
}

void resolve_question(turn_actor_t* self, const std::string& id, const Question& q, std::function<void(bool)> done);
void put_to_resolver(turn_actor_t* self, const AwaitHub::Ask& ask);
void take_updates(turn_actor_t* self);
void apply_settled(turn_actor_t* self, const std::string& id);

// A call with `action`: dispatch the ToolCommand to the registry.
void run_stateful(turn_actor_t* self, const ToolConfig& tool, const Json& args, CallReply answer) {
  auto& st = self->state;
  auto cmd = command_from_arguments(tool.name, args);
  if (!cmd) {
    // A malformed spawn of a batch must still resolve its reservation.
    if (auto* id = args.find("id"); id && id->is_string())
      if (auto* a = args.find("action"); a && a->is_string() && a->as_string() == "spawn")
        self->send(st.registry, cancel_atom::value, id->as_string(), cmd.error());
    return answer(failed(cmd.error()));
  }
  if (auto ok = validate_action(tool, cmd->action); !ok) {
    if (cmd->action == action_kind::spawn)
      self->send(st.registry, cancel_atom::value, cmd->id, ok.error);
    return answer(failed(ok.error));
  }
  auto id = cmd->id;
  // A handle is driven through the tool that spawned it: the permissions checked
  // below are that tool's (`shell apply` on a `calc` handle skipped calc's).
  if (cmd->action != action_kind::spawn)
    if (auto h = st.handle_tools.find(id); h != st.handle_tools.end() && h->second.name != tool.name) {
      // Pointed at a tool that cannot do it either, the model would try that next.
      auto owner_can = h->second.entry ? validate_action(*h->second.entry, cmd->action) : Status::success();
      return answer(failed(owner_can ? fmt::format("Handle `{}` was spawned with `{}`: {} it with `{}`", cut_text(id),
                                                   h->second.name, to_string(cmd->action), h->second.name)
                                     : fmt::format("Handle `{}` was spawned with `{}`, and no other tool can {} "
                                                   "it: {}",
                                                   cut_text(id), h->second.name, to_string(cmd->action),
                                                   owner_can.error)));
    }
  // An apply on its way holds back awaits' questions of that handle (apply_settled).
  bool applying = cmd->action == action_kind::apply;
  if (applying) {
    ++st.applying[id];
    st.waiting_told.erase(id); // answered: the same question again is news
  }
  auto settled = [self, id, applying] {
    // The handle answered before the registry told this turn what changed: what
    // the hub knew of it may be older than this answer (the registry is asked again).
    self->state.awaits.forget(id);
    if (applying)
      apply_settled(self, id);
  };
  auto reply = [self, answer, settled, spawn = cmd->action == action_kind::spawn](HandleReport& r) mutable {
    settled();
    // A spawn refused before anything ran (a sub-agent past a limit): the call failed.
    // (A later look at its id shows it stopped, as any.)
    if (r.refused && spawn) {
      shown_stopped(self, r.id);
      return answer(failed(r.state.error.message));
    }
    bool first_shown = r.state.stopped() && shown_stopped(self, r.id);
    // It shows the handle as it is now: a question held for it is told, or stale.
    std::erase_if(self->state.notifications,
                  [&](const Notification& n) { return n.name == "tool.waiting" && n.handle == r.id; });
    CallResult result{true, response_content(r), true, {}};
    if (first_shown) // its images, named in its result; once, not at every look
      result.images = std::move(r.state.images);
    answer(std::move(result));
  };
  auto reply_error = [self, answer, settled, id, action = cmd->action](caf::error& err) mutable {
    settled();
    auto text = error_text(err);
    // Sharing a registry, the other agents' handles can be awaited, not driven.
    bool drives = action == action_kind::apply || action == action_kind::abort;
    if (self->state.ctx.shared_registry && drives && code_of(err) == error_code::unknown_handle) {
      // Said before the handles this agent has (the registry's text after "not found";
      // found after the id, which may hold those words itself).
      auto head = handle_not_found(id);
      auto at = text.starts_with(head) ? head.size() : text.size();
      text.insert(at, fmt::format(" among this agent's handles (if another agent spawned it, it can be awaited "
                                  "and fetched, but only that agent can {} it)",
                                  to_string(action)));
    }
    answer(failed(std::move(text)));
  };
  auto registry = st.registry;
  std::function<void()> go;
  switch (cmd->action) {
    case action_kind::spawn: {
      // The tool's own parameters: the arguments minus the protocol's (action, id, wait_ms, ...).
      auto parsed = Json::parse(cmd->args_json);
      Json params = parsed ? std::move(*parsed) : Json::object();
      Status valid = validate_arguments(tool, params, call_form::spawn);
      bool agent = tool.source == "builtin" && (tool.name == agent_tool_name || tool.name == foreach_tool_name);
      Result<LaunchSpec> spec = !valid ? Result<LaunchSpec>(Error{valid.error})
                                : agent ? make_agent_launch_spec(*st.ctx.config, tool, params, st.ctx.depth, true)
                                        : make_launch_spec(*st.ctx.config, tool, params, Json::object(), true);
      // A first look the handle would refuse is refused before anything runs. (A
      // node's tool: the node has its terminal, or says so itself.)
      if (spec && (cmd->look.screen || cmd->look.rows > 0) && !spec->pty && tool.node.empty())
        spec = Error{fmt::format("`screen`, `rows` and `cols` are for a handle on a terminal, and `{}` would "
                                 "run this one on pipes{}; nothing was run",
                                 tool.name,
                                 std::any_of(tool.parameters.begin(), tool.parameters.end(),
                                             [](const ParameterConfig& p) { return p.name == "tty"; })
                                   ? " (give \"tty\": true for a terminal)"
                                   : "")};
      if (!spec) {
        self->send(st.registry, cancel_atom::value, cmd->id, spec.error());
        return answer(failed(spec.error()));
      }
      // A size given with the spawn is the terminal's from its start: a program that
      // reads it once (a progress bar, `stty size`) drew for the configured one, the
      // new size coming as a SIGWINCH after it started.
      if (spec->pty && cmd->look.rows > 0) {
        spec->rows = cmd->look.rows;
        spec->cols = cmd->look.cols;
      }
      go = [self, registry, id, spec = *spec, look = cmd->look, reply, reply_error, tag = answer.tag,
            entry = answer.tool] {
        auto& tools = self->state.handle_tools;
        std::optional<turn_state::HandleTool> before;
        if (auto it = tools.find(id); it != tools.end())
          before = it->second;
        new_handle(self, id, spec.tool, entry);
        // Whether the registry took the spawn is settled once: by its refusal, or by
        // anything that comes after it (the refusal comes at once).
        auto settled = std::make_shared<bool>(false);
        auto taken = [self, id, tag, settled] {
          if (!std::exchange(*settled, true))
            handle_started_by(self, tag, id);
        };
        self->request(registry, caf::infinite, spawn_atom::value, id, spec, look)
          .then([reply, taken](HandleReport& r) mutable {
                  taken();
                  reply(r);
                },
                [self, id, before, reply_error, settled](caf::error& err) mutable {
                  // Refused (its id in use, a limit): what runs under the id is what
                  // ran, and none of this call's to abort.
                  *settled = true;
                  auto& tools = self->state.handle_tools;
                  if (before)
                    tools[id] = *before;
                  else
                    tools.erase(id);
                  reply_error(err);
                });
        // Its answer waits for the spawn's look (wait_ms): an abort of the call must
        // not. The registry answers in order, so this comes after any refusal.
        if (!tag.empty())
          self->request(registry, caf::infinite, status_atom::value, std::vector<std::string>{id})
            .then([taken](std::vector<HandleStatus>&) { taken(); }, [](caf::error&) {});
      };
      break;
    }
    case action_kind::fetch:
      go = [self, view = st.view, id, look = cmd->look, reply, reply_error] {
        self->request(view, caf::infinite, fetch_atom::value, id, look).then(reply, reply_error);
      };
      break;
    case action_kind::apply:
      go = [self, registry, id, input = cmd->input_json, look = cmd->look, reply, reply_error] {
        self->request(registry, caf::infinite, apply_atom::value, id, input, look).then(reply, reply_error);
      };
      break;
    case action_kind::abort:
      go = [self, registry, id, reply, reply_error] {
        self->request(registry, caf::infinite, abort_atom::value, id).then(reply, reply_error);
      };
      break;
  }
  bool spawning = cmd->action == action_kind::spawn;
  with_permission(self, tool, cmd->action, args, answer.tag, go,
                  [self, registry, id, spawning, settled, answer](std::string msg) mutable {
                    if (spawning) // a refused spawn of a batch must still release its reservation
                      self->send(registry, cancel_atom::value, id, msg);
                    settled();
                    answer(failed(std::move(msg)));
                  });
}


/// The most an answer may hold (runtime.response_cap_bytes).
uint64_t response_cap(turn_actor_t* self) {
  return self->state.ctx.config->runtime.response_cap_bytes;
}

/// An await's answer: its result as JSON text, within the response cap.
CallResult await_reply(std::string text) {
  return CallResult{true, std::move(text), true, {}};
}

/// The images of stopped handle `s`, after those in `into`, if this answer is the
/// first to show it stopped: an answer names them once, not at every look.
void add_images_if_first_shown(turn_actor_t* self, const HandleStatus& s, std::vector<ToolImage>& into) {
  if (shown_stopped(self, s.id))
    into.insert(into.end(), s.state.images.begin(), s.state.images.end());
}

CallResult await_reply(turn_actor_t* self, const AwaitResult& r) {
  std::vector<ToolImage> images; // of those shown stopped for the first time, in order
  for (auto& s : r.completed)
    add_images_if_first_shown(self, s, images);
  auto cap = response_cap(self);
  auto text = self->state.awaits.answer_text(r, cap);
  auto result = await_reply(text ? std::move(*text) : await_answer_text(r, cap));
  result.images = std::move(images);
  return result;
}

/// Does what the await hub says: answers (one text per shared result: awaits
/// answered alike by one stop get the same answer, written once) and puts waiting
/// questions to whoever the tool's config routes them to.
void apply_awaits(turn_actor_t* self, AwaitHub::Effects fx) {
  auto& st = self->state;
  for (auto& a : fx.answers) {
    std::optional<CallResult> answer; // written once, when one of its awaits still waits
    for (auto key : a.keys) {
      auto it = st.await_replies.find(key);
      if (it == st.await_replies.end())
        continue;
      if (!answer)
        answer = await_reply(self, *a.result);
      auto reply = std::move(it->second);
      st.await_replies.erase(it);
      reply(*answer);
    }
  }
  for (auto& ask : fx.asks) {
    if (st.applying.count(ask.id))
      st.held_asks[ask.id].push_back(std::move(ask));
    else
      put_to_resolver(self, ask);
  }
}

/// Hands the hub the updates queued since the last settle. Every other use of the
/// hub comes after this, so it never reads a handle's state older than the news
/// already here.
void take_updates(turn_actor_t* self) {
  auto& st = self->state;
  if (st.updates.empty())
    return;
  auto batch = std::move(st.updates);
  st.updates.clear();
  apply_awaits(self, st.awaits.update(batch));
}

void put_to_resolver(turn_actor_t* self, const AwaitHub::Ask& ask) {
  resolve_question(self, ask.id, ask.question, [self, key = ask.key, id = ask.id, q = ask.question](bool answered) {
    take_updates(self);
    apply_awaits(self, self->state.awaits.resolved(key, id, q, answered));
  });
}

/// An apply to `id` answered. The questions held meanwhile are put now, after one
/// round trip to the registry: the handle told it whether it still asks before it
/// answered the apply, so the registry's word on that reaches the awaits first.
void apply_settled(turn_actor_t* self, const std::string& id) {
  auto& st = self->state;
  auto n = st.applying.find(id);
  if (n == st.applying.end() || --n->second > 0)
    return;
  st.applying.erase(n);
  auto held = st.held_asks.extract(id);
  if (held.empty())
    return;
  auto put = [self, asks = std::move(held.mapped())] {
    for (auto& a : asks)
      put_to_resolver(self, a);
  };
  self->request(st.registry, caf::infinite, status_atom::value, std::vector<std::string>{id})
    .then([put](std::vector<HandleStatus>&) { put(); }, [put](caf::error&) { put(); });
}

/// Await `key` answers now with what it waits on, as at its timeout.
void end_await_now(turn_actor_t* self, AwaitHub::Key key) {
  take_updates(self);
  apply_awaits(self, self->state.awaits.timeout(key));
}

/// Await `key` begins with what the hub made of it: the reply is held until the
/// hub answers it (now, when its condition already holds), or its timeout fires.
void begin_await(turn_actor_t* self, AwaitHub::Key key, const AwaitRequest& req, CallReply reply,
                 AwaitHub::Effects fx) {
  auto& st = self->state;
  if (fx.asks.empty() && fx.answers.size() == 1 && fx.answers[0].keys.size() == 1 &&
      fx.answers[0].keys[0] == key) // answered at once
    return reply(await_reply(self, *fx.answers[0].result));
  auto tag = reply.tag;
  st.await_replies.emplace(key, std::move(reply));
  apply_awaits(self, std::move(fx));
  if (!tag.empty() && st.awaits.waiting(key)) {
    st.await_of_call[tag] = key;
    if (st.aborted_calls.count(tag)) // while the registry was asked what it awaits
      end_await_now(self, key);
  }
  // Beyond a century is no timeout (and would overflow the clock).
  if (st.awaits.waiting(key) && req.timeout_secs >= 0 && req.timeout_secs < 3.2e9)
    self->delayed_send(self, std::chrono::nanoseconds(static_cast<int64_t>(req.timeout_secs * 1e9)),
                       timeout_atom::value, key);
}

/// `await` (RFD 037): the registry answers the watch with the handles' states (and
/// from then on tells this turn when they change); the hub answers now when they
/// already satisfy the request, else when they do, or at the timeout. Handles the
/// hub already knows (watched before: it heard every change since) are not asked
/// about again.
void run_await(turn_actor_t* self, const AwaitRequest& req, CallReply reply) {
  auto& st = self->state;
  auto key = ++st.next_await;
  take_updates(self); // what the hub knows, as of every update here
  // The assistant awaiting the rest of what the last answer left pending.
  if (auto fx = st.awaits.add_rest(key, req))
    return begin_await(self, key, req, std::move(reply), std::move(*fx));
  auto ids = distinct_ids(req);
  if (ids.empty())
    return reply(failed("At least one handle ID required: `all` or `any`, an array of ids"));
  if (auto text = st.awaits.stopped_answer(ids, response_cap(self))) {
    auto result = await_reply(std::move(*text));
    for (auto& id : ids) // all of them stopped (and known)
      if (auto* s = st.awaits.known(id))
        add_images_if_first_shown(self, *s, result.images);
    return reply(std::move(result));
  }
  if (auto fx = st.awaits.add_known(key, req, ids))
    return begin_await(self, key, req, std::move(reply), std::move(*fx));
  st.awaits.watching(ids);
  self->request(st.view, caf::infinite, watch_atom::value, ids, watcher_actor{self})
    .then(
      [self, key, req, reply](std::vector<HandleStatus>& statuses) mutable {
        take_updates(self); // older than these statuses
        begin_await(self, key, req, std::move(reply), self->state.awaits.add(key, req, std::move(statuses)));
      },
      [self, ids, reply](caf::error& err) mutable {
        self->state.awaits.unwatched(ids);
        reply(failed(error_text(err)));
      });
}

/// An await waits on handle `id`, which waits on question `q`. Its tool's config
/// may route the question to a person (target = "user", on a terminal) or to the
/// inquiry backend (target = "assistant"): then it is asked, the answer applied, and
/// `done(true)`. false: nobody here answers it (terminal input, no target, no one
/// to ask, or no answer) -- only the assistant can, once the await returns.
void resolve_question(turn_actor_t* self, const std::string& id, const Question& q, std::function<void(bool)> done) {
  auto& st = self->state;
  auto tool_name = st.handle_tools.find(id);
  // Another agent's handle (a shared registry): its owner answers, not this
  // assistant, so it is not blocked on this one; the await waits on (its timeout
  // bounds it).
  if (tool_name == st.handle_tools.end() && st.ctx.shared_registry)
    return;
  if (tool_name == st.handle_tools.end() || q.id == "input")
    return done(false);
  if (!tool_name->second.entry)
    return done(false);
  auto& tool_config = *tool_name->second.entry; // the handle's tool as it was spawned
  auto target = tool_config.question_targets.find(q.id);
  if (target == tool_config.question_targets.end())
    return done(false);
  AskUser ask = target->second == "assistant" ? st.ctx.ask_assistant
                : target->second == "user"    ? st.ctx.ask_user
                                              : AskUser{};
  if (!ask)
    return done(false);
  auto key = id + "\n" + q.id;
  auto& waiters = st.resolving[key];
  waiters.push_back(std::move(done));
  if (waiters.size() > 1)
    return; // already being asked: this await hears the same answer
  auto all_done = [self, key](bool answered) {
    auto waiters = std::move(self->state.resolving[key]);
    self->state.resolving.erase(key);
    for (auto& w : waiters)
      w(answered);
  };
  ask_detached(
    self,
    [ask, name = tool_config.name, q] {
      auto a = ask(name, q);
      return a ? a->dump() : std::string{};
    },
    [self, id, all_done](std::string& answer) {
      if (answer.empty())
        return all_done(false);
      LookOptions no_wait;
      no_wait.wait_ms = 0;
      // Answered by the handle ahead of the registry's word (see run_stateful's settled).
      auto forget = [self, id] { self->state.awaits.forget(id); };
      self->request(self->state.registry, caf::infinite, apply_atom::value, id, answer, no_wait)
        .then([all_done, forget](HandleReport&) { forget(); all_done(true); },
              [all_done, forget](caf::error&) { forget(); all_done(false); });
    });
}

/// The id one call spawns (spawn_ids_of): none for a one-shot tool, whatever its
/// own `action` says. `tool`: the call's tool name, when known.
std::optional<std::string> spawn_id_of(const Config& config, const std::string* tool, const Json& args) {
  if (tool)
    if (auto t = config.tools.find(*tool); t != config.tools.end() && !t->second.stateful)
      return std::nullopt;
  auto* action = args.find("action");
  auto* id = args.find("id");
  if (action && action->is_string() && action->as_string() == "spawn" && id && id->is_string())
    return id->as_string();
  return std::nullopt;
}

/// Whether calls of the configured `tool` validate as the built-in await's do, so
/// that plain_await_request reads them as the usual path would: a config layer may
/// change a built-in tool's parameters, and then only the usual path checks them.
bool builtin_await_schema(const ToolConfig& tool) {
  static const ToolConfig builtin = default_config().tools.at("await");
  auto same = [](const ParameterConfig& a, const ParameterConfig& b) {
    return a.name == b.name && a.type == b.type && a.required == b.required && a.enum_values == b.enum_values &&
           a.items_type == b.items_type;
  };
  return tool.source == "builtin" && tool.one_of_required == builtin.one_of_required &&
         std::equal(tool.parameters.begin(), tool.parameters.end(), builtin.parameters.begin(),
                    builtin.parameters.end(), same);
}

/// The tools on offer now (ctx.tools_now) made the turn's config, where they changed.
void read_tools(turn_actor_t* self) {
  auto& st = self->state;
  if (!st.ctx.tools_now)
    return;
  st.tools = st.ctx.tools_now();
  if (!st.tools || st.tools->config == st.ctx.config)
    return;
  st.ctx.config = st.tools->config;
  // Each handle's entry from the config now, where it still has the tool; a copy of
  // its own where the tool was dropped. The config before goes once no call needs it.
  for (auto& [id, h] : st.handle_tools) {
    if (auto it = st.ctx.config->tools.find(h.name); it != st.ctx.config->tools.end())
      h = {h.name, std::shared_ptr<const ToolConfig>(st.ctx.config, &it->second), false};
    else if (h.entry && !h.own)
      h = {h.name, std::make_shared<const ToolConfig>(*h.entry), true};
  }
}

/// `name`'s entry among the tools on offer (sharing the config's ownership); or, for
/// a fetch, apply or abort of a handle it started, the entry it was offered with
/// then, when it is no longer offered (its MCP server dropped it while the handle
/// ran). Null: neither.
std::shared_ptr<const ToolConfig> tool_of_call(turn_actor_t* self, const std::string& name, const Json& args) {
  auto& st = self->state;
  if (auto it = st.ctx.config->tools.find(name); it != st.ctx.config->tools.end())
    return std::shared_ptr<const ToolConfig>(st.ctx.config, &it->second);
  auto* action = args.find("action");
  auto* id = args.find("id");
  if (!action || !action->is_string() || action->as_string() == "spawn" || !id || !id->is_string())
    return nullptr;
  auto h = st.handle_tools.find(id->as_string());
  if (h == st.handle_tools.end() || h->second.name != name)
    return nullptr;
  return h->second.entry;
}

/// What a call of `name`, a tool not on offer, is told: why it no longer is, where
/// it was once (an MCP server dropped it), else which tools are.
std::string not_offered(turn_actor_t* self, const std::string& name) {
  auto& st = self->state;
  if (st.tools)
    if (auto w = st.tools->withdrawn.find(name); w != st.tools->withdrawn.end())
      return w->second;
  return unknown_tool(*st.ctx.config, name);
}

/// One call, answered through `reply` (at once, or when its work is done).
void run_call(turn_actor_t* self, const std::string& name, const std::string& args_json, const std::string& tag,
              CallReply reply) {
  read_tools(self);
  auto& config = *self->state.ctx.config;
  // An await as its schema has it, read straight into its request (no Json tree):
  // an assistant re-issues one naming every pending handle after each stop.
  if (name == "await" && self->state.plain_awaits)
    if (auto req = plain_await_request(args_json))
      return run_await(self, *req, reply);
  auto args = Json::parse(args_json, duplicate_keys::refuse);
  if (!args)
    return reply(failed(fmt::format("{}: arguments are not valid JSON: {}", name, args.error())));
  if (!args->is_object())
    return reply(failed(fmt::format("{}: arguments must be a JSON object, got {}", name, args->described())));
  // A spawn of this batch that fails before it reaches the registry must still
  // release its reservation, or an await on it would wait forever.
  auto spawn_id = spawn_id_of(config, &name, *args);
  auto fail_call = [&](std::string msg) {
    if (spawn_id)
      self->send(self->state.registry, cancel_atom::value, *spawn_id, msg);
    return failed(std::move(msg));
  };
  auto found = tool_of_call(self, name, *args);
  if (!found)
    return reply(fail_call(not_offered(self, name)));
  reply.tool = found;
  auto& tool = *found;
  // The protocol's parameters given as null are left out, as clients send null for
  // what they leave out: `"action": null` is a one-shot call, not a missing action.
  if (takes_action_protocol(tool)) {
    if (auto* action = args->find("action"); action && action->is_null())
      args->erase("action");
    if (args->find("action"))
      for (auto key : {"id", "input", "wait_ms", "screen", "rows", "cols"})
        if (auto* v = args->find(key); v && v->is_null())
          args->erase(key);
  }
  if (args->find("action") && takes_action_protocol(tool) && !tool.stateful)
    if (auto ok = validate_action(tool, action_kind::spawn); !ok)
      return reply(fail_call(ok.error));
  if (tool.source == "builtin" && name == "await") {
    // A key of no parameter is named first (`al` for `all`); the rest of the errors
    // are RFD 037's exact texts.
    if (auto ok = refuse_unknown_keys(tool, *args); !ok)
      return reply(failed(ok.error));
    auto req = await_request_from_json(*args);
    if (!req)
      return reply(failed(req.error()));
    if (auto ok = validate_arguments(tool, *args); !ok)
      return reply(failed(ok.error));
    return run_await(self, *req, reply);
  }
  if (tool.source == "builtin" && name == yield_tool_name) {
    if (auto ok = validate_arguments(tool, *args); !ok)
      return reply(failed(ok.error));
    return reply(CallResult{true, args->find("result")->as_string(), false, {}});
  }
  bool starts_agents = tool.source == "builtin" && (name == agent_tool_name || name == foreach_tool_name);
  if (starts_agents && !self->state.ctx.subagents)
    return reply(fail_call(fmt::format("`{}` cannot run here: its sub-agents run only in an agent loop (jp-actors "
                                       "run or query, or an embedder's jp::Turn), so here none can be started, "
                                       "fetched or aborted",
                                       name)));
  if (starts_agents && !args->find("action")) {
    if (auto ok = validate_arguments(tool, *args); !ok)
      return reply(failed(ok.error));
    auto spec = make_agent_launch_spec(config, tool, *args, self->state.ctx.depth, false);
    if (!spec)
      return reply(failed(spec.error()));
    // Blocking: the sub-agent runs as a one-shot handle; its result is the answer.
    self->request(self->state.registry, caf::infinite, oneshot_atom::value, *spec)
      .then(
        [reply](HandleReport& r) mutable { reply(CallResult{r.state.ok, ended_content(r)}); },
        [reply](caf::error& err) mutable { reply(failed(error_text(err))); });
    return;
  }
  if (tool.source == "builtin" && name == "describe_tools") {
    if (auto ok = validate_arguments(tool, *args); !ok)
      return reply(failed(ok.error));
    auto text = describe_tools(config, *args);
    return reply(text ? CallResult{true, *text, false, {}} : failed(text.error()));
  }
  if (takes_action_protocol(tool) && args->find("action")) {
    // Aborted by its tag, a spawn ends the handle it started (run_stateful). A fetch,
    // apply or abort only looks at a handle someone else started (a client times its
    // requests out while a build runs): aborting one drops its wait, never the handle.
    // Aborted before it ran, none of them runs.
    if (!tag.empty() && self->state.aborted_calls.count(tag))
      return reply(fail_call(fmt::format("`{}` was aborted before it ran; nothing was done", name)));
    return run_stateful(self, tool, *args, reply);
  }
  if (!runs_without_action(tool)) {
    // A terminal program may wait for input forever; only a handle can type into it.
    if (!tool.stateful)
      return reply(failed(fmt::format("`{}` runs on a terminal (io = \"pty\") and may wait for input, so "
                                      "it cannot run without a handle; set "
                                      "conversation.tools.{}.spawn.stateful = true",
                                      name, name)));
    return reply(failed(fmt::format("`{}` runs on a terminal and may wait for input, so it is not called "
                                    "without `action`: start it with {{\"action\": \"spawn\", \"id\": "
                                    "\"<a name>\", ...}}, then type with `apply` and read with `fetch`",
                                    name)));
  }
  // Before anyone is asked to allow it: what only a handle can use is refused.
  if (auto ok = refuse_spawn_only(tool, *args); !ok)
    return reply(failed(ok.error));
  if (auto ok = validate_arguments(tool, *args); !ok)
    return reply(failed(ok.error));
  with_permission(
    self, tool, std::nullopt, *args, tag,
    [self, tp = &tool, a = *args, reply, tag]() mutable { run_oneshot(self, *tp, a, Json::object(), 0, reply, tag); },
    [reply](std::string msg) mutable { reply(failed(std::move(msg))); });
}

/// An answer shows the assistant that `id` stopped: the tool's news of it, queued or
/// still on its way (the registry's notice may come after the handle's answer), would
/// tell it again. (What the user did to it is still news.)
bool shown_stopped(turn_actor_t* self, const std::string& id) {
  auto& st = self->state;
  std::erase_if(st.notifications, [&](const Notification& n) { return n.source == "tool" && n.handle == id; });
  return st.stop_shown.insert(id).second;
}

/// Queues a notification until a response carries it; a handle's news of output or
/// of a question are coalesced (one of each: the first output's, the newest question,
/// as a tool printing while it waits asks anew each time it goes quiet).
void queue_notification(turn_actor_t* self, Notification n) {
  auto& q = self->state.notifications;
  auto waiting_of = [&](const Notification& old) { return old.name == "tool.waiting" && old.handle == n.handle; };
  if (n.name == waiting_over_notification) { // not news itself: its question is none now
    std::erase_if(q, waiting_of);
    return;
  }
  if (n.source == "tool" && self->state.stop_shown.count(n.handle))
    return;
  auto same = [&](const Notification& old) { return old.name == n.name && old.handle == n.handle; };
  if (n.name == "tool.output" && std::any_of(q.begin(), q.end(), same))
    return;
  if (n.name == "tool.waiting") {
    if (auto told = self->state.waiting_told.find(n.handle);
        told != self->state.waiting_told.end() && told->second == n.message)
      return;
    std::erase_if(q, same);
  }
  q.push_back(std::move(n));
}

/// Puts the queued notifications on `r` (RFD 011: piggybacked): a `notifications`
/// array in a JSON answer, a delimited block after plain text. Only as many as keep
/// the answer within the response cap, in order; the rest ride on the next answer.
void carry_notifications(turn_actor_t* self, CallResult& r) {
  auto& q = self->state.notifications;
  if (q.empty())
    return;
  bool json = r.json && r.content.size() >= 2 && r.content.back() == '}';
  std::string_view open = json ? (r.content.size() > 2 ? ",\"notifications\":[" : "\"notifications\":[")
                               : (r.content.empty() || r.content.back() == '\n' ? "\n<notifications>"
                                                                                : "\n\n<notifications>");
  std::string_view close = json ? "]}" : "\n</notifications>";
  size_t room = r.content.size() - (json ? 1 : 0) + open.size() + close.size(); // the '}' goes
  std::string block;
  size_t carried = 0;
  for (auto& n : q) {
    auto item = json ? (carried ? "," : "") + to_json(n).dump()
                     : fmt::format("\n[{}] {}: {}", n.level, n.name, n.message);
    if (room + block.size() + item.size() > response_cap(self))
      break;
    block += item;
    ++carried;
  }
  if (carried == 0)
    return;
  if (json)
    r.content.pop_back();
  r.content.append(open).append(block).append(close);
  auto end = q.begin() + static_cast<std::ptrdiff_t>(carried);
  for (auto it = q.begin(); it != end; ++it)
    if (it->name == "tool.waiting")
      self->state.waiting_told[it->handle] = it->message;
  r.notifications.assign(std::make_move_iterator(q.begin()), std::make_move_iterator(end));
  q.erase(q.begin(), end);
}

/// Aborts the handle tagged call `tag` spawned, if it spawned one.
void abort_handle_of(turn_actor_t* self, const std::string& tag) {
  auto& st = self->state;
  if (auto it = st.handle_of_call.find(tag); it != st.handle_of_call.end())
    self->request(st.registry, caf::infinite, abort_atom::value, it->second)
      .then([](HandleReport&) {}, [](caf::error&) {}); // the call answers with how it ended
}

/// Tagged call `tag`'s spawn of `id` was taken by the registry: the handle is the
/// call's, aborted with it (at once when the call already was).
void handle_started_by(turn_actor_t* self, const std::string& tag, const std::string& id) {
  if (tag.empty())
    return;
  auto& st = self->state;
  st.handle_of_call[tag] = id;
  if (st.aborted_calls.count(tag))
    abort_handle_of(self, tag);
}

/// A tagged call answered: its run (which may have asked and gone on, under the same
/// id) is over. Aborted, the handle it spawned is aborted now too: it may have been
/// spawned after the abort, once a question was answered.
void forget_call(turn_actor_t* self, const std::string& tag) {
  if (tag.empty())
    return;
  auto& st = self->state;
  if (st.aborted_calls.erase(tag))
    abort_handle_of(self, tag);
  st.oneshot_of_call.erase(tag);
  st.handle_of_call.erase(tag);
  st.await_of_call.erase(tag);
}

/// One call: run at once; its answer carries whatever notifications are queued by
/// the time it answers (CallReply). `tag` ("": none) lets (abort_atom, tag) end its
/// one-shot run.
caf::result<CallResult> call(turn_actor_t* self, const std::string& tool, const std::string& args,
                             const std::string& tag) {
  auto rp = self->make_response_promise<CallResult>();
  if (!tool.empty()) {
    run_call(self, tool, args, tag, CallReply{self, rp, tag});
    return rp;
  }
  // No tool named (Session::fetch, apply, abort: a program names the handle only):
  // the tool the handle was spawned with, or went on as a handle of -- a stopped
  // one's too, and in the order the calls came.
  auto parsed = Json::parse(args);
  auto* id = parsed ? parsed->find("id") : nullptr;
  auto& tools = self->state.handle_tools;
  auto h = id && id->is_string() ? tools.find(id->as_string()) : tools.end();
  if (h == tools.end()) {
    rp.deliver(failed(fmt::format("Handle `{}` not found: this session has no handle of that id",
                                  id && id->is_string() ? cut_text(id->as_string()) : std::string("(no id)"))));
    return rp;
  }
  run_call(self, h->second.name, args, tag, CallReply{self, rp, tag});
  return rp;
}

/// Sub-agents for the `agent` tool's spawns, a tool's own executor where it has one
/// (function tools), processes for the rest.
HandleFactory handle_factory(const TurnContext& ctx) {
  auto processes = process_handle_factory(*ctx.io);
  auto agents = ctx.subagents;
  auto executors = ctx.executors;
  // Tools that run on a node: a remote handle here for each handle there, every
  // tool of one node through one node client (one connection and session).
  std::map<std::string, HandleFactory> nodes;
  for (auto& [name, tool] : ctx.config->tools) {
    if (tool.node.empty() || executors.count(name))
      continue;
    if (auto node = ctx.config->nodes.find(tool.node); node != ctx.config->nodes.end()) {
      auto [it, made] = nodes.try_emplace(tool.node);
      if (made)
        it->second = remote_handle_factory(node->second);
      executors[name] = it->second;
      continue;
    }
    auto why = fmt::format("`{}` runs on node `{}`, which is not configured: add [nodes.{}] address = "
                           "\"host:port\" to your config",
                           name, tool.node, tool.node);
    executors[name] = [why](caf::local_actor* parent, const std::string& id, const LaunchSpec&,
                            const supervisor_actor& supervisor) { return spawn_stopped(parent, id, why, supervisor); };
  }
  return [processes, agents, executors, now = ctx.tools_now](caf::local_actor* parent, const std::string& id,
                                                              LaunchSpec& spec, const supervisor_actor& supervisor) {
    if (spec.subagent)
      return agents(parent, id, spec, supervisor);
    // The tools on offer now first: a tool an MCP server added since has its executor there.
    if (auto set = now ? now() : nullptr)
      if (auto it = set->executors.find(spec.tool); it != set->executors.end())
        return it->second(parent, id, spec, supervisor);
    if (auto it = executors.find(spec.tool); it != executors.end())
      return it->second(parent, id, spec, supervisor);
    if (spec.argv.empty())
      return spawn_stopped(parent, id,
                           fmt::format("`{}` has no executor here: it is a function tool of a program that "
                                       "embeds jp-actors, and this runtime was not given its function",
                                       spec.tool),
                           supervisor);
    return processes(parent, id, spec, supervisor);
  };
}

turn_impl::behavior_type turn_behavior(turn_actor_t* self, TurnContext ctx) {
  self->state.ctx = std::move(ctx);
  auto& tools = self->state.ctx.config->tools;
  if (auto await = tools.find("await"); await != tools.end())
    self->state.plain_awaits = builtin_await_schema(await->second);
  self->state.registry = spawn_registry(self->system(), handle_factory(self->state.ctx), notification_sink{self});
  self->link_to(self->state.registry);
  self->state.view = self->state.registry;
  if (auto dir = self->state.ctx.shared_registry) {
    // Its handles are seen by the agents that share, while this turn lasts.
    auto agent = self->state.ctx.agent;
    dir->add(agent, self->state.registry);
    self->attach_functor([dir, agent] { dir->remove(agent); });
    self->state.view = spawn_shared_view(self->system(), agent, self->state.registry, dir);
    self->link_to(self->state.view);
    // Other agents' registries answer too, and spawn without telling this turn.
    self->state.awaits = AwaitHub(false);
  }
  return {
    [self](batch_atom, const std::vector<std::string>& ids) -> caf::result<bool> {
      for (auto& id : ids)
        self->state.awaits.forget(id); // reserved for a new handle
      self->delegate(self->state.registry, batch_atom::value, ids);
      return caf::delegated<bool>{};
    },
    [self](call_atom, const std::string& tool, const std::string& args) {
      return call(self, tool, args, std::string{});
    },
    [self](call_atom, const std::string& tool, const std::string& args, const std::string& tag) {
      return call(self, tool, args, tag);
    },
    [self](background_atom, const std::string& id) { go_on_in_background(self, id); },
    [self](abort_atom, const std::string& tag) {
      // Before its run starts, it will not; while it runs, its one-shot run is
      // aborted, and so is the handle it spawned (not one it only looks at).
      auto& st = self->state;
      st.aborted_calls.insert(tag);
      if (auto it = st.oneshot_of_call.find(tag); it != st.oneshot_of_call.end())
        self->request(st.registry, caf::infinite, abort_atom::value, it->second)
          .then([](HandleReport&) {}, [](caf::error&) {}); // the call answers with how it ended
      abort_handle_of(self, tag);
      // An await ends nothing: it answers now with what it waits on.
      if (auto it = st.await_of_call.find(tag); it != st.await_of_call.end())
        end_await_now(self, it->second);
    },
    [self](retire_atom, const std::string& tag) {
      // Its caller had its answer: an abort that came after it (a late MCP cancel)
      // must not refuse the next call that reuses the tag as "aborted before it ran".
      self->state.aborted_calls.erase(tag);
    },
    [self](notify_atom, Notification& n) { queue_notification(self, std::move(n)); },
    [self](update_atom, HandleStatus& s) {
      // Answered at the settle: a burst of stops is one answer, not one await round
      // trip per stop. The settle waits behind the actors already queued to run (the
      // handles the io thread woke with their exits): sent at once, it would run
      // ahead of them and let one stop through per round trip while the rest queue
      // (W3: the p99 of stops after the spawn phase rose from 2 to 4-9 ms). Queued
      // on this thread, not through CAF's clock: that cost two thread wake-ups. (Best
      // effort with several worker threads: send_after_queued.hpp.)
      auto& st = self->state;
      if (st.updates.empty())
        send_after_queued(self, caf::make_message(settle_atom::value));
      st.updates.push_back(std::move(s));
    },
    [self](settle_atom) { take_updates(self); },
    [self](timeout_atom, uint64_t key) { end_await_now(self, key); },
    [self](pending_atom) {
      auto out = std::move(self->state.notifications);
      self->state.notifications.clear();
      return out;
    },
    [self](abort_all_atom) {
      // Interrupted: end every handle now (turn-end waits included).
      self->send(self->state.registry, abort_all_atom::value);
    },
    [self](list_atom) -> caf::result<std::vector<HandleSummary>> {
      self->delegate(self->state.registry, list_atom::value);
      return caf::delegated<std::vector<HandleSummary>>{};
    },
    [self](user_abort_atom, const std::string& id) -> caf::result<HandleReport> {
      self->delegate(self->state.registry, abort_atom::value, id);
      return caf::delegated<HandleReport>{};
    },
    [self](counts_atom) -> caf::result<HandleCounts> {
      self->delegate(self->state.registry, counts_atom::value);
      return caf::delegated<HandleCounts>{};
    },
    [self](turn_end_atom) -> caf::result<std::vector<HandleSummary>, std::string> {
      // The handles whose tools say "inquire" are put to the inquiry (once, all of
      // them); the registry then applies every strategy. The answer lists every
      // handle ended, and why the inquiry failed ("" = it did not).
      auto rp = self->make_response_promise<std::vector<HandleSummary>, std::string>();
      auto registry = self->state.registry;
      self->request(registry, caf::infinite, list_atom::value)
        .then([self, rp, registry](std::vector<HandleSummary>& live) mutable {
          std::vector<HandleSummary> asked;
          for (auto& h : live)
            if (h.policy == turn_end_policy::inquire)
              asked.push_back(h);
          auto end = [self, rp, registry](InquiryAnswers answers, std::string failure) mutable {
            self->request(registry, caf::infinite, turn_end_atom::value, answers)
              .then([self, rp, failure](std::vector<HandleSummary>& ended) mutable {
                      // The stops the registry told before this answer are taken first:
                      // an await they answer is answered before the turn's end (left to
                      // the settle, it was recorded as interrupted, its answer dropped).
                      take_updates(self);
                      rp.deliver(std::move(ended), failure);
                    },
                    [rp](caf::error& err) mutable { rp.deliver(std::move(err)); });
          };
          if (asked.empty() || !self->state.ctx.inquire)
            return end({}, {});
          // The inquiry may take a while (an LLM round trip): off the actor threads.
          ask_detached<InquiryAnswers>(
            self,
            [inquire = self->state.ctx.inquire, asked]() -> caf::expected<InquiryAnswers> {
              auto r = inquire(asked);
              if (!r)
                return make_error(error_code::inquiry_failed, r.error());
              return *r;
            },
            [end](InquiryAnswers& answers) mutable { end(std::move(answers), {}); },
            // Every handle is still ended (aborted) first.
            [end](caf::error& err) mutable { end({}, error_text(err)); });
        },
        [rp](caf::error& err) mutable { rp.deliver(std::move(err)); });
      return rp;
    },
  };
}

} // namespace

turn_actor spawn_turn(caf::actor_system& sys, TurnContext ctx) {
  return sys.spawn(turn_behavior, std::move(ctx));
}

bool takes_action_protocol(const ToolConfig& tool) {
  if (tool.stateful)
    return true;
  return std::none_of(tool.parameters.begin(), tool.parameters.end(),
                      [](const ParameterConfig& p) { return p.name == "action"; });
}

std::vector<std::string> spawn_ids_of(const Config& config, const std::vector<ToolCall>& calls,
                                      const std::vector<Json>& call_arguments) {
  std::vector<std::string> ids;
  for (size_t i = 0; i < call_arguments.size(); ++i)
    if (auto id = spawn_id_of(config, i < calls.size() ? &calls[i].name : nullptr, call_arguments[i]))
      ids.push_back(std::move(*id));
  return ids;
}

} // namespace jp
