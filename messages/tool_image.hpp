// An image a tool returned (an MCP tool's screenshot, a chart): its media type and
// its bytes as base64, which is how the providers take them. It goes to the model
// with the tool's text result where the provider's format has room for it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace jp {

struct ToolImage {
  std::string media_type; // image/png, image/jpeg, image/gif or image/webp
  std::string base64;     // "" once no request will carry it again (NewestImages)
  friend bool operator==(const ToolImage&, const ToolImage&) = default;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, ToolImage& x) {
  return f(x.media_type, x.base64);
}

inline constexpr size_t kImageBase64Max = 5u << 20; // one image (Anthropic's limit)
inline constexpr uint32_t kImagePixelsMax = 8000;    // a side (Anthropic's and Google's)

/// What one request carries of a conversation's images: its newest, at most 20 and
/// 16 MiB of base64 in all (Anthropic refuses a request over 32 MB, and more than 20
/// images unless each is small).
inline constexpr size_t kRequestImagesMax = 20;
inline constexpr size_t kRequestImageBytesMax = 16u << 20;

/// The images a request carries, counted newest first: each is taken while the count
/// and bytes stay within the request's; after the first that does not fit, none is.
/// So an image left out once is left out of every later request (newer ones only
/// come before it), and its data may be forgotten: by a long session in memory, and
/// by the conversation file, which then reads only the newest images' files.
class NewestImages {
public:
  NewestImages(size_t max_images = kRequestImagesMax, size_t max_bytes = kRequestImageBytesMax)
    : images_left_(max_images), bytes_left_(max_bytes) {}
  /// Whether the next older image, of `base64_bytes`, is carried.
  bool take(size_t base64_bytes) {
    if (images_left_ == 0 || base64_bytes > bytes_left_) {
      images_left_ = 0; // no older one either
      return false;
    }
    --images_left_;
    bytes_left_ -= base64_bytes;
    return true;
  }

  /// Whether no older image is carried.
  bool full() const { return images_left_ == 0; }

private:
  size_t images_left_;
  size_t bytes_left_;
};

} // namespace jp
