// Ends the MCP server starts still waiting when their owner ends first: `jp-actors
// mcp` whose client left while a server started (npx and uvx may fetch it first).
// Each such start fails at once and its process is killed, rather than its
// start_timeout_secs (120 s by default) being waited out before jp-actors exits.
#pragma once

#include <functional>
#include <utility>

#include "../../actors/tools_starting.hpp"

namespace jp {

class McpStartStop {
public:
  /// Stops the starts waiting now and any begun later. Any thread.
  void stop() { stopped_.set_ready(); }

  bool stopped() const { return stopped_.ready(); }

  /// `f` stops one start (it must do nothing once that start has ended); run at once
  /// when stopped already.
  void on_stop(std::function<void()> f) { stopped_.when_ready(std::move(f)); }

private:
  // The same once-only event with its waiters as the tools' start is: here, the stop.
  ToolsStarting stopped_;
};

} // namespace jp
