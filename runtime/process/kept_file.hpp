// A file kept open for reading (close-on-exec) and checked at each use: its number
// may have been closed by code that does not know it is ours (an embedder's clean-up
// of fds it did not open) and given to something else since. The vfork launcher
// keeps /dev/null this way for the stdin of children without a pipe.
#pragma once

#include <mutex>
#include <string>
#include <sys/types.h>

namespace jp {

class KeptFile {
public:
  explicit KeptFile(std::string path) : path_(std::move(path)) {}

  /// The kept fd: still the file first opened (one fstat), else the file opened
  /// again. A number that no longer names it is not ours, so it is never closed
  /// here. -1 if the file cannot be opened.
  int fd();

private:
  std::mutex lock_;
  std::string path_;
  int fd_ = -1;
  dev_t device_ = 0;
  ino_t inode_ = 0;
};

} // namespace jp
