// jp::Runtime: jp-actors inside a program (docs/embedding.md). A runtime holds a
// configuration (its tools and limits), the function tools and executors added in
// code, an actor system (its own, or the program's) and the thread that watches
// child processes. From it come sessions (handles driven by the program itself) and
// turns (the agent loop, driven by a provider).
//
// Thread safety: every member may be called from any thread. Sessions and turns keep
// the runtime's state alive; destroy them (or let them end) before the actor system
// a runtime was given. The processes of a session or turn are gone when it is; the
// last of the runtime and its sessions and turns to go takes the rest (its MCP
// servers). A moved-from runtime may only be destroyed or assigned to.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "messages/result.hpp"
#include "tools/function_tool.hpp"

namespace caf {
class actor_system;
}

namespace jp {

class Session;
class Turn;
struct TurnHooks;

/// The built-in configuration: the built-in tools (shell, await, agent, ...), the
/// default limits, the current directory as the workspace, the scripted provider.
Config builtin_config();
/// builtin_config() with a TOML file (the CLI's `--config` format) applied on top.
/// Errors name the file, the key and what was expected.
Result<Config> config_from_file(const std::string& path);
/// builtin_config() with TOML text applied on top; `origin` names it in errors.
Result<Config> config_from_toml(std::string_view toml, std::string_view origin = "config");

/// Kills (SIGKILL) every process group the runtimes of this process started, now:
/// for a program's own signal handler (async-signal-safe), before the program dies
/// of its signal. What left its group by setsid is not reached from a handler.
/// Without it a signal kills the program and leaves its tools running. The
/// program's other ends need no call: std::exit, returning from main with a runtime
/// never destroyed, and std::terminate (an uncaught exception) kill them all,
/// setsid's included.
void kill_all_tools() noexcept;

class Runtime {
public:
  /// With an actor system of its own (runtime.worker_threads threads; not set: by the cores).
  /// Throws std::system_error when the threads that system starts cannot all be
  /// started (this user's tasks at their limit), as RuntimeActorConfig does.
  explicit Runtime(Config config);
  /// In `system`, which must outlive the runtime and every session and turn of it.
  /// Its config should be a jp::RuntimeActorConfig (<jp/runtime/actor_config.hpp>), or
  /// register jp's message types and error category the same way.
  Runtime(Config config, caf::actor_system& system);
  ~Runtime();
  Runtime(Runtime&&) noexcept;
  Runtime& operator=(Runtime&&) noexcept;

  /// Adds a function tool (tools/function_tool.hpp): `definition` (see
  /// function_tool_config) says its name, schema and protocol; `fn` starts its
  /// calls. Sessions and turns started afterwards offer it. Refused when the
  /// definition is not valid (its name, its parameters) or the name is taken.
  Status add_function_tool(ToolConfig definition, FunctionTool fn);

  /// The configuration sessions and turns started now get (tools included, those of
  /// its MCP servers among them: [mcp.servers.NAME], started with the runtime): a
  /// copy, as add_function_tool may change it meanwhile.
  Config config() const;

  /// What could not be set up, a sentence each: an MCP server that did not start
  /// (with the end of its stderr), a tool of one that is not offered.
  std::vector<std::string> notes() const;

  /// A set of handles driven by this program, with no model: spawn, fetch, apply,
  /// abort, await and list, through the same protocol the assistant uses.
  Session session();

  /// One turn of the agent loop: `prompt` goes to the provider; the tool calls of
  /// its responses run as handles until it answers without tool calls. Turns that
  /// share a conversation (hooks.conversation_id, or the runtime's own when empty)
  /// continue it.
  Turn run_turn(std::string prompt, TurnHooks hooks);
  Turn run_turn(std::string prompt);

  caf::actor_system& system();

  struct Impl; // runtime/embedding/runtime_impl.hpp

private:
  std::shared_ptr<Impl> impl_;
  friend struct RuntimeAccess;
};

} // namespace jp
