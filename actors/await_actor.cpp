#include "actors/await_actor.hpp"

#include <algorithm>
#include <caf/all.hpp>
#include <chrono>
#include <string_view>
#include <optional>
#include <set>

#include "messages/atoms.hpp"
#include "messages/error_category.hpp"

namespace jp {

namespace {

struct await_state {
  // Declared: CAF would otherwise build an aggregate state from the actor pointer
  // (its first member, a typed handle, is constructible from one).
  await_state() = default;
  handle_view_actor registry; // its registry, or a view over those of agents that share
  resolver_actor resolver; // answers waiting questions it can route (the turn); none: nobody
  std::set<std::pair<std::string, std::string>> asked; // (handle id, question id) put to it
  AwaitRequest request;
  std::optional<AwaitCondition> cond; // from the registry's first answer on
  caf::response_promise promise;
  bool done = false;
  static inline const char* name = "jp.await";
};

using await_impl = await_actor::extend_with<watcher_actor>::extend<caf::reacts_to<timeout_atom>>;
using await_actor_t = await_impl::stateful_base<await_state>;

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
    auto* cur = st.done || !st.cond ? nullptr : st.cond->find(id);
    return cur && cur->state.kind == state_kind::waiting && cur->state.question.id == qid;
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
  auto result = st.cond ? std::move(*st.cond).result(timed_out) : AwaitResult{};
  result.timed_out = timed_out;
  // The registry forgets a watcher of a handle once it stops: only handles still
  // pending hold a subscription to cancel.
  if (!result.pending.empty())
    self->send(st.registry, unwatch_atom::value, watcher_actor{self});
  st.promise.deliver(std::move(result));
  self->quit();
}

await_impl::behavior_type await_behavior(await_actor_t* self, handle_view_actor registry, AwaitRequest request,
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
            st.cond.emplace(st.request, std::move(statuses));
            if (st.cond->met())
              return reply(self, false);
            for (size_t i = 0; i < st.cond->statuses().size() && !st.done; ++i)
              if (!st.cond->statuses()[i].state.stopped())
                consider_waiting(self, st.cond->statuses()[i]);
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
      if (st.done || !st.cond)
        return;
      auto* cur = st.cond->update(std::move(s));
      if (!cur)
        return;
      if (cur->state.stopped()) {
        if (st.cond->met())
          reply(self, false);
        return;
      }
      // A pending handle asks (or was answered): not a stop, but what it now shows.
      consider_waiting(self, *cur);
    },
    [self](timeout_atom) { reply(self, true); },
  };
}

} // namespace

await_actor spawn_await(caf::actor_system& sys, handle_view_actor registry, AwaitRequest request,
                        resolver_actor resolver) {
  return sys.spawn(await_behavior, std::move(registry), std::move(request), std::move(resolver));
}

} // namespace jp
