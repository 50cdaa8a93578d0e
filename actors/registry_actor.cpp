#include "actors/registry_actor.hpp"

#include <algorithm>
#include <caf/all.hpp>
#include <chrono>
#include <csignal>
#include <fmt/format.h>
#include <map>
#include <optional>
#include <set>

#include "actors/exited_without_stopping.hpp"
#include "actors/handle_actor.hpp"
#include "messages/atoms.hpp"
#include "messages/json.hpp"
#include "messages/notification.hpp"
#include "runtime/process/process.hpp"

namespace jp {

std::string handle_not_found(const std::string& id) {
  return fmt::format("Handle `{}` not found", cut_text(id));
}

namespace {

enum class entry_phase { reserved, live, stopped };

struct entry {
  std::string tool;
  std::string node; // the configured node it runs on ("" = here)
  entry_phase phase = entry_phase::reserved;
  handle_actor handle;
  std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
  HandleReport final;
  std::vector<watcher_actor> watchers;
  // A one-shot call's entry (its id "#N" is one no assistant can choose): it answers
  // its waiters when it stops or, with a control channel, when its tool asks (the
  // turn answers, the tool runs on). Not listed, never notified.
  bool oneshot = false;
  bool control = false;
  std::vector<caf::response_promise> oneshot_waiters;
  // Notifications (RFD 037): only while the assistant neither fetched nor awaited it.
  bool observed = false;
  bool notify_success = false, notify_failure = false, notify_content = false, notify_waiting = false;
  bool waiting_notified = false; // a tool.waiting went to the sink since it last waited no more
  std::optional<Question> waiting; // the question its tool waits on (control channel)
  std::optional<Question> told;    // a one-shot run's: the question its caller was last given
  std::set<std::string> configured_answers; // the ids of its questions the config answers
  ChildSpec child;
  uint64_t seq = 0; // registry_state::changes at its last change (HandleStatus::seq)
  int64_t peak_before = 0; // the counts' peak before it started (a refused one gives its place back)
  // Aborted while reserved (an abort before its spawn in one batch): that spawn is
  // refused, not run behind an answer that said it was stopped.
  bool aborted_unstarted = false;
  // Aborted by an interrupt (abort_all) and not yet listed by a turn's end: one that
  // stopped before the end came is still the end's to report (aborted), not gone.
  bool aborted_by_interrupt = false;
  // A turn's end lists it when it stops (it was live when the end came): an
  // interrupt that ends it meanwhile leaves it to that end, not flagged for the next.
  bool listed_by_end = false;
  // Nobody will look at it again (a node client's handle gone): its entry, final
  // state and output included, goes once it stopped.
  bool dropped_at_stop = false;
};

struct registry_state {
  HandleFactory factory;
  std::map<std::string, entry> entries;
  std::map<caf::actor_addr, std::string> by_actor;
  // Live handle actors; shared with the cleanup that ends them with the registry.
  std::shared_ptr<std::map<caf::actor_addr, handle_actor>> children =
    std::make_shared<std::map<caf::actor_addr, handle_actor>>();
  uint64_t next_internal = 0;
  HandleCounts counts;
  int64_t live = 0; // handles (not one-shot runs) started and not yet stopped
  notification_sink sink; // none: no notifications
  // Handles a turn end waits for (await, inquire:wait): called when they stop. Each
  // wait is numbered: its timer, which is not cancelled, ends no later wait on the id.
  struct TurnEndWait {
    std::function<void(const ToolState&)> done;
    uint64_t number = 0;
    // Why the turn end aborted it ("" unless it did: its timeout ran out, or it asked
    // what nobody answers); not said of one whose report says it ended by itself.
    std::string aborted_because;
  };
  std::map<std::string, TurnEndWait> turn_end_waits;
  uint64_t turn_end_waits_made = 0;
  // Watchers (turns, this one's and those of agents that share), each monitored
  // once: one that ends is dropped from every handle it watched (down handler).
  std::set<caf::actor_addr> watchers;
  // Every change of every handle counts one (an entry made, a question asked or
  // answered, a stop): statuses carry it so that watchers can order them.
  uint64_t changes = 0;
  // One-shot runs gone on as handles (detach): their old id -> their handle's. What
  // they sent before they heard of it comes under the old one.
  std::map<std::string, std::string> renamed;
  static inline const char* name = "jp.registry";
};

// The registry's own timer (a turn-end wait ran out) is no one else's business.
using registry_impl = registry_actor::extend<caf::reacts_to<timeout_atom, std::string, uint64_t>>;
using registry_actor_t = registry_impl::stateful_base<registry_state>;

// "Not found", naming the ids there are (the latest first, at most 10), so that a
// model that misspelt or forgot one sees which to use.
caf::error not_found(const registry_state& st, const std::string& id) {
  std::vector<std::pair<uint64_t, const std::string*>> known;
  for (auto& [other, e] : st.entries)
    if (!e.oneshot)
      known.emplace_back(e.seq, &other);
  std::sort(known.begin(), known.end(), [](auto& a, auto& b) { return a.first > b.first; });
  std::string ids;
  for (size_t i = 0; i < known.size() && i < 10; ++i)
    ids += fmt::format("{}`{}`", i ? ", " : "", cut_text(*known[i].second));
  if (known.size() > 10)
    ids += fmt::format(" and {} more", known.size() - 10);
  return make_error(error_code::unknown_handle,
                    fmt::format("{}: {}", handle_not_found(id),
                                known.empty() ? std::string("there are no handles")
                                              : fmt::format("the handles are {}", ids)));
}

ToolState pending_state() {
  return ToolState::running();
}

double elapsed_secs(const entry& e) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - e.started).count();
}

