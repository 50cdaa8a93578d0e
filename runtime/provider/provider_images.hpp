// The images a tool's result may show the model (an MCP tool's screenshot), as the
// providers take them: png, jpeg, gif or webp whose data is what its type says, at
// most 5 MiB of base64 each (Anthropic's limit); a result's first few; and in one
// request the conversation's newest, within what a request may carry. The checks
// are here, in one place, so a hostile or broken server's data never reaches a
// request that every later one would repeat and the service refuse.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "../../messages/chat.hpp"

namespace jp {

inline constexpr size_t kResultImagesMax = 8;         // one result's
inline constexpr size_t kResultImageBytesMax = 8u << 20;

/// Why the model cannot be shown this image ("" it can): a type the providers do not
/// take, data that is not base64 or not an image of that type, or too much of it.
std::string image_refusal(std::string_view media_type, std::string_view base64);

/// What one request carries of the conversation's images: the newest
/// (NewestImages), none when not `enabled` (assistant.images = false).
struct ImageBudget {
  bool enabled = true;
  size_t max_images = kRequestImagesMax;
  size_t max_base64_bytes = kRequestImageBytesMax;
};

/// `messages` with the images beyond `budget` left out, and those forgotten (no
/// data), each message that lost some saying how many and why, on its last line.
void keep_images_within(std::vector<ChatMessage>& messages, const ImageBudget& budget);

/// Forgets the data of the images no request will carry again (past the newest a
/// request takes), keeping their place: a long session of screenshots holds the
/// newest only, and a request still says which results' images were left out.
void forget_old_images(std::vector<ChatMessage>& messages);

/// The line a result that lost `n` images says, when not `enabled` or past the budget.
std::string images_left_out(size_t n, bool enabled);

} // namespace jp
