#include "runtime/process/spill_budget.hpp"

#include <algorithm>
#include <dirent.h>
#include <map>
#include <mutex>
#include <fcntl.h>
#include <string>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace jp {

namespace {

struct SpillFile {
  std::string name;
  timespec mtime{};
  uint64_t size = 0;
  std::pair<dev_t, ino_t> id{};
};

// Spill files being written, every handle's (any thread): each counts as what it
// may grow to. Counted at their size when a new one was made, several growing at
// once took many times the budget.
std::mutex g_open_mtx;
std::map<std::pair<dev_t, ino_t>, uint64_t> g_open; // file -> its max bytes

std::pair<dev_t, ino_t> file_id(int fd) {
  struct stat st{};
  return ::fstat(fd, &st) == 0 ? std::pair{st.st_dev, st.st_ino} : std::pair<dev_t, ino_t>{};
}

bool older(const SpillFile& a, const SpillFile& b) {
  if (a.mtime.tv_sec != b.mtime.tv_sec)
    return a.mtime.tv_sec < b.mtime.tv_sec;
  return a.mtime.tv_nsec < b.mtime.tv_nsec;
}

bool all_of(std::string_view s, bool (*ok)(char)) {
  return !s.empty() && std::all_of(s.begin(), s.end(), ok);
}

bool digit(char c) {
  return c >= '0' && c <= '9';
}

bool lower_hex(char c) {
  return digit(c) || (c >= 'a' && c <= 'f');
}

bool id_char(char c) { // spill_path_for's `safe` id
  return digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '-' || c == '_' || c == '.';
}

} // namespace

bool is_spill_file_name(std::string_view name) {
  // From the end: ID (which may hold '-') - PID - N - 16 hex digits .log
  if (!name.ends_with(".log"))
    return false;
  name.remove_suffix(4);
  for (int part = 0; part < 3; ++part) {
    auto dash = name.rfind('-');
    if (dash == std::string_view::npos)
      return false;
    auto tail = name.substr(dash + 1);
    if (part == 0 ? tail.size() != 16 || !all_of(tail, lower_hex) : !all_of(tail, digit))
      return false;
    name = name.substr(0, dash);
  }
  return all_of(name, id_char) && name[0] != '.' && name[0] != '-';
}

namespace {

// Ours: a regular file (lstat-style, a link is never followed) named as spill_path_for
// names them, owned by us.
std::vector<SpillFile> spill_files(const DirFd& dir) {
  std::vector<SpillFile> files;
  // closedir closes it; the DirFd keeps its own. Close-on-exec, as all ours are.
  int fd = ::fcntl(dir.get(), F_DUPFD_CLOEXEC, 0);
  if (fd < 0)
    return files;
  DIR* d = ::fdopendir(fd);
  if (!d) {
    ::close(fd);
    return files;
  }
  ::rewinddir(d);
  while (auto* e = ::readdir(d)) {
    std::string name = e->d_name;
    if (!is_spill_file_name(name))
      continue;
    struct stat st{};
    if (::fstatat(dir.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0)
      continue;
    if (!S_ISREG(st.st_mode) || st.st_uid != ::geteuid())
      continue;
    files.push_back({std::move(name), st.st_mtim, static_cast<uint64_t>(st.st_size), {st.st_dev, st.st_ino}});
  }
  ::closedir(d);
  return files;
}

} // namespace

bool enforce_spill_budget(const DirFd& dir, uint64_t budget, uint64_t incoming) {
  auto files = spill_files(dir);
  uint64_t used = 0;
  {
    std::lock_guard lock(g_open_mtx);
    for (auto& f : files) {
      auto open = g_open.find(f.id);
      if (open != g_open.end()) {
        used += std::max(f.size, open->second);
        f.size = UINT64_MAX; // being written: not removed
      } else {
        used += f.size;
      }
    }
  }
  // Only when removing can make room: files being written alone past the budget,
  // every finished file (ones the model was just told of) went for nothing.
  uint64_t removable = 0;
  for (auto& f : files)
    if (f.size != UINT64_MAX)
      removable += f.size;
  if (used - std::min(used, removable) + incoming > budget)
    return false;
  std::sort(files.begin(), files.end(), older);
  for (auto& f : files) {
    if (used + incoming <= budget)
      break;
    if (f.size == UINT64_MAX)
      continue;
    if (::unlinkat(dir.get(), f.name.c_str(), 0) == 0)
      used -= f.size;
  }
  return used + incoming <= budget;
}

void spill_file_open(int fd, uint64_t reserved) {
  std::lock_guard lock(g_open_mtx);
  g_open[file_id(fd)] = reserved;
}

void spill_file_closed(int fd) {
  std::lock_guard lock(g_open_mtx);
  g_open.erase(file_id(fd));
}

} // namespace jp
