#include "runtime/process/private_file.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fmt/format.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

namespace jp {

UniqueFd& UniqueFd::operator=(UniqueFd&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0)
      ::close(fd_);
    fd_ = o.fd_;
    o.fd_ = -1;
  }
  return *this;
}

UniqueFd::~UniqueFd() {
  if (fd_ >= 0)
    ::close(fd_);
}

Result<DirFd> open_private_dir(const std::string& root, const std::string& relative) {
  std::error_code ec;
  if (!root.empty())
    std::filesystem::create_directories(root, ec); // trusted: links there are the user's
  DirFd dir(::open(root.empty() ? "." : root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (dir.get() < 0)
    return Error{fmt::format("cannot open {}: {}", root, std::strerror(errno))};
  std::string where = root;
  for (auto& part : std::filesystem::path(relative)) {
    auto name = part.string();
    if (name.empty() || name == "." || name == "/")
      continue;
    if (name == "..")
      return Error{fmt::format("{}: `..` is not followed in a private directory's path", relative)};
    where += "/" + name;
    if (::mkdirat(dir.get(), name.c_str(), 0700) != 0 && errno != EEXIST)
      return Error{fmt::format("cannot create {}: {}", where, std::strerror(errno))};
    // O_NOFOLLOW: a link planted in place of the directory is refused (ELOOP/ENOTDIR).
    DirFd next(::openat(dir.get(), name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (next.get() < 0) // a link, a file, or no fd left (EMFILE: said as it is)
      return Error{errno == ELOOP || errno == ENOTDIR
                     ? fmt::format("{} is not a directory of its own (a link or a file?): {}", where,
                                   std::strerror(errno))
                     : fmt::format("cannot open {}: {}", where, std::strerror(errno))};
    dir = std::move(next);
  }
  struct stat st{};
  if (::fstat(dir.get(), &st) != 0)
    return Error{fmt::format("cannot inspect {}: {}", where, std::strerror(errno))};
  if (st.st_uid != ::geteuid())
    return Error{fmt::format("{} belongs to uid {}, not to this user ({}): not used for private state",
                             where, st.st_uid, ::geteuid())};
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0)
    return Error{fmt::format("{} may be written by others (mode {:o}): not used for private state", where,
                             st.st_mode & 07777)};
  return dir;
}

int create_private_file(const DirFd& dir, const std::string& name, int flags) {
  return ::openat(dir.get(), name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | flags, 0600);
}

std::string random_name_part() {
  uint64_t r = 0;
  if (::getrandom(&r, sizeof r, 0) != static_cast<ssize_t>(sizeof r)) {
    // No entropy source: still unlikely to be guessed, and O_EXCL refuses a planted name.
    r = static_cast<uint64_t>(::getpid()) * 0x9E3779B97F4A7C15ull ^ static_cast<uint64_t>(::time(nullptr));
  }
  return fmt::format("{:016x}", r);
}

} // namespace jp
