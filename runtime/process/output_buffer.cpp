#include "runtime/process/output_buffer.hpp"
#include "runtime/process/private_file.hpp"
#include "runtime/process/spill_budget.hpp"
#include "runtime/process/text_tail.hpp"

#include <cerrno>
#include <cstring>
#include <algorithm>
#include <fcntl.h>
#include <filesystem>
#include <fmt/format.h>
#include <mutex>
#include <unistd.h>
#include <atomic>
#include <cctype>

namespace jp {

std::string spill_path_for(const std::string& dir, const std::string& id) {
  static std::atomic<uint64_t> seq{0};
  if (dir.empty())
    return {};
  std::string safe;
  for (char c : id)
    safe += std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.' ? c : '_';
  // Not hidden (id `.`), nor read as an option by a command given the name (`-rf`).
  if (!safe.empty() && (safe[0] == '.' || safe[0] == '-'))
    safe[0] = '_';
  return fmt::format("{}/{}-{}-{}-{}.log", dir, safe, ::getpid(), ++seq, random_name_part());
}

namespace {

bool is_continuation(char c) {
  return (static_cast<unsigned char>(c) & 0xC0) == 0x80;
}

// Largest cut point <= n that does not split a UTF-8 sequence of s.
size_t utf8_prefix(std::string_view s, size_t n) {
  if (n >= s.size())
    return s.size();
  size_t k = n; // s[n] is the first byte left out: back up to its lead byte
  while (k > 0 && n - k < 3 && is_continuation(s[k]))
    --k;
  return is_continuation(s[k]) ? n : k;
}

// Number of leading continuation bytes to skip so s starts on a character.
size_t utf8_skip(std::string_view s) {
  size_t i = 0;
  while (i < s.size() && i < 3 && is_continuation(s[i]))
    ++i;
  return i;
}

// The spill file's tail is held in memory until the file is closed: at most this much
// (and a chunk more), so a flooding tool costs a few MiB, not the file.
constexpr uint64_t max_spill_tail = 1 << 20;
constexpr uint64_t marker_room = 64; // the omission marker between head and tail
// What a spill file being written reserves of the directory's budget past what it
// holds (and its tail to come), asked for again as its head grows past it. Reserved
// at spill_max_bytes from the start, nine handles spilling at once took a 512 MiB
// budget whole and removed every finished file, ones the model was just told of.
constexpr uint64_t reserve_step = 8 << 20;

// The budget's check and a file's reservation at once: handles crossing their caps
// (or growing) together on several threads would each see the others' not made yet.
std::mutex g_budget_mtx;

SpillLimits bounded(SpillLimits limits) {
  limits.max_bytes = std::max(limits.max_bytes, 4 * marker_room);
  return limits;
}

} // namespace

OutputBuffer::OutputBuffer(uint64_t cap, std::string spill_path, std::string spill_root, SpillLimits limits)
  : cap_(cap < 64 ? 64 : cap),
    head_cap_(static_cast<size_t>(cap_ / 4)),
    tail_cap_(static_cast<size_t>(cap_ - cap_ / 4)),
    spill_path_(std::move(spill_path)),
    spill_root_(std::move(spill_root)),
    limits_(bounded(limits)),
    spill_tail_cap_(static_cast<size_t>(std::min(limits_.max_bytes / 2, max_spill_tail))),
    spill_tail_(spill_tail_cap_) {
  spill_head_cap_ = limits_.max_bytes - spill_tail_cap_ - marker_room;
}

OutputBuffer::~OutputBuffer() {
  close();
}

void OutputBuffer::close() {
  if (spill_fd_ >= 0 && !spill_done_ && !spill_tail_.empty()) {
    // The file's tail: its last bytes from a character's start, after a marker
    // saying how much was left out; written from the chunks that hold it, not
    // joined into a copy first (up to a MiB).
    size_t n = std::min(spill_tail_cap_, spill_tail_.held());
    char first[3];
    size_t have = 0;
    spill_tail_.each_last(n, [&](std::string_view piece) {
      for (size_t i = 0; i < piece.size() && have < sizeof first; ++i)
        first[have++] = piece[i];
    });
    size_t skip = utf8_skip(std::string_view(first, have));
    uint64_t omitted = spilled_ - spill_written_ - (n - skip);
    if (omitted == 0 || write_spill(omission_marker(omitted)))
      spill_tail_.each_last(n - skip, [&](std::string_view piece) {
        if (!spill_done_)
          write_spill(piece);
      });
  }
  spill_tail_.clear();
  if (spill_fd_ >= 0) {
    spill_file_closed(spill_fd_);
    ::close(spill_fd_);
  }
  spill_fd_ = -1;
  spill_done_ = true;
}

Result<DirFd> OutputBuffer::spill_dir() const {
  // The workspace is someone's repository: a link planted at `.jp` or its output
  // directory, or at the file's name, must not redirect what is written.
  std::filesystem::path file(spill_path_);
  auto dir_path = file.parent_path().string();
  auto root = spill_root_;
  std::string below;
  if (!root.empty() && dir_path.starts_with(root + "/"))
    below = dir_path.substr(root.size() + 1);
  else
    root = dir_path;
  return open_private_dir(root, below);
}

uint64_t OutputBuffer::reservation_for(uint64_t head) const {
  return std::min(limits_.max_bytes, head + spill_tail_cap_ + marker_room + reserve_step);
}

bool OutputBuffer::open_spill() {
  auto dir = spill_dir();
  if (dir) {
    std::lock_guard lock(g_budget_mtx);
    spill_reserved_ = reservation_for(0);
    enforce_spill_budget(*dir, limits_.budget_bytes, spill_reserved_);
    spill_fd_ = create_private_file(*dir, std::filesystem::path(spill_path_).filename().string());
    if (spill_fd_ >= 0)
      spill_file_open(spill_fd_, spill_reserved_);
  }
  if (spill_fd_ < 0) {
    spill_done_ = true;
    spill_path_ += fmt::format(" (not written: {})", dir ? std::string(std::strerror(errno)) : dir.error());
    return false;
  }
  return true;
}

bool OutputBuffer::reserve_head(uint64_t head) {
  if (head + spill_tail_cap_ + marker_room <= spill_reserved_)
    return true;
  auto dir = spill_dir();
  if (!dir)
    return false;
  std::lock_guard lock(g_budget_mtx);
  auto wanted = reservation_for(head);
  if (!enforce_spill_budget(*dir, limits_.budget_bytes, wanted - spill_reserved_))
    return false;
  spill_reserved_ = wanted;
  spill_file_open(spill_fd_, spill_reserved_);
  return true;
}

bool OutputBuffer::write_spill(std::string_view bytes) {
  while (!bytes.empty()) {
    auto n = ::write(spill_fd_, bytes.data(), bytes.size());
    if (n < 0) {
      if (errno == EINTR)
        continue;
      // What is there is not the output: say so wherever the path is shown.
      spill_done_ = true;
      spill_path_ += fmt::format(" (incomplete: {})", std::strerror(errno));
      return false;
    }
    spill_written_ += static_cast<uint64_t>(n);
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

void OutputBuffer::spill(std::string_view bytes, std::string* owned) {
  if (spill_done_ || spill_path_.empty())
    return;
  if (spill_fd_ < 0 && !open_spill())
    return;
  spilled_ += bytes.size();
  // The head goes to the file at once; the rest is the tail, written at close.
  uint64_t room = spill_head_cap_ > spill_written_ ? spill_head_cap_ - spill_written_ : 0;
  if (spill_tail_.empty() && room > 0) {
    auto head = bytes.substr(0, static_cast<size_t>(std::min<uint64_t>(room, bytes.size())));
    // Past its reservation and the budget has no more room (other files growing):
    // the head ends here, and the rest is the tail the file ends with.
    if (!reserve_head(spill_written_ + head.size())) {
      spill_head_cap_ = spill_written_;
      head = {};
    }
    if (!write_spill(head))
      return;
    bytes.remove_prefix(head.size());
  }
  // A fast writer's chunks are kept as they came (`bytes` ends `owned`): copying
  // them would be most of what the output costs past the file's head.
  spill_tail_.add(bytes, owned);
}

void OutputBuffer::append(std::string_view chunk) {
  append(chunk, nullptr);
}

void OutputBuffer::append(std::string&& chunk) {
  append(std::string_view(chunk), &chunk);
}

void OutputBuffer::append(std::string_view chunk, std::string* owned) {
  if (chunk.empty())
    return;
  total_ += chunk.size();
  pending_ += chunk.size();
  // The pending window, first: the full output below may take `owned` over.
  if (!cut_) {
    window_.append(chunk);
    if (window_.size() > cap_) {
      cut_ = true;
      head_ = window_.substr(0, utf8_prefix(window_, head_cap_));
      keep_tail(tail_, std::string_view(window_).substr(head_.size()), tail_cap_);
      window_.clear();
      window_.shrink_to_fit();
    }
  } else {
    keep_tail(tail_, chunk, tail_cap_);
  }
  // Full output: kept in memory while small, in the spill file once it is not.
  if (spill_fd_ < 0 && !spill_done_) {
    early_.append(chunk);
    if (early_.size() > cap_) {
      spill(early_, nullptr);
      early_.clear();
      early_.shrink_to_fit();
    }
  } else {
    spill(chunk, owned);
  }
}

uint64_t OutputBuffer::append_room(uint64_t small) const {
  if (spill_done_ || spill_path_.empty())
    return UINT64_MAX;
  if (spill_fd_ < 0) // the file is made once what is kept in memory outgrows the cap
    return early_.size() < cap_ ? cap_ - early_.size() : 0;
  // Past the file's head, the rest is its tail, kept in memory until close().
  return spill_tail_.empty() && spill_written_ < spill_head_cap_ ? small : UINT64_MAX;
}

uint64_t OutputBuffer::close_room() const {
  if (spill_done_ || spill_path_.empty())
    return UINT64_MAX;
  uint64_t headed = spill_fd_ < 0 ? early_.size() : spill_written_; // the head's bytes so far
  return spill_tail_.empty() && headed < spill_head_cap_ ? spill_head_cap_ - headed : 0;
}

namespace {

/// The bytes at the start of a cut tail that end an escape sequence begun before the
/// cut ("5;196m" of ESC [38;5;196m, the rest of a link's OSC up to its ST): shown,
/// they would read as text. Judged by the next ESC or BEL near: what comes before it
/// is such an end only in output that has sequences (text alone is kept whole).
size_t partial_sequence(std::string_view tail) {
  auto near = tail.substr(0, 256);
  auto at = near.find_first_of("\x1b\x07");
  if (at == std::string_view::npos)
    return 0;
  if (near[at] == '\x07') // BEL: an OSC's end
    return at + 1;
  if (at + 1 < near.size() && near[at + 1] == '\\') // ESC \ (ST): a string's end
    return at + 2;
  // A CSI's rest before a new sequence: '[' perhaps, parameters, intermediates, final.
  size_t i = 0;
  if (i < at && near[i] == '[')
    ++i;
  auto params = i;
  while (i < at && near[i] >= '0' && near[i] <= '?')
    ++i;
  while (i < at && near[i] >= ' ' && near[i] <= '/')
    ++i;
  if (i > params && i < at && near[i] >= '@' && near[i] <= '~')
    return i + 1;
  return 0;
}

} // namespace

OutputBuffer::Taken OutputBuffer::take() {
  Taken t;
  if (!cut_) {
    t.content = std::move(window_);
  } else {
    std::string_view tail(tail_);
    if (tail.size() > tail_cap_)
      tail.remove_prefix(tail.size() - tail_cap_);
    tail.remove_prefix(utf8_skip(tail));
    tail.remove_prefix(partial_sequence(tail));
    // From a line's start where one begins near: a line's end alone reads as a line
    // of its own ("96490" of 196490). (A tail that starts a line loses that line:
    // what came before it is not always at hand, and the omission counts it.)
    if (auto nl = tail.find('\n'); nl != std::string_view::npos && nl < tail.size() / 8)
      tail.remove_prefix(nl + 1);
    t.omitted = pending_ - head_.size() - tail.size();
    t.head = head_.size();
    t.content = head_ + omission_marker(t.omitted);
    t.content += tail;
    t.spill_path = spill_path_;
  }
  window_.clear();
  head_.clear();
  tail_.clear();
  cut_ = false;
  pending_ = 0;
  return t;
}

std::string OutputBuffer::peek_tail(size_t n) const {
  std::string_view src = cut_ ? std::string_view(tail_) : std::string_view(window_);
  if (src.size() > n)
    src.remove_prefix(src.size() - n);
  src.remove_prefix(utf8_skip(src));
  return std::string(src);
}

} // namespace jp
