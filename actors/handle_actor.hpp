// A handle: the actor that owns ONE running tool instance (its process group).
// Nothing else touches the child. It keeps the output buffer and the current state,
// reports `stopped` to its registry (which then retires it), and answers:
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
/// `registry` (stopped_atom, HandleReport) once its process group is gone, and quits
/// on (retire_atom). If the actor dies, it kills its process group on the way out.
caf::actor spawn_process_handle(caf::local_actor* parent, const std::string& id,
                                const LaunchSpec& spec, IoThread& io,
                                const caf::actor& registry);

} // namespace jp
