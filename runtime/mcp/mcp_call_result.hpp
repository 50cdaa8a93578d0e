// A server's tools/call result as the assistant sees it (DESIGN.md "MCP"). The server
// is not trusted to send a well-formed result: whatever it sends is read as text
// or as nothing, never as a crash.
#pragma once

#include "../../messages/json.hpp"
#include "../../messages/tool_state.hpp"

namespace jp {

/// `result`'s content as text (text as it is, an embedded resource's text after its
/// URI, a link's name and URI, binary data named with its type and size, not shown;
/// its structuredContent when it has no content); a failure when isError. Its images
/// the providers take (provider_images.hpp) go with a success as images, named in
/// the text where they were.
ToolState mcp_call_state(const Json& result);

} // namespace jp
