// `await` (RFD 037): a short-lived actor per call. It subscribes to its target
// handles at the registry, answers once the any/all condition holds or the timeout
// fires (aborting nothing), then quits. It never polls: the registry tells it when
// a target stops. A target that waits on a question is put to the resolver (the
// turn routes it to a person or the inquiry backend, as the tool's config says):
//   (resolve_atom, id, Question) -> bool   true: answered (the await waits on)
// without a resolver, or with no answer, the await answers at once, that handle
// pending as `waiting` with its question. Its lifetime is bound to the registry's.
//   (run_atom) -> AwaitResult   or the registry's error ("Handle `x` not found")
// As a watcher (watcher_actor), it hears (update_atom, HandleStatus) from the registry.
#pragma once

#include "actors/await_condition.hpp"
#include "actors/interfaces.hpp"

namespace jp {

/// Spawns the actor; (run_atom) validates the request ("At least one handle ID
/// required"). Without a resolver, a waiting question ends the await at once.
await_actor spawn_await(caf::actor_system& sys, handle_view_actor registry, AwaitRequest request,
                        resolver_actor resolver = {});


} // namespace jp