HandleStatus status_of(const std::string& id, const entry& e) {
  if (e.phase == entry_phase::stopped)
    return {id, e.final.state, e.final.output_file, e.final.node, e.seq, e.final.own_end};
  return {id, e.waiting ? ToolState::waiting(*e.waiting) : pending_state(), {}, e.node, e.seq};
}

/// The states of `ids` (an error naming the first unknown one); `watcher`, if set,
/// is told (update_atom) when each of them that still runs stops or asks.
caf::result<std::vector<HandleStatus>> statuses(registry_actor_t* self,
                                                const std::vector<std::string>& ids,
                                                const watcher_actor& watcher) {
  std::vector<entry*> found;
  found.reserve(ids.size());
  for (auto& id : ids) {
    auto it = self->state.entries.find(id);
    if (it == self->state.entries.end())
      return not_found(self->state, id);
    found.push_back(&it->second);
  }
  std::vector<HandleStatus> out;
  out.reserve(ids.size());
  for (size_t i = 0; i < ids.size(); ++i) {
    auto& e = *found[i];
    // Awaited by its own agent (the sink's turn), whose news then come through the
    // await; another agent's await, or a look that is no one's, leaves them on.
    if (watcher && self->state.sink && watcher.address() == self->state.sink.address())
      e.observed = true;
    // Once per watcher: a turn watches for all its awaits, each stop is told once.
    if (e.phase != entry_phase::stopped && watcher && std::find(e.watchers.begin(), e.watchers.end(), watcher) == e.watchers.end()) {
      e.watchers.push_back(watcher);
      if (self->state.watchers.insert(watcher.address()).second)
        self->monitor(watcher);
    }
    out.push_back(status_of(ids[i], e));
  }
  return out;
}

/// A preview of a result for a notification: its last line that holds something
/// (a build's "1 passed, 0 failed", not the command it began with), shortened.
std::string preview(const std::string& text) {
  auto end = text.find_last_not_of(" \t\r\n");
  if (end == std::string::npos)
    return {};
  auto start = text.rfind('\n', end);
  auto line = text.substr(start == std::string::npos ? 0 : start + 1, end + 1 - (start == std::string::npos ? 0 : start + 1));
  // A progress line redrawn with \r ("50%\r100%"): what it shows last.
  if (auto cr = line.find_last_of('\r'); cr != std::string::npos && cr + 1 < line.size())
    line = line.substr(cr + 1);
  return cut_text(line, 160);
}

/// Tells the sink about `id`'s stop when its config asks for it and the assistant is
/// not already looking at it. `died`: its actor died, not its process.
void notify_stop(registry_actor_t* self, const std::string& id, const entry& e, bool died) {
  if (!self->state.sink || e.observed || !e.oneshot_waiters.empty() || e.oneshot)
    return;
  auto& s = e.final.state;
  Notification n{"tool", "tool.stopped", "info", "", id};
  auto last_line = preview(s.content); // "" for output of blank lines only, as for none
  if (died) {
    n.level = "error";
    n.message = fmt::format("Handle `{}` ({}) died unexpectedly: {}", id, e.tool, s.error.message);
  } else if (s.ok && e.notify_success) {
    n.message = last_line.empty() ? fmt::format("Handle `{}` ({}) finished", id, e.tool)
                                  : fmt::format("Handle `{}` ({}) finished: {}", id, e.tool, last_line);
  } else if (!s.ok && e.notify_failure) {
    n.level = "warning";
    n.message = last_line.empty() ? fmt::format("Handle `{}` ({}) failed: {}", id, e.tool, s.error.message)
                                  : fmt::format("Handle `{}` ({}) failed: {}; its last line: {}", id, e.tool,
                                                s.error.message, last_line);
  } else {
    return;
  }
  self->send(self->state.sink, notify_atom::value, std::move(n));
}

