// A handle that stops at once, saying why it could not start (a sub-agent refused,
// a tool with no executor here): the registry supervises it as any, so a batch's
// await still hears of it.
#pragma once

#include <string>

#include "interfaces.hpp"

namespace jp {

handle_actor spawn_stopped(caf::local_actor* spawner, const std::string& id, const std::string& why,
                           const supervisor_actor& supervisor);

} // namespace jp
