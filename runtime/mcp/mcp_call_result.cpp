#include "runtime/mcp/mcp_call_result.hpp"

#include <fmt/format.h>

#include "runtime/provider/provider_images.hpp"

namespace jp {

namespace {

/// One item of a result's content as text: text as it is, an embedded resource's
/// text after its URI, a link's name and URI; binary data (audio, blobs) named with
/// its type and size, not shown. An image the model can be shown goes to `images`,
/// named in the text where it was.
std::string content_text(const Json& item, std::vector<ToolImage>& images) {
  auto kind = item.string_at("type");
  if (kind == "text") {
    if (auto* t = item.find("text"); t && !t->is_string()) // MCP: a string; shown, not lost
      return fmt::format("[text content whose text is no string: {}]", cut_text(t->dump(), 200));
    return std::string(item.string_at("text"));
  }
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
  if (kind == "image" || kind == "audio") {
    auto type = item.string_at("mimeType");
    auto data = item.string_at("data");
    auto named = fmt::format("[{} ({}), {} bytes of base64", kind, type, data.size());
    if (kind == "audio")
      return named + ", not shown]";
    if (auto why = image_refusal(type, data); !why.empty())
      return named + ", not shown: " + why + "]";
    size_t bytes = 0;
    for (auto& image : images)
      bytes += image.base64.size();
    if (images.size() == kResultImagesMax || bytes + data.size() > kResultImageBytesMax)
      return named + fmt::format(", not shown: the model is shown a result's first {} images, {} MiB at most]",
                                 kResultImagesMax, kResultImageBytesMax >> 20);
    images.push_back(ToolImage{std::string(type), std::string(data)});
    return named + fmt::format(": image {} of this result]", images.size());
  }
  return fmt::format("[{} content]", kind.empty() ? std::string_view("?") : kind);
}

} // namespace

ToolState mcp_call_state(const Json& result) {
  std::string text;
  std::vector<ToolImage> images;
  auto* content = result.find("content");
  if (content && !content->is_array()) // an empty success would hide what it said
    return ToolState::failure(ToolError{
      fmt::format("the server's result breaks MCP: its `content` is {}, not an array of content items: {}",
                  content->described(), cut_text(result.dump(), 300)),
      {}, false});
  if (content)
    for (auto& item : content->as_array()) {
      if (!text.empty())
        text += "\n";
      text += content_text(item, images);
    }
  if (text.empty())
    if (auto* structured = result.find("structuredContent"))
      text = structured->dump();
  auto* is_error = result.find("isError");
  if (is_error && is_error->is_bool() && is_error->as_bool())
    return ToolState::failure(ToolError{text.empty() ? std::string(failed_saying_nothing) : text, {}, false});
  auto state = ToolState::success(std::move(text));
  state.images = std::move(images);
  return state;
}

} // namespace jp