void mark_stopped(registry_actor_t* self, const std::string& id, HandleReport report, bool died = false) {
  auto it = self->state.entries.find(id);
  if (it == self->state.entries.end() || it->second.phase == entry_phase::stopped)
    return;
  auto& e = it->second;
  if (e.phase == entry_phase::live && !e.oneshot) {
    auto& st = self->state;
    --st.live;
    // Refused before anything ran (a sub-agent past a limit): no handle was spawned,
    // and it counted in every peak since it started, which is one lower without it
    // (others spawned meanwhile made the peak 4 with 3 spawned). So are the peaks the
    // handles started since then saw (a second refusal's correction starts there).
    if (report.refused) {
      --st.counts.spawned;
      if (st.counts.peak_live > e.peak_before)
        st.counts.peak_live = std::max(e.peak_before, st.counts.peak_live - 1);
      for (auto& [other_id, other] : st.entries)
        if (&other != &e && other.peak_before > e.peak_before)
          --other.peak_before;
    }
  }
  if (!self->state.renamed.empty()) // its old id, if it was a one-shot run, says nothing more
    std::erase_if(self->state.renamed, [&](const auto& kv) { return kv.second == id; });
  // Ended by a signal's shutdown, which signals every group as it stops the turns:
  // the interrupt's doing, as abort_all's is, so the turn's end lists it whether its
  // list came first or not (it was left out when the stop came first).
  if (e.phase == entry_phase::live && !e.listed_by_end && !report.own_end && new_processes_refused())
    e.aborted_by_interrupt = true;
  e.phase = entry_phase::stopped;
  e.seq = ++self->state.changes;
  e.final = std::move(report);
  e.final.id = id;
  // A stateful handle whose process exited is stopped, whatever its last words: a
  // question it printed can no longer be answered through `apply`.
  if (!e.oneshot && !e.final.state.stopped())
    e.final.state = exited_without_stopping(id, e.final.state, e.configured_answers.count(e.final.state.question.id) > 0);
  notify_stop(self, id, e, died);
  // The final state lives here now: the handle may go (after the requests already
  // delegated to it, which it still answers). Sent before the news of the stop: an
  // actor woken later runs sooner, so the watchers and callers hear first.
  if (e.handle) {
    self->demonitor(e.handle.address());
    self->state.by_actor.erase(e.handle.address());
    self->state.children->erase(e.handle.address());
    self->send(e.handle, retire_atom::value);
    e.handle = nullptr;
  }
  for (auto& w : e.watchers)
    self->send(w, update_atom::value, status_of(id, e));
  e.watchers.clear();
  // The turn's end waiting on it hears after the watchers: the turn takes their news
  // (an await it answers) before the end's answer goes on.
  if (auto w = self->state.turn_end_waits.find(id); w != self->state.turn_end_waits.end()) {
    auto complete = std::move(w->second.done);
    auto because = std::move(w->second.aborted_because);
    self->state.turn_end_waits.erase(w);
    if (because.empty() || e.final.own_end) { // or it ended as the abort was sent, before it came
      complete(e.final.state);
    } else {
      // Aborted by the turn's end, however it took the signal (a server may exit 0
      // on TERM): said so, with what it said itself.
      auto state = e.final.state;
      auto said = state.ok ? std::string() : state.error.message;
      state.ok = false;
      state.error = ToolError{said.empty() ? because : fmt::format("{} ({})", because, said), {}, false};
      complete(state);
    }
  }
  bool answered = !e.oneshot_waiters.empty();
  for (auto& rp : e.oneshot_waiters)
    rp.deliver(e.final);
  // One-shot entries exist only for the duration of their call (one that stopped
  // while its question was being answered waits for that answer's request).
  if ((e.oneshot && answered) || e.dropped_at_stop)
    self->state.entries.erase(it);
}

void start(registry_actor_t* self, const std::string& id, entry& e, LaunchSpec& spec) {
  e.tool = spec.tool;
  e.node = spec.node;
  e.phase = entry_phase::live;
  e.notify_success = spec.notify_success;
  e.notify_failure = spec.notify_failure;
  e.notify_content = spec.notify_content;
  e.notify_waiting = spec.notify_waiting;
  e.child = spec.child;
  for (auto& [question, answer] : spec.fixed_answers)
    e.configured_answers.insert(question);
  e.started = std::chrono::steady_clock::now();
  if (!e.oneshot) {
    auto& st = self->state;
    e.peak_before = st.counts.peak_live;
    ++st.counts.spawned;
    st.counts.peak_live = std::max(st.counts.peak_live, ++st.live);
  }
  // Last use of `spec` here and in the callers: the factory may take it.
  e.handle = self->state.factory(self, id, spec, supervisor_actor{self});
  self->monitor(e.handle);
  self->state.by_actor[e.handle.address()] = id;
  (*self->state.children)[e.handle.address()] = e.handle;
}

// Reserve `id` for a spawn, or say why not.
caf::error reserve(registry_actor_t* self, const std::string& id) {
  auto it = self->state.entries.find(id);
  if (it != self->state.entries.end() && it->second.phase != entry_phase::stopped)
    return make_error(error_code::handle_exists,
                      fmt::format("Handle `{}` already exists and is still {}; choose another id or "
                            "abort it first",
                            id, it->second.phase == entry_phase::live ? "running" : "starting"));
  auto& e = self->state.entries[id];
  e = entry{};
  e.seq = ++self->state.changes; // after the last of a stopped one under the same id
  return {};
}

