#include "config/bounded_read.hpp"

#include <cerrno>
#include <unistd.h>

namespace jp {

BoundedRead read_bounded(int fd, size_t max) {
  BoundedRead r;
  char buf[65536];
  for (;;) {
    auto n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0) {
      r.error = errno;
      return r;
    }
    if (n == 0)
      return r;
    if (r.bytes.size() + static_cast<size_t>(n) > max) {
      r.too_large = true;
      return r;
    }
    r.bytes.append(buf, static_cast<size_t>(n));
  }
}

} // namespace jp
