// A shared registry ([experiment] shared_registry = true, DESIGN.md "Scripts"): the
// top-level agents of a run see each other's handles. Each agent keeps its own
// registry -- it alone supervises its handles, applies its turn end and hears their
// notifications -- and the agents' registries are listed in one directory. An
// agent's `await` and `fetch` go through a view that finds each id in the agent's
// own registry first, then in the others': one agent awaits another's handle.
// `apply` and `abort` stay with the handle's owner.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "interfaces.hpp"

namespace caf {
class actor_system;
}

namespace jp {

/// The registries of the agents that share; thread-safe (agents start and end on
/// any thread).
class RegistryDirectory {
public:
  void add(const std::string& agent, registry_actor registry);
  void remove(const std::string& agent);
  /// Every registry but `agent`'s, by agent name.
  std::vector<registry_actor> others(const std::string& agent) const;

private:
  mutable std::mutex mutex_;
  std::map<std::string, registry_actor> registries_;
};

/// A view for `agent`, whose own registry is `own`, over the registries of
/// `directory`. It answers watch, status and fetch by finding each id (its own
/// first; "Handle `x` not found" when no agent has it).
handle_view_actor spawn_shared_view(caf::actor_system& sys, std::string agent, registry_actor own,
                                    std::shared_ptr<RegistryDirectory> directory);

} // namespace jp
