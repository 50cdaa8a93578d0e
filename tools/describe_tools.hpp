// The built-in `describe_tools`: a readable account of tools, their parameters and,
// for stateful ones, their actions.
#pragma once

#include "../config/config.hpp"
#include "../messages/json.hpp"
#include "../messages/result.hpp"

namespace jp {

/// `args` may hold "tools": [names]; without it every tool is described.
Result<std::string> describe_tools(const Config& config, const Json& args);

/// A call of a tool `name` that is not configured: it says which tools are.
std::string unknown_tool(const Config& config, const std::string& name);

} // namespace jp
