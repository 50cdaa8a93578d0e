#include "actors/subagent_handle.hpp"
#include "actors/no_terminal.hpp"
#include "actors/foreach_handle.hpp"
#include "actors/stopped_handle.hpp"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <map>
#include <mutex>
#include <optional>
#include <utility>
#include <caf/all.hpp>
#include <deque>
#include <fmt/format.h>

#include "actors/waiting_looks.hpp"
#include "messages/answer_check.hpp"
#include "messages/atoms.hpp"
#include "messages/json_codec.hpp"
#include "messages/permission_reply.hpp"
#include "messages/turn_result.hpp"
#include "runtime/store/conversation_store.hpp"
#include "runtime/store/subagent_store.hpp"
#include "tools/builtin_tools.hpp"
#include "tools/launch.hpp"

namespace jp {

namespace {

/// Questions the sub-agent's turn puts to whoever drives its handle: asked on the
/// turn's detached askers (they block here), answered by the handle's `apply`.
class AskBox {
public:
  /// Opens question `id` (blocking callers pass a fresh one from next_id()).
  uint64_t next_id() {
    std::lock_guard lock(mtx_);
    return ++next_;
  }
  /// Blocks until question `id` is answered (JSON text) or nobody will answer it.
  std::optional<std::string> wait(uint64_t id) {
    std::unique_lock lock(mtx_);
    cv_.wait(lock, [&] { return closed_ || answers_.count(id); });
    auto it = answers_.find(id);
    if (it == answers_.end())
      return std::nullopt;
    auto answer = std::move(it->second);
    answers_.erase(it);
    return answer;
  }
  void answer(uint64_t id, std::string json) {
    std::lock_guard lock(mtx_);
    answers_[id] = std::move(json);
    cv_.notify_all();
  }
  /// The handle stopped or is aborted: every question ends unanswered.
  void close() {
    std::lock_guard lock(mtx_);
    closed_ = true;
    cv_.notify_all();
  }
  bool closed() {
    std::lock_guard lock(mtx_);
    return closed_;
  }
  /// The handle, held weakly: the box is held by the handle's own state (a strong
  /// reference would keep the actor from being freed).
  void set_handle(caf::actor_addr h) {
    std::lock_guard lock(mtx_);
    handle_ = std::move(h);
  }
  /// The handle while it lives (an invalid handle once it is gone: sends go nowhere).
  caf::actor handle() {
    std::lock_guard lock(mtx_);
    return caf::actor_cast<caf::actor>(handle_);
  }

private:
  std::mutex mtx_;
  std::condition_variable cv_;
  std::map<uint64_t, std::string> answers_;
  uint64_t next_ = 0;
  bool closed_ = false;
  caf::actor_addr handle_;
};

/// A sub-agent's person to ask: the terminal where there is one (its questions for
/// the user are asked there, as its parent's are); else its handle, which then waits
/// with a tool's question until `apply` answers it; a blocking call's sub-agent, whose
/// handle nobody can apply to, puts it to the handle above it (the nearest spawned
/// sub-agent's). A permission is the user's to give, never its parent's (which may be
/// the model that wants the call to run): without a terminal it is refused as the top
/// level's is (--allow lets it run).
class HandlePrompts final : public PromptBackend {
public:
  /// `above`: the parent's prompts (a person's, or its own HandlePrompts when the
  /// parent is a sub-agent); `box`: its handle's, none for a blocking call's
  /// sub-agent; `label`: what its questions carry before their text when they go to a
  /// handle above (a blocking foreach's element: "[1] b: ").
  HandlePrompts(std::shared_ptr<PromptBackend> above, std::shared_ptr<AskBox> box, std::string label)
    : above_(std::move(above)), box_(std::move(box)), label_(std::move(label)) {
    // The person is the first prompts up the chain that are no sub-agent's: a parent
    // sub-agent's prompts are its handle's, whose question its own parent sees.
    auto* parent = dynamic_cast<HandlePrompts*>(above_.get());
    terminal_ = parent ? parent->terminal_ : above_;
  }
  std::optional<Json> ask(const std::string& tool, const Question& q) override {
    if (terminal_)
      return on_terminal([&] { return terminal_->ask(tool, q); });
    if (!box_) {
      auto up = q;
      up.text = label_ + up.text;
      return on_terminal([&] { return above_->ask(tool, up); });
    }
    auto answer = put(q);
    auto parsed = answer ? Json::parse(*answer) : Result<Json>(Error{"no answer"});
    return parsed ? std::optional<Json>(*parsed) : std::nullopt;
  }
  std::optional<PermissionReply> permit(const std::string& tool, const Json& args) override {
    if (!terminal_)
      return std::nullopt; // not called: asks_permission() is false
    return on_terminal([&] { return terminal_->permit(tool, args); });
  }
  bool asks_permission() const override { return terminal_ && terminal_->asks_permission(); }
  void cancel() override {
    // Its turn ended: its own question ends, and it asks no more. The terminal is
    // its parent's too, and serves on (cancelling it would end the parent's
    // questions and interrupt menu for the rest of the session).
    cancelled_ = true;
    if (terminal_ && asking_ > 0)
      terminal_->end_dialog();
  }

private:
  template <class F>
  auto on_terminal(F ask) -> decltype(ask()) {
    if (cancelled_)
      return std::nullopt;
    ++asking_;
    auto answer = ask();
    --asking_;
    return answer;
  }
  std::atomic<bool> cancelled_{false};
  std::atomic<int> asking_{0};
  std::optional<std::string> put(const Question& q) {
    if (box_->closed())
      return std::nullopt;
    auto id = box_->next_id();
    caf::anon_send(box_->handle(), waiting_atom::value, id, q);
    return box_->wait(id);
  }
  std::shared_ptr<PromptBackend> above_;
  std::shared_ptr<PromptBackend> terminal_;
  std::shared_ptr<AskBox> box_;
  std::string label_;
};

/// A sub-agent's place among the live sub-agents under its top-level agent ([agents]
/// max_live): given back once, when it stops (a stopped one waiting to be retired
/// holds none: the foreach that retires it starts the next at once), or when the last
/// holder drops it (its actor went, or it never started: a refusal, a throw).
struct LiveSlot {
  std::shared_ptr<std::atomic<uint64_t>> tree;
  std::atomic<bool> held{true};
  explicit LiveSlot(std::shared_ptr<std::atomic<uint64_t>> t) : tree(std::move(t)) {}
  LiveSlot(const LiveSlot&) = delete;
  LiveSlot& operator=(const LiveSlot&) = delete;
  ~LiveSlot() { release(); }
  void release() {
    if (held.exchange(false))
      --*tree;
  }
};

struct subagent_state {
  subagent_state() = default; // not aggregate-built from the actor pointer
  std::string id;
  std::string path;
  supervisor_actor supervisor;
  TurnLoopContext ctx;          // each of its turns runs a loop from this
  caf::actor loop;              // the turn running now (none between turns)
  std::string said;             // what it said since the last look (its tail, past the output cap)
  uint64_t said_omitted = 0;    // ... and how much of it was cut
  std::string last_line;
  int rounds_before = 0;        // assistant responses of its earlier turns
  int rounds = 0;               // ... and of this one
  int calls = 0;                // tool calls it made
  std::deque<std::string> queued; // input for its next turns
  // The answers of its turns that ended with a queued message to go on with, which no
  // look took since (a look takes them with what it said): its result leads with them.
  std::string earlier_answers;
  bool stopped = false;
  HandleReport final;
  bool aborting = false;
  std::vector<caf::typed_response_promise<HandleReport>> aborts;
  WaitingLooks looks;
  std::vector<HandleSummary> handles; // its live handles, as of its turn's last tick
  std::shared_ptr<LiveSlot> slot; // its place under [agents] max_live (none: not counted)
  std::shared_ptr<AskBox> asks;   // its turn's questions to whoever drives it
  // The questions its turn waits on, asked first first (its calls run at once, and
  // two may ask together): the first is shown and answered; then the next.
  std::deque<std::pair<uint64_t, Question>> asked;
  static inline const char* name = "jp.subagent";
};

// What its loop's observer tells it, and its own timer, besides the handle interface.
using subagent_actor = handle_actor::extend<
  caf::reacts_to<content_atom, int, std::string>, // response n's text
  caf::reacts_to<call_atom, int, std::string>,    // response n called a tool
  caf::reacts_to<timeout_atom, uint64_t>,    // a waiting look's time is up
  caf::reacts_to<waiting_atom, uint64_t, Question>, // its turn asks (question n)
  caf::reacts_to<list_atom, std::vector<HandleSummary>>>; // its live handles now
using subagent_actor_t = subagent_actor::stateful_base<subagent_state>;

/// Passes the loop's events on to whoever watched the parent's agents (the event
/// log, under the sub-agent's path), and tells the handle what it said and did.
/// Its responses are numbered on across its turns (a message applied to it starts
/// another): in the log, step N of one sub-agent is one response.
class ReportingObserver : public TurnObserver {
public:
  ReportingObserver(std::shared_ptr<TurnObserver> inner, subagent_actor handle)
    : inner_(std::move(inner)), handle_(std::move(handle)) {}
  void turn_start() override {
    base_ = last_;
    if (inner_)
      inner_->turn_start();
  }
  void model_round(int n, const ModelRound& r) override {
    if (inner_)
      inner_->model_round(step(n), r);
  }
  void handle_counts(const HandleCounts& counts) override {
    if (inner_)
      inner_->handle_counts(counts);
  }
  void response(int n, const std::string& text) override {
    caf::anon_send(handle_, content_atom::value, n, text);
    if (inner_)
      inner_->response(step(n), text);
  }
  void retry(const std::string& why) override {
    if (inner_)
      inner_->retry(why);
  }
  void tool_call(int n, int index, const ToolCall& call) override {
    caf::anon_send(handle_, call_atom::value, n, call.name);
    if (inner_)
      inner_->tool_call(step(n), index, call);
  }
  void tool_result(int n, int index, const std::string& tool, bool ok, const std::string& content,
                   double elapsed_ms) override {
    if (inner_)
      inner_->tool_result(step(n), index, tool, ok, content, elapsed_ms);
  }
  void notification(const Notification& n) override {
    if (inner_)
      inner_->notification(n);
  }
  void turn_end(const std::vector<HandleSummary>& handles, const std::vector<Notification>& undelivered,
                const std::string& error, bool interrupted) override {
    caf::anon_send(handle_, list_atom::value, std::vector<HandleSummary>{});
    if (inner_)
      inner_->turn_end(handles, undelivered, error, interrupted);
  }
  // Its live handles, every half second while its tools run: what fetch lists.
  bool wants_progress() const override { return true; }
  void progress(const std::vector<HandleSummary>& running) override {
    caf::anon_send(handle_, list_atom::value, running);
    if (inner_ && inner_->wants_progress())
      inner_->progress(running);
  }

private:
  /// Response `n` of this turn, numbered from its first turn's first. (The loop
  /// calls its observer from one actor at a time.)
  int step(int n) {
    last_ = std::max(last_, base_ + n);
    return base_ + n;
  }
  std::shared_ptr<TurnObserver> inner_;
  subagent_actor handle_;
  int base_ = 0; // responses of its earlier turns
  int last_ = 0;
};

/// Its state now: the final one once stopped; else what it said since the last look
/// (which that look takes) and its progress.
HandleReport look(subagent_actor_t* self) {
  auto& st = self->state;
  if (st.stopped)
    return st.final;
  auto content = std::move(st.said);
  st.said.clear();
  st.earlier_answers.clear(); // they were said: this look shows them
  auto omitted = std::exchange(st.said_omitted, 0);
  if (!content.empty() && content.back() != '\n')
    content += '\n';
  content += fmt::format("[progress: {} responses, {} tool calls{}]", st.rounds_before + st.rounds, st.calls,
                         st.queued.empty() ? "" : fmt::format(", {} message{} queued", st.queued.size(), st.queued.size() == 1 ? "" : "s"));
  for (auto& h : st.handles)
    content += fmt::format("\n[handle {} ({}): {}, {:.1f} s{}{}]", h.id, h.tool, to_string(h.state.kind),
                           h.elapsed_secs, h.progress.last_line.empty() ? "" : ": ", cut_text(h.progress.last_line, 120));
  auto state = st.asked.empty() ? ToolState::running(std::move(content))
                                : ToolState::waiting(st.asked.front().second, std::move(content));
  return HandleReport{st.id, std::move(state), omitted, {}, {}};
}

/// Answers the waiting looks: something changed.
void answer_looks(subagent_actor_t* self) {
  for (auto& rp : self->state.looks.take_all())
    rp.deliver(look(self));
}

caf::result<HandleReport> look_with(subagent_actor_t* self, const LookOptions& opts) {
  auto& st = self->state;
  if (st.stopped || opts.wait_ms <= 0 || !st.said.empty() || !st.asked.empty())
    return look(self);
  auto rp = self->make_response_promise<HandleReport>();
  auto id = st.looks.add(rp);
  self->delayed_send(self, std::chrono::milliseconds(opts.wait_ms), timeout_atom::value, id);
  return rp;
}

/// `own_end`: it ended by itself, before any abort reached it.
void stop(subagent_actor_t* self, ToolState state, bool own_end) {
  auto& st = self->state;
  if (st.stopped)
    return;
  st.stopped = true;
  if (st.slot)
    st.slot->release(); // before its stop is told: the next may start then
  st.loop = nullptr;
  st.asks->close();
  st.asked.clear();
  // An answer of an earlier turn nobody saw is not lost behind the last one.
  if (!st.earlier_answers.empty())
    state.content = std::move(st.earlier_answers) + state.content;
  // Messages apply queued that no turn took (it yielded or failed first): said, not
  // dropped without a word.
  if (!st.queued.empty()) {
    std::string left;
    for (auto& m : st.queued)
      left += fmt::format("{}{}", left.empty() ? "" : ", ", json_quote_cut(m, 80));
    state.content += fmt::format("{}[jp-actors: {} message{} given with apply never reached it: its turn ended "
                                 "first ({}); spawn a new sub-agent to go on]",
                                 state.content.empty() || state.content.back() == '\n' ? "" : "\n", st.queued.size(),
                                 st.queued.size() == 1 ? "" : "s", left);
    st.queued.clear();
  }
  // Its answer is held to the output cap as a process's output is.
  auto held = held_result(st.ctx.config ? result_hold(*st.ctx.config) : ResultHold{}, st.id, std::move(state.content));
  state.content = std::move(held.content);
  st.final = HandleReport{st.id, std::move(state), held.omitted, std::move(held.spill_path), {}};
  st.final.own_end = own_end;
  // The supervisor hears first: an abort's answer comes after its stopped report.
  self->send(st.supervisor, stopped_atom::value, st.final);
  answer_looks(self);
  for (auto& rp : st.aborts)
    rp.deliver(st.final);
  st.aborts.clear();
}

void run_turn(subagent_actor_t* self, std::string prompt);

/// A turn of its ended: the next queued message starts another; else it stopped.
void turn_ended(subagent_actor_t* self, const TurnResult& r) {
  auto& st = self->state;
  st.loop = nullptr;
  // Its turn completed before the abort's interrupt reached it (which its ended loop
  // then dropped): the answer it gave is its result, as a process's exit that came
  // before its abort's signal is; no next turn starts.
  bool completed = r.outcome == turn_outcome::completed;
  if (st.aborting && !completed)
    return stop(self, ToolState::failure(ToolError{"aborted: its turn and every handle it started were ended",
                                                   {}, false}), false);
  if (completed && !r.yielded && !st.queued.empty()) {
    auto next = std::move(st.queued.front());
    st.queued.pop_front();
    // Unless a look took it already (a waiting fetch answered as the answer came,
    // taking what it said).
    if (!r.answer.empty() && !st.said.empty())
      st.earlier_answers += fmt::format("{}\n\n[then, to the message {}:]\n", r.answer, json_quote_cut(next, 80));
    return run_turn(self, std::move(next));
  }
  if (completed)
    return stop(self, ToolState::success(r.answer), true);
  // The provider could not be reached: worth trying again later.
  bool transient = r.code == error_code::provider_network;
  auto why = r.outcome == turn_outcome::interrupted && r.error.empty() ? std::string("its turn was interrupted")
                                                                         : r.error;
  stop(self, ToolState::failure(ToolError{why, {}, transient}, r.answer), true);
}

void run_turn(subagent_actor_t* self, std::string prompt) {
  auto& st = self->state;
  st.rounds_before += st.rounds;
  st.rounds = 0;
  // Linked: if this handle dies, its turn (and every handle of it) dies too.
  st.loop = spawn_turn_loop(self->system(), st.ctx);
  self->link_to(st.loop);
  self->request(st.loop, caf::infinite, run_atom::value, std::move(prompt))
    .then([self](TurnResult& r) { turn_ended(self, r); },
          [self](caf::error& err) {
            turn_ended(self, TurnResult{turn_outcome::failed, error_code::none, caf::to_string(err), {}, false});
          });
}

subagent_actor::behavior_type subagent_behavior(subagent_actor_t* self, std::string id, AgentSpec spec,
                                                TurnLoopContext ctx, supervisor_actor supervisor,
                                                std::shared_ptr<LiveSlot> slot) {
  auto& st = self->state;
  st.id = std::move(id);
  st.slot = slot;
  self->attach_functor([slot] {
    if (slot)
      slot->release();
  });
  st.path = ctx.agent_path;
  st.supervisor = std::move(supervisor);
  st.ctx = std::move(ctx);
  st.ctx.observer = std::make_shared<ReportingObserver>(st.ctx.observer, subagent_actor{self});
  st.asks = std::make_shared<AskBox>();
  st.asks->set_handle(self->address());
  // However it ends (an exit from its registry or its turn too, not only stop or
  // abort), a question its turn's asker blocks on ends unanswered: else that thread
  // waits forever, and the actor system's end with it.
  self->attach_functor([asks = st.asks] { asks->close(); });
  // A blocking call's sub-agent has no handle anyone can apply to: with no terminal,
  // its tools' questions have nobody to answer them, and are told so at once
  // (waiting, they would hold the call forever).
  if (!spec.blocking || st.ctx.prompts)
    st.ctx.prompts = std::make_shared<HandlePrompts>(
      st.ctx.prompts, spec.blocking ? nullptr : st.asks,
      spec.element_index < 0 ? std::string() : element_question_text(spec.element_index, spec.element, ""));
  run_turn(self, spec.prompt);
  return {
    [self](fetch_atom, const LookOptions& opts) -> caf::result<HandleReport> {
      if (auto why = no_terminal(opts, self->state.id, "a sub-agent"); !why.empty())
        return make_error(error_code::bad_arguments, std::move(why));
      return look_with(self, opts);
    },
    [self](apply_atom, const std::string& input_json, const LookOptions& opts) -> caf::result<HandleReport> {
      auto& st = self->state;
      if (auto why = no_terminal(opts, st.id, "a sub-agent"); !why.empty())
        return make_error(error_code::bad_arguments, std::move(why));
      if (st.stopped)
        return make_error(error_code::input_refused,
                          fmt::format("Handle `{}` has stopped: a sub-agent that ended takes no more messages; "
                                      "spawn a new one",
                                      st.id));
      if (!st.asked.empty()) {
        // The answer to the question it waits on (JSON: true, "a name", ...), checked
        // as a tool's own is: a wrong one is refused and the question stays asked
        // (let through, the tool's call failed inside, past correcting).
        auto answer = answer_text_as_declared(st.asked.front().second, input_json);
        if (!answer)
          return make_error(error_code::bad_arguments, fmt::format("Handle `{}`: {}", st.id, answer.error()));
        st.asks->answer(st.asked.front().first, answer->dump());
        st.asked.pop_front();
        // The next question, if another call asks too; else it runs again.
        self->send(st.supervisor, waiting_atom::value, st.id, st.asked.empty() ? Question{} : st.asked.front().second,
                   false);
        return look_with(self, opts);
      }
      auto input = Json::parse(input_json);
      st.queued.push_back(input && input->is_string() ? input->as_string() : input_json);
      return look_with(self, opts);
    },
    [self](abort_atom) -> caf::result<HandleReport> {
      auto& st = self->state;
      if (st.stopped)
        return st.final;
      auto rp = self->make_response_promise<HandleReport>();
      st.aborts.push_back(rp);
      if (!st.aborting) {
        st.aborting = true;
        st.queued.clear();
        st.asks->close(); // a question it waits on ends unanswered
        // Ends its turn as a user's Ctrl-C twice does: the turn ends, and every
        // handle it owns is aborted now (no turn-end waits). Its result comes once
        // all their work is gone, so this abort answers after that too.
        if (st.loop) {
          caf::anon_send(st.loop, interrupt_atom::value);
          caf::anon_send(st.loop, interrupt_atom::value);
        }
      }
      return rp;
    },
    [self](peek_atom) {
      auto& st = self->state;
      HandleProgress p{st.last_line};
      p.rounds = st.rounds_before + st.rounds;
      p.calls = st.calls;
      return p;
    },
    [](answer_atom, const std::string&) {
      // One-shot questions are the process handles'; a sub-agent asks through its turn.
    },
    [self](rename_atom, std::string& id) { self->state.id = std::move(id); },
    [self](retire_atom) { self->quit(); },
    [self](content_atom, int n, const std::string& text) {
      auto& st = self->state;
      st.rounds = std::max(st.rounds, n);
      st.said += text;
      if (!st.said.empty() && st.said.back() != '\n')
        st.said += '\n';
      // What nobody looked at yet is held to the output cap, as a process's is: its
      // tail kept (a sub-agent may say rounds x max_tokens between looks).
      if (auto cap = st.ctx.config ? st.ctx.config->runtime.output_cap_bytes : 0; cap > 0 && st.said.size() > cap) {
        size_t cut = st.said.size() - utf8_tail(st.said, cap).size(); // whole characters
        st.said.erase(0, cut);
        st.said_omitted += cut;
      }
      if (auto line = last_line_of(text); !line.empty())
        st.last_line = line;
      answer_looks(self);
    },
    [self](waiting_atom, uint64_t ask, Question& q) {
      auto& st = self->state;
      if (st.stopped || st.aborting)
        return;
      st.asked.emplace_back(ask, std::move(q));
      if (st.asked.size() > 1)
        return; // shown once the one before it is answered
      // The registry marks it waiting: an await returns it in `pending`, with the question.
      self->send(st.supervisor, waiting_atom::value, st.id, st.asked.front().second, false);
      answer_looks(self);
    },
    [self](list_atom, std::vector<HandleSummary>& running) {
      auto& st = self->state;
      // News for a waiting look: a handle came, went, or changed state (not its clock).
      auto shape = [](const std::vector<HandleSummary>& hs) {
        std::vector<std::pair<std::string, state_kind>> out;
        for (auto& h : hs)
          out.emplace_back(h.id, h.state.kind);
        return out;
      };
      bool news = shape(running) != shape(st.handles);
      st.handles = std::move(running);
      if (news)
        answer_looks(self);
    },
    [self](call_atom, int n, const std::string&) {
      auto& st = self->state;
      st.rounds = std::max(st.rounds, n);
      ++st.calls;
    },
    [self](timeout_atom, uint64_t look_id) {
      if (auto rp = self->state.looks.take(look_id))
        rp->deliver(look(self));
    },
  };
}

} // namespace

Config subagent_config(const Config& parent, const AgentSpec& spec) {
  Config c = parent;
  if (spec.narrowed) {
    c.tools.clear();
    for (auto& name : spec.tools)
      if (auto it = parent.tools.find(name); it != parent.tools.end())
        c.tools.emplace(name, it->second);
    // A tool's handles are waited for with `await`: it comes with any tool given.
    if (auto it = parent.tools.find("await"); !c.tools.empty() && it != parent.tools.end())
      c.tools.emplace(it->first, it->second);
  }
  auto yield = yield_to_parent_tool();
  c.tools[yield.name] = std::move(yield);
  return c;
}

namespace {

/// The config and tool declarations of this agent's sub-agents, by the tools they
/// are given: sub-agents alike (a foreach of 1,000) share one of each rather than
/// copying the config and writing its schemas 1,000 times (W8 profile: a quarter of
/// the actor thread).
class SubAgentConfigs {
public:
  struct Made {
    std::shared_ptr<const Config> config;
    std::shared_ptr<const std::string> tools_json;
  };

