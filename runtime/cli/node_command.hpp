// `jp-actors node`: serves this machine's tools to other jp-actors (DESIGN.md
// "Nodes"). It publishes one gate through CAF's middleman and runs until a signal
// ends it (its tools get what an abort gives them).
#pragma once

#include <memory>
#include <string>

#include "config/config.hpp"

namespace jp {

/// `listen`: HOST:PORT from --listen ("": [node] listen). Prints
/// "jp-actors node: listening on HOST:PORT" once it does.
int run_node(std::shared_ptr<const Config> config, const std::string& listen);

} // namespace jp
