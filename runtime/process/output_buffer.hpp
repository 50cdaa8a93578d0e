// A handle's output: what was produced since the last look (fetch/apply), cut to a
// head and a tail (tail favoured) when larger than the cap, and the whole output in a
// spill file once it outgrows the cap. The spill file is bounded too (its head, then
// its tail after an omission marker), and the spill directory has a budget. Memory
// and disk stay bounded whatever the child writes.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "chunk_tail.hpp"
#include "private_file.hpp"
#include "../../messages/omission_marker.hpp"

namespace jp {

/// A new spill file's path in `dir` for handle `id` ("" when `dir` is): unique per
/// handle ever started by this process (ids repeat across turns and agents), with a
/// random part, so nobody can plant a file or link at the name before it is made.
std::string spill_path_for(const std::string& dir, const std::string& id);

struct SpillLimits {
  uint64_t max_bytes = 64ull << 20;     // one file: head and tail kept beyond, omission marked
  uint64_t budget_bytes = 512ull << 20; // its directory: the oldest files go first
};

class OutputBuffer {
public:
  /// `spill_path` is created only when the output outgrows `cap`: anew (never a
  /// file or link already there), 0600, in a directory reached from `spill_root`
  /// (trusted; "" = the file's own directory) through no link. Before it is made,
  /// the oldest spill files there are removed to keep the directory in its budget.
  OutputBuffer(uint64_t cap, std::string spill_path, std::string spill_root = {}, SpillLimits limits = {});
  ~OutputBuffer();
  OutputBuffer(const OutputBuffer&) = delete;
  OutputBuffer& operator=(const OutputBuffer&) = delete;

  void append(std::string_view chunk);
  /// The same; a big chunk may be kept as it is (the spill file's tail) instead of
  /// copied.
  void append(std::string&& chunk);

  struct Taken {
    std::string content;    // head + "\n…[N bytes omitted]…\n" + tail when cut
    uint64_t omitted = 0;   // bytes left out of content
    size_t head = 0;        // content's bytes before the omission marker, when cut
    std::string spill_path; // set when something was cut; says "(not written: why)" or
                            // "(incomplete: why)" when writing it failed
  };
  /// The output since the previous take, and start a new window.
  Taken take();

  /// Bytes append() takes now with no file made and at most `small` bytes written
  /// to disk: the room left before the spill file is made; `small` while its head
  /// is written; UINT64_MAX once nothing more is written before close().
  uint64_t append_room(uint64_t small) const;

  /// Bytes append() takes now and close() then writes nothing to disk: the spill
  /// file's head still has room for them (a file made by them writes its head at
  /// once, its tail only at close); 0 once the head is full (close() writes the
  /// tail that any more bytes make, or has one to write already).
  uint64_t close_room() const;

  uint64_t total() const { return total_; }
  uint64_t pending() const { return pending_; }
  /// The last bytes of the pending window (for previews), at most n.
  std::string peek_tail(size_t n) const;
  const std::string& spill_path() const { return spill_path_; }
  /// No more output will come: finish the spill file (its tail) and close it.
  void close();

private:
  void append(std::string_view chunk, std::string* owned);
  void spill(std::string_view bytes, std::string* owned);
  bool open_spill();
  Result<DirFd> spill_dir() const;
  /// What the file reserves of the budget with a head of `head` bytes written.
  uint64_t reservation_for(uint64_t head) const;
  /// The file may hold a head of `head` bytes: within its reservation, or the budget
  /// had room for more (the oldest finished files removed for it); false: it had not.
  bool reserve_head(uint64_t head);
  bool write_spill(std::string_view bytes);

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
  SpillLimits limits_;
  uint64_t spill_head_cap_;  // bytes written straight to the file...
  size_t spill_tail_cap_;    // ...and the last bytes, kept here until close
  uint64_t spilled_ = 0;     // bytes given to the spill file
  uint64_t spill_written_ = 0;
  uint64_t spill_reserved_ = 0; // of the directory's budget (spill_budget.hpp)
  ChunkTail spill_tail_;     // at least spill_tail_cap_, at most a chunk more
  int spill_fd_ = -1;
  bool spill_done_ = false;  // closed, or writing failed: nothing more is written
};

} // namespace jp
