// The client side of MCP (DESIGN.md "MCP"): one server, over stdio -- a process owned
// as a tool's process is (its own session, in the crash record, killed when the
// client goes), spoken to in JSON-RPC 2.0 lines -- or at its url (Streamable HTTP,
// mcp_http_transport; or the legacy HTTP+SSE, mcp_sse_transport, which asks for
// protocol version 2024-11-05). start() initializes it and lists its tools; call() runs one
// tools/call with a progress token, passing the server's progress and log messages
// on; cancel() sends notifications/cancelled. A notifications/tools/list_changed
// has the tools listed again (tools()); what the server says after it waits until
// the new list is in, so a call's answer sent after the notification is seen with
// the list it brought. Where the server offers tasks for a
// tool (MCP 2025-11-25's experimental tasks), the call is made a task: tools/call
// answers with the task at once, its status is polled (tasks/get; its status message
// is progress), its result fetched (tasks/result), and cancel() is tasks/cancel. A server answering initialize with a protocol
// version jp-actors does not speak (mcp::versions) does not start. A url server that
// forgot our session (HTTP 404) is given a new one (initialize again), and what the
// 404 answered is sent again in it, once.
// A server that exits or never answers fails what is out at it with an error naming
// the server and the tail of its stderr. A stdio server that exited is started again
// at its next call (initialize and tools/list again; what is called meanwhile waits
// for it), up to 3 times a minute. No CAF here: callbacks come on the io thread.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "../../config/config.hpp"
#include "../../messages/json.hpp"
#include "../../messages/result.hpp"
#include "../../messages/tool_state.hpp"

namespace jp {

class IoThread;
class McpStartStop;

/// One tool a server offers (tools/list).
struct McpTool {
  std::string name;
  std::string description;
  Json input_schema; // a JSON Schema object
  bool as_task = false; // called as a task (MCP 2025-11-25): the server offers it for this tool
  // Why the server's entry cannot be offered ("": it can), naming what MCP requires
  // of it: listed so that the user is told, once, with the usable tools.
  std::string refused;
  friend bool operator==(const McpTool&, const McpTool&) = default;
};

class McpClient {
public:
  /// Starts `server` in `cwd` and waits (at most its start timeout) for initialize and
  /// tools/list. The error names the server, and says what its stderr said. A url
  /// server's header values have each `${NAME}` replaced by the environment's NAME
  /// (unset: an error naming it).
  /// `env_drop`: variables kept from a stdio server's environment whatever they are
  /// called (the provider's key and the headers' secrets: secret_variables).
  /// `stop` (optional, outliving the io thread's work): once stopped, a start still
  /// waiting fails at once, saying so, and its process is killed.
  static Result<std::shared_ptr<McpClient>> start(IoThread& io, const McpServerConfig& server, const std::string& cwd,
                                                  const std::vector<std::string>& env_drop = {},
                                                  McpStartStop* stop = nullptr);
  /// A stdio server: its stdin closed, up to 1 s to exit on its own (this waits),
  /// then TERM and KILL to its group. A url server: its session ended.
  ~McpClient();

  const std::string& name() const;
  /// The tools the server offers now: as listed at the start, and as listed again
  /// after each notifications/tools/list_changed (a list that did not change is kept,
  /// the same pointer; one that could not be listed leaves the last). Any thread.
  std::shared_ptr<const std::vector<McpTool>> tools() const;
  /// `f` is told (on the io thread, after tools() changed) each time the server's
  /// tools change after its start. Any thread; replaces the one before.
  void on_tools_changed(std::function<void()> f);

  /// Calls `tool` with `args`; `progress` gets each progress message the server sends
  /// for it, `done` the final state once (a failure when the server errs, exits or
  /// does not answer within its timeout). Any thread. Returns the call's number.
  int64_t call(const std::string& tool, Json args, std::function<void(std::string)> progress,
               std::function<void(ToolState)> done);
  /// Asks the server to stop call `n` (notifications/cancelled), and ends it at once
  /// with `reason`. Any thread; nothing once it ended.
  void cancel(int64_t n, std::string reason);

  struct State; // shared with the process's callbacks

private:
  McpClient() = default;
  std::shared_ptr<State> state_;
};

} // namespace jp
