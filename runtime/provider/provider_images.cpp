#include "runtime/provider/provider_images.hpp"

#include <fmt/format.h>

#include "messages/last_line.hpp"

namespace jp {

namespace {

int base64_value(char c) {
  if (c >= 'A' && c <= 'Z')
    return c - 'A';
  if (c >= 'a' && c <= 'z')
    return c - 'a' + 26;
  if (c >= '0' && c <= '9')
    return c - '0' + 52;
  if (c == '+')
    return 62;
  if (c == '/')
    return 63;
  return -1;
}

/// Whether `s` is base64 (padded, as the services want it).
bool is_base64(std::string_view s) {
  if (s.empty() || s.size() % 4 != 0)
    return false;
  auto data = s;
  for (int pad = 0; pad < 2 && !data.empty() && data.back() == '='; ++pad)
    data.remove_suffix(1);
  for (char c : data)
    if (base64_value(c) < 0)
      return false;
  return true;
}

/// The first bytes `s` (valid base64) decodes to: enough for a type's signature.
std::string decoded_head(std::string_view s, size_t chars = 16) {
  std::string out;
  uint32_t bits = 0;
  int have = 0;
  for (size_t i = 0; i < s.size() && i < chars && s[i] != '='; ++i) {
    bits = (bits << 6) | static_cast<uint32_t>(base64_value(s[i]));
    have += 6;
    if (have >= 8) {
      have -= 8;
      out += static_cast<char>((bits >> have) & 0xff);
    }
  }
  return out;
}

bool signature_matches(std::string_view type, std::string_view head) {
  if (type == "image/png")
    return head.starts_with("\x89PNG\r\n\x1a\n");
  if (type == "image/jpeg")
    return head.starts_with("\xff\xd8\xff");
  if (type == "image/gif")
    return head.starts_with("GIF87a") || head.starts_with("GIF89a");
  if (type == "image/webp")
    return head.size() >= 12 && head.starts_with("RIFF") && head.substr(8, 4) == "WEBP";
  return false;
}

} // namespace

std::string image_refusal(std::string_view media_type, std::string_view base64) {
  if (media_type != "image/png" && media_type != "image/jpeg" && media_type != "image/gif" &&
      media_type != "image/webp")
    return "the model is shown png, jpeg, gif or webp";
  if (base64.size() > kImageBase64Max)
    return fmt::format("the model is shown up to {} MiB of it", kImageBase64Max >> 20);
  if (!is_base64(base64))
    return "its data is not base64";
  if (!signature_matches(media_type, decoded_head(base64)))
    return fmt::format("its data is not {}", media_type);
  return "";
}

std::string images_left_out(size_t n, bool enabled) {
  return enabled ? fmt::format("[jp-actors: {} image(s) of this result not sent again: a request carries the "
                               "conversation's newest images only]",
                               n)
                 : fmt::format("[jp-actors: {} image(s) not shown: assistant.images is false]", n);
}

void keep_images_within(std::vector<ChatMessage>& messages, const ImageBudget& budget) {
  size_t count = 0;
  size_t bytes = 0;
  for (auto m = messages.rbegin(); m != messages.rend(); ++m) {
    if (m->images.empty())
      continue;
    size_t before = m->images.size();
    std::erase_if(m->images, [&](const ToolImage& image) {
      bool fits = budget.enabled && count < budget.max_images && bytes + image.base64.size() <= budget.max_base64_bytes;
      if (fits) {
        ++count;
        bytes += image.base64.size();
      }
      return !fits;
    });
    if (auto lost = before - m->images.size(); lost > 0)
      m->text = with_last_line(std::move(m->text), images_left_out(lost, budget.enabled));
  }
}

} // namespace jp