// The entry of `id`, or nullptr (the caller answers "not found").
entry* find_entry(registry_actor_t* self, const std::string& id) {
  auto it = self->state.entries.find(id);
  return it == self->state.entries.end() ? nullptr : &it->second;
}

// A request about handle `id`: unknown -> "not found"; live -> the handle answers
// (`msg` is delegated to it); reserved or stopped -> `answer(entry)` answers here.
template <class Answer, class... Ts>
caf::result<HandleReport> route(registry_actor_t* self, const std::string& id, Answer answer,
                                Ts&&... msg) {
  auto* e = find_entry(self, id);
  if (!e)
    return not_found(self->state, id);
  if (e->phase != entry_phase::live)
    return answer(*e);
  self->delegate(e->handle, std::forward<Ts>(msg)...);
  return caf::delegated<HandleReport>{};
}

/// The assistant looked at `id` (fetch, apply, abort): no notifications about it.
void observed(registry_actor_t* self, const std::string& id) {
  if (auto* e = find_entry(self, id))
    e->observed = true;
}

/// What a child spec's turn-end policy comes to, given the inquiry's answer for it
/// (none: abort).
turn_end_outcome outcome_of(turn_end_policy policy, std::optional<inquiry_answer> answer) {
  switch (policy) {
    case turn_end_policy::abort: return turn_end_outcome::aborted;
    case turn_end_policy::await: return turn_end_outcome::awaited;
    case turn_end_policy::inquire:
      return answer == inquiry_answer::wait ? turn_end_outcome::inquired_wait : turn_end_outcome::inquired_abort;
  }
  return turn_end_outcome::aborted;
}

void abort_handle(registry_actor_t* self, const std::string& id);

/// A handle the turn's end waits for asks `q`: nobody answers after the turn (the
/// assistant's await is over, nobody looks), so the wait would last its whole
/// await_timeout_secs for nothing. It is aborted now, saying why.
void abort_asking_at_turn_end(registry_actor_t* self, const std::string& id, const Question& q) {
  auto w = self->state.turn_end_waits.find(id);
  if (w == self->state.turn_end_waits.end() || q.id.empty() || q.id == read_question_id || !w->second.aborted_because.empty())
    return;
  w->second.aborted_because =
    fmt::format("aborted as the turn ended: it asks \"{}\" (question `{}`), and nobody answers a question after "
                "the turn's end; answer it with apply before the turn ends, or configure its answer "
                "(questions.{}.answer)",
                cut_text(q.text, 200), q.id, q.id);
  abort_handle(self, id);
}

/// The supervisor's turn-end strategies (RFD 037), applied in one place. Each live
/// handle gets its child spec's on_turn_end: abort now; await until it stops or
/// await_timeout_secs pass, then abort; inquire as `answers` says (wait | abort;
/// no answer: abort). Answers once every handle has stopped.
caf::result<std::vector<HandleSummary>> end_turn(registry_actor_t* self, const InquiryAnswers& answers) {
  auto rp = self->make_response_promise<std::vector<HandleSummary>>();
  auto results = std::make_shared<std::vector<HandleSummary>>();
  auto deliver = [rp, results]() mutable {
    std::sort(results->begin(), results->end(), [](auto& a, auto& b) { return a.id < b.id; });
    rp.deliver(*results);
  };
  std::vector<std::string> live;
  for (auto& [id, e] : self->state.entries) {
    e.observed = true; // the turn_end event reports what happens to it
    bool interrupted = std::exchange(e.aborted_by_interrupt, false);
    if (e.phase == entry_phase::reserved)
      mark_stopped(self, id, HandleReport{id, ToolState::failure(ToolError{"turn ended before it started", {}, false}), 0, {}});
    else if (e.phase == entry_phase::live)
      live.push_back(id);
    else if (interrupted) { // the interrupt that ended it came before this end (the turn's list on its way):
      // listed as it would be had the end come first and the interrupt then ended it
      auto policy = e.oneshot ? turn_end_policy::abort : e.child.on_turn_end;
      auto answer = answers.find(id);
      auto outcome = outcome_of(policy, answer == answers.end() ? std::nullopt : std::optional(answer->second));
      results->push_back(HandleSummary{id, e.tool, e.final.state, policy, elapsed_secs(e), {}, outcome});
    }
  }
  if (live.empty()) {
    deliver();
    return rp;
  }
  auto left = std::make_shared<size_t>(live.size());
  auto done = [results, left, deliver](HandleSummary s) mutable {
    results->push_back(std::move(s));
    if (--*left == 0)
      deliver();
  };
  for (auto& id : live) {
    auto& e = self->state.entries[id];
    e.listed_by_end = true;
    auto answer = answers.find(id);
    // A one-shot run still going (its call unanswered) is aborted: its tool's policy
    // is for the handle it might have gone on as.
    auto policy = e.oneshot ? turn_end_policy::abort : e.child.on_turn_end;
    auto outcome = outcome_of(policy, answer == answers.end() ? std::nullopt : std::optional(answer->second));
    HandleSummary summary{id, e.tool, {}, policy, elapsed_secs(e), {}, outcome};
    if (waited(outcome)) {
      // An end still waiting on it (an embedder's second Session::end before the
      // first was answered): this one is answered by the same stop, under the first
      // one's timer; replacing that wait would leave the first end unanswered.
      if (auto w = self->state.turn_end_waits.find(id); w != self->state.turn_end_waits.end()) {
        w->second.done = [first = std::move(w->second.done), done, summary](const ToolState& st) mutable {
          first(st);
          summary.state = st;
          done(summary);
        };
        continue;
      }
      // Completed by mark_stopped: it stops by itself, or the timeout aborts it.
      auto number = ++self->state.turn_end_waits_made;
      self->state.turn_end_waits[id] = {[done, summary](const ToolState& st) mutable {
                                          summary.state = st;
                                          done(summary);
                                        },
                                        number};
      auto ns = std::chrono::nanoseconds(static_cast<int64_t>(std::min(e.child.await_timeout_secs, 3.2e9) * 1e9));
      self->delayed_send(self, ns, timeout_atom::value, id, number);
      if (e.waiting)
        abort_asking_at_turn_end(self, id, *e.waiting);
      continue;
    }
    self->request(e.handle, caf::infinite, abort_atom::value)
      .then([done, summary](HandleReport& r) mutable {
              summary.state = std::move(r.state);
              done(summary);
            },
            [done, summary, id](caf::error& err) mutable {
              summary.state = ToolState::failure(
                ToolError{fmt::format("abort of `{}` failed: {}", id, caf::to_string(err)), {}, false});
              done(summary);
            });
  }
  return rp;
}

