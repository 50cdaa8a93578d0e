// Threads started one per piece of blocking work (a POST, an event stream), each
// joined once it is done -- when the next is started -- or at the end: a long
// session does not keep a finished thread (and its stack) for each it ever ran.
// Not thread-safe: its owner's mutex guards it, and each thread's last step is
// done() under that mutex.
#pragma once

#include <algorithm>
#include <list>
#include <utility>
#include <thread>
#include <vector>

namespace jp {

class WorkerThreads {
public:
  /// Starts `work` on a thread of its own, after joining those that are done.
  template <class Work>
  void start(Work work) {
    reap();
    threads_.emplace_back(std::move(work));
  }
  /// The calling thread's work is over (its last step, under the owner's mutex).
  void done() { finished_.push_back(std::this_thread::get_id()); }
  /// All of them, to be joined without the owner's mutex (at the end).
  std::list<std::thread> take_all() {
    finished_.clear();
    return std::exchange(threads_, {});
  }

private:
  void reap() {
    for (auto it = threads_.begin(); it != threads_.end();) {
      if (std::find(finished_.begin(), finished_.end(), it->get_id()) != finished_.end()) {
        it->join();
        it = threads_.erase(it);
      } else {
        ++it;
      }
    }
    finished_.clear();
  }

  std::list<std::thread> threads_;
  std::vector<std::thread::id> finished_;
};

} // namespace jp
