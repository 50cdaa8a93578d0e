// The output buffer's spill file: bounded (head, marker, tail), its directory kept in a
// budget, and a failed write reported rather than passed off as the output.
#define CAF_SUITE output_buffer
#include <caf/test/unit_test.hpp>

#include <csignal>
#include <fcntl.h>
#include <fmt/format.h>
#include <fstream>
#include <memory>
#include <sstream>
#include <sys/resource.h>
#include <sys/stat.h>
#include <vector>

#include "runtime/process/chunk_pool.hpp"
#include "runtime/process/chunk_tail.hpp"
#include "runtime/process/process.hpp"
#include "runtime/process/output_buffer.hpp"
#include "runtime/process/spill_budget.hpp"
#include "temp_dir.hpp"

using namespace jp;
using namespace jp::testing;

namespace {

/// A file's size, or -1 when there is none.
long long size_on_disk(const std::filesystem::path& p) {
  std::error_code ec;
  auto n = std::filesystem::file_size(p, ec);
  return ec ? -1 : static_cast<long long>(n);
}

std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Numbered lines: every part of the output is recognisable.
std::string numbered(int from, int to) {
  std::string out;
  for (int i = from; i < to; ++i)
    out += fmt::format("line {:06}\n", i);
  return out;
}

// Appends `text` in chunks of `chunk` bytes, as the io thread hands output over.
void feed(OutputBuffer& buf, std::string_view text, size_t chunk) {
  for (size_t i = 0; i < text.size(); i += chunk)
    buf.append(text.substr(i, chunk));
}

void age(const std::filesystem::path& p, time_t secs_ago) {
  timespec times[2];
  times[0].tv_sec = times[1].tv_sec = ::time(nullptr) - secs_ago;
  times[0].tv_nsec = times[1].tv_nsec = 0;
  ::utimensat(AT_FDCWD, p.c_str(), times, AT_SYMLINK_NOFOLLOW);
}

} // namespace

CAF_TEST(a spill file keeps its head and tail within spill_max_bytes with the omission marked) {
  temp_dir dir;
  auto path = dir.path / "out.log";
  std::string all = numbered(0, 100000); // 1.2 MB
  {
    OutputBuffer buf(1024, path.string(), "", SpillLimits{16384, 1 << 30});
    feed(buf, all, 1000);
    auto taken = buf.take();
    CAF_CHECK_EQUAL(taken.spill_path, path.string());
    buf.close();
  }
  auto file = read_file(path);
  CAF_CHECK_LESS_OR_EQUAL(file.size(), 16384u);
  auto marker = file.find("\n…[");
  CAF_REQUIRE(marker != std::string::npos);
  auto end = file.find(" bytes omitted]…\n", marker);
  CAF_REQUIRE(end != std::string::npos);
  auto head = file.substr(0, marker);
  auto omitted = std::stoull(file.substr(marker + 5, end - marker - 5));
  auto tail = file.substr(end + std::string(" bytes omitted]…\n").size());
  CAF_CHECK(all.starts_with(head));
  CAF_CHECK(all.ends_with(tail));
  CAF_CHECK_EQUAL(head.size() + omitted + tail.size(), all.size());
  CAF_CHECK_GREATER(head.size(), 4096u);
  CAF_CHECK_GREATER(tail.size(), 4096u);
}

