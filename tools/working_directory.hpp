// Where a tool's process starts. A cwd the assistant chose (the built-in shell's `cwd`
// parameter, a templated `cwd`) is a path from a model: it must stay inside the
// workspace, with `..` and symlinks resolved, unless the tool's config says
// cwd_outside_workspace = true. A cwd the tool author wrote literally is theirs.
#pragma once

#include <string>
#include <string_view>

#include "../messages/result.hpp"

namespace jp {

/// `requested` ("" = the workspace; a relative path is taken from the workspace) as the
/// directory to start in. With `confine`, the path resolved (weakly_canonical) must be
/// the workspace or below it; the result is then that resolved path. A NUL byte is
/// refused either way.
Result<std::string> working_directory(const std::string& workspace, std::string_view requested,
                                      bool confine);

} // namespace jp
