#include "actors/shared_registry.hpp"

#include <caf/all.hpp>
#include <fmt/format.h>

#include "actors/registry_actor.hpp"
#include "messages/error_category.hpp"
#include "messages/error_code.hpp"
#include "messages/json.hpp"

namespace jp {

void RegistryDirectory::add(const std::string& agent, registry_actor registry) {
  std::lock_guard lock(mutex_);
  registries_[agent] = std::move(registry);
}

void RegistryDirectory::remove(const std::string& agent) {
  std::lock_guard lock(mutex_);
  registries_.erase(agent);
}

std::vector<registry_actor> RegistryDirectory::others(const std::string& agent) const {
  std::lock_guard lock(mutex_);
  std::vector<registry_actor> out;
  for (auto& [name, r] : registries_)
    if (name != agent)
      out.push_back(r);
  return out;
}

namespace {

struct view_state {
  view_state() = default; // not aggregate-built from the actor pointer
  std::string agent;
  registry_actor own;
  std::shared_ptr<RegistryDirectory> directory;
  static inline const char* name = "jp.shared_view";
};

using view_actor_t = handle_view_actor::stateful_base<view_state>;

/// Which registry has each id.
using Located = std::vector<std::pair<registry_actor, std::vector<std::string>>>;

/// Where `id` is: the first of `order` (from `i` on) that knows it; `k(nullopt)` if none.
void locate_one(view_actor_t* self, const std::string& id, std::shared_ptr<std::vector<registry_actor>> order,
                size_t i, std::function<void(std::optional<registry_actor>)> k) {
  if (i == order->size())
    return k(std::nullopt);
  auto r = (*order)[i];
  self->request(r, caf::infinite, status_atom::value, std::vector<std::string>{id})
    .then([k, r](std::vector<HandleStatus>&) { k(r); },
          [self, id, order, i, k](caf::error&) { locate_one(self, id, order, i + 1, k); });
}

/// Groups `ids` by the registry that has each (own first, then the others'); an
/// error naming the first id (in `ids`' order) that no agent has.
void locate(view_actor_t* self, const std::vector<std::string>& ids,
            std::function<void(caf::expected<Located>)> k) {
  auto order = std::make_shared<std::vector<registry_actor>>();
  order->push_back(self->state.own);
  for (auto& r : self->state.directory->others(self->state.agent))
    order->push_back(r);
  auto found = std::make_shared<std::vector<std::optional<registry_actor>>>(ids.size());
  auto left = std::make_shared<size_t>(ids.size());
  auto finish = [ids, found, k] {
    Located out;
    for (size_t i = 0; i < ids.size(); ++i) {
      if (!(*found)[i])
        return k(make_error(error_code::unknown_handle,
                            handle_not_found(ids[i]) + " (in this agent or the agents sharing its registry)"));
      auto at = std::find_if(out.begin(), out.end(), [&](auto& g) { return g.first == *(*found)[i]; });
      if (at == out.end())
        out.push_back({*(*found)[i], {ids[i]}});
      else
        at->second.push_back(ids[i]);
    }
    k(std::move(out));
  };
  if (ids.empty())
    return finish();
  for (size_t i = 0; i < ids.size(); ++i)
    locate_one(self, ids[i], order, 0, [found, left, i, finish](std::optional<registry_actor> r) {
      (*found)[i] = std::move(r);
      if (--*left == 0)
        finish();
    });
}

/// Asks each registry of `where` for its ids (`ask(registry, its ids)` makes the
/// request) and delivers the statuses in the order of `ids`.
template <class Ask>
void gather(view_actor_t* self, const std::vector<std::string>& ids, const Located& where,
            caf::typed_response_promise<std::vector<HandleStatus>> rp, Ask ask) {
  auto by_id = std::make_shared<std::map<std::string, HandleStatus>>();
  auto left = std::make_shared<size_t>(where.size());
  auto failed = std::make_shared<bool>(false);
  for (auto& [registry, sub] : where)
    ask(registry, sub).then(
      [ids, by_id, left, failed, rp](std::vector<HandleStatus>& statuses) mutable {
        for (auto& s : statuses)
          (*by_id)[s.id] = std::move(s);
        if (--*left > 0 || *failed)
          return;
        std::vector<HandleStatus> out;
        for (auto& id : ids)
          out.push_back((*by_id)[id]);
        rp.deliver(std::move(out));
      },
      [failed, rp](caf::error& err) mutable {
        if (!*failed)
          rp.deliver(std::move(err));
        *failed = true;
      });
}

handle_view_actor::behavior_type view_behavior(view_actor_t* self, std::string agent, registry_actor own,
                                               std::shared_ptr<RegistryDirectory> directory) {
  self->state.agent = std::move(agent);
  self->state.own = std::move(own);
  self->state.directory = std::move(directory);
  return {
    [self](watch_atom, const std::vector<std::string>& ids, const watcher_actor& watcher) {
      auto rp = self->make_response_promise<std::vector<HandleStatus>>();
      locate(self, ids, [self, ids, watcher, rp](caf::expected<Located> where) mutable {
        if (!where) {
          rp.deliver(std::move(where.error()));
          return;
        }
        gather(self, ids, *where, rp, [self, watcher](const registry_actor& r, const std::vector<std::string>& sub) {
          return self->request(r, caf::infinite, watch_atom::value, sub, watcher);
        });
      });
      return rp;
    },
    [self](status_atom, const std::vector<std::string>& ids) {
      auto rp = self->make_response_promise<std::vector<HandleStatus>>();
      locate(self, ids, [self, ids, rp](caf::expected<Located> where) mutable {
        if (!where) {
          rp.deliver(std::move(where.error()));
          return;
        }
        gather(self, ids, *where, rp, [self](const registry_actor& r, const std::vector<std::string>& sub) {
          return self->request(r, caf::infinite, status_atom::value, sub);
        });
      });
      return rp;
    },
    [self](fetch_atom, const std::string& id, const LookOptions& look) {
      auto rp = self->make_response_promise<HandleReport>();
      locate(self, {id}, [self, id, look, rp](caf::expected<Located> where) mutable {
        if (!where) {
          rp.deliver(std::move(where.error()));
          return;
        }
        auto registry = where->front().first;
        auto as_seen = look;
        as_seen.by_owner = registry == self->state.own;
        self->request(registry, caf::infinite, fetch_atom::value, id, as_seen)
          .then([rp](HandleReport& r) mutable { rp.deliver(std::move(r)); },
                [rp](caf::error& err) mutable { rp.deliver(std::move(err)); });
      });
      return rp;
    },
  };
}

} // namespace

handle_view_actor spawn_shared_view(caf::actor_system& sys, std::string agent, registry_actor own,
                                    std::shared_ptr<RegistryDirectory> directory) {
  return sys.spawn(view_behavior, std::move(agent), std::move(own), std::move(directory));
}

} // namespace jp