CAF_TEST(chunks handed over whole give the same window and spill file as chunks copied) {
  // A chunk of 64 KiB or more is kept as it came, not copied: what is taken and what
  // is written must not change with that, whether the output ends there or goes on,
  // and when a chunk ends the file's head.
  temp_dir dir;
  const std::string text = numbered(0, 500000); // 6 MB
  struct Case {
    std::vector<size_t> sizes; // the chunks' sizes, repeated
    size_t bytes;              // of `text`
    uint64_t spill_max;        // the file's size: its tail is half of it, 1 MiB at most
  };
  std::vector<Case> cases = {
    {{100, 9000, 8192, 16384, 20000, 5000, 12000, 16385, 700}, 240000, 16384},
    {{100, 1000, 16000}, 17100, 16384}, // the head ends in the last chunk
    {{100, 1000, 16000, 9000}, 26100, 16384},
    {{100, 70000, 1 << 20, 65536, 300000, 7, 65535}, text.size(), 4 << 20},
    {{1 << 20}, text.size(), (4 << 20) + (512 << 10)}, // the head ends inside a whole chunk
    {{5000, 1 << 20}, 4200000, 4 << 20},               // the tail starts inside one
  };
  int n = 0;
  for (auto& [sizes, bytes, spill_max] : cases) {
    ++n;
    std::string all = text.substr(0, bytes);
    auto fill = [&](const std::string& name, bool whole) {
      OutputBuffer buf(1024, (dir.path / name).string(), "", SpillLimits{spill_max, 1 << 30});
      if (whole) {
        for (size_t i = 0, k = 0; i < all.size(); i += sizes[k++ % sizes.size()])
          buf.append(std::string(all.substr(i, sizes[k % sizes.size()])));
      } else {
        feed(buf, all, 1000);
      }
      auto taken = buf.take();
      buf.close();
      return std::make_pair(taken, read_file(dir.path / name));
    };
    auto [copied, copied_file] = fill(fmt::format("copied{}.log", n), false);
    auto [kept, kept_file] = fill(fmt::format("kept{}.log", n), true);
    CAF_MESSAGE(sizes.size() << " chunk sizes, " << all.size() << " bytes");
    CAF_CHECK_EQUAL(kept.content, copied.content);
    CAF_CHECK_EQUAL(kept.omitted, copied.omitted);
    CAF_CHECK_EQUAL(kept_file, copied_file);
    CAF_CHECK(all.ends_with(kept_file.substr(kept_file.size() - 4096)));
    CAF_CHECK(all.ends_with(kept.content.substr(kept.content.size() - 512)));
  }
}

CAF_TEST(a chunk tail keeps the last bytes of the stream whatever the chunks) {
  // Short pieces are joined, long owned ones moved in, a split one cut: the last
  // `keep` bytes are the stream's, and no more than a chunk beyond them is held.
  const std::string text = numbered(0, 200000); // 2.4 MB
  const size_t keep = 100000;
  std::vector<std::vector<size_t>> patterns = {
    {1, 7, 300},              // joined into shared strings
    {70000, 200000, 65536},   // long ones moved in
    {10, 300000, 5, 64000, 90000, 3}, // both, alternating
  };
  for (auto& sizes : patterns) {
    for (bool owned : {false, true}) {
      ChunkTail tail(keep);
      size_t largest = 0;
      size_t at = 0;
      size_t wrong = 0, over = 0; // adds after which the tail was wrong, or held too much
      for (size_t k = 0; at < text.size(); ++k) {
        auto n = std::min(sizes[k % sizes.size()], text.size() - at);
        largest = std::max(largest, n);
        if (owned) {
          // The first bytes of every third chunk are not the tail's (a head's cut).
          std::string chunk = text.substr(at > 0 && k % 3 == 0 ? at - 1 : at, n + (at > 0 && k % 3 == 0));
          tail.add(std::string_view(chunk).substr(chunk.size() - n), &chunk);
        } else {
          tail.add(std::string_view(text).substr(at, n));
        }
        at += n;
        if (k % 50 == 0 && tail.last(keep) != text.substr(at - std::min(at, keep), std::min(at, keep)))
          ++wrong;
        if (tail.held() > keep + std::max<size_t>(largest, 64 * 1024))
          ++over;
      }
      CAF_CHECK_EQUAL(wrong, 0u);
      CAF_CHECK_EQUAL(over, 0u);
      CAF_CHECK_EQUAL(tail.last(keep), text.substr(text.size() - keep));
      CAF_CHECK_EQUAL(tail.last(10 * keep).size(), tail.held());
      tail.clear();
      CAF_CHECK(tail.empty());
      CAF_CHECK_EQUAL(tail.last(keep), "");
    }
  }
  // At the edge: a chunk goes only when the ones after it hold all that is kept.
  ChunkTail tail(keep);
  std::string first = text.substr(0, 70000);
  std::string second = text.substr(70000, keep - 1);
  tail.add(first, &first);
  tail.add(second, &second);
  CAF_CHECK_EQUAL(tail.last(keep), text.substr(70000 - 1, keep));
  std::string third = text.substr(70000 + keep - 1, 1);
  tail.add(third, &third);
  CAF_CHECK_EQUAL(tail.last(keep), text.substr(70000, keep));
  CAF_CHECK_EQUAL(tail.held(), keep);
}