/// Aborts live handle `id` without waiting for it: its stop completes whatever
/// waits on it. An abort that fails (its actor is gone) stops it with the reason.
void abort_handle(registry_actor_t* self, const std::string& id) {
  auto* e = find_entry(self, id);
  if (!e || e->phase != entry_phase::live || !e->handle)
    return;
  self->request(e->handle, caf::infinite, abort_atom::value)
    .then([](HandleReport&) {}, // its (stopped_atom) report came first
          [self, id](caf::error& err) {
            auto msg = fmt::format("abort of `{}` failed: {}", id, caf::to_string(err));
            mark_stopped(self, id, HandleReport{id, ToolState::failure(ToolError{msg, {}, false}), 0, {}});
          });
}

caf::result<HandleReport> spawn_handle(registry_actor_t* self, const std::string& id, LaunchSpec& spec,
                                       const LookOptions& look) {
  auto it = self->state.entries.find(id);
  if (it != self->state.entries.end() && std::exchange(it->second.aborted_unstarted, false))
    return make_error(error_code::bad_arguments,
                      fmt::format("Handle `{}` was aborted before it started (an abort before its spawn in the "
                                  "same batch): it did not run; spawn it again to run it",
                                  id));
  if (it == self->state.entries.end() || it->second.phase == entry_phase::stopped) {
    if (auto err = reserve(self, id))
      return err;
    it = self->state.entries.find(id);
  } else if (it->second.phase == entry_phase::live) {
    return make_error(error_code::handle_exists,
                      fmt::format("Handle `{}` already exists and is still running; choose another "
                                  "id or abort it first",
                                  id));
  }
  start(self, id, it->second, spec);
  // The first look, with the spawn's options (wait_ms): the tool may settle first
  // (its prompt, its first screen, its whole run when short).
  self->delegate(it->second.handle, fetch_atom::value, look);
  return caf::delegated<HandleReport>{};
}

/// `id` as the registry knows it now (a detached one-shot run's old id: its new one).
const std::string& current_id(registry_actor_t* self, const std::string& id) {
  auto it = self->state.renamed.find(id);
  return it == self->state.renamed.end() ? id : it->second;
}

