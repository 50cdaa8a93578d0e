// Where a run keeps what it writes. The user's own state (crash records, and the
// state of workspaces that cannot be written) lives under $XDG_STATE_HOME/jp-actors,
// else ~/.local/state/jp-actors. A workspace's state (conversations, full outputs)
// lives in <workspace>/<runtime.state_dir> when that can be written; a read-only
// checkout runs all the same, its state kept in the user's directory instead.
#pragma once

#include <string>
#include <string_view>

#include "../../messages/result.hpp"

namespace jp {

struct Config;

/// A directory below a trusted root (open_private_dir creates what is below it).
struct UserStateDir {
  std::string root;
  std::string relative;
  std::string path() const { return relative.empty() ? root : root + "/" + relative; }
};

/// jp-actors' directory `sub` in the user's state ("" for the directory itself); an error
/// when neither XDG_STATE_HOME nor HOME is an absolute path.
Result<UserStateDir> user_state_dir(std::string_view sub);

/// Where this run keeps the workspace's state.
struct StateLocation {
  std::string dir;  // absolute; "" when nothing can be written (nothing is kept)
  std::string note; // what to tell the user once; "" when the workspace's own place is used
};

/// The workspace's state directory when it can be written, else
/// <user state>/workspaces/<name>-<hash of its path> (created 0700), else none.
StateLocation choose_state_location(const Config& config);

} // namespace jp
