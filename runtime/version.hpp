// The version of jp-actors (the project's, from CMakeLists.txt): what `--version`
// prints and what `initialize` tells an MCP client.
#pragma once

namespace jp {

const char* version();

} // namespace jp