namespace {

// Takes every string the chunk pool keeps, so a test starts from none.
void empty_chunk_pool() {
  // A kept string carries a chunk of half its capacity or more: ask for each size.
  for (size_t n = kChunkPoolMin; n <= 2 * kOutputChunkMax; n *= 2)
    for (size_t i = 0; i < kChunkPoolKeep; ++i)
      (void)chunk_copy(std::string(n, 'x'));
  CAF_REQUIRE_EQUAL(chunk_pool_size(), 0u);
}

} // namespace

CAF_TEST(a big chunk string carries the next big chunk) {
  // Its pages stay touched: a fresh allocation faulted every page in again.
  empty_chunk_pool();
  const std::string first = numbered(0, 90000); // ≈ 1 MB
  auto a = chunk_copy(first);
  CAF_CHECK_EQUAL(a, first);
  const char* memory = a.data();
  chunk_done(std::move(a));
  CAF_CHECK(a.empty());
  CAF_CHECK_EQUAL(chunk_pool_size(), 1u);
  const std::string second = numbered(90000, 150000); // smaller, more than half
  auto b = chunk_copy(second);
  CAF_CHECK_EQUAL(b, second);
  CAF_CHECK(b.data() == memory);
  CAF_CHECK_EQUAL(chunk_pool_size(), 0u);
  // A small chunk is a plain string and never takes a kept one.
  chunk_done(std::move(b));
  auto small = chunk_copy("line\n");
  CAF_CHECK_EQUAL(small, "line\n");
  CAF_CHECK_EQUAL(chunk_pool_size(), 1u);
}

CAF_TEST(the chunk pool keeps only big strings and only a few) {
  empty_chunk_pool();
  chunk_done(std::string(1000, 'x'));                 // small: freed
  std::string grown;
  grown.reserve(3 * kOutputChunkMax);                 // bigger than any chunk: freed
  chunk_done(std::move(grown));
  CAF_CHECK_EQUAL(chunk_pool_size(), 0u);
  for (size_t i = 0; i < kChunkPoolKeep + 3; ++i)
    chunk_done(std::string(kChunkPoolMin, 'x'));
  CAF_CHECK_EQUAL(chunk_pool_size(), kChunkPoolKeep);
  // A chunk bigger than every kept string gets a new one; the kept stay.
  auto bigger = chunk_copy(std::string(kChunkPoolMin * 3, 'y'));
  CAF_CHECK_EQUAL(bigger.size(), kChunkPoolMin * 3);
  CAF_CHECK_EQUAL(chunk_pool_size(), kChunkPoolKeep);
  // A kept string more than twice a chunk's size does not carry it.
  empty_chunk_pool();
  chunk_done(std::move(bigger));
  auto half = chunk_copy(std::string(kChunkPoolMin, 'z'));
  CAF_CHECK_EQUAL(chunk_pool_size(), 1u);
  chunk_done(std::move(half));
  CAF_CHECK_EQUAL(chunk_pool_size(), 2u);
  empty_chunk_pool();
}

CAF_TEST(a chunk tail gives the big chunks it drops to the pool) {
  empty_chunk_pool();
  const std::string text = numbered(0, 300000); // 3.6 MB
  const size_t n = 600000;
  ChunkTail tail(n);
  for (size_t at = 0; at < text.size(); at += n) {
    std::string chunk = text.substr(at, n);
    tail.add(chunk, &chunk);
  }
  CAF_CHECK_EQUAL(tail.last(n), text.substr(text.size() - n));
  CAF_CHECK_EQUAL(chunk_pool_size(), kChunkPoolKeep); // five dropped, four kept
  empty_chunk_pool();
  tail.clear();
  CAF_CHECK_EQUAL(chunk_pool_size(), 1u); // the one it held
  empty_chunk_pool();
}

