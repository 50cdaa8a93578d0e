// Executors: who runs a tool's handles. Processes run every tool of a config by
// default; function tools run their function (Runtime::add_function_tool). An
// embedder may supply its own for any tool -- a container, a remote machine, a
// fake for tests -- as a HandleFactory: an actor speaking the handle interface
// (actors/interfaces.hpp) for each spawn or one-shot call, told the call's
// LaunchSpec (argv for a process tool; `arguments`, the call's parameters, always).
// This header brings CAF's typed actors in; jp.hpp does not include it.
#pragma once

#include <string>

#include "actors/registry_actor.hpp"
#include "messages/result.hpp"

namespace jp {

class Runtime;

/// From now on, handles of `tool` (a tool of the runtime's config) are started by
/// `factory`, in sessions and turns started afterwards.
Status set_executor(Runtime& runtime, const std::string& tool, HandleFactory factory);

} // namespace jp
