#include "runtime/provider/provider_images.hpp"

#include <algorithm>
#include <cstdint>
#include <fmt/format.h>
#include <optional>

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

/// The first bytes `s` (valid base64) decodes to, from its first `chars` characters:
/// enough for a type's signature, or (all of it) a JPEG's size.
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

uint32_t big_endian(std::string_view b, size_t at, size_t n) {
  uint32_t v = 0;
  for (size_t i = 0; i < n; ++i)
    v = (v << 8) | static_cast<unsigned char>(b[at + i]);
  return v;
}

uint32_t little_endian(std::string_view b, size_t at, size_t n) {
  uint32_t v = 0;
  for (size_t i = n; i-- > 0;)
    v = (v << 8) | static_cast<unsigned char>(b[at + i]);
  return v;
}

struct PixelSize {
  uint32_t width = 0;
  uint32_t height = 0;
};

/// The size an image's header gives, where `base64` (of `type`, its signature
/// checked) has one whole; none otherwise.
std::optional<PixelSize> pixel_size(std::string_view type, std::string_view base64) {
  if (type == "image/png") { // IHDR, the first chunk
    auto b = decoded_head(base64, 32);
    if (b.size() >= 24 && b.substr(12, 4) == "IHDR")
      return PixelSize{big_endian(b, 16, 4), big_endian(b, 20, 4)};
  } else if (type == "image/gif") { // the logical screen
    auto b = decoded_head(base64, 16);
    if (b.size() >= 10)
      return PixelSize{little_endian(b, 6, 2), little_endian(b, 8, 2)};
  } else if (type == "image/webp") { // the first chunk: lossy, lossless or extended
    auto b = decoded_head(base64, 40);
    if (b.size() >= 30 && b.substr(12, 4) == "VP8 ")
      return PixelSize{little_endian(b, 26, 2) & 0x3fff, little_endian(b, 28, 2) & 0x3fff};
    if (b.size() >= 25 && b.substr(12, 4) == "VP8L") {
      auto bits = little_endian(b, 21, 4);
      return PixelSize{(bits & 0x3fff) + 1, ((bits >> 14) & 0x3fff) + 1};
    }
    if (b.size() >= 30 && b.substr(12, 4) == "VP8X")
      return PixelSize{little_endian(b, 24, 3) + 1, little_endian(b, 27, 3) + 1};
  } else if (type == "image/jpeg") { // the frame header, after any EXIF and the like
    auto b = decoded_head(base64, base64.size());
    auto byte = [&](size_t i) { return static_cast<unsigned char>(b[i]); };
    for (size_t at = 2; at + 1 < b.size() && byte(at) == 0xff;) {
      auto marker = byte(at + 1);
      if (marker == 0xff) { // a fill byte before a marker
        ++at;
        continue;
      }
      if (marker == 0x01 || (marker >= 0xd0 && marker <= 0xd7)) { // no length
        at += 2;
        continue;
      }
      if (marker == 0xd9 || marker == 0xda || at + 9 > b.size()) // the image's end or its data: no frame header
        break;
      if (marker >= 0xc0 && marker <= 0xcf && marker != 0xc4 && marker != 0xc8 && marker != 0xcc)
        return PixelSize{big_endian(b, at + 7, 2), big_endian(b, at + 5, 2)};
      at += 2 + big_endian(b, at + 2, 2);
    }
  }
  return std::nullopt;
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
  // Anthropic refuses a request with a larger one, and every later request would
  // carry it (a full-page screenshot of a long page is one).
  if (auto size = pixel_size(media_type, base64); size && std::max(size->width, size->height) > kImagePixelsMax)
    return fmt::format("it is {}x{} pixels, and the model is shown up to {} a side (a smaller or cropped one is)",
                       size->width, size->height, kImagePixelsMax);
  return "";
}

std::string images_left_out(size_t n, bool enabled) {
  return enabled ? fmt::format("[jp-actors: {} image(s) of this result not sent again: a request carries the "
                               "conversation's newest images only]",
                               n)
                 : fmt::format("[jp-actors: {} image(s) not shown: assistant.images is false]", n);
}

void keep_images_within(std::vector<ChatMessage>& messages, const ImageBudget& budget) {
  NewestImages newest(budget.max_images, budget.max_base64_bytes);
  for (auto m = messages.rbegin(); m != messages.rend(); ++m) {
    size_t before = m->images.size();
    std::erase_if(m->images, [&](const ToolImage& image) {
      return !budget.enabled || image.base64.empty() || !newest.take(image.base64.size());
    });
    if (auto lost = before - m->images.size(); lost > 0)
      m->text = with_last_line(std::move(m->text), images_left_out(lost, budget.enabled));
  }
}

void forget_old_images(std::vector<ChatMessage>& messages) {
  NewestImages newest;
  for (auto m = messages.rbegin(); m != messages.rend(); ++m)
    for (auto& image : m->images)
      if (!image.base64.empty() && !newest.take(image.base64.size()))
        image.base64 = std::string(); // frees it, where clear() would keep its capacity
}

} // namespace jp
