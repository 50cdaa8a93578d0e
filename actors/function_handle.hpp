// A function tool's handle (DESIGN.md "Actor topology", handle "fn"): its actor owns
// one invocation of a C++ function tool (tools/function_tool.hpp) -- the result to
// come, its abort and its input -- and speaks the handle interface like a process
// handle, so the registry supervises it and `await` covers it beside the others.
//   fetch  -> what the work reported (Progress) since the last look; waits up to
//             wait_ms for some while it runs
//   apply  -> input for the work (refused when its invocation takes none)
//   abort  -> its abort is called (once); the report comes when its result does, or
//             after the spec's grace when it does not
//   stopped: the result it set; an exception thrown at the start is an error
// A handle that goes away while the work runs (its registry ended) aborts the work.
#pragma once

#include "registry_actor.hpp"
#include "../tools/function_tool.hpp"

namespace jp {

/// Handles over calls of `fn`: each spawn (or one-shot call) of its tool calls `fn`
/// with the call's arguments (LaunchSpec::arguments) and owns what it returns.
HandleFactory function_handle_factory(FunctionTool fn);

} // namespace jp
