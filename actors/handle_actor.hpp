// A handle: the actor that owns ONE running tool instance (its process group).
// Nothing else touches the child. It keeps the output buffer and the current state,
// reports `started` and `stopped` to its registry, and answers:
//   (fetch_atom)                  -> HandleReport  (output since the previous look)
//   (apply_atom, input_json)      -> HandleReport  (input written to stdin)
//   (abort_atom)                  -> HandleReport  (after the whole group is gone)
#pragma once

#include <caf/fwd.hpp>
#include <string>

#include "messages/launch_spec.hpp"

namespace jp {

class IoThread;

/// Spawns a handle for `spec` as a child of `parent` (the registry); the handle tells
/// `registry` (started_atom, id, pid) and (stopped_atom, HandleReport).
caf::actor spawn_process_handle(caf::local_actor* parent, const std::string& id,
                                const LaunchSpec& spec, IoThread& io,
                                const caf::actor& registry);

} // namespace jp
