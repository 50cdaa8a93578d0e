#include "runtime/cli/workspace_config_note.hpp"

#include <cstdio>
#include <fmt/format.h>
#include <unistd.h>

#include "messages/terminal_safe.hpp"
#include "runtime/store/user_record.hpp"

namespace jp {

void note_workspace_config(const Config& config) {
  if (!config.workspace_layer)
    return;
  auto& layer = *config.workspace_layer;
  auto line = config.workspace + "\t" + layer.digest;
  if (!layer.digest.empty() && in_user_record("workspace-configs-seen", line))
    return;
  if (!layer.sets.empty()) {
    std::string sets;
    for (auto& s : layer.sets)
      sets += (sets.empty() ? "" : "; ") + s;
    // A repository's words: on a terminal they cannot drive it.
    std::fprintf(stderr,
                 "jp-actors: note: this workspace's .jp/config.toml is new or changed since you were last told "
                 "of it; it sets: %s. Read it as you would a Makefile before its tools run (said once per "
                 "version of the file)\n",
                 shown_on(STDERR_FILENO, sets).c_str());
  }
  if (!layer.digest.empty())
    (void)add_to_user_record("workspace-configs-seen", line); // unrecorded: said again next time
}

} // namespace jp
