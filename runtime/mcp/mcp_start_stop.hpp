// Ends the MCP server starts still waiting when their owner ends first: `jp-actors
// mcp` whose client left while a server started (npx and uvx may fetch it first).
// Each such start fails at once and its process is killed, rather than its
// start_timeout_secs (120 s by default) being waited out before jp-actors exits.
#pragma once

#include <functional>
#include <mutex>
#include <set>
#include <string>
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

  /// Server `name`'s start failed for the stop, not of itself: nothing to warn of.
  void mark_ended(const std::string& name) {
    std::lock_guard lock(mtx_);
    ended_.insert(name);
  }
  bool ended_by_stop(const std::string& name) const {
    std::lock_guard lock(mtx_);
    return ended_.count(name) > 0;
  }

private:
  // The same once-only event with its waiters as the tools' start is: here, the stop.
  ToolsStarting stopped_;
  mutable std::mutex mtx_;
  std::set<std::string> ended_;
};

} // namespace jp
