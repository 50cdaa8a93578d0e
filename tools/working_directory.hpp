// Where a tool's process starts. A cwd the assistant chose (the built-in shell's `cwd`
// parameter, a templated `cwd`) is a path from a model, and a relative one the tool's
// author wrote is a path into the workspace, whose links are a stranger's (`build` a
// link to `../..`): either must stay inside the workspace, with `..` and symlinks
// resolved, unless the tool's config says cwd_outside_workspace = true. An absolute
// cwd the author wrote is theirs.
#pragma once

#include <string>
#include <string_view>

#include "../messages/result.hpp"

namespace jp {

/// `requested` ("" = the workspace; a relative path is taken from the workspace) as the
/// directory to start in. With `confine`, the path resolved (weakly_canonical) must be
/// the workspace or below it; the result is then that resolved path, and a refusal ends
/// with `rule` (what may leave the workspace). A NUL byte is refused either way.
Result<std::string> working_directory(const std::string& workspace, std::string_view requested,
                                      bool confine,
                                      std::string_view rule = "a cwd the assistant chooses, or a relative one "
                                                              "in a tool's config, must be inside the workspace (a "
                                                              "tool whose config sets cwd_outside_workspace = true "
                                                              "may leave it)");

} // namespace jp
