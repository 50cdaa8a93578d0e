// The tools on offer, as they are now (DESIGN.md "MCP"): the config that declares
// them and who runs those that are not processes. An MCP server that changes its
// tools (notifications/tools/list_changed; actors/mcp_tools.hpp) brings a new set;
// a set itself never changes. An agent loop reads the latest before each provider
// request, so the model is offered the tools as they are then (never in the middle
// of a response); a turn reads it before each call.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>

#include "registry_actor.hpp"
#include "../config/config.hpp"

namespace jp {

struct ToolSet {
  std::shared_ptr<const Config> config;           // its tools are the ones on offer
  std::map<std::string, HandleFactory> executors; // by tool name
  // Tools offered before and no longer, by name: what a call of one is told.
  std::map<std::string, std::string> withdrawn;
};

/// The latest ToolSet. Any thread. Empty where the tools never change.
using ToolsNow = std::function<std::shared_ptr<const ToolSet>()>;

} // namespace jp