/// One-shot run `old_id` goes on as a handle under the first free id "BASE-N": the
/// turn gave it long enough (its tool's background_after_secs). Its waiters hear it
/// running under that id; the reply is its report so far (its output since it
/// began), as a spawn's would be.
caf::result<HandleReport> detach(registry_actor_t* self, const std::string& old_id, const std::string& base) {
  auto& st = self->state;
  auto it = st.entries.find(old_id);
  if (it == st.entries.end() || !it->second.oneshot || it->second.control || it->second.phase != entry_phase::live ||
      !it->second.handle || st.turn_end_waits.count(old_id))
    return make_error(error_code::unknown_handle, fmt::format("no one-shot run `{}` is running", cut_text(old_id)));
  // Not even a stopped handle's id: its final result is the assistant's to fetch.
  auto taken = [&](const std::string& id) { return st.entries.count(id) > 0; };
  std::string id;
  for (int n = 1; id.empty() || taken(id); ++n)
    id = fmt::format("{}-{}", base, n);
  auto e = std::move(it->second);
  st.entries.erase(it);
  e.oneshot = false;
  e.seq = ++st.changes;
  ++st.counts.spawned;
  st.counts.peak_live = std::max(st.counts.peak_live, ++st.live);
  st.by_actor[e.handle.address()] = id;
  st.renamed[old_id] = id;
  auto waiters = std::move(e.oneshot_waiters);
  auto handle = e.handle;
  st.entries[id] = std::move(e);
  self->send(handle, rename_atom::value, id);
  for (auto& rp : waiters)
    rp.deliver(HandleReport{id, ToolState::running(), 0, {}});
  // Under its new id, whichever it had when it answered (it may have exited first).
  auto rp = self->make_response_promise<HandleReport>();
  self->request(handle, caf::infinite, fetch_atom::value, LookOptions{0})
    .then(
      [rp, id](HandleReport& r) mutable {
        r.id = id;
        rp.deliver(std::move(r));
      },
      [rp](caf::error& err) mutable { rp.deliver(std::move(err)); });
  return rp;
}

/// A one-shot run under `id`: answered with its final report (or its question).
caf::result<HandleReport> start_oneshot(registry_actor_t* self, const std::string& id, LaunchSpec& spec) {
  auto& e = self->state.entries[id];
  auto rp = self->make_response_promise();
  e.oneshot = true;
  e.control = answered_while_running(spec);
  e.oneshot_waiters.push_back(rp);
  start(self, id, e, spec);
  return rp;
}

