// Ends the MCP server starts still waiting when their owner ends first: `jp-actors
// mcp` whose client left while a server started (npx and uvx may fetch it first).
// Each such start fails at once and its process is killed, rather than its
// start_timeout_secs (120 s by default) being waited out before jp-actors exits.
#pragma once

#include <functional>
#include <mutex>
#include <utility>
#include <vector>

namespace jp {

class McpStartStop {
public:
  /// Stops the starts waiting now and any begun later. Any thread.
  void stop() {
    std::vector<std::function<void()>> now;
    {
      std::lock_guard lock(mtx_);
      stopped_ = true;
      now.swap(stoppers_);
    }
    for (auto& f : now)
      f();
  }

  bool stopped() const {
    std::lock_guard lock(mtx_);
    return stopped_;
  }

  /// `f` stops one start (it must do nothing once that start has ended); run at once
  /// when stopped already.
  void on_stop(std::function<void()> f) {
    {
      std::lock_guard lock(mtx_);
      if (!stopped_) {
        stoppers_.push_back(std::move(f));
        return;
      }
    }
    f();
  }

private:
  mutable std::mutex mtx_;
  bool stopped_ = false;
  std::vector<std::function<void()>> stoppers_;
};

} // namespace jp
