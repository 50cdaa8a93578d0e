// How much of a workspace the spill files of all handles (and earlier runs) may take:
// before a new one is made, the oldest are removed until it fits.
#pragma once

#include <cstdint>

#include "private_file.hpp"

namespace jp {

/// Removes the oldest spill files in `dir` (regular files named `*.log` owned by this
/// user; links and anything else are left alone) until those left plus `incoming`
/// bytes fit `budget`. A file still being written (spill_file_open) counts as what
/// it may grow to and is not removed. Returns how many were removed.
int enforce_spill_budget(const DirFd& dir, uint64_t budget, uint64_t incoming);

/// Spill file `fd` is being written and may grow to `max_bytes`, until
/// spill_file_closed(fd) (before its close).
void spill_file_open(int fd, uint64_t max_bytes);
void spill_file_closed(int fd);

} // namespace jp
