#include "runtime/store/state_location.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fmt/format.h>
#include <unistd.h>

#include "config/config.hpp"
#include "messages/text_digest.hpp"
#include "runtime/process/private_file.hpp"
#include "runtime/store/workspace_link.hpp"

namespace jp {

namespace {

namespace fs = std::filesystem;

// 0 when this user may create and write files in `dir` once it exists: the
// nearest existing directory at or above it decides (errno otherwise). Nothing
// is created here, so a workspace is not touched by a run that writes nothing.
int writable(fs::path dir) {
  std::error_code ec;
  while (!fs::exists(dir, ec) && dir.has_relative_path())
    dir = dir.parent_path();
  if (!fs::is_directory(dir, ec)) // a file where the directory goes (a repository's own .jp)
    return ENOTDIR;
  return ::access(dir.c_str(), W_OK | X_OK) == 0 ? 0 : errno;
}

// Stable per workspace path, and readable: "<name>-<16 hex digits>".
std::string workspace_key(const std::string& workspace) {
  auto h = text_digest(workspace);
  std::string name = fs::path(workspace).filename().string();
  std::string safe;
  for (char c : name.substr(0, 32))
    safe += std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.' ? c : '_';
  return fmt::format("{}-{:016x}", safe.empty() ? "root" : safe, h);
}

} // namespace

Result<UserStateDir> user_state_dir(std::string_view sub) {
  auto absolute = [](const char* v) { return v && v[0] == '/' ? std::string(v) : std::string(); };
  auto below = [&](std::string base) { return sub.empty() ? base : fmt::format("{}/{}", base, sub); };
  if (auto state = absolute(std::getenv("XDG_STATE_HOME")); !state.empty())
    return UserStateDir{state, below("jp-actors")};
  // ~/.local/state is the user's own, as XDG_STATE_HOME is: a link there (stow, a
  // dotfiles repository, a home on another disk) is theirs and followed; from
  // jp-actors on, none is.
  if (auto home = absolute(std::getenv("HOME")); !home.empty())
    return UserStateDir{home + "/.local/state", below("jp-actors")};
  return Error{"set HOME or XDG_STATE_HOME to an absolute path"};
}

StateLocation choose_state_location(const Config& config) {
  auto own = state_path(config, "");
  if (!own.empty() && own.back() == '/')
    own.pop_back();
  // A link in the workspace on the way (its `.jp`) is not followed (the store
  // refuses to keep anything through it): the user's own place is used instead.
  // So is a link a repository committed where the store keeps its parts
  // (`.jp/conversations`, `.jp/output`): refused there, it stopped every query.
  std::string reason;
  auto part_link = [&]() -> std::string {
    // Yours outside the workspace (an absolute state_dir) is yours to link.
    if (!own.starts_with(config.workspace + "/"))
      return {};
    for (auto* part : {"conversations", "output"}) {
      std::error_code ec;
      auto at = fs::path(own) / part;
      if (fs::is_symlink(fs::symlink_status(at, ec)))
        return at.string();
    }
    return {};
  };
  if (auto link = first_link_below(config.workspace, own); !link.empty())
    reason = link + " is a link, which is not followed in a workspace";
  else if (auto part = part_link(); !part.empty())
    reason = part + " is a link, which is not followed in a workspace";
  else if (int why = writable(own); why == 0)
    return {own, ""};
  else
    reason = std::strerror(why);
  auto fallback = user_state_dir("workspaces/" + workspace_key(config.workspace));
  if (fallback) {
    if (auto dir = open_private_dir(fallback->root, fallback->relative); dir)
      return {fallback->path(), fmt::format("{} cannot be written ({}): this workspace's conversations and full "
                                            "outputs are kept in {}",
                                            own, reason, fallback->path())};
    else
      fallback = Error{dir.error()};
  }
  return {"", fmt::format("{} cannot be written ({}), nor can jp-actors' own state ({}): conversations and full "
                          "outputs are not kept by this run",
                          own, reason, fallback.error())};
}

} // namespace jp
