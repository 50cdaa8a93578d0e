// Lines for stdout, written in the order given by a thread of their own: a reader
// slow to take them (an MCP client over stdio) blocks that thread, not the actor
// that answers (a worker, or the io thread running it), so the session's calls go
// on meanwhile. What is given before the destructor is written before it returns.
#pragma once

#include <condition_variable>
#include <cstdio>
#include <deque>
#include <mutex>
#include <string>
#include <thread>

namespace jp {

class StdoutLines {
public:
  explicit StdoutLines(std::FILE* out = stdout);
  ~StdoutLines();
  StdoutLines(const StdoutLines&) = delete;
  StdoutLines& operator=(const StdoutLines&) = delete;

  /// Any thread: `line` (without its newline) is written after those given before.
  void push(std::string line);

private:
  void run();

  std::FILE* out_;
  std::mutex m_;
  std::condition_variable cv_;
  std::deque<std::string> lines_;
  bool done_ = false;
  std::thread thread_; // last: it starts once the rest is made
};

} // namespace jp
