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
    lines_.push_back(std::move(line));
  }
  cv_.notify_one();
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
    for (auto& line : batch) {
      std::fwrite(line.data(), 1, line.size(), out_);
      std::fputc('\n', out_);
    }
    std::fflush(out_);
    lock.lock();
  }
}

} // namespace jp
