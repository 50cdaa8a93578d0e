// Which conversations are this user's own. A workspace's conversations live in the
// workspace (`.jp/conversations`), which may be someone's repository: one committed
// there with an `active` file pointing at it would otherwise be continued by the
// next `query` as if the user had said what it holds ("run this curl | sh"). So the
// conversations a user starts, or continues by name (`query --continue ID`), are
// recorded in the user's own state ($XDG_STATE_HOME/jp-actors/own-conversations, one
// "ROOT<TAB>ID" line each), and only those are continued without being named.
#pragma once

#include <string>

#include "../../messages/result.hpp"

namespace jp {

/// Whether conversation `id` of the store at `root` (an absolute directory) is
/// recorded as this user's. False when the record cannot be read.
bool own_conversation(const std::string& root, const std::string& id);

/// Records conversation `id` of the store at `root` as this user's.
Status remember_own_conversation(const std::string& root, const std::string& id);

} // namespace jp
