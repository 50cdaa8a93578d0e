#include "actors/io_thread_send.hpp"
#include "actors/live_loops.hpp"
#include "actors/turn_loop.hpp"

#include <atomic>
#include <algorithm>
#include <caf/all.hpp>
#include <chrono>
#include <fmt/format.h>
#include <mutex>
#include <tuple>

#include "actors/registry_actor.hpp"
#include "actors/subagent_handle.hpp"
#include "messages/blank.hpp"
#include "messages/atoms.hpp"
#include "messages/call_result.hpp"
#include "messages/conversation_event_codec.hpp"
#include "messages/json_codec.hpp"
#include "messages/last_line.hpp"
#include "messages/response_cap.hpp"
#include "messages/thrown_text.hpp"
#include "messages/turn_result.hpp"
#include "runtime/provider/provider_images.hpp"
#include "runtime/store/subagent_store.hpp"
#include "tools/builtin_tools.hpp"

namespace jp {

namespace {

using clock_type = std::chrono::steady_clock;

/// The response being streamed, as far as it came.
struct Response {
  std::string text;
  std::vector<ToolCall> calls;
  std::string finish_reason;
  std::string provider_extra; // what the provider wants back on the message (ChatMessage's)
  std::chrono::steady_clock::time_point requested; // when its request went out
  int64_t tokens_in = -1;
  int64_t tokens_out = -1;
};

/// The conversation's last messages, handed to the turn-end inquiry (which runs on
/// a detached actor of the turn's).
struct RecentMessages {
  static constexpr size_t kept = 8;
  std::mutex mtx;
  std::vector<ChatMessage> messages;
};

struct loop_state {
  TurnLoopContext ctx;
  turn_actor turn;
  caf::response_promise done;
  std::vector<ChatMessage> messages;
  Response response;
  int turn_number = 0;        // this turn's, counting the conversation's turns from 1
  int responses = 0;          // responses of this turn so far
  bool called = false;        // one of them called tools
  uint64_t stream_gen = 0;    // events of an abandoned stream are dropped
  std::shared_ptr<std::atomic<bool>> cancel = std::make_shared<std::atomic<bool>>(false);
  // Set once the turn is interrupted: its questions to the assistant stop, and no
  // new one is asked (this loop's alone: the inquiry serves its sub-agents too).
  std::shared_ptr<std::atomic<bool>> asking_stopped = std::make_shared<std::atomic<bool>>(false);
  bool streaming = false;
  bool running_tools = false;
  bool interrupted = false;
  bool ending = false;        // the turn-end strategies are being applied
  bool aborting_all = false;  // interrupted twice: what runs is listed, then killed
  bool end_recorded = false;  // the turn_end event is written (once)
  // Interrupted again before its end began (between its requests): that end aborts
  // every handle, as a second interrupt during it does, instead of waiting on them.
  bool abort_at_end = false;
  bool waited_after_inquiry = false;
  std::vector<HandleSummary> ended; // handles an earlier turn end of this turn ended
  // Calls running now, by id: their tool, and where and when they started (an
  // interrupt answers them, and the observer hears of it as of any result).
  struct Running {
    std::string tool;
    int response = 0;
    int index = 0;
    clock_type::time_point started;
  };
  std::map<std::string, Running> unanswered;
  bool unanswered_recorded = false; // the turn's end answered them: a late answer is not recorded
  std::shared_ptr<RecentMessages> recent = std::make_shared<RecentMessages>();
  bool ticking = false;       // a progress timer is armed
  std::string answer;         // the assistant's last words, or what it yielded
  bool yielded = false;       // yield_to_parent ended the turn
  std::string error;          // why the turn failed ("" = it did not)
  error_code code = error_code::none; // what failed, with `error`
  bool store_failed = false;  // an append failed: nothing more is recorded
  // The interrupt menu (PromptBackend::interrupt_menu): while it is open the text
  // that streams is held, not rendered, and the turn does not end.
  bool menu_open = false;
  std::string held;            // text that came while the menu was open
  bool flush_held = false;     // ... and a flush() it owes the renderer
  bool end_after_menu = false; // the turn would have ended while the menu was open
  std::vector<std::string> replies; // the person's, for the next request
  static inline const char* name = "jp.turn_loop";
};

using loop_actor_t = caf::stateful_actor<loop_state>;

double ms_since(clock_type::time_point t0) {
  return std::chrono::duration<double, std::milli>(clock_type::now() - t0).count();
}

/// The response's text to the renderer, unless the interrupt menu holds it.
void show(loop_actor_t* self, const std::string& text) {
  auto& st = self->state;
  if (!st.ctx.renderer)
    return;
  if (st.menu_open)
    st.held += text;
  else
    st.ctx.renderer->render(text);
}

void flush_shown(loop_actor_t* self) {
  auto& st = self->state;
  if (!st.ctx.renderer)
    return;
  if (st.menu_open)
    st.flush_held = true;
  else
    st.ctx.renderer->flush();
}

/// Records an event. The first append that fails ends the recording of this turn
/// (nothing later is recorded: the store must not hold events whose causes it lost)
/// and the turn itself, with the error.
void record(loop_actor_t* self, const ConversationEvent& event) {
  auto& st = self->state;
  if (!st.ctx.store || st.store_failed)
    return;
  if (auto s = st.ctx.store->append(st.ctx.conversation_id, to_json(event)); !s) {
    st.store_failed = true;
    st.code = error_code::store;
    st.error = fmt::format("cannot record the conversation: {}; the turn ended there and nothing "
                           "after it was recorded",
                           s.error);
  }
}

std::string notifications_block(const std::vector<Notification>& notes) {
  std::string text = "<notifications>";
  for (auto& n : notes)
    text += fmt::format("\n[{}] {}: {}", n.level, n.name, n.message);
  return text + "\n</notifications>";
}

void request_response(loop_actor_t* self);
void finish_turn(loop_actor_t* self);

/// For the next turn: handle `h` was ended with this one. Its model would otherwise
/// find it gone ("not found") with nothing saying why.
Notification aborted_at_end(const HandleSummary& h) {
  return Notification{"tool", "tool.stopped", "info",
                      fmt::format("Handle `{}` ({}) was aborted as the turn ended: it no longer runs", h.id, h.tool),
                      h.id};
}

constexpr auto progress_interval = std::chrono::milliseconds(500);

void arm_progress(loop_actor_t* self) {
  auto& st = self->state;
  if (st.ticking || !st.ctx.observer || !st.ctx.observer->wants_progress())
    return;
  st.ticking = true;
  self->delayed_send(self, progress_interval, tick_atom::value);
}

/// While tools run, the observer sees which handles are running.
void on_tick(loop_actor_t* self) {
  auto& st = self->state;
  st.ticking = false;
  if (!st.running_tools)
    return;
  self->request(st.turn, caf::infinite, list_atom::value).then([self](std::vector<HandleSummary>& running) {
    if (self->state.running_tools)
      self->state.ctx.observer->progress(running);
  });
  arm_progress(self);
}

/// Calls that were running when the turn ended (an interrupt) get a response that
/// says so: they ran, and what they started ended with the turn. Only a call that
/// never ran is later replayed as "not run".
void record_unanswered(loop_actor_t* self) {
  auto& st = self->state;
  const std::string said = "interrupted: the turn ended while this call ran, before it answered; whatever it "
                           "started was ended with the turn";
  for (auto& [id, run] : st.unanswered) {
    record(self, ToolCallResponseEvent{id, run.tool, false, said});
    if (st.ctx.observer) // its time counts, in the report too
      st.ctx.observer->tool_result(run.response, run.index, run.tool, false, said, ms_since(run.started));
  }
  st.unanswered.clear();
  st.unanswered_recorded = true;
}

/// How the turn ended, for the caller: interrupted wins over failed (the user
/// stopped it), but what failed is still said.
TurnResult result_of(const loop_state& st, bool interrupted) {
  auto outcome = interrupted ? turn_outcome::interrupted
                 : st.error.empty() ? turn_outcome::completed
                                    : turn_outcome::failed;
  auto code = !st.error.empty() ? st.code : interrupted ? error_code::interrupted : error_code::none;
  return TurnResult{outcome, code, st.error, st.answer, st.yielded};
}

/// The turn is over: the turn actor (and every handle) goes, the caller hears.
void conclude(loop_actor_t* self) {
  auto& st = self->state;
  self->send_exit(st.turn, caf::exit_reason::user_shutdown);
  st.done.deliver(result_of(st, st.interrupted));
  self->quit();
}

// -- one response -----------------------------------------------------------------------

bool id_taken_in(const std::vector<ToolCall>& calls, const std::string& id) {
  return std::any_of(calls.begin(), calls.end(), [&](const ToolCall& c) { return c.id == id; });
}

/// Whether a call of the conversation `messages` has id `id`.
bool id_taken(const std::vector<ChatMessage>& messages, const std::string& id) {
  return std::any_of(messages.begin(), messages.end(), [&](const ChatMessage& m) { return id_taken_in(m.tool_calls, id); });
}

/// An id for a call of ours, or of the provider's without one or with one used
/// already: the first of jp0000000, jp0000001, ... no call of `messages` (or of
/// `calls`, the response so far) has. Nine letters and digits: the form every
/// provider takes (Mistral takes no other).
std::string own_call_id(const std::vector<ChatMessage>& messages, const std::vector<ToolCall>& calls = {}) {
  for (int k = 0;; ++k)
    if (auto id = fmt::format("jp{:07}", k); !id_taken(messages, id) && !id_taken_in(calls, id))
      return id;
}

/// Why the turn fails when the provider ended response `r` short of its end (the
/// token limit, a full context window, a refusal, a content filter), and its code;
/// {"", none} when it ended as the model chose.
std::pair<std::string, error_code> cut_off_failure(const TurnLoopContext& ctx, const Response& r) {
  auto kind = cut_off_of(r.finish_reason);
  if (kind == cut_off::none)
    return {"", error_code::none};
  std::string names;
  for (auto& c : r.calls)
    names += (names.empty() ? "" : ", ") + c.name;
  auto not_run = fmt::format(": none of its tool calls ran ({})", names);
  // What the cut left: calls not run (`calls`), an incomplete answer, or none at all.
  auto left = [&](const std::string& calls, std::string_view no_answer = " before it gave any answer") {
    return !r.calls.empty() ? calls : !r.text.empty() ? std::string(": the answer is incomplete")
                                                      : std::string(no_answer);
  };
  auto not_complete = fmt::format(" before its tool calls were complete: none of them ran ({})", names);
  if (kind == cut_off::token_limit) {
    auto limit = ctx.max_tokens > 0 ? fmt::format("assistant.max_tokens = {}", ctx.max_tokens)
                 : ctx.tool_dialect == dialect::anthropic
                   ? std::string("assistant.max_tokens = 0, so 4096 was sent")
                   : std::string("assistant.max_tokens = 0, so none was sent and the model's own limit applied");
    auto what = left(not_complete, " before it gave any answer (a reasoning model can spend the whole limit on "
                                   "its hidden reasoning)");
    return {fmt::format("the response was cut off at the token limit ({}){}; raise assistant.max_tokens (e.g. to "
                        "{}, up to what the model allows) and ask again",
                        limit, what, ctx.max_tokens > 0 ? ctx.max_tokens * 2 : 16384),
            error_code::limit_reached};
  }
  if (kind == cut_off::context_full) {
    // The conversation and the response filled the model's context window: a higher
    // token limit cannot help, less in the window can.
    auto what = left(not_complete);
    return {fmt::format("the response was cut off because the model's context window was full (stop reason "
                        "\"{}\"){}; start a new conversation (or ask for a shorter answer) and ask again",
                        r.finish_reason, what),
            error_code::limit_reached};
  }
  if (kind == cut_off::refused)
    return {fmt::format("the provider refused to answer (stop reason \"{}\"){}; rephrase the request (this "
                        "turn is left out of what the model is sent next)",
                        r.finish_reason, r.calls.empty() ? std::string() : not_run),
            error_code::provider_refused};
  auto what = left(not_run);
  return {fmt::format("the provider's content filter stopped the response (finish reason \"{}\"){}; rephrase the "
                      "request",
                      r.finish_reason, what),
          error_code::provider_refused};
}

/// `for_reply`: the person cut the response to reply (the turn goes on with the
/// reply); otherwise an interrupt or an error cut it, or it ended.
void on_stream_end(loop_actor_t* self, std::string err, error_code code, bool for_reply = false) {
  auto& st = self->state;
  st.streaming = false;
  flush_shown(self);
  auto& r = st.response;
  // The provider cut the response short (the token limit, a refusal, a filter): the
  // turn fails, as it does when a stream ends before its end or passes the size cap,
  // since the answer asked for did not come whole (and a caller must not read it as
  // one). Its text is kept and shown; none of its calls runs: a batch cut short is
  // not run in part, and the last call's arguments are cut.
  if (err.empty() && !st.interrupted && !for_reply)
    std::tie(err, code) = cut_off_failure(st.ctx, r);
  // A cut response keeps its text; its tool calls never run (and are not kept).
  bool cut = st.interrupted || for_reply || !err.empty();
  bool interrupted = st.interrupted || for_reply;
  // What the provider wants back belongs to a turn of calls (DeepSeek's reasoning,
  // with the calls and with the answer after them): a cut response keeps none, and
  // an answer in a turn without calls none (the conversation keeps its answer alone).
  st.called = st.called || (!cut && !r.calls.empty());
  auto extra = cut || !st.called ? std::string() : r.provider_extra;
  record(self, ChatResponseEvent{r.text, cut ? std::vector<ToolCall>{} : r.calls, r.finish_reason, interrupted,
                                 interrupted ? std::string() : err, extra, r.tokens_in, r.tokens_out});
  ChatMessage said{chat_role::assistant, r.text, cut ? std::vector<ToolCall>{} : r.calls};
  said.provider_extra = extra;
  if (!said.text.empty() || !said.tool_calls.empty())
    st.messages.push_back(said);
  if (st.ctx.observer)
    st.ctx.observer->model_round(st.responses, ModelRound{ms_since(r.requested), r.tokens_in, r.tokens_out});
  if (st.ctx.observer && !r.text.empty())
    st.ctx.observer->response(st.responses, r.text);
  if (!r.text.empty() && !st.yielded)
    st.answer = r.text;
  if (!err.empty() && !st.interrupted && st.error.empty()) {
    st.error = err;
    st.code = code;
  }
  if (for_reply && !st.store_failed)
    return request_response(self);
  if (cut || r.calls.empty() || st.store_failed)
    return finish_turn(self); // unrecorded calls must not run
  // -- the tool calls of this response: one batch
  st.running_tools = true;
  arm_progress(self);
  auto calls_now = std::make_shared<std::vector<ToolCall>>(r.calls);
  std::vector<Json> args;
  for (auto& c : *calls_now) {
    // As the call itself is read (turn_actor's run_call): arguments it refuses (a
    // key twice) reserve no id, which nothing would release.
    auto parsed = Json::parse(c.arguments, duplicate_keys::refuse);
    args.push_back(parsed ? *parsed : Json::object());
  }
  auto results = std::make_shared<std::vector<CallResult>>(calls_now->size());
  auto left = std::make_shared<size_t>(calls_now->size());
  int n = st.responses;
  auto all_done = [self, calls_now, results]() {
    auto& st = self->state;
    st.running_tools = false;
    bool images = false;
    for (size_t i = 0; i < calls_now->size(); ++i) {
      auto& c = (*calls_now)[i];
      auto& res = (*results)[i];
      st.messages.push_back(ChatMessage{chat_role::tool, res.content, {}, c.id, c.name, !res.ok});
      st.messages.back().images = res.images;
      images = images || !res.images.empty();
    }
    if (images) // older ones may now be past what a request carries
      forget_old_images(st.messages);
    if (st.interrupted || !st.error.empty() || st.yielded)
      return finish_turn(self);
    request_response(self);
  };
  auto run_calls = [self, calls_now, results, left, n, all_done](std::string rejected) {
    auto& st = self->state;
    // The turn began to end while the batch's spawns were being registered (an
    // interrupt, a parent's abort): none of its calls runs, and the conversation
    // says so (before the turn end: this answer comes before the turn end's). The
    // turn end stopped their reservations; a call sent now would reach the registry
    // after it and start what nothing ends.
    if (st.ending) {
      for (auto& c : *calls_now)
        record(self, ToolCallResponseEvent{c.id, c.name, false,
                                           "not run: the turn ended before this call started; nothing was started"});
      return;
    }
    for (size_t i = 0; i < calls_now->size(); ++i) {
      auto& c = (*calls_now)[i];
      record(self, ToolCallRequestEvent{c});
      if (st.ctx.observer)
        st.ctx.observer->tool_call(n, static_cast<int>(i), c);
      auto t0 = clock_type::now();
      st.unanswered[c.id] = {c.name, n, static_cast<int>(i), t0};
      auto finished = [self, results, left, i, n, id = c.id, name = c.name, t0, all_done](CallResult r) {
        auto& st = self->state;
        // A model that takes no images is told what it was not shown (and the
        // conversation does not keep them).
        if (!r.images.empty() && !st.ctx.config->assistant.images) {
          r.content = with_last_line(std::move(r.content), images_left_out(r.images.size(), false));
          r.images.clear();
        }
        // Ended by the turn's interrupt (its abort): not a failure of its own, which
        // the next turn's model might try again as it was.
        if (st.interrupted && !r.ok && r.content.starts_with("aborted"))
          r.content = with_last_line(std::move(r.content),
                                     "[jp-actors: interrupted: the turn was ended while this call ran, and what it "
                                     "ran was ended with it]");
        // An await the interrupt's ending answered (the handles it waited on ended
        // with the turn): no plain result, which would read as their own end.
        else if (st.interrupted && r.ok && name == "await")
          r.content = with_last_line(std::move(r.content),
                                     "[jp-actors: interrupted: the turn was ended while this await waited; a handle "
                                     "it shows stopped may have been ended with the turn]");
        // Recorded as it finishes: an interrupt later must not undo what it did. One
        // the turn's end answered already ("interrupted") is not answered twice.
        bool answered = st.unanswered.erase(id) == 0 && st.unanswered_recorded;
        // A sub-agent handing back its result ends its turn (a normal tool whose name
        // the loop knows, as tool-to-promise has it); a second in the batch is told
        // that the first's result is what its parent gets. A user's own tool of that
        // name, in a top-level agent, ends nothing; nor does one the turn's end
        // answered already.
        if (st.ctx.depth > 0 && name == yield_tool_name && r.ok && !answered) {
          if (!st.yielded) {
            st.yielded = true;
            st.answer = r.content;
          } else {
            r = CallResult{false,
                           fmt::format("not handed back: {} was called more than once in this batch; your parent "
                                       "gets the result of the one that ended first",
                                       yield_tool_name),
                           false, {}};
          }
        }
        if (!answered) {
          record(self, ToolCallResponseEvent{id, name, r.ok, r.content, r.images});
          for (auto& note : r.notifications)
            if (st.ctx.observer)
              st.ctx.observer->notification(note);
          if (st.ctx.observer)
            st.ctx.observer->tool_result(n, static_cast<int>(i), name, r.ok, r.content, ms_since(t0));
        }
        (*results)[i] = std::move(r);
        if (--*left == 0)
          all_done();
      };
      if (!rejected.empty()) {
        finished(CallResult{false, rejected, false, {}});
        continue;
      }
      if (!Json::parse(c.arguments)) {
        finished(CallResult{false, fmt::format("the arguments of this call are not valid JSON: {}", cut_text(c.arguments, 200)),
                            false, {}});
        continue;
      }
      self->request(st.turn, caf::infinite, call_atom::value, c.name, c.arguments)
        .then([finished](CallResult& r) { finished(std::move(r)); },
              [finished](caf::error& err) { finished(CallResult{false, error_text(err), false, {}}); });
    }
  };
  // RFD 037: the batch's spawns are registered before any of its calls runs.
  self->request(st.turn, caf::infinite, batch_atom::value, spawn_ids_of(*st.ctx.config, *calls_now, args))
    .then([run_calls](bool) { run_calls({}); },
          [run_calls](caf::error& err) { run_calls(error_text(err)); });
}

void send_request(loop_actor_t* self);

/// The next request; notifications no tool response carried go with it (RFD 011),
/// then what the person replied at the interrupt menu.
void request_response(loop_actor_t* self) {
  auto& st = self->state;
  if (st.interrupted)
    return finish_turn(self);
  self->request(st.turn, caf::infinite, pending_atom::value).then([self](std::vector<Notification>& notes) {
    auto& st = self->state;
    if (!notes.empty()) {
      for (auto& n : notes) {
        record(self, SystemNotificationEvent{n, true});
        if (st.ctx.observer)
          st.ctx.observer->notification(n);
      }
      st.messages.push_back(ChatMessage{chat_role::user, notifications_block(notes)});
    }
    for (auto& reply : st.replies) {
      record(self, UserReplyEvent{reply});
      st.messages.push_back(ChatMessage{chat_role::user, reply});
    }
    st.replies.clear();
    send_request(self);
  });
}

void send_request(loop_actor_t* self) {
  auto& st = self->state;
  if (st.interrupted)
    return finish_turn(self);
  if (st.ctx.max_rounds > 0 && st.responses >= st.ctx.max_rounds) {
    st.error = fmt::format("the turn stopped after {} assistant responses, the limit ([agents] max_rounds = {})",
                           st.responses, st.ctx.max_rounds);
    st.code = error_code::limit_reached;
    return finish_turn(self);
  }
  ++st.responses;
  st.response = {};
  st.response.requested = clock_type::now();
  st.streaming = true;
  auto gen = ++st.stream_gen;
  ChatRequest req;
  req.model = st.ctx.model;
  req.system = st.ctx.system_prompt;
  req.max_tokens = st.ctx.max_tokens;
  req.messages = st.messages;
  // Those kept from earlier results too: the newest, within what a request carries.
  keep_images_within(req.messages, ImageBudget{st.ctx.config->assistant.images});
  // The tools as they are now (an MCP server may have changed its own): declared
  // anew when they changed, else as for the request before.
  if (st.ctx.tools_now)
    if (auto set = st.ctx.tools_now(); set && set->config != st.ctx.config) {
      st.ctx.config = set->config;
      st.ctx.tools_json = nullptr;
    }
  if (!st.ctx.tools_json)
    st.ctx.tools_json = std::make_shared<const std::string>(tool_declarations(*st.ctx.config, st.ctx.tool_dialect).dump());
  req.tools_json = *st.ctx.tools_json;
  record(self, ChatRequestEvent{req.model, static_cast<int64_t>(req.messages.size())});
  if (st.store_failed) { // what the provider answers could not be kept
    st.streaming = false;
    return finish_turn(self);
  }
  auto me = caf::actor_cast<caf::actor>(self);
  auto provider = st.ctx.provider;
  // Each stream its own flag: a reply cuts one stream, and the next must not see it.
  st.cancel = std::make_shared<std::atomic<bool>>(false);
  auto cancel = st.cancel;
  // Events, retries and the end reach the loop as messages, in the order they came.
  auto stream = [provider, req, me, cancel, gen] {
    StreamHooks hooks;
    hooks.emit = [me, gen](ChatEvent e) { caf::anon_send(me, chat_atom::value, gen, std::move(e)); };
    hooks.on_retry = [me, gen](const std::string& why) { caf::anon_send(me, retry_atom::value, gen, why); };
    hooks.cancelled = [cancel] { return cancel->load(); };
    error_code kind = error_code::none;
    std::string failure;
    // A provider of the program's own that throws fails the response, as an error it
    // returned would: unanswered, the turn would wait for its stream's end forever.
    try {
      failure = provider->stream_classified(req, hooks, kind).error;
    } catch (...) {
      failure = fmt::format("the provider failed: {}", thrown_text());
      kind = error_code::provider_stream;
    }
    caf::anon_send(me, streamed_atom::value, gen, failure, kind);
  };
  if (!provider->blocking())
    return stream();
  // A provider that blocks (HTTP) streams from a detached actor of its own.
  auto streamer = self->spawn<caf::detached>([stream](caf::event_based_actor* worker) -> caf::behavior {
    return {[worker, stream](run_atom) {
      stream();
      worker->quit();
    }};
  });
  self->send(streamer, run_atom::value);
}

// -- the end of the turn ------------------------------------------------------------------

/// The turn-end strategies (#4), then: results of handles the assistant chose to
/// wait for come back as a tool response it answers; results of `await` handles
/// and undelivered notifications wait for the next turn.
void finish_turn(loop_actor_t* self) {
  auto& st = self->state;
  if (st.ending)
    return;
  if (st.menu_open) { // the person's choice may yet go on with the turn
    st.end_after_menu = true;
    return;
  }
  st.ending = true;
  {
    std::lock_guard lock(st.recent->mtx);
    auto from = st.messages.size() > RecentMessages::kept ? st.messages.size() - RecentMessages::kept : 0;
    st.recent->messages.assign(st.messages.begin() + static_cast<std::ptrdiff_t>(from), st.messages.end());
  }
  auto asked = clock_type::now(); // a wait the inquiry chose is the synthetic await's time
  self->request(st.turn, caf::infinite, turn_end_atom::value)
    .then(
      [self, asked](std::vector<HandleSummary>& ended_now, std::string& inquiry_failure) {
        auto& st = self->state;
        if (!inquiry_failure.empty() && st.error.empty() && !st.interrupted) {
          st.error = std::move(inquiry_failure);
          st.code = error_code::inquiry_failed;
        }
        auto handles = st.ended;
        handles.insert(handles.end(), ended_now.begin(), ended_now.end());
        std::vector<std::string> waited;
        for (auto& h : handles)
          if (h.outcome == turn_end_outcome::inquired_wait && h.state.stopped())
            waited.push_back(h.id);
        if (!waited.empty() && !st.waited_after_inquiry && !st.interrupted && st.error.empty()) {
          // As if the assistant had awaited them: the results are a tool response.
          st.waited_after_inquiry = true;
          st.ended = handles;
          AwaitResult result;
          for (auto& h : handles)
            if (h.outcome == turn_end_outcome::inquired_wait && h.state.stopped())
              result.completed.push_back(HandleStatus{h.id, h.state});
          auto args = Json::object();
          auto all = Json::array();
          for (auto& id : waited)
            all.push(Json(id));
          args.set("all", std::move(all));
          // An id of its own (providers refuse a history with two calls of one id).
          ToolCall call{own_call_id(st.messages), "await", args.dump()};
          record(self, ChatResponseEvent{"", {call}, "turn_end_inquiry"});
          record(self, ToolCallRequestEvent{call});
          auto cap = st.ctx.config->runtime.response_cap_bytes;
          auto content = await_answer_text(result, cap);
          record(self, ToolCallResponseEvent{call.id, call.name, true, content});
          // The log shows what the assistant sees (DESIGN: a tool_result is exactly that).
          if (st.ctx.observer) {
            st.ctx.observer->tool_call(st.responses, 0, call);
            st.ctx.observer->tool_result(st.responses, 0, call.name, true, content, ms_since(asked));
          }
          st.messages.push_back(ChatMessage{chat_role::assistant, "", {call}});
          st.messages.push_back(ChatMessage{chat_role::tool, content, {}, call.id, call.name});
          st.ending = false;
          return request_response(self);
        }
        // The handles before this index had their results in the turn's one synthetic
        // await (waited for at an earlier end of this turn, as the inquiry chose).
        size_t answered = st.waited_after_inquiry ? st.ended.size() : 0;
        self->request(st.turn, caf::infinite, pending_atom::value)
          .then([self, handles, answered](std::vector<Notification>& undelivered) {
            auto& st = self->state;
            // For the next turn: what no response carried, and what the turn end
            // waited for without the assistant (policy await, or the inquiry's
            // wait when the turn's await answered earlier ones or none).
            auto carry = undelivered;
            for (size_t i = 0; i < handles.size(); ++i) {
              auto& h = handles[i];
              // Ended by the turn's end: the next turn's model would find it gone
              // ("not found") with nothing saying why.
              // (Not a one-shot run's, "#callN": no handle the model knew; its call
              // says how it ended.)
              if ((h.outcome == turn_end_outcome::aborted || h.outcome == turn_end_outcome::inquired_abort) &&
                  !h.id.starts_with('#')) {
                carry.push_back(aborted_at_end(h));
                continue;
              }
              bool waited_unseen = h.outcome == turn_end_outcome::awaited ||
                                   (h.outcome == turn_end_outcome::inquired_wait && i >= answered);
              if (!waited_unseen || !h.state.stopped())
                continue;
              auto what = h.state.ok ? fmt::format("finished after the turn ended: {}", h.state.content)
                                     : fmt::format("failed after the turn ended: {}", h.state.error.message);
              carry.push_back(Notification{"tool", "tool.stopped", h.state.ok ? "info" : "warning",
                                           fmt::format("Handle `{}` ({}) {}", h.id, h.tool, what), h.id});
            }
            for (auto& n : carry)
              record(self, SystemNotificationEvent{n});
            record_unanswered(self); // before turn_end: the turn's record is complete
            record(self, TurnEndEvent{handles, st.interrupted, st.error});
            st.end_recorded = true;
            if (!st.ctx.observer)
              return conclude(self);
            self->request(st.turn, caf::infinite, counts_atom::value)
              .then([self, handles, undelivered](HandleCounts& counts) {
                      self->state.ctx.observer->handle_counts(counts);
                      self->state.ctx.observer->turn_end(handles, undelivered, self->state.error,
                                                         self->state.interrupted);
                      conclude(self);
                    },
                    [self, handles, undelivered](caf::error&) {
                      self->state.ctx.observer->turn_end(handles, undelivered, self->state.error,
                                                         self->state.interrupted);
                      conclude(self);
                    });
          });
      },
      [self](caf::error& err) {
        auto& st = self->state;
        if (st.error.empty() && !st.interrupted) { // an interrupted inquiry is no failure
          st.error = error_text(err);
          st.code = code_of(err);
        }
        record_unanswered(self);
        record(self, TurnEndEvent{std::nullopt, st.interrupted, st.error});
        st.end_recorded = true;
        if (st.ctx.observer)
          st.ctx.observer->turn_end({}, {}, st.error, st.interrupted);
        conclude(self);
      });
  if (st.abort_at_end) // interrupted twice before this end began: it waits on nothing
    self->send(st.turn, abort_all_atom::value);
}

// -- interrupts ---------------------------------------------------------------------------

/// The turn is ending: its stream, its inquiry and its questions stop.
void stop_asking(loop_actor_t* self) {
  auto& st = self->state;
  st.cancel->store(true);
  st.asking_stopped->store(true); // the inquiry's questions of this loop alone
  if (st.ctx.inquiry)
    st.ctx.inquiry->cancel(); // a program's own backend may stop its questions here
  if (st.ctx.prompts)
    st.ctx.prompts->cancel();
}

/// Stops the turn cleanly: what an interrupt does without a menu, or with `stop`.
void interrupt_turn(loop_actor_t* self) {
  auto& st = self->state;
  if (st.interrupted) {
    // Again, later: whatever the turn end still waits for stops now (or, once it
    // begins, does not wait).
    stop_asking(self);
    if (st.ending)
      self->send(st.turn, abort_all_atom::value);
    else
      st.abort_at_end = true;
    return;
  }
  st.interrupted = true;
  stop_asking(self);
  if (st.ending) {
    // The turn end waits (an inquiry, a handle's result): stop waiting.
    self->send(st.turn, abort_all_atom::value);
  } else if (st.streaming) {
    // Keep what came: the response ends here.
    ++st.stream_gen;
    on_stream_end(self, {}, error_code::none);
  } else if (st.running_tools) {
    finish_turn(self); // the handles' strategies decide; late answers are dropped
  }
}

/// Aborts every handle and ends the turn now (a second interrupt). What still runs
/// is listed first, bounded (this is the way out), so that the next turn hears that
/// each was aborted, as after one interrupt.
void abort_everything(loop_actor_t* self) {
  auto& st = self->state;
  if (st.aborting_all)
    return;
  st.aborting_all = true;
  st.menu_open = false;
  stop_asking(self);
  if (st.error.empty()) {
    st.error = "interrupted twice: every handle was aborted";
    st.code = error_code::interrupted;
  }
  // `listed`: none when the listing failed (the record then says no list, not an
  // empty one).
  auto end = [self](const std::optional<std::vector<HandleSummary>>& listed) {
    auto& st = self->state;
    // What still ran, each aborted now: the record and the log name them as a
    // turn's end names what it aborted (the log said "no handle left running").
    std::optional<std::vector<HandleSummary>> aborted;
    if (listed) {
      aborted.emplace();
      for (auto& h : *listed)
        if (!h.state.stopped()) {
          aborted->push_back(h);
          aborted->back().outcome = turn_end_outcome::aborted;
        }
    }
    // Unless the turn's end was written already (this interrupt came as it ended).
    if (!st.end_recorded) {
      if (aborted)
        for (auto& h : *aborted)
          if (!h.id.starts_with('#'))
            record(self, SystemNotificationEvent{aborted_at_end(h)});
      record_unanswered(self);
      record(self, TurnEndEvent{aborted, true, st.error});
      st.end_recorded = true;
    }
    if (st.ctx.observer)
      st.ctx.observer->turn_end(aborted.value_or(std::vector<HandleSummary>{}), {}, st.error, true);
    // Killing the turn takes its registry and every handle's process group with it.
    self->send_exit(st.turn, caf::exit_reason::kill);
    st.done.deliver(result_of(st, true));
    self->quit();
  };
  // Awaited: nothing else of the turn is recorded in between.
  self->request(st.turn, std::chrono::seconds(1), list_atom::value)
    .await([end](std::vector<HandleSummary>& listed) { end(listed); },
           [self, end](caf::error& err) {
             if (self->state.ctx.observer)
               self->state.ctx.observer->warning(fmt::format("the handles still running could not be listed ({}): "
                                                             "the next turn is not told which were aborted",
                                                             error_text(err)));
             end(std::nullopt);
           });
}

/// Asks the person (off the actor threads: the menu blocks) what the interrupt
/// means; the answer comes back as (menu_atom, action, text). The stream and the
/// tools go on meanwhile: only the text is held back.
void open_menu(loop_actor_t* self) {
  auto& st = self->state;
  st.menu_open = true;
  auto what = st.streaming ? interrupted_while::streaming : interrupted_while::running_tools;
  auto prompts = st.ctx.prompts;
  auto me = caf::actor_cast<caf::actor>(self);
  auto menu = self->spawn<caf::detached>([prompts, what, me](caf::event_based_actor* worker) -> caf::behavior {
    return {[worker, prompts, what, me](run_atom) {
      // No answer, or a menu that failed (a terminal gone): stop, as without a menu.
      InterruptChoice choice;
      try {
        choice = prompts->interrupt_menu(what).value_or(InterruptChoice{});
      } catch (...) {
      }
      caf::anon_send(me, menu_atom::value, static_cast<int>(choice.what), std::move(choice.text));
      worker->quit();
    }};
  });
  self->send(menu, run_atom::value);
}

void on_menu_choice(loop_actor_t* self, InterruptChoice choice) {
  auto& st = self->state;
  if (!st.menu_open)
    return; // the turn was aborted meanwhile
  st.menu_open = false;
  // What streamed while the menu was open is shown now: the choice keeps it.
  if (st.ctx.renderer) {
    if (!st.held.empty())
      st.ctx.renderer->render(st.held);
    if (st.flush_held)
      st.ctx.renderer->flush();
  }
  st.held.clear();
  st.flush_held = false;
  bool would_end = std::exchange(st.end_after_menu, false);
  if (choice.what == InterruptChoice::action::reply && is_blank(choice.text))
    choice.what = InterruptChoice::action::resume; // nothing to say: as if continued
  if (st.ctx.observer)
    st.ctx.observer->interrupt_choice(choice);
  switch (choice.what) {
    case InterruptChoice::action::stop:
      if (would_end) {
        st.interrupted = true;
        stop_asking(self); // as interrupt_turn does: no turn-end inquiry is asked
        return finish_turn(self);
      }
      return interrupt_turn(self);
    case InterruptChoice::action::resume:
      if (would_end)
        finish_turn(self);
      return;
    case InterruptChoice::action::reply:
      st.replies.push_back(std::move(choice.text));
      if (st.streaming) {
        // The response ends here, its text kept; the next request carries the reply.
        st.cancel->store(true);
        ++st.stream_gen;
        return on_stream_end(self, {}, error_code::none, true);
      }
      if (would_end) {
        // The assistant had finished: the reply asks it again, unless the turn failed.
        if (!st.error.empty() || st.yielded || st.store_failed)
          return finish_turn(self);
        return request_response(self);
      }
      return; // tools run: the request after them carries the reply
  }
}

// -- hooks for the turn actor -------------------------------------------------------------

TurnContext turn_context_of(loop_actor_t* self) {
  auto& ctx = self->state.ctx;
  TurnContext t;
  t.config = ctx.config;
  t.io = ctx.io;
  t.permissions = ctx.permissions;
  t.depth = ctx.depth;
  t.shared_registry = ctx.shared_registry;
  t.agent = ctx.agent_path;
  t.executors = ctx.executors;
  t.tools_now = ctx.tools_now;
  if (ctx.subagents)
    t.subagents = subagent_factory(ctx);
  if (auto prompts = ctx.prompts) {
    t.ask_user = [prompts](const std::string& tool, const Question& q) { return prompts->ask(tool, q); };
    if (prompts->asks_permission())
      t.ask_permission = [prompts](const std::string& tool, const Json& args, const std::string&) {
        return prompts->permit(tool, args);
      };
  }
  if (auto inquiry = ctx.inquiry) {
    auto store = ctx.store;
    auto id = ctx.conversation_id;
    auto recent = self->state.recent;
    auto stopped = [flag = self->state.asking_stopped] { return flag->load(); };
    // Recorded around the call: the inquiry is part of the conversation. One whose
    // record fails has no answer (its handles are then aborted, as with no one to
    // ask): what the store holds must say why what came after it happened.
    auto record = [store, id](const Json& event) { return store ? store->append(id, event) : Status::success(); };
    t.inquire = [inquiry, record, recent, stopped](const std::vector<HandleSummary>& outstanding)
      -> Result<InquiryAnswers> {
      if (auto s = record(to_json(InquiryRequestEvent{outstanding})); !s)
        return Error{"cannot record the turn-end inquiry: " + s.error};
      std::vector<ChatMessage> context;
      {
        std::lock_guard lock(recent->mtx);
        context = recent->messages;
      }
      auto answers = inquiry->turn_end(outstanding, context, stopped);
      if (auto s = record(to_json(InquiryResponseEvent{answers ? *answers : InquiryAnswers{},
                                                       answers ? std::string() : answers.error()}));
          !s)
        return Error{"cannot record the answer to the turn-end inquiry: " + s.error};
      return answers;
    };
    t.ask_assistant = [inquiry, record, stopped](const std::string& tool, const Question& q) -> std::optional<Json> {
      if (!record(to_json(InquiryRequestEvent{{}, tool, q})))
        return std::nullopt;
      auto a = inquiry->answer(tool, q, stopped);
      if (!record(to_json(InquiryResponseEvent{std::nullopt, "", q.id, a ? *a : Json()})))
        return std::nullopt;
      return a;
    };
  }
  return t;
}

caf::behavior loop_behavior(loop_actor_t* self, TurnLoopContext ctx) {
  self->state.ctx = std::move(ctx);
  self->state.turn = spawn_turn(self->system(), turn_context_of(self));
  self->link_to(self->state.turn);
  // A hook of the program's that throws here (its observer, renderer or store, its
  // prompts outside a question) ends the turn as failed, saying what it threw, and
  // its handles go as at an abort. Left to CAF, this actor would end and its caller
  // never hear.
  self->set_exception_handler([self](std::exception_ptr& thrown) -> caf::error {
    auto& st = self->state;
    st.error = fmt::format("the turn failed: a hook of the program threw: {}", thrown_text(thrown));
    st.code = error_code::hook_threw;
    self->send_exit(st.turn, caf::exit_reason::kill);
    if (st.done.pending())
      st.done.deliver(result_of(st, false));
    return caf::exit_reason::user_shutdown;
  });
  return {
    [self](run_atom, const std::string& prompt) -> caf::result<TurnResult> {
      auto& st = self->state;
      std::vector<Json> history;
      if (st.ctx.store) {
        auto loaded = st.ctx.store->load(st.ctx.conversation_id);
        if (!loaded) {
          // Answered as the turn's end is: its turn actor and the loop go too (else
          // they lingered until the program let go of the turn).
          st.done = self->make_response_promise();
          st.error = loaded.error();
          st.code = error_code::store;
          conclude(self);
          return st.done;
        }
        if (st.ctx.observer)
          for (auto& w : loaded->warnings)
            st.ctx.observer->warning(w);
        history = std::move(loaded->events);
        // Its sub-agents' events are kept beside its own; they are not its turns.
        std::erase_if(history, is_subagent_event);
      }
      st.done = self->make_response_promise();
      // Notifications the last turn could not deliver ride with this prompt (an
      // event that cannot be read is passed over).
      TurnStartEvent start{prompt, st.ctx.model, {}};
      bool in_last_turn = true;
      for (auto it = history.rbegin(); it != history.rend(); ++it) {
        auto event = conversation_event_from(*it);
        if (event && std::holds_alternative<TurnStartEvent>(*event)) {
          in_last_turn = false;
          ++st.turn_number;
        } else if (auto* note = event ? std::get_if<SystemNotificationEvent>(&*event) : nullptr;
                   note && in_last_turn && !note->delivered) {
          start.notifications.insert(start.notifications.begin(), note->notification);
        }
      }
      ++st.turn_number; // this one
      st.messages = messages_of(history);
      std::string text = prompt;
      if (!start.notifications.empty())
        text = notifications_block(start.notifications) + "\n\n" + prompt;
      record(self, start);
      if (st.ctx.observer)
        st.ctx.observer->turn_start();
      st.messages.push_back(ChatMessage{chat_role::user, text});
      request_response(self);
      return st.done;
    },
    [self](chat_atom, uint64_t gen, ChatEvent& e) {
      auto& st = self->state;
      if (gen != st.stream_gen || !st.streaming)
        return;
      switch (e.kind) {
        case chat_event_kind::text:
          st.response.text += e.text;
          show(self, e.text);
          break;
        case chat_event_kind::tool_call: {
          // Each call's id names its result: one a provider repeats (or gives none,
          // or makes up as call_0 in every response) would pair two calls with one
          // result, and the APIs refuse a history with two calls of one id.
          auto& calls = st.response.calls;
          if (e.call.id.empty() || id_taken(st.messages, e.call.id) || id_taken_in(calls, e.call.id))
            e.call.id = own_call_id(st.messages, calls);
          calls.push_back(std::move(e.call));
          break;
        }
        case chat_event_kind::done:
          st.response.finish_reason = e.finish_reason;
          st.response.provider_extra = e.provider_extra;
          break;
        case chat_event_kind::usage:
          st.response.tokens_in = e.tokens_in;
          st.response.tokens_out = e.tokens_out;
          break;
        case chat_event_kind::reasoning:
          // Shown, not kept: no request carries it back. Not held for the menu
          // either: what the model thought meanwhile is passed over.
          if (st.ctx.renderer && !st.menu_open)
            st.ctx.renderer->render_reasoning(e.text);
          break;
      }
    },
    [self](streamed_atom, uint64_t gen, const std::string& err, error_code code) {
      auto& st = self->state;
      if (gen == st.stream_gen && st.streaming)
        on_stream_end(self, st.interrupted ? std::string() : err, code);
    },
    [self](retry_atom, uint64_t gen, const std::string& why) {
      auto& st = self->state;
      if (gen != st.stream_gen)
        return;
      // A new attempt at the same request: its time counts from the first.
      auto requested = st.response.requested;
      st.response = {};
      st.response.requested = requested;
      st.held.clear();
      st.flush_held = false;
      if (st.ctx.renderer)
        st.ctx.renderer->reset();
      if (st.ctx.observer)
        st.ctx.observer->retry(why);
    },
    [self](tick_atom) { on_tick(self); },
    [self](interrupt_atom) {
      auto& st = self->state;
      if (st.menu_open)
        return abort_everything(self); // a second interrupt, at the menu
      // The person decides what the interrupt means, where a menu can ask them.
      bool menu = st.ctx.prompts && st.ctx.prompts->offers_menu();
      if (menu && !st.interrupted && !st.ending && (st.streaming || st.running_tools))
        return open_menu(self);
      // Nothing to ask about (the turn is ending, or between requests): it stops,
      // and a display that would have shown the menu says so.
      if (menu && !st.interrupted && st.ctx.observer)
        st.ctx.observer->interrupt_choice(InterruptChoice{InterruptChoice::action::stop, {}});
      interrupt_turn(self);
    },
    [self](menu_atom, int what, std::string& text) {
      on_menu_choice(self, InterruptChoice{static_cast<InterruptChoice::action>(what), std::move(text)});
    },
    // jp-actors is ending (a signal): nobody is asked what the interrupt means.
    [self](stop_atom) { interrupt_turn(self); },
    [self](quit_atom) { abort_everything(self); },
    // A program let go of its jp::Turn: `why` is the turn's end. One that never ran
    // has nothing to record or tell: its turn goes, and the waiter hears why.
    [self](quit_atom, const std::string& why) {
      auto& st = self->state;
      if (!st.done.pending()) {
        self->send_exit(st.turn, caf::exit_reason::kill);
        self->quit();
        return;
      }
      if (st.error.empty()) {
        st.error = why;
        st.code = error_code::interrupted;
      }
      abort_everything(self);
    },
    // Delegated: the turn answers the asker itself, even once this loop has ended
    // (an abort can end the turn's last wait before its own answer comes).
    [self](list_atom) -> caf::delegated<std::vector<HandleSummary>> {
      return self->delegate(self->state.turn, list_atom::value);
    },
    [self](user_abort_atom, const std::string& id) -> caf::delegated<HandleReport> {
      // The assistant hears of it with its next request: it did not abort it itself.
      self->send(self->state.turn, notify_atom::value,
                 Notification{"user", "handle.aborted", "warning",
                              fmt::format("Handle `{}` was aborted by the user (from another terminal).", id), id});
      return self->delegate(self->state.turn, user_abort_atom::value, id);
    },
  };
}

} // namespace

caf::actor spawn_turn_loop(caf::actor_system& sys, TurnLoopContext ctx) {
  auto live = ctx.live_loops;
  auto path = ctx.agent_path;
  // It syncs its conversation store and writes its observer's log: never on the io
  // thread, which an exit's answer may reach while other tools' pipes wait on it.
  // Named before anything can schedule it (lazy_init: not started until its first message).
  auto loop = sys.spawn<caf::lazy_init>(loop_behavior, std::move(ctx));
  keep_off_io_thread(caf::actor_cast<caf::actor>(loop));
  if (live)
    live->add(std::move(path), loop);
  return loop;
}

std::vector<ChatMessage> messages_of(const std::vector<Json>& events) {
  std::vector<ChatMessage> out;
  std::vector<std::string> unanswered; // tool call ids still without a response
  std::vector<Notification> delivered; // notifications a request carried, not yet placed
  size_t turn_start = 0;               // where the current turn's messages begin
  std::vector<Notification> turn_notes; // the notifications the current turn carried
  auto settle_calls = [&] {
    // Providers insist on a response for every call; a turn cut short left none.
    for (auto& id : unanswered)
      out.push_back(ChatMessage{chat_role::tool,
                                "no result was recorded for this call: jp-actors ended, or could not write the "
                                "conversation, before it answered; it may have run",
                                {}, id, "", true});
    unanswered.clear();
  };
  // A turn the provider never answered (its request refused, no connection, the
  // process killed first) is left out: its prompt, sent again with every later
  // request, failed each of them the same way (a prompt too long, an attachment
  // refused) or was asked again beside the next one. The notifications it carried
  // (handles' news) are kept.
  bool in_turn = false, answered = false;
  // The current turn's messages replaced by its notifications and `said` (if any).
  auto leave_out_turn = [&](const std::string& said) {
    out.resize(turn_start);
    unanswered.clear();
    std::string text = turn_notes.empty() ? said : notifications_block(turn_notes);
    if (!turn_notes.empty() && !said.empty())
      text += "\n\n" + said;
    if (!text.empty())
      out.push_back(ChatMessage{chat_role::user, text});
    turn_notes.clear();
    in_turn = false;
  };
  auto leave_out_unanswered = [&] {
    if (in_turn && !answered)
      leave_out_turn("");
  };
  for (auto& json : events) {
    auto event = conversation_event_from(json);
    auto* note = event ? std::get_if<SystemNotificationEvent>(&*event) : nullptr;
    // Delivered notifications form one block until any other event, even one that
    // cannot be read -- but a notification that cannot be read is only dropped.
    auto* kind = json.find("event");
    bool a_notification = note || (kind && kind->is_string() && kind->as_string() == SystemNotificationEvent::kind);
    if (!delivered.empty() && !a_notification) {
      settle_calls();
      out.push_back(ChatMessage{chat_role::user, notifications_block(delivered)});
      turn_notes.insert(turn_notes.end(), delivered.begin(), delivered.end());
      delivered.clear();
    }
    if (!event)
      continue;
    if (auto* start = std::get_if<TurnStartEvent>(&*event)) {
      settle_calls();
      leave_out_unanswered();
      in_turn = true;
      answered = false;
      turn_start = out.size();
      turn_notes = start->notifications;
      std::string text = start->prompt;
      if (!start->notifications.empty())
        text = notifications_block(start->notifications) + "\n\n" + text;
      out.push_back(ChatMessage{chat_role::user, text});
    } else if (auto* response = std::get_if<ChatResponseEvent>(&*event)) {
      settle_calls();
      // A turn the provider refused is left out (Anthropic refuses again every request
      // that still holds it: its prompt, and what its tools brought in), said so; the
      // notifications it carried (handles' news) are kept.
      if (cut_off_of(response->finish_reason) == cut_off::refused) {
        leave_out_turn("[A turn here was refused by the provider and is left out: its prompt, its tool calls "
                       "and their results.]");
        continue;
      }
      for (auto& c : response->tool_calls)
        unanswered.push_back(c.id);
      answered = answered || !response->text.empty() || !response->tool_calls.empty();
      if (!response->text.empty() || !response->tool_calls.empty()) {
        out.push_back(ChatMessage{chat_role::assistant, response->text, response->tool_calls});
        out.back().provider_extra = response->provider_extra;
      }
    } else if (auto* reply = std::get_if<UserReplyEvent>(&*event)) {
      settle_calls();
      out.push_back(ChatMessage{chat_role::user, reply->text});
    } else if (note && note->delivered) {
      // Delivered with a request of its turn, after the tool responses: one block.
      delivered.push_back(note->notification);
    } else if (auto* result = std::get_if<ToolCallResponseEvent>(&*event)) {
      std::erase(unanswered, result->id);
      out.push_back(ChatMessage{chat_role::tool, result->content, {}, result->id, result->name, !result->ok});
      out.back().images = result->images;
    }
  }
  settle_calls();
  leave_out_unanswered();
  if (!delivered.empty())
    out.push_back(ChatMessage{chat_role::user, notifications_block(delivered)});
  forget_old_images(out);
  return out;
}

} // namespace jp
