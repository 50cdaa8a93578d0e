// `jp-actors node`: serves this machine's tools to other jp-actors (DESIGN.md
// "Nodes"). It publishes one gate through CAF's middleman and runs until a signal
// ends it (its tools get what an abort gives them).
#pragma once

#include <memory>
#include <set>
#include <string>

#include "config/config.hpp"

namespace jp {

/// `listen`: HOST:PORT from --listen ("": [node] listen). Prints
/// "jp-actors node: listening on HOST:PORT" once it does. `allow` (--allow): tools
/// that run for clients though their run is "ask", or though the workspace's
/// .jp/config.toml defines or changes them (which else are refused).
int run_node(std::shared_ptr<const Config> config, const std::string& listen, const std::set<std::string>& allow);

/// The tools as a node runs them: those `allow` names run unattended where they
/// would ask; the workspace's own run only when `allow` names them (someone's
/// repository may not make a node run its programs for every client).
Config node_served_config(const Config& config, const std::set<std::string>& allow);

} // namespace jp
