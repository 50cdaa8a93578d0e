// A handle's output: what was produced since the last look (fetch/apply), cut to a
// head and a tail (tail favoured) when larger than the cap, and the full output in a
// spill file once it outgrows the cap. Memory stays bounded whatever the child writes.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace jp {

class OutputBuffer {
public:
  /// `spill_path` is created only when the output outgrows `cap`: anew (never a
  /// file or link already there), 0600, in a directory reached from `spill_root`
  /// (trusted; "" = the file's own directory) through no link.
  OutputBuffer(uint64_t cap, std::string spill_path, std::string spill_root = {});
  ~OutputBuffer();
  OutputBuffer(const OutputBuffer&) = delete;
  OutputBuffer& operator=(const OutputBuffer&) = delete;

  void append(std::string_view chunk);

  struct Taken {
    std::string content;    // head + "\n…[N bytes omitted]…\n" + tail when cut
    uint64_t omitted = 0;   // bytes left out of content
    std::string spill_path; // set when something was cut
  };
  /// The output since the previous take, and start a new window.
  Taken take();

  uint64_t total() const { return total_; }
  uint64_t pending() const { return pending_; }
  /// The last bytes of the pending window (for previews), at most n.
  std::string peek_tail(size_t n) const;
  const std::string& spill_path() const { return spill_path_; }
  /// No more output will come: close the spill file (its content stays).
  void close();

private:
  void spill(std::string_view bytes);

  uint64_t cap_;
  size_t head_cap_;
  size_t tail_cap_;
  std::string window_; // the pending window while it fits the cap
  std::string head_;   // once cut: its first head_cap_ bytes...
  std::string tail_;   // ...and its last bytes (trimmed lazily to tail_cap_)
  bool cut_ = false;
  uint64_t pending_ = 0;
  uint64_t total_ = 0;
  std::string early_; // everything so far, until the spill file exists
  std::string spill_path_;
  std::string spill_root_;
  int spill_fd_ = -1;
  bool spill_failed_ = false;
};

} // namespace jp
