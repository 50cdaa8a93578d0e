#include "runtime/mcp/mcp_call_result.hpp"

#include <fmt/format.h>

namespace jp {

namespace {

/// One item of a result's content as text: text as it is, an embedded resource's
/// text after its URI, a link's name and URI; binary data (images, audio, blobs)
/// named with its type and size, not shown.
std::string content_text(const Json& item) {
  auto kind = item.string_at("type");
  if (kind == "text")
    return std::string(item.string_at("text"));
  if (kind == "resource") {
    static const Json none;
    auto* found = item.find("resource");
    const Json& r = found ? *found : none;
    if (auto* t = r.find("text"); t && t->is_string())
      return fmt::format("[resource {}]\n{}", r.string_at("uri"), t->as_string());
    return fmt::format("[resource {} ({}), {} bytes of base64, not shown]", r.string_at("uri"),
                       r.string_at("mimeType"), r.string_at("blob").size());
  }
  if (kind == "resource_link")
    return fmt::format("[resource link: {} {}]", item.string_at("name"), item.string_at("uri"));
  if (kind == "image" || kind == "audio")
    return fmt::format("[{} ({}), {} bytes of base64, not shown]", kind, item.string_at("mimeType"),
                       item.string_at("data").size());
  return fmt::format("[{} content]", kind.empty() ? std::string_view("?") : kind);
}

} // namespace

ToolState mcp_call_state(const Json& result) {
  std::string text;
  if (auto* content = result.find("content"); content && content->is_array())
    for (auto& item : content->as_array()) {
      if (!text.empty())
        text += "\n";
      text += content_text(item);
    }
  if (text.empty())
    if (auto* structured = result.find("structuredContent"))
      text = structured->dump();
  auto* is_error = result.find("isError");
  if (is_error && is_error->is_bool() && is_error->as_bool())
    return ToolState::failure(ToolError{text.empty() ? std::string(failed_saying_nothing) : text, {}, false});
  return ToolState::success(std::move(text));
}

} // namespace jp