CAF_TEST(a spill file tail starts on a character even where that skips a whole chunk) {
  // 4096 bytes at most: a head of 1984, a tail of 2048 kept as the chunks came. The
  // tail's window starts on the last byte of the first chunk, the second half of
  // an 'é': the file's tail is the second chunk, from its first character.
  temp_dir dir;
  auto path = dir.path / "out.log";
  std::string first, second;
  for (int i = 0; i < 35000; ++i)
    first += "é";
  for (int i = 0; i < 1023; ++i)
    second += "é";
  second += "a";
  {
    OutputBuffer buf(1024, path.string(), "", SpillLimits{4096, 1 << 30});
    buf.append(std::string(first));
    buf.append(std::string(second));
    buf.close();
  }
  auto omitted = first.size() + second.size() - 1984 - second.size();
  CAF_CHECK_EQUAL(read_file(path), first.substr(0, 1984) + fmt::format("\n…[{} bytes omitted]…\n", omitted) + second);
}

CAF_TEST(an output that fits spill_max_bytes is spilled whole) {
  temp_dir dir;
  auto path = dir.path / "out.log";
  std::string all = numbered(0, 1000); // 12 kB
  {
    OutputBuffer buf(1024, path.string(), "", SpillLimits{16384, 1 << 30});
    feed(buf, all, 700);
  } // the destructor closes it
  CAF_CHECK_EQUAL(read_file(path), all);
}

CAF_TEST(a spill file is named as the budget knows its own) {
  auto name = std::filesystem::path(spill_path_for("/o", "-rf x/y")).filename().string();
  CAF_CHECK(is_spill_file_name(name));
  CAF_CHECK(name.rfind("_rf_x_y-", 0) == 0);
  for (auto other : {"notes.log", "build-1-2.log", "a-1-2-0123456789abcdeg.log", "a-1-2-0123456789ABCDEF.log",
                     "a-x-2-0123456789abcdef.log", "-1-2-0123456789abcdef.log", ".a-1-2-0123456789abcdef.log",
                     "a b-1-2-0123456789abcdef.log", "a-1-2-0123456789abcdef.txt", "a-1--0123456789abcdef.log"})
    CAF_CHECK_EQUAL(std::make_pair(std::string(other), is_spill_file_name(other)),
                    std::make_pair(std::string(other), false));
  CAF_CHECK(is_spill_file_name("my-tool.v2-123-45-0123456789abcdef.log"));
}

namespace {

/// A spill file's path in `dir` for handle `id`, as a handle's is made.
std::filesystem::path spill_in(const std::filesystem::path& dir, const std::string& id) {
  return spill_path_for(dir.string(), id);
}

} // namespace

CAF_TEST(a new spill file removes the oldest of ours until the directory fits its budget) {
  temp_dir dir;
  temp_dir outside;
  auto out = dir.path / "output";
  std::filesystem::create_directory(out);
  ::chmod(out.c_str(), 0700);
  std::string kb(1000, 'k');
  std::vector<std::filesystem::path> old;
  for (int i = 0; i < 5; ++i) {
    old.push_back(spill_in(out, fmt::format("old{}", i)));
    std::ofstream(old.back()) << kb;
    age(old.back(), 1000 - i * 100); // old0 is the oldest
  }
  std::ofstream(out / "notes.txt") << std::string(10000, 'n'); // not a spill file
  // The workspace's own, older than all: not named as ours, it is not ours to remove.
  std::ofstream(out / "notes.log") << kb;
  age(out / "notes.log", 9000);
  std::ofstream(outside.path / "victim.log") << "keep me";
  auto link = spill_in(out, "link");
  std::filesystem::create_symlink(outside.path / "victim.log", link);
  age(link, 5000);
  auto made = spill_in(out, "new");
  {
    // 5 kB there and 2 kB to come: 3 kB must go, so the three oldest.
    OutputBuffer buf(64, made.string(), "", SpillLimits{2000, 4000});
    buf.append(std::string(100, 'x'));
  }
  for (int i = 0; i < 5; ++i)
    CAF_CHECK_EQUAL(std::filesystem::exists(old[i]), i >= 3);
  CAF_CHECK(std::filesystem::exists(made));
  CAF_CHECK(std::filesystem::exists(out / "notes.txt"));
  CAF_CHECK_EQUAL(read_file(out / "notes.log"), kb);
  CAF_CHECK(std::filesystem::is_symlink(link));
  CAF_CHECK_EQUAL(read_file(outside.path / "victim.log"), "keep me");
}

