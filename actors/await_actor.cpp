#include "actors/await_actor.hpp"

#include <algorithm>
#include <caf/all.hpp>
#include <chrono>
#include <string_view>
#include <unordered_map>
#include <set>
#include <unordered_set>

#include "messages/atoms.hpp"
#include "messages/error_category.hpp"

namespace jp {

namespace {

struct await_state {
  // Declared: CAF would otherwise build an aggregate state from the actor pointer
  // (its first member, a typed handle, is constructible from one).
  await_state() = default;
  registry_actor registry;
  resolver_actor resolver; // answers waiting questions it can route (the turn); none: nobody
  std::set<std::pair<std::string, std::string>> asked; // (handle id, question id) put to it
  AwaitRequest request;
  std::vector<HandleStatus> statuses; // one per distinct id, in request order
  // Kept up to date at each stop, so a stop costs O(1) however many ids are awaited.
  std::unordered_map<std::string_view, size_t> index; // id -> position in statuses
  std::vector<char> in_any, in_all;                   // per position
  size_t all_left = 0; // ids of `all` not stopped yet
  bool any_hit = false; // some id of `any` stopped (or `any` is empty)
  caf::response_promise promise;
  bool done = false;
  static inline const char* name = "jp.await";
};

using await_impl = await_actor::extend_with<watcher_actor>::extend<caf::reacts_to<timeout_atom>>;
using await_actor_t = await_impl::stateful_base<await_state>;

/// Takes the registry's first answer and derives the condition's counters.
void track(await_state& st, std::vector<HandleStatus> statuses) {
  st.statuses = std::move(statuses);
  auto n = st.statuses.size();
  st.in_any.assign(n, 0);
  st.in_all.assign(n, 0);
  st.any_hit = st.request.any.empty();
  std::unordered_set<std::string_view> any(st.request.any.begin(), st.request.any.end());
  std::unordered_set<std::string_view> all(st.request.all.begin(), st.request.all.end());
  for (size_t i = 0; i < n; ++i) {
    auto& s = st.statuses[i];
    st.index.emplace(s.id, i);
    st.in_any[i] = any.count(s.id) > 0;
    st.in_all[i] = all.count(s.id) > 0;
    if (s.state.stopped())
      st.any_hit = st.any_hit || st.in_any[i];
    else if (st.in_all[i])
      ++st.all_left;
  }
}

/// A watched handle stopped: update its status and the counters.
void on_stop(await_state& st, HandleStatus& s) {
  auto it = st.index.find(s.id);
  if (it == st.index.end())
    return;
  auto& cur = st.statuses[it->second];
  bool was_stopped = cur.state.stopped();
  cur.state = std::move(s.state);
  cur.output_file = std::move(s.output_file);
  if (was_stopped || !cur.state.stopped())
    return;
  st.any_hit = st.any_hit || st.in_any[it->second];
  if (st.in_all[it->second])
    --st.all_left;
}

bool met(const await_state& st) {
  return st.any_hit && st.all_left == 0;
}

void reply(await_actor_t* self, bool timed_out);

/// A pending handle waits on a question. The assistant is blocked in this await, so
/// only someone else can answer it: the resolver (a person on the terminal, the
/// inquiry backend) when the tool's config routes the question there. Otherwise,
/// or when that gives no answer, the await answers now with the handle pending as
/// `waiting`: never an indefinite wait on a question only the assistant can answer.
void consider_waiting(await_actor_t* self, const HandleStatus& s) {
  auto& st = self->state;
  if (st.done || s.state.kind != state_kind::waiting)
    return;
  if (!st.resolver)
    return reply(self, false);
  if (!st.asked.emplace(s.id, s.state.question.id).second)
    return; // already put to the resolver
  auto still_waiting = [self, id = s.id, qid = s.state.question.id] {
    auto& st = self->state;
    auto it = st.index.find(id);
    if (st.done || it == st.index.end())
      return false;
    auto& cur = st.statuses[it->second].state;
    return cur.kind == state_kind::waiting && cur.question.id == qid;
  };
  self->request(st.resolver, caf::infinite, resolve_atom::value, s.id, s.state.question)
    .then(
      [self, still_waiting](bool answered) {
        if (!answered && still_waiting())
          reply(self, false);
      },
      [self, still_waiting](caf::error&) {
        if (still_waiting())
          reply(self, false);
      });
}

void reply(await_actor_t* self, bool timed_out) {
  auto& st = self->state;
  if (st.done)
    return;
  st.done = true;
  st.index.clear(); // its keys view the statuses moved out next
  AwaitResult result;
  result.timed_out = timed_out;
  for (auto& s : st.statuses)
    (s.state.stopped() ? result.completed : result.pending).push_back(std::move(s));
  // The registry forgets a watcher of a handle once it stops: only handles still
  // pending hold a subscription to cancel.
  if (!result.pending.empty())
    self->send(st.registry, unwatch_atom::value, watcher_actor{self});
  st.promise.deliver(std::move(result));
  self->quit();
}

await_impl::behavior_type await_behavior(await_actor_t* self, registry_actor registry, AwaitRequest request,
                                         resolver_actor resolver) {
  self->state.registry = std::move(registry);
  self->state.request = std::move(request);
  self->state.resolver = std::move(resolver);
  // Its lifetime is bound to the registry it watches: when that goes (the turn was
  // killed), nothing can stop its targets any more, so it answers and goes too.
  self->monitor(self->state.registry);
  self->set_down_handler([self](caf::down_msg&) {
    auto& st = self->state;
    if (!st.done) {
      st.done = true;
      if (st.promise.pending())
        st.promise.deliver(make_error(error_code::interrupted, "the turn ended while this await waited"));
    }
    self->quit();
  });
  return {
    [self](run_atom) -> caf::result<AwaitResult> {
      auto& st = self->state;
      st.promise = self->make_response_promise();
      if (st.request.any.empty() && st.request.all.empty()) {
        st.done = true;
        st.promise.deliver(make_error(error_code::bad_arguments, "At least one handle ID required"));
        self->quit();
        return st.promise;
      }
      self->request(st.registry, caf::infinite, watch_atom::value, distinct_ids(st.request), watcher_actor{self})
        .then(
          [self](std::vector<HandleStatus>& statuses) {
            auto& st = self->state;
            track(st, std::move(statuses));
            if (met(st))
              return reply(self, false);
            for (size_t i = 0; i < st.statuses.size() && !st.done; ++i)
              if (!st.statuses[i].state.stopped())
                consider_waiting(self, st.statuses[i]);
            if (st.done)
              return;
            // Beyond a century is no timeout (and would overflow the clock).
            if (st.request.timeout_secs >= 0 && st.request.timeout_secs < 3.2e9) {
              auto ns = std::chrono::nanoseconds(
                static_cast<int64_t>(st.request.timeout_secs * 1e9));
              self->delayed_send(self, ns, timeout_atom::value);
            }
          },
          [self](caf::error& err) {
            self->state.done = true;
            self->state.promise.deliver(std::move(err));
            self->quit();
          });
      return st.promise;
    },
    [self](update_atom, HandleStatus& s) {
      auto& st = self->state;
      if (st.done)
        return;
      if (s.state.stopped()) {
        on_stop(st, s);
        if (met(st))
          reply(self, false);
        return;
      }
      // A pending handle asks (or was answered): not a stop, but what it now shows.
      if (auto it = st.index.find(s.id); it != st.index.end() && !st.statuses[it->second].state.stopped()) {
        st.statuses[it->second].state = std::move(s.state);
        consider_waiting(self, st.statuses[it->second]);
      }
    },
    [self](timeout_atom) { reply(self, true); },
  };
}

} // namespace

bool await_condition_met(const AwaitRequest& req, const std::vector<HandleStatus>& statuses) {
  // Checked at every stop: with hundreds of handles a scan per id would be quadratic,
  // so large awaits look ids up in a set.
  std::unordered_set<std::string_view> stopped_ids;
  bool use_set = statuses.size() > 16;
  if (use_set)
    for (auto& s : statuses)
      if (s.state.stopped())
        stopped_ids.insert(s.id);
  auto stopped = [&](const std::string& id) {
    if (use_set)
      return stopped_ids.count(id) > 0;
    for (auto& s : statuses)
      if (s.id == id)
        return s.state.stopped();
    return false;
  };
  bool all_ok = std::all_of(req.all.begin(), req.all.end(), stopped);
  bool any_ok = req.any.empty() || std::any_of(req.any.begin(), req.any.end(), stopped);
  return all_ok && any_ok;
}

AwaitResult await_result(const std::vector<HandleStatus>& statuses, bool timed_out) {
  AwaitResult result;
  result.timed_out = timed_out;
  for (auto& s : statuses)
    (s.state.stopped() ? result.completed : result.pending).push_back(s);
  return result;
}

std::vector<std::string> distinct_ids(const AwaitRequest& req) {
  std::vector<std::string> ids;
  for (auto* list : {&req.any, &req.all})
    for (auto& id : *list)
      if (std::find(ids.begin(), ids.end(), id) == ids.end())
        ids.push_back(id);
  return ids;
}

await_actor spawn_await(caf::actor_system& sys, registry_actor registry, AwaitRequest request,
                        resolver_actor resolver) {
  return sys.spawn(await_behavior, std::move(registry), std::move(request), std::move(resolver));
}

} // namespace jp
