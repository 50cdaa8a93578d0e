#include "actors/stopped_handle.hpp"

#include <caf/all.hpp>

namespace jp {

handle_actor spawn_stopped(caf::local_actor* spawner, const std::string& id, const std::string& why,
                           const supervisor_actor& supervisor) {
  return spawner->spawn([id, why, supervisor](handle_actor::pointer self) -> handle_actor::behavior_type {
    HandleReport final{id, ToolState::failure(ToolError{why, {}, false}), 0, {}, {}};
    final.refused = true;
    final.own_end = true; // stopped before anything could abort it
    self->send(supervisor, stopped_atom::value, final);
    return {
      [final](fetch_atom, const LookOptions&) { return final; },
      [final](apply_atom, const std::string&, const LookOptions&) { return final; },
      [final](abort_atom) { return final; },
      [](peek_atom) { return HandleProgress{}; },
      [](answer_atom, const std::string&) {},
      [](rename_atom, const std::string&) {}, // only a running one-shot run is renamed
      [self](retire_atom) { self->quit(); },
    };
  });
}

} // namespace jp
