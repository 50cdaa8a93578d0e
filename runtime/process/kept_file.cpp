#include "runtime/process/kept_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace jp {

int KeptFile::fd() {
  std::lock_guard guard(lock_);
  struct stat st{};
  // The same file, whatever its type (a /dev/null that is a plain file included).
  if (fd_ >= 0 && ::fstat(fd_, &st) == 0 && st.st_dev == device_ && st.st_ino == inode_)
    return fd_;
  int fd = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd >= 0 && ::fstat(fd, &st) != 0) {
    ::close(fd);
    fd = -1;
  }
  if (fd >= 0) {
    fd_ = fd;
    device_ = st.st_dev;
    inode_ = st.st_ino;
  }
  return fd;
}

} // namespace jp