CAF_TEST(a spill file still being written counts as what it may grow to) {
  // Made while another is young (small yet), a new file must not take the budget
  // the other will fill: the oldest finished file goes, the growing one stays.
  temp_dir dir;
  auto out = dir.path / "output";
  std::filesystem::create_directory(out);
  ::chmod(out.c_str(), 0700);
  auto old = spill_in(out, "old"), growing_file = spill_in(out, "growing"), next_file = spill_in(out, "next");
  std::ofstream(old) << std::string(1500, 'o');
  age(old, 1000);
  SpillLimits limits{2000, 4200};
  OutputBuffer growing(64, growing_file.string(), "", limits);
  growing.append(std::string(100, 'g')); // its file: 100 bytes now, up to 2000
  CAF_CHECK(std::filesystem::exists(old)); // 1.5 kB + 2 kB to come fit 4.2 kB
  {
    OutputBuffer next(64, next_file.string(), "", limits);
    next.append(std::string(100, 'n'));
  }
  // 1.5 kB finished + 2 kB growing + 2 kB to come passes 4.2 kB: the finished one goes.
  CAF_CHECK(!std::filesystem::exists(old));
  CAF_CHECK(std::filesystem::exists(growing_file));
  CAF_CHECK(std::filesystem::exists(next_file));
}

namespace {

/// Whether an old finished spill file (1 kB) outlives `n` files being written at
/// once under `limits`, each given `bytes` (past the cap: spilled).
bool old_file_outlives(int n, uint64_t bytes, SpillLimits limits) {
  temp_dir dir;
  auto out = dir.path / "output";
  std::filesystem::create_directory(out);
  ::chmod(out.c_str(), 0700);
  auto old = spill_in(out, "old");
  std::ofstream(old) << std::string(1000, 'o');
  age(old, 1000);
  std::vector<std::unique_ptr<OutputBuffer>> growing;
  for (int i = 0; i < n; ++i) {
    growing.push_back(std::make_unique<OutputBuffer>(64, spill_in(out, fmt::format("g{}", i)).string(), "", limits));
    growing.back()->append(std::string(bytes, 'g'));
  }
  return std::filesystem::exists(old);
}

} // namespace

CAF_TEST(spill files being written reserve what they hold and a step not their whole maximum) {
  // Ten handles spilling at once, each reserving spill_max_bytes (64 MiB), took a
  // 512 MiB budget and removed every finished file, ones the model was just told of.
  CAF_CHECK(old_file_outlives(10, 100000, SpillLimits{64ull << 20, 128ull << 20}));
}

CAF_TEST(finished spill files are not removed where removing them cannot make room) {
  // Files being written alone past the budget: the finished ones went for nothing.
  // Each reserves about 9 MiB: the third does not fit 20 MiB.
  CAF_CHECK(old_file_outlives(3, 1000, SpillLimits{64ull << 20, 20ull << 20}));
}

CAF_TEST(a spill file growing past its reservation removes the oldest or ends its head) {
  temp_dir dir;
  auto out = dir.path / "output";
  std::filesystem::create_directory(out);
  ::chmod(out.c_str(), 0700);
  auto old = spill_in(out, "old");
  std::ofstream(old) << std::string(5 << 20, 'o');
  age(old, 1000);
  std::string mib(1 << 20, 'x');
  {
    // 5 MiB finished and a file reserving ~9 MiB fit 20 MiB; grown to 12 MiB (its
    // reservation ~21 MiB) they do not: the finished file goes.
    OutputBuffer growing(64, spill_in(out, "growing").string(), "", SpillLimits{64ull << 20, 20ull << 20});
    growing.append(mib);
    CAF_CHECK(std::filesystem::exists(old));
    for (int i = 0; i < 11; ++i)
      growing.append(mib);
    CAF_CHECK(!std::filesystem::exists(old));
  }
  // Nothing left to remove: the head ends where the budget does, the tail follows.
  auto alone = spill_in(out, "alone");
  {
    OutputBuffer growing(64, alone.string(), "", SpillLimits{64ull << 20, 12ull << 20});
    for (int i = 0; i < 20; ++i)
      growing.append(mib);
  }
  auto size = std::filesystem::file_size(alone);
  CAF_CHECK_LESS_OR_EQUAL(size, 12ull << 20);
  CAF_CHECK(read_file(alone).find(" bytes omitted]…\n") != std::string::npos);
}

