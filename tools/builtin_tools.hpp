// The built-in defaults: the built-in tools (shell, await, describe_tools) on a
// default Config. They are the first layer of the load order; config_loader.hpp
// takes them as its base and never names a built-in tool itself.
#pragma once

#include "config/config.hpp"

namespace jp {

/// The built-in tools on the built-in runtime and assistant settings; the
/// workspace is the current directory.
Config default_config();

} // namespace jp
