// How much of a workspace the spill files of all handles (and earlier runs) may take:
// before a new one is made, the oldest are removed until it fits.
#pragma once

#include <cstdint>

#include "runtime/process/private_file.hpp"

namespace jp {

/// Removes the oldest spill files in `dir` (regular files named `*.log` owned by this
/// user; links and anything else are left alone) until those left plus `incoming`
/// bytes fit `budget`. Returns how many were removed.
int enforce_spill_budget(const DirFd& dir, uint64_t budget, uint64_t incoming);

} // namespace jp