CAF_TEST(a spill file that could not be made or written whole says so) {
  temp_dir dir;
  dir.write("file", "a file where the directory should be");
  {
    OutputBuffer buf(64, (dir.path / "file" / "out.log").string());
    buf.append(std::string(200, 'x'));
    auto taken = buf.take();
    CAF_CHECK(taken.spill_path.find(" (not written: ") != std::string::npos);
  }
  // A file size limit makes write() fail (EFBIG) past 1000 bytes.
  auto previous = std::signal(SIGXFSZ, SIG_IGN);
  rlimit old{};
  ::getrlimit(RLIMIT_FSIZE, &old);
  rlimit small = old;
  small.rlim_cur = 1000;
  ::setrlimit(RLIMIT_FSIZE, &small);
  OutputBuffer::Taken taken;
  {
    OutputBuffer buf(64, (dir.path / "big.log").string(), "", SpillLimits{1 << 20, 1 << 30});
    buf.append(std::string(5000, 'x'));
    buf.close();
    taken = buf.take();
  }
  ::setrlimit(RLIMIT_FSIZE, &old);
  std::signal(SIGXFSZ, previous);
  CAF_CHECK(taken.spill_path.starts_with((dir.path / "big.log").string() + " (incomplete: "));
}

CAF_TEST(append_room says what append takes with no file made and little written to disk) {
  temp_dir dir;
  auto path = dir.path / "out.log";
  auto on_disk = [&] { return size_on_disk(path); };
  // Spill file: a head of 8192 - 4096 - 64 bytes written at once, then its tail in memory.
  OutputBuffer buf(1000, path.string(), {}, SpillLimits{8192, 1 << 20});
  CAF_CHECK_EQUAL(buf.append_room(64), 1000u);
  buf.append(std::string(600, 'a'));
  CAF_CHECK_EQUAL(buf.append_room(64), 400u);
  buf.append(std::string(400, 'b'));
  CAF_CHECK_EQUAL(on_disk(), -1); // within the room: no file yet
  CAF_CHECK_EQUAL(buf.append_room(64), 0u);
  buf.append(std::string_view("c")); // past it: the file is made and its head written
  CAF_CHECK_EQUAL(on_disk(), 1001);
  CAF_CHECK_EQUAL(buf.append_room(64), 64u); // the head: a small write at a time
  buf.append(std::string(2000, 'd'));
  CAF_CHECK_EQUAL(buf.append_room(64), 64u); // 3001 of the head's 4032
  buf.append(std::string(2000, 'e'));     // fills the head; the rest is the tail
  CAF_CHECK_EQUAL(on_disk(), 4032);
  CAF_CHECK_EQUAL(buf.append_room(64), UINT64_MAX);
  buf.append(std::string(100000, 'f'));
  CAF_CHECK_EQUAL(on_disk(), 4032); // nothing more on disk until close
  buf.close();
  CAF_CHECK_GREATER(on_disk(), 4032);
  CAF_CHECK_EQUAL(buf.append_room(64), UINT64_MAX);
  OutputBuffer unspilled(1000, "");
  CAF_CHECK_EQUAL(unspilled.append_room(64), UINT64_MAX);
}

