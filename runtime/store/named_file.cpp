#include "runtime/store/named_file.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>

namespace jp {

Result<UniqueFd> open_named_file(const std::string& path, const std::string& what) {
  // O_NONBLOCK: opening a FIFO waits for a writer otherwise; cleared below.
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY));
  if (fd.get() < 0)
    return Error{fmt::format("{}: cannot read: {}", path, std::strerror(errno))};
  struct stat st{};
  if (::fstat(fd.get(), &st) != 0)
    return Error{fmt::format("{}: cannot read: {}", path, std::strerror(errno))};
  if (S_ISDIR(st.st_mode))
    return Error{fmt::format("{}: is a directory; give {}", path, what)};
  if (!S_ISREG(st.st_mode) && !S_ISFIFO(st.st_mode))
    return Error{fmt::format("{}: is not a regular file (a device, a socket); give {}", path, what)};
  if (S_ISFIFO(st.st_mode)) {
    // A named pipe whose writer comes later (mkfifo, then a program writes it) is
    // waited for, as `cat` does: read now, it would be empty. (A pipe of `<(...)`
    // has its writer, so this returns at once.)
    UniqueFd waited(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY));
    if (waited.get() < 0)
      return Error{fmt::format("{}: cannot read: {}", path, std::strerror(errno))};
    if (::fstat(waited.get(), &st) != 0 || !S_ISFIFO(st.st_mode)) // replaced meanwhile
      return Error{fmt::format("{}: changed while it was opened; give {}", path, what)};
    return waited;
  }
  ::fcntl(fd.get(), F_SETFL, ::fcntl(fd.get(), F_GETFL) & ~O_NONBLOCK);
  return fd;
}

} // namespace jp
