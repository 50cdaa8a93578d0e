// A file a user names on the command line (a script, a log to report on): opened to
// be read as it comes, but never a device or a directory. A repository can commit a
// link to /dev/zero where a log is expected, which would read forever.
#pragma once

#include <string>

#include "../../messages/result.hpp"
#include "../process/private_file.hpp"

namespace jp {

/// `path` opened for reading: a regular file or a pipe (`<(...)`). Refused, naming
/// `path` and saying what `what` (e.g. "a script file") is expected to be, when it
/// cannot be opened or is a directory, a device or a socket.
Result<UniqueFd> open_named_file(const std::string& path, const std::string& what);

} // namespace jp
