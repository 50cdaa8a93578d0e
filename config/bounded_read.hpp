// Reading a file a user named (a config, a PEM file) to its end, but never more than
// a file of its kind can hold: a device that never ends must not fill memory.
#pragma once

#include <cstddef>
#include <string>

namespace jp {

struct BoundedRead {
  std::string bytes;
  int error = 0;          // errno of a failed read (0: none)
  bool too_large = false; // it holds more than the bound
};

/// `fd` read to its end, at most `max` bytes (the caller opens and closes it).
BoundedRead read_bounded(int fd, size_t max);

} // namespace jp