  Made get(const TurnLoopContext& parent, const AgentSpec& a) {
    std::lock_guard lock(mutex_); // starters may run on any actor thread
    auto [it, fresh] = made_.try_emplace(std::pair{a.narrowed, a.tools});
    if (fresh) {
      auto config = std::make_shared<const Config>(subagent_config(*parent.config, a));
      it->second = {config, std::make_shared<const std::string>(tool_declarations(*config, parent.tool_dialect).dump())};
    }
    return it->second;
  }

private:
  std::mutex mutex_;
  std::map<std::pair<bool, std::vector<std::string>>, Made> made_; // by (narrowed, tools)
};

} // namespace

HandleFactory subagent_factory(const TurnLoopContext& parent) {
  auto configs = std::make_shared<SubAgentConfigs>();
  auto tree = parent.live_subagents ? parent.live_subagents : std::make_shared<std::atomic<uint64_t>>(0);
  auto max_live = parent.config->agents.max_live;
  // One sub-agent of this agent (or of a foreach of its), as its own handle.
  SubAgentStarter start = [parent, configs, tree, max_live](caf::local_actor* spawner, const std::string& id,
                                                            const AgentSpec& a,
                                                            const supervisor_actor& supervisor) -> handle_actor {
    // However the tree grows (sub-agents of sub-agents, foreaches in foreaches), so
    // many run at once at most: each level's max_concurrent multiplies.
    if (tree->fetch_add(1) >= max_live) {
      --*tree;
      return handle_actor{};
    }
    auto slot = std::make_shared<LiveSlot>(tree); // the handle's once it is spawned
    TurnLoopContext ctx;
    auto made = configs->get(parent, a);
    ctx.config = std::move(made.config);
    ctx.tools_json = std::move(made.tools_json);
    ctx.io = parent.io;
    ctx.tool_dialect = parent.tool_dialect;
    ctx.model = a.model.empty() ? parent.model : a.model;
    ctx.system_prompt = a.system_prompt.empty() ? parent.system_prompt : a.system_prompt;
    ctx.max_tokens = parent.max_tokens;
    ctx.prompts = parent.prompts;
    ctx.permissions = parent.permissions;
    ctx.subagents = parent.subagents;
    ctx.executors = parent.executors;
    ctx.live_loops = parent.live_loops;
    ctx.live_subagents = tree;
    ctx.agent_path = parent.agent_path + "/" + id;
    ctx.depth = a.depth;
    ctx.max_rounds = static_cast<int64_t>(parent.config->agents.max_rounds);
    // Its conversation is its own, kept while it lives: a message sent with apply
    // continues it. Its events also go to the parent's conversation, under its path.
    auto store = std::make_shared<SubAgentStore>(parent.store, parent.conversation_id, ctx.agent_path);
    ctx.store = store;
    auto created = store->create();
    ctx.conversation_id = created ? *created : std::string("sub");
    Status ready = parent.subagents ? parent.subagents->prepare(ctx.agent_path, a, ctx)
                                    : Status{Error{"no assistant can run sub-agents here"}};
    if (!ready)
      return spawn_stopped(spawner, id, ready.error, supervisor);
    return spawner->spawn(subagent_behavior, id, a, std::move(ctx), supervisor, std::move(slot));
  };
  // Live sub-agents (a foreach counts as one) of this agent's turn, for [agents]
  // max_concurrent.
  auto live = std::make_shared<std::atomic<int>>(0);
  auto max = parent.config->agents.max_concurrent;
  auto hold = result_hold(*parent.config);
  return [start, live, max, max_live, hold](caf::local_actor* spawner, const std::string& id, const LaunchSpec& spec,
                            const supervisor_actor& supervisor) -> handle_actor {
    if (static_cast<uint64_t>(live->load()) >= max)
      return spawn_stopped(spawner, id,
                           fmt::format("{} sub-agents of this agent are running, the limit ([agents] max_concurrent "
                                       "= {}); await one of them first",
                                       live->load(), max),
                           supervisor);
    ++*live;
    auto handle = spec.agent.foreach ? spawn_foreach(spawner, id, spec.agent, start, supervisor, hold.cap)
                                     : start(spawner, id, spec.agent, supervisor);
    if (!handle) {
      --*live;
      return spawn_stopped(spawner, id,
                           fmt::format("{} sub-agents are running under this top-level agent, the limit ([agents] "
                                       "max_live = {}); await some of them first",
                                       max_live, max_live),
                           supervisor);
    }
    handle->attach_functor([live] { --*live; });
    return handle;
  };
}

} // namespace jp
