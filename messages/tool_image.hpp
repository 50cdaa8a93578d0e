// An image a tool returned (an MCP tool's screenshot, a chart): its media type and
// its bytes as base64, which is how the providers take them. It goes to the model
// with the tool's text result where the provider's format has room for it.
#pragma once

#include <string>

namespace jp {

struct ToolImage {
  std::string media_type; // image/png, image/jpeg, image/gif or image/webp
  std::string base64;
  friend bool operator==(const ToolImage&, const ToolImage&) = default;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, ToolImage& x) {
  return f(x.media_type, x.base64);
}

} // namespace jp
