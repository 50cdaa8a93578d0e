#include "runtime/process/spill_budget.hpp"

#include <algorithm>
#include <dirent.h>
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
};

bool older(const SpillFile& a, const SpillFile& b) {
  if (a.mtime.tv_sec != b.mtime.tv_sec)
    return a.mtime.tv_sec < b.mtime.tv_sec;
  return a.mtime.tv_nsec < b.mtime.tv_nsec;
}

// Ours: a regular file (lstat-style, a link is never followed) named *.log, owned by us.
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
    if (name.size() <= 4 || !name.ends_with(".log"))
      continue;
    struct stat st{};
    if (::fstatat(dir.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0)
      continue;
    if (!S_ISREG(st.st_mode) || st.st_uid != ::geteuid())
      continue;
    files.push_back({std::move(name), st.st_mtim, static_cast<uint64_t>(st.st_size)});
  }
  ::closedir(d);
  return files;
}

} // namespace

int enforce_spill_budget(const DirFd& dir, uint64_t budget, uint64_t incoming) {
  auto files = spill_files(dir);
  uint64_t used = 0;
  for (auto& f : files)
    used += f.size;
  std::sort(files.begin(), files.end(), older);
  int removed = 0;
  for (auto& f : files) {
    if (used + incoming <= budget)
      break;
    if (::unlinkat(dir.get(), f.name.c_str(), 0) == 0) {
      used -= f.size;
      ++removed;
    }
  }
  return removed;
}

} // namespace jp