registry_impl::behavior_type registry_behavior(registry_actor_t* self, HandleFactory factory,
                                               notification_sink sink) {
  self->state.factory = std::move(factory);
  self->state.sink = std::move(sink);
  // A handle that dies unexpectedly becomes Stopped{error}; its group is killed.
  self->set_down_handler([self](caf::down_msg& dm) {
    if (self->state.watchers.erase(dm.source)) {
      // A watcher ended (a sub-agent's turn, say): its handles stop telling it.
      for (auto& [id, e] : self->state.entries)
        std::erase_if(e.watchers, [&](const watcher_actor& w) { return w.address() == dm.source; });
      return;
    }
    self->state.children->erase(dm.source);
    auto it = self->state.by_actor.find(dm.source);
    if (it == self->state.by_actor.end())
      return;
    auto id = it->second;
    self->state.by_actor.erase(it);
    auto e = self->state.entries.find(id);
    if (e == self->state.entries.end() || e->second.phase == entry_phase::stopped)
      return;
    // The dying handle kills its group on the way out (through the io thread, which
    // alone knows whether the pid is still the group's).
    auto msg = fmt::format("the actor owning handle `{}` died ({}); its process group was killed",
                           id, caf::to_string(dm.reason));
    mark_stopped(self, id, HandleReport{id, ToolState::failure(ToolError{msg, {}, false}), 0, {}}, true);
  });
  // Handles end with their registry (and so their process groups go too).
  self->attach_functor([children = self->state.children] {
    for (auto& [addr, h] : *children)
      caf::anon_send_exit(h, caf::exit_reason::user_shutdown);
  });
  return {
    [self](batch_atom, const std::vector<std::string>& ids) -> caf::result<bool> {
      std::set<std::string> seen;
      for (auto& id : ids)
        if (!seen.insert(id).second)
          return make_error(error_code::batch_rejected,
                            fmt::format("Batch rejected: handle id `{}` is spawned twice in one batch",
                                  cut_text(id)));
      for (auto& id : ids) {
        auto it = self->state.entries.find(id);
        if (it != self->state.entries.end() && it->second.phase != entry_phase::stopped)
          return make_error(error_code::batch_rejected,
                            fmt::format("Batch rejected: handle `{}` already exists and is still running; "
                                  "choose another id or abort it first",
                                  cut_text(id)));
      }
      for (auto& id : ids)
        reserve(self, id);
      return true;
    },
    [self](cancel_atom, const std::string& id, const std::string& reason) {
      auto it = self->state.entries.find(id);
      if (it != self->state.entries.end() && it->second.phase == entry_phase::reserved)
        mark_stopped(self, id,
                     HandleReport{id, ToolState::failure(ToolError{reason, {}, false}), 0, {}});
      if (it != self->state.entries.end())
        it->second.aborted_unstarted = false; // its batch's spawn will not come
    },
    [self](spawn_atom, const std::string& id, LaunchSpec& spec) {
      return spawn_handle(self, id, spec, LookOptions{});
    },
    [self](spawn_atom, const std::string& id, LaunchSpec& spec, const LookOptions& look) {
      return spawn_handle(self, id, spec, look);
    },
    [self](oneshot_atom, LaunchSpec& spec) -> caf::result<HandleReport> {
      return start_oneshot(self, fmt::format("#{}", ++self->state.next_internal), spec);
    },
    [self](oneshot_atom, LaunchSpec& spec, const std::string& id) -> caf::result<HandleReport> {
      // The caller's id, so that it can abort the run: one no assistant can choose.
      if (id.empty() || id[0] != '#' || self->state.entries.count(id))
        return make_error(error_code::handle_exists, fmt::format("one-shot id `{}` is taken or not internal", cut_text(id)));
      return start_oneshot(self, id, spec);
    },
    [self](detach_atom, const std::string& id, const std::string& base) { return detach(self, id, base); },
    [self](answer_atom, const std::string& id, const std::string& answer) -> caf::result<HandleReport> {
      // The answer (JSON) to a one-shot control tool's question, or "" when none
      // comes (it is ended); replies as above.
      auto* e = find_entry(self, id);
      if (!e || !e->oneshot)
        return not_found(self->state, id);
      if (e->phase == entry_phase::stopped) {
        auto last = e->final;
        self->state.entries.erase(id);
        return last;
      }
      // It asks another question than the one answered (a read without one ended,
      // and it asked on fd 3): that one is the caller's to answer, not this answer's.
      if (!answer.empty() && e->waiting && e->told && !(*e->waiting == *e->told)) {
        e->told = e->waiting;
        return HandleReport{id, ToolState::waiting(*e->waiting), 0, {}};
      }
      auto rp = self->make_response_promise<HandleReport>();
      e->oneshot_waiters.push_back(rp);
      e->waiting.reset();
      if (answer.empty())
        abort_handle(self, id);
      else
        self->send(e->handle, answer_atom::value, answer);
      return rp;
    },
    [self](fetch_atom, const std::string& id, const LookOptions& look) {
      if (look.by_owner)
        observed(self, id);
      return route(self, id, [&](entry& e) -> caf::result<HandleReport> {
        if (e.phase == entry_phase::stopped) {
          auto r = e.final;
          // Asked for a screen there is none of: said, not left out without a word.
          if ((look.screen || look.rows > 0) && r.screen.height == 0)
            r.state.content += "[jp-actors: no screen: the handle has stopped (a screen is a running terminal "
                               "handle's); what it printed is its result]\n";
          return r;
        }
        return HandleReport{id, pending_state(), 0, {}};
      }, fetch_atom::value, look);
    },
    [self](apply_atom, const std::string& id, const std::string& input, const LookOptions& look) {
      observed(self, id);
      return route(self, id, [&](entry& e) -> caf::result<HandleReport> {
        if (e.phase == entry_phase::stopped)
          return make_error(error_code::input_refused,
                            fmt::format("Handle `{}` has stopped; it takes no more input", id));
        return make_error(error_code::input_refused,
                          fmt::format("Handle `{}` has not started yet; apply input after its spawn", id));
      }, apply_atom::value, input, look);
    },
    [self](abort_atom, const std::string& id) {
      observed(self, id);
      return route(self, id, [&](entry& e) -> caf::result<HandleReport> {
        if (e.phase == entry_phase::reserved) {
          mark_stopped(self, id, HandleReport{id, ToolState::failure(ToolError{"aborted before it started", {}, false}), 0, {}});
          e.aborted_unstarted = true;
        }
        return e.final;
      }, abort_atom::value);
    },
    [self](watch_atom, const std::vector<std::string>& ids, const watcher_actor& watcher) {
      return statuses(self, ids, watcher);
    },
    [self](status_atom, const std::vector<std::string>& ids) {
      return statuses(self, ids, watcher_actor{});
    },
    [self](waiting_atom, const std::string& sent_id, const Question& q, bool in_response) {
      // Its tool asks (q) or was answered (empty q).
      auto& id = current_id(self, sent_id);
      auto* e = find_entry(self, id);
      if (!e || e->phase != entry_phase::live)
        return;
      if (q.id.empty())
        e->waiting.reset();
      else
        e->waiting = q;
      e->seq = ++self->state.changes;
      abort_asking_at_turn_end(self, id, q);
      if (e->oneshot) {
        // A one-shot control tool asks: the turn answers it (turn_actor's oneshot_reply).
        if (e->control && !q.id.empty() && !e->oneshot_waiters.empty()) {
          e->told = q;
          for (auto& rp : e->oneshot_waiters)
            rp.deliver(HandleReport{id, ToolState::waiting(q), 0, {}});
          e->oneshot_waiters.clear();
        }
        return;
      }
      // Awaits show a pending handle's current state (waiting, or running again).
      for (auto& w : e->watchers)
        self->send(w, update_atom::value, status_of(id, *e));
      if (q.id.empty()) {
        // A question not carried yet is no longer asked: the turn drops it.
        if (std::exchange(e->waiting_notified, false) && self->state.sink)
          self->send(self->state.sink, notify_atom::value,
                     Notification{"tool", std::string(waiting_over_notification), "info", "", id});
        return;
      }
      if (!e->observed && !in_response && e->notify_waiting && self->state.sink) {
        e->waiting_notified = true;
        self->send(self->state.sink, notify_atom::value,
                   Notification{"tool", "tool.waiting", "info",
                                fmt::format("Handle `{}` ({}) asks: {} (answer with apply)", id, e->tool, q.text),
                                id});
      }
    },
    [self](content_atom, const std::string& sent_id) {
      // New output from a handle nobody looks at: once, until the assistant does.
      auto& id = current_id(self, sent_id);
      auto* e = find_entry(self, id);
      if (!e || e->oneshot || e->observed || !e->notify_content || e->phase != entry_phase::live ||
          !self->state.sink)
        return;
      self->send(self->state.sink, notify_atom::value,
                 Notification{"tool", "tool.output", "info",
                              fmt::format("Handle `{}` ({}) has new output; fetch it to read it", id, e->tool),
                              id});
    },
    [self](stopped_atom, HandleReport& report) {
      auto id = current_id(self, report.id);
      mark_stopped(self, id, std::move(report));
    },
    [self](counts_atom) { return self->state.counts; },
    [self](list_atom) -> caf::result<std::vector<HandleSummary>> {
      // Handles not yet stopped, with their last output line (for progress displays
      // and the turn-end inquiry's preview): each live handle is asked for it.
      auto out = std::make_shared<std::vector<HandleSummary>>();
      std::vector<std::pair<size_t, handle_actor>> ask;
      for (auto& [id, e] : self->state.entries) {
        if (e.phase == entry_phase::stopped || e.oneshot)
          continue;
        if (e.phase == entry_phase::live && e.handle)
          ask.emplace_back(out->size(), e.handle);
        out->push_back(HandleSummary{id, e.tool, status_of(id, e).state, e.child.on_turn_end, elapsed_secs(e)});
      }
      if (ask.empty())
        return std::move(*out);
      auto rp = self->make_response_promise<std::vector<HandleSummary>>();
      auto left = std::make_shared<size_t>(ask.size());
      for (auto& [at, handle] : ask) {
        auto done = [rp, out, left, at = at](HandleProgress progress) mutable {
          (*out)[at].progress = std::move(progress);
          if (--*left == 0)
            rp.deliver(std::move(*out));
        };
        self->request(handle, caf::infinite, peek_atom::value)
          .then([done](HandleProgress& progress) mutable { done(std::move(progress)); },
                [done](caf::error&) mutable { done({}); }); // it stopped meanwhile
      }
      return rp;
    },
    [self](turn_end_atom, const InquiryAnswers& answers)
      -> caf::result<std::vector<HandleSummary>> {
      return end_turn(self, answers);
    },
    [self](retire_atom, const std::string& id) {
      auto it = self->state.entries.find(id);
      if (it == self->state.entries.end())
        return;
      // Only a live one is flagged: a reserved one is stopped by callers that use its
      // entry after mark_stopped, which must not have erased it (none retires one).
      if (it->second.phase == entry_phase::stopped)
        self->state.entries.erase(it);
      else if (it->second.phase == entry_phase::live)
        it->second.dropped_at_stop = true;
    },
    [self](abort_all_atom) {
      // Everything, now (an interrupted turn): each stop completes what waits on it.
      std::vector<std::string> live;
      for (auto& [id, e] : self->state.entries)
        if (e.phase == entry_phase::live) {
          e.aborted_by_interrupt = !e.listed_by_end;
          live.push_back(id);
        }
      for (auto& id : live)
        abort_handle(self, id);
    },
    [self](timeout_atom, const std::string& id, uint64_t number) {
      // A turn-end wait ran out: abort; its stop completes the wait. (Not a later
      // wait on the id: a handle spawned again under it, waited for at a later end.)
      if (auto w = self->state.turn_end_waits.find(id); w != self->state.turn_end_waits.end() && w->second.number == number) {
        if (auto* e = find_entry(self, id); e && w->second.aborted_because.empty())
          w->second.aborted_because = fmt::format("aborted as the turn ended: still running after its "
                                                  "await_timeout_secs ({:g} s)",
                                                  e->child.await_timeout_secs);
        abort_handle(self, id);
      }
    },
  };
}

} // namespace

HandleFactory process_handle_factory(IoThread& io) {
  return [&io](caf::local_actor* parent, const std::string& id, LaunchSpec& spec,
               const supervisor_actor& supervisor) {
    return spawn_process_handle(parent, id, std::move(spec), io, supervisor);
  };
}

registry_actor spawn_registry(caf::actor_system& sys, HandleFactory factory, const notification_sink& sink) {
  return sys.spawn(registry_behavior, std::move(factory), sink);
}

} // namespace jp
