// Function tools (rfd/tool-to-promise.md): a C++ function that starts a tool's work
// and returns an Invocation -- the result to come and how to stop it -- instead of a
// program to run. The runtime runs each call as a handle (actors/function_handle.hpp),
// so a function tool gets the stateful protocol of a process tool: spawn, fetch,
// apply, abort, await, notifications and turn-end policies.
//
// The function is called on a runtime thread: it starts the work (on a thread of its
// own, an event loop, a pool) and returns at once. Everything it is given may be
// used from any thread.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "../config/config.hpp"
#include "../messages/json.hpp"
#include "../messages/tool_state.hpp"

namespace jp {

/// How a function tool's work ends: set once, from any thread. Copies share one
/// result. The runtime learns of it at once: no thread waits on it.
class FunctionResult {
public:
  /// Not set yet: the function keeps a copy and sets it when its work ends.
  FunctionResult();
  /// Already set (work that was done at once).
  static FunctionResult ready(ToolState final_state);

  /// The work ended: `final_state` is a stopped state (ToolState::success or
  /// ::failure). The first call counts; false for a later one, which is ignored.
  bool set(ToolState final_state) const;
  bool succeed(std::string result) const { return set(ToolState::success(std::move(result))); }
  bool fail(std::string message, bool transient = false) const {
    return set(ToolState::failure(ToolError{std::move(message), {}, transient}));
  }
  bool is_set() const;

  /// The runtime's side: `k` gets the state once it is set (now, if it is already).
  /// One listener; a second replaces the first if the result is not set yet.
  void on_set(std::function<void(ToolState)> k) const;

private:
  struct Shared;
  std::shared_ptr<Shared> shared_;
};

/// What a function tool has to show while it works: appended to the handle's output
/// (what `fetch` returns since the last look, and the last line `list` shows).
/// Callable from any thread, also after the work ended (then it is ignored).
using Progress = std::function<void(const std::string& text)>;

/// A started call of a function tool.
// Members left out of a designated initializer are empty ({}: no -Wextra warning).
struct Invocation {
  FunctionResult result;
  /// Stops the work early (`abort`, a turn end that aborts, the runtime going away).
  /// Called at most once, on a runtime thread: it must not block. The work should
  /// then end soon and set its result; a result that has not come after the tool's
  /// grace (runtime.abort_grace_secs) is no longer waited for. Empty: the work runs
  /// to its end and abort only stops waiting for it, at once.
  std::function<void()> abort{};
  /// `apply` sends input (any JSON value) to the work. Empty: apply is refused.
  /// Called on a runtime thread: it must not block.
  std::function<void(const Json& input)> input{};
};

/// A function tool: starts the work for `args` (the tool's own parameters, already
/// checked against its declared ones) and returns at once. An exception it throws
/// becomes the call's error.
using FunctionTool = std::function<Invocation(const Json& args, const Progress& progress)>;

/// The definition of a function tool, for its schema and the protocol: its name,
/// one line for the model, and its parameters, with the defaults an embedder's own
/// code wants: runs unattended (no permission asked), stateful (spawn, fetch and
/// abort; apply too when `takes_input`), aborted at turn end unless awaited.
/// Change any field of the result before adding it.
ToolConfig function_tool_config(std::string name, std::string summary, std::vector<ParameterConfig> parameters,
                                bool takes_input = false);

/// The `source` of a function tool's config.
inline constexpr const char* function_tool_source = "function";

} // namespace jp
