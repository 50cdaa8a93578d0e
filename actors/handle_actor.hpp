// A handle: the actor that owns ONE running tool instance (its process group).
// Nothing else touches the child. It keeps the output buffer and the current state,
// reports `stopped` to its registry (which then retires it), and answers
// handle_actor (actors/interfaces.hpp):
//   (fetch_atom, LookOptions)             -> HandleReport  (output since the previous look)
//   (apply_atom, input_json, LookOptions) -> HandleReport  (input written to stdin)
//   (abort_atom)                          -> HandleReport  (after the whole group is gone)
//   (peek_atom)                           -> HandleProgress (its last output line)
//   (answer_atom, answer_json)            -> void  a one-shot run's question, answered
//   (retire_atom)                         -> void  the registry has its final state
#pragma once

#include <string>

#include "interfaces.hpp"

namespace jp {

class IoThread;

/// Spawns a handle for `spec` as a child of `parent` (the registry); the handle tells
/// `supervisor` (stopped_atom, HandleReport) once its process group is gone, and quits
/// on (retire_atom). If the actor dies, it kills its process group on the way out.
handle_actor spawn_process_handle(caf::local_actor* parent, const std::string& id, LaunchSpec spec,
                                  IoThread& io, const supervisor_actor& supervisor);

} // namespace jp