CAF_TEST(close_room says what append takes before close has a spill tail to write) {
  temp_dir dir;
  auto path = dir.path / "out.log";
  auto on_disk = [&] { return size_on_disk(path); };
  // A head of 8192 - 4096 - 64 = 4032 bytes, then the tail kept until close.
  OutputBuffer buf(1000, path.string(), {}, SpillLimits{8192, 1 << 20});
  CAF_CHECK_EQUAL(buf.close_room(), 4032u);
  buf.append(std::string(600, 'a'));
  CAF_CHECK_EQUAL(buf.close_room(), 3432u); // kept in memory, but the head's once the file is made
  buf.append(std::string(1000, 'b')); // the file made, its head written
  CAF_CHECK_EQUAL(on_disk(), 1600);
  CAF_CHECK_EQUAL(buf.close_room(), 2432u);
  buf.append(std::string(2432, 'c')); // the head full, no tail yet
  CAF_CHECK_EQUAL(buf.close_room(), 0u);
  buf.close();
  CAF_CHECK_EQUAL(on_disk(), 4032); // nothing more: close wrote no tail
  CAF_CHECK_EQUAL(buf.close_room(), UINT64_MAX);

  OutputBuffer flooded(1000, (dir.path / "flood.log").string(), {}, SpillLimits{8192, 1 << 20});
  flooded.append(std::string(5000, 'd'));
  CAF_CHECK_EQUAL(flooded.close_room(), 0u); // a tail to write at close
  OutputBuffer unspilled(1000, "");
  CAF_CHECK_EQUAL(unspilled.close_room(), UINT64_MAX);
}

CAF_TEST(a cut output s tail starts at a line where one begins near) {
  // A line's end alone ("96490" of 196490) would read as a line of its own.
  temp_dir dir;
  OutputBuffer buf(1000, (dir.path / "spill.log").string());
  auto text = numbered(0, 1000); // 12 bytes a line
  feed(buf, text, 4096);
  auto taken = buf.take();
  const std::string marker_end = "]…\n";
  auto tail = taken.content.substr(taken.content.find(marker_end) + marker_end.size());
  CAF_CHECK(tail.starts_with("line "));
  CAF_CHECK(text.ends_with(tail));
  // What was left out is counted to the byte.
  CAF_CHECK_EQUAL(text.size() - taken.omitted, taken.content.substr(0, taken.content.find("\n…[")).size() + tail.size());
  buf.close();
}

CAF_TEST(a cut output s tail does not start with the rest of an escape sequence) {
  // ESC [38;5;196m cut after "38;": "5;196m" would be text.
  auto tail_of = [](const std::string& text) {
    OutputBuffer buf(1000, "");
    buf.append(std::string(text));
    auto taken = buf.take();
    const std::string marker_end = "]…\n";
    return taken.content.substr(taken.content.find(marker_end) + marker_end.size());
  };
  // The tail is the last 750 bytes (the cap less a quarter).
  auto body = std::string(100, 'T') + "\x1b[0m" + std::string(640, 'U');
  auto csi = std::string(3000, 'a') + "\x1b[38;5;196m" + body;
  CAF_REQUIRE_EQUAL(csi.size() - 750, csi.find("5;196m"));
  CAF_CHECK_EQUAL(tail_of(csi), body);
  auto osc = std::string(3000, 'a') + "\x1b]8;;http://example.com/aaaa\x1b\\" + body;
  CAF_CHECK_EQUAL(tail_of(osc.substr(0, osc.size() - 8)).substr(0, 4), "TTTT");
  // Text with no sequence near is kept as it is, whatever it starts with.
  auto plain = std::string(3000, 'a') + "5m of rope" + std::string(740, ' ');
  CAF_CHECK_EQUAL(tail_of(plain), "5m of rope" + std::string(740, ' '));
}

CAF_TEST(a spill file s name is the handle id made safe and never hidden or an option) {
  auto name = [](const std::string& id) {
    return std::filesystem::path(spill_path_for("/tmp/d", id)).filename().string();
  };
  CAF_CHECK(name("build").starts_with("build-"));
  CAF_CHECK(name("a/../b").starts_with("a_.._b-"));
  CAF_CHECK(name(".").starts_with("_-"));
  CAF_CHECK(name("-rf").starts_with("_rf-"));
  CAF_CHECK(spill_path_for("", "x").empty());
}
