#include "actors/await_actor.hpp"

#include <algorithm>
#include <caf/all.hpp>
#include <chrono>

#include "messages/atoms.hpp"

namespace jp {

namespace {

struct await_state {
  caf::actor registry;
  AwaitRequest request;
  std::vector<HandleStatus> statuses; // one per distinct id, in request order
  caf::response_promise promise;
  bool done = false;
  static inline const char* name = "jp.await";
};

using await_actor_t = caf::stateful_actor<await_state>;

bool is_stopped(const std::vector<HandleStatus>& statuses, const std::string& id) {
  for (auto& s : statuses)
    if (s.id == id)
      return s.state.stopped();
  return false;
}

void reply(await_actor_t* self, bool timed_out) {
  auto& st = self->state;
  if (st.done)
    return;
  st.done = true;
  auto result = await_result(st.statuses, timed_out);
  // The registry forgets a watcher of a handle once it stops: only handles still
  // pending hold a subscription to cancel.
  if (!result.pending.empty())
    self->send(st.registry, unwatch_atom::value);
  st.promise.deliver(std::move(result));
  self->quit();
}

caf::behavior await_behavior(await_actor_t* self, caf::actor registry, AwaitRequest request) {
  self->state.registry = std::move(registry);
  self->state.request = std::move(request);
  return {
    [self](run_atom) -> caf::result<AwaitResult> {
      auto& st = self->state;
      st.promise = self->make_response_promise();
      if (st.request.any.empty() && st.request.all.empty()) {
        st.done = true;
        st.promise.deliver(caf::make_error(caf::sec::runtime_error,
                                           std::string("At least one handle ID required")));
        self->quit();
        return st.promise;
      }
      self->request(st.registry, caf::infinite, watch_atom::value, distinct_ids(st.request))
        .then(
          [self](std::vector<HandleStatus>& statuses) {
            auto& st = self->state;
            st.statuses = std::move(statuses);
            if (await_condition_met(st.request, st.statuses))
              return reply(self, false);
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
    [self](stopped_atom, HandleStatus& s) {
      auto& st = self->state;
      for (auto& cur : st.statuses)
        if (cur.id == s.id)
          cur.state = s.state;
      if (await_condition_met(st.request, st.statuses))
        reply(self, false);
    },
    [self](timeout_atom) { reply(self, true); },
  };
}

} // namespace

bool await_condition_met(const AwaitRequest& req, const std::vector<HandleStatus>& statuses) {
  auto stopped = [&](const std::string& id) { return is_stopped(statuses, id); };
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

caf::actor spawn_await(caf::actor_system& sys, caf::actor registry, AwaitRequest request) {
  return sys.spawn(await_behavior, std::move(registry), std::move(request));
}

} // namespace jp
