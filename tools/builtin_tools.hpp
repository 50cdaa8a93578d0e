// The built-in defaults: the built-in tools (shell, await, agent, describe_tools) on a
// default Config. They are the first layer of the load order; config_loader.hpp
// takes them as its base and never names a built-in tool itself.
#pragma once

#include "../config/config.hpp"

namespace jp {

/// The built-in tools on the built-in runtime and assistant settings; the
/// workspace is the current directory.
Config default_config();

/// `t`'s description as its config made it: the built-in shell's follows what the
/// config changed (one-shot only, a terminal's, fewer actions); a description the
/// config gives stands as given.
std::string described_as_configured(const ToolConfig& t);

/// The tool that starts sub-agents, and the one offered only inside them: it ends
/// the sub-agent's turn with a result for its parent.
inline constexpr const char* agent_tool_name = "agent";
inline constexpr const char* foreach_tool_name = "foreach";
inline constexpr const char* yield_tool_name = "yield_to_parent";
ToolConfig yield_to_parent_tool();

} // namespace jp
