// How much of a workspace the spill files of all handles (and earlier runs) may take:
// before a new one is made, and as one grows past what it reserved, the oldest are
// removed until it fits.
#pragma once

#include <cstdint>
#include <string_view>

#include "private_file.hpp"

namespace jp {

/// Whether `name` is one spill_path_for gives (`ID-PID-N-16HEX.log`): only those
/// are the budget's to remove. A workspace's own `notes.log` in that directory is
/// not jp-actors' to delete, and a repository may lower the budget.
bool is_spill_file_name(std::string_view name);

/// Removes the oldest spill files in `dir` (regular files named as is_spill_file_name
/// says, owned by this user; links and anything else are left alone) until those
/// left plus `incoming` bytes fit `budget`. A file still being written (spill_file_open) counts as what
/// it reserved (or its size, if more) and is not removed. Returns whether they fit.
bool enforce_spill_budget(const DirFd& dir, uint64_t budget, uint64_t incoming);

/// Spill file `fd` is being written and reserves `reserved` bytes of the budget (it
/// holds no more than that), until spill_file_closed(fd) (before its close); called
/// again as its reservation grows.
void spill_file_open(int fd, uint64_t reserved);
void spill_file_closed(int fd);

} // namespace jp
