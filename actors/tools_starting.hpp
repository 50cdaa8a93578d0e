// Tools still starting (the MCP servers behind `jp-actors mcp`): who needs them
// waits for them, the rest goes on. Told ready once, from the thread that started
// them; `when_ready` callbacks run then (or at once, if it is), on that thread.
// Plain C++: no CAF here.
#pragma once

#include <functional>
#include <mutex>
#include <vector>

namespace jp {

class ToolsStarting {
public:
  bool ready() const {
    std::lock_guard lock(mtx_);
    return ready_;
  }
  /// `f` runs once they are ready: now, if they are.
  void when_ready(std::function<void()> f) {
    {
      std::lock_guard lock(mtx_);
      if (!ready_) {
        waiting_.push_back(std::move(f));
        return;
      }
    }
    f();
  }
  /// They are: what waited runs now. (Whatever they made was written before this, so
  /// whoever sees ready() true sees it.)
  void set_ready() {
    std::vector<std::function<void()>> waiting;
    {
      std::lock_guard lock(mtx_);
      ready_ = true;
      waiting.swap(waiting_);
    }
    for (auto& f : waiting)
      f();
  }

private:
  mutable std::mutex mtx_;
  bool ready_ = false;
  std::vector<std::function<void()>> waiting_;
};

} // namespace jp
