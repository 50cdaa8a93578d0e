// `jp-actors nodes ls`: the configured nodes ([nodes.NAME]), reachable or not, and
// the handles running on each (of every client).
#pragma once

#include <memory>

#include "config/config.hpp"

namespace jp {

int list_nodes(std::shared_ptr<const Config> config);

} // namespace jp
