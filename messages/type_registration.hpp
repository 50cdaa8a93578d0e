// Registers every protocol type with CAF so it can cross nodes (an unregistered
// type arrives empty on a remote node without any error).
#pragma once

namespace caf { class actor_system_config; }

namespace jp {

void register_message_types(caf::actor_system_config& cfg);

} // namespace jp
