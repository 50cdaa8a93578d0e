#include "runtime/cli/stdout_lines.hpp"

namespace jp {

StdoutLines::StdoutLines(std::FILE* out) : out_(out), thread_([this] { run(); }) {}

StdoutLines::~StdoutLines() {
  {
    std::lock_guard lock(m_);
    done_ = true;
  }
  cv_.notify_one();
  thread_.join();
}

void StdoutLines::push(std::string line) {
  {
    std::lock_guard lock(m_);
    unwritten_ += line.size() + 1;
    lines_.push_back(std::move(line));
  }
  cv_.notify_one();
}

size_t StdoutLines::unwritten() const {
  std::lock_guard lock(m_);
  return unwritten_;
}

void StdoutLines::wait_room(size_t limit) {
  std::unique_lock lock(m_);
  written_.wait(lock, [&] { return unwritten_ < limit; });
}

void StdoutLines::run() {
  std::unique_lock lock(m_);
  for (;;) {
    cv_.wait(lock, [this] { return done_ || !lines_.empty(); });
    if (lines_.empty())
      return; // done, and everything given is written
    auto batch = std::move(lines_);
    lines_.clear();
    lock.unlock();
    size_t bytes = 0;
    for (auto& line : batch) {
      std::fwrite(line.data(), 1, line.size(), out_);
      std::fputc('\n', out_);
      bytes += line.size() + 1;
    }
    std::fflush(out_);
    lock.lock();
    unwritten_ -= bytes;
    written_.notify_all();
  }
}

} // namespace jp
