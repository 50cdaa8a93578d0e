// Files that are the user's own state, in places someone else may have prepared: a
// repository's `.jp/` (checked out from a stranger) or a shared /tmp. Nothing is
// opened through a link, and nothing that already exists is reused, so a planted
// link or file can neither redirect nor receive what jp-actors writes.
#pragma once

#include <string>

#include "../../messages/result.hpp"

namespace jp {

/// An open file descriptor, closed with the object.
class UniqueFd {
public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(UniqueFd&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
  UniqueFd& operator=(UniqueFd&& o) noexcept;
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd();
  int get() const { return fd_; }

private:
  int fd_ = -1;
};

/// An open directory.
using DirFd = UniqueFd;

/// Opens `root`/`relative`, creating what is missing (mode 0700 below `root`).
/// `root` is trusted as it is; below it no component may be a link, and the last one must be a
/// directory owned by this user that nobody else may write. The error names the
/// component at fault.
Result<DirFd> open_private_dir(const std::string& root, const std::string& relative);

/// Creates `name` in `dir` for writing, anew: O_CREAT|O_EXCL|O_NOFOLLOW, mode 0600,
/// plus `flags` (e.g. O_APPEND). -1 with errno set (EEXIST for a planted name).
int create_private_file(const DirFd& dir, const std::string& name, int flags = 0);

/// 16 random hex digits, for file names nobody can predict.
std::string random_name_part();

} // namespace jp
