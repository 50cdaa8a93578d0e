// `jp-actors mcp`'s server (DESIGN.md "MCP"): one MCP session over JSON-RPC 2.0. It
// answers initialize, ping, tools/list and tools/call (with protocol 2025-03-26 also
// in a batch, answered with one array); each tools/call goes through
// the session's turn -- the same registry, schema checks, permissions and stateful
// protocol the assistant gets -- so a client's `spawn` and its later `fetch` or
// `await` meet. Calls run concurrently, each answered when it ends. A call given a
// progress token gets notifications/progress each second while it runs;
// notifications/cancelled drops the call's answer and ends only what the call itself
// started: its one-shot run, or the handle its `spawn` started. A cancelled fetch,
// apply, abort or await just goes unanswered and leaves the handle running: clients
// cancel on their own (a request timing out while a fetch waits), and that must not
// kill the build the fetch was looking at.
// At the session's end (turn_end), the calls in flight are answered first; then each
// handle still running gets its turn-end policy.
// The session's turn is made at initialize: a client that declares elicitation is
// asked (elicitation/create) whether a tool whose `run` is "ask" may run.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "interfaces.hpp"
#include "tool_set.hpp"
#include "tools_starting.hpp"
#include "../tools/permission.hpp"

namespace caf {
class actor_system;
}

namespace jp {

struct Config;

/// Sends one message to the client (a JSON text without its newline); `related`: the
/// id (JSON text) of the client's request it belongs to, "" for none. Over HTTP a
/// request of ours goes on that request's event stream (MCP's Streamable HTTP).
using McpWriter = std::function<void(const std::string& message, const std::string& related)>;

/// Makes the session's turn, with who asks for permissions (empty: nobody can, and
/// the second argument says why, e.g. "this MCP client declared no elicitation to
/// ask the user through").
using McpTurnMaker = std::function<turn_actor(AskPermission, const std::string&)>;

/// `tools_now`: the tools as they are now, where MCP servers behind this one may
/// change theirs (empty: `config`'s for good). A change is told to the client
/// (notifications/tools/list_changed) once it listed them, before the answer of
/// the call it came with, or before the next message's.
/// `starting`: those servers still start (null: they have). initialize and ping are
/// answered meanwhile; every other message after initialize waits, in order, until
/// they have started (tools/list lists their tools then).
mcp_server_actor spawn_mcp_server(caf::actor_system& sys, McpTurnMaker make_turn, std::shared_ptr<const Config> config,
                                  McpWriter write, ToolsNow tools_now = {},
                                  std::shared_ptr<ToolsStarting> starting = nullptr);

} // namespace jp
