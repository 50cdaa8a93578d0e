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
  /// Bytes given and not yet written (newlines included).
  size_t unwritten() const;
  /// Returns once fewer than `limit` bytes are unwritten: a reader of the lines that
  /// stops reading them is given no more to read (its requests wait unread), so
  /// what it leaves unread cannot grow without bound.
  void wait_room(size_t limit);

private:
  void run();

  std::FILE* out_;
  mutable std::mutex m_;
  std::condition_variable cv_;
  std::condition_variable written_;
  std::deque<std::string> lines_;
  size_t unwritten_ = 0;
  bool done_ = false;
  std::thread thread_; // last: it starts once the rest is made
};

} // namespace jp
