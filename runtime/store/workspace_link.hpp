// A link inside someone's repository must not steer where jp-actors keeps state: a
// `.jp` or `conversations` link there could point the store at any file of yours.
#pragma once

#include <string>

namespace jp {

/// The first directory on the way from below `root` down to `path` (included) that
/// is a symbolic link; "" when none is one, or when `path` is not below `root`.
std::string first_link_below(const std::string& root, const std::string& path);

} // namespace jp
