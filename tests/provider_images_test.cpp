// What a tool's images may show the model (runtime/provider/provider_images.hpp): the
// checks of one image, and what one request carries of a conversation's.
#define CAF_SUITE provider_images
#include <caf/test/unit_test.hpp>

#include <string>

#include "contains.hpp"
#include "runtime/provider/provider_images.hpp"

using namespace jp;
using namespace jp::testing;

namespace {

const std::string png = "iVBORw0KGgo=";              // the PNG signature
const std::string jpeg = "/9j/4AAQ";                 // FF D8 FF E0 00 10
const std::string gif = "R0lGODlhAQABAAAAACw=";      // GIF89a...
const std::string webp = "UklGRhoAAABXRUJQVlA4TA=="; // RIFF....WEBPVP8L

ChatMessage shown(std::vector<ToolImage> images) {
  ChatMessage m{chat_role::tool, "result"};
  m.images = std::move(images);
  return m;
}

std::string base64_of(const std::string& bytes) {
  static const char* digits = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  for (size_t i = 0; i < bytes.size(); i += 3) {
    uint32_t n = static_cast<unsigned char>(bytes[i]) << 16;
    if (i + 1 < bytes.size())
      n |= static_cast<unsigned char>(bytes[i + 1]) << 8;
    if (i + 2 < bytes.size())
      n |= static_cast<unsigned char>(bytes[i + 2]);
    out += digits[(n >> 18) & 63];
    out += digits[(n >> 12) & 63];
    out += i + 1 < bytes.size() ? digits[(n >> 6) & 63] : '=';
    out += i + 2 < bytes.size() ? digits[n & 63] : '=';
  }
  return out;
}

std::string be(uint32_t v, int n) {
  std::string out;
  while (n-- > 0)
    out += static_cast<char>((v >> (8 * n)) & 0xff);
  return out;
}

std::string le(uint32_t v, int n) {
  std::string out;
  for (int i = 0; i < n; ++i)
    out += static_cast<char>((v >> (8 * i)) & 0xff);
  return out;
}

// Headers of images of a given size, as their formats lay them out.
std::string png_of(uint32_t w, uint32_t h) {
  return base64_of(std::string("\x89PNG\r\n\x1a\n", 8) + be(13, 4) + "IHDR" + be(w, 4) + be(h, 4) + "\x08\x02");
}
std::string gif_of(uint32_t w, uint32_t h) {
  return base64_of("GIF89a" + le(w, 2) + le(h, 2) + std::string(3, '\0'));
}
std::string webp_of(const std::string& chunk, const std::string& data) {
  return base64_of("RIFF" + le(100, 4) + "WEBP" + chunk + le(static_cast<uint32_t>(data.size()), 4) + data);
}
/// `fill` 0xff bytes before each marker after the first (JPEG allows any number).
std::string jpeg_of(uint32_t w, uint32_t h, size_t fill = 0) {
  std::string app0 = std::string(fill, '\xff') + std::string("\xff\xe0", 2) + be(16, 2) + "JFIF" + std::string(10, '\0');
  std::string sof0 = std::string(fill, '\xff') + std::string("\xff\xc0", 2) + be(17, 2) + "\x08" + be(h, 2) + be(w, 2) +
                     std::string(10, '\0');
  return base64_of(std::string("\xff\xd8", 2) + app0 + sof0);
}

} // namespace

CAF_TEST(an image larger than the services take is not shown) {
  // Anthropic refuses a request with one over 8000 pixels a side, and each later
  // request would carry it: a full-page screenshot of a long page is one.
  const std::string why = "it is 1280x12000 pixels, and the model is shown up to 8000 a side (a smaller or cropped one is)";
  CAF_CHECK_EQUAL(image_refusal("image/png", png_of(1280, 12000)), why);
  CAF_CHECK_EQUAL(image_refusal("image/png", png_of(8000, 8000)), "");
  CAF_CHECK_EQUAL(image_refusal("image/gif", gif_of(1280, 12000)), why);
  CAF_CHECK_EQUAL(image_refusal("image/gif", gif_of(640, 480)), "");
  CAF_CHECK_EQUAL(image_refusal("image/jpeg", jpeg_of(1280, 12000)), why);
  CAF_CHECK_EQUAL(image_refusal("image/jpeg", jpeg_of(4000, 3000)), "");
  CAF_CHECK_EQUAL(image_refusal("image/jpeg", jpeg_of(1280, 12000, 1)), why); // fill bytes hide nothing
  CAF_CHECK_EQUAL(image_refusal("image/jpeg", jpeg_of(1280, 12000, 3)), why);
  // WebP's three kinds: extended, lossless, lossy.
  CAF_CHECK_EQUAL(image_refusal("image/webp", webp_of("VP8X", std::string(4, '\0') + le(1279, 3) + le(11999, 3))), why);
  CAF_CHECK_EQUAL(image_refusal("image/webp", webp_of("VP8L", "\x2f" + le(1279 | (11999u << 14), 4))), why);
  CAF_CHECK_EQUAL(image_refusal("image/webp", webp_of("VP8L", "\x2f" + le(99 | (99u << 14), 4))), "");
  CAF_CHECK_EQUAL(image_refusal("image/webp", webp_of("VP8 ", std::string("\0\0\0\x9d\x01\x2a", 6) + le(1280, 2) + le(12000, 2))), why);
  // A header too short to tell is shown (its signature is right).
  CAF_CHECK_EQUAL(image_refusal("image/png", png), "");
}

CAF_TEST(an image is shown when its type and data are what the providers take) {
  CAF_CHECK_EQUAL(image_refusal("image/png", png), "");
  CAF_CHECK_EQUAL(image_refusal("image/jpeg", jpeg), "");
  CAF_CHECK_EQUAL(image_refusal("image/gif", gif), "");
  CAF_CHECK_EQUAL(image_refusal("image/webp", webp), "");
  CAF_CHECK_EQUAL(image_refusal("image/bmp", "Qk0="), "the model is shown png, jpeg, gif or webp");
  // A server's broken or hostile data would have every later request refused.
  CAF_CHECK_EQUAL(image_refusal("image/png", "not base64!"), "its data is not base64");
  CAF_CHECK_EQUAL(image_refusal("image/png", ""), "its data is not base64");
  CAF_CHECK_EQUAL(image_refusal("image/png", "iVBORw0KGgo"), "its data is not base64"); // unpadded
  CAF_CHECK_EQUAL(image_refusal("image/png", jpeg), "its data is not image/png");
  CAF_CHECK_EQUAL(image_refusal("image/webp", "UklGRhoAAABBVkkgTElTVA=="), "its data is not image/webp"); // RIFF AVI
  std::string huge = png + std::string(kImageBase64Max, 'A');
  CAF_CHECK_EQUAL(image_refusal("image/png", huge), "the model is shown up to 5 MiB of it");
}

CAF_TEST(a request carries the newest images within its budget and says what it left out) {
  std::vector<ChatMessage> messages{shown({{"image/png", png}, {"image/png", png}}), ChatMessage{chat_role::user, "go"},
                                    shown({{"image/png", png}, {"image/png", png}})};
  keep_images_within(messages, ImageBudget{true, 3, 1u << 20});
  CAF_CHECK_EQUAL(messages[2].images.size(), 2u); // the newest whole
  CAF_CHECK_EQUAL(messages[2].text, "result");
  CAF_REQUIRE_EQUAL(messages[0].images.size(), 1u); // then what is left of the budget
  CAF_CHECK_EQUAL(messages[0].text, "result\n[jp-actors: 1 image(s) of this result not sent again: a request carries "
                                    "the conversation's newest images only]");
  // By bytes too.
  std::vector<ChatMessage> big{shown({{"image/png", png}}), shown({{"image/png", png}})};
  keep_images_within(big, ImageBudget{true, 20, png.size()});
  CAF_CHECK(big[0].images.empty());
  CAF_CHECK_EQUAL(big[1].images.size(), 1u);
  // A model that takes none is shown none, and told.
  std::vector<ChatMessage> off{shown({{"image/png", png}, {"image/png", png}})};
  keep_images_within(off, ImageBudget{false});
  CAF_CHECK(off[0].images.empty());
  CAF_CHECK_EQUAL(off[0].text, "result\n[jp-actors: 2 image(s) not shown: assistant.images is false]");
}

CAF_TEST(a request carries the newest images only and never an older one after one left out) {
  // NewestImages stops at the first that does not fit: an older, smaller one is not
  // taken either. So an image left out once is left out of every later request,
  // and forget_old_images may drop its data.
  std::string big = png + std::string(4, 'A');
  std::vector<ChatMessage> messages{shown({{"image/png", png}}), shown({{"image/png", big}}), shown({{"image/png", png}})};
  keep_images_within(messages, ImageBudget{true, 20, png.size() + png.size()});
  CAF_CHECK_EQUAL(messages[2].images.size(), 1u);
  CAF_CHECK(messages[1].images.empty()); // does not fit what is left
  CAF_CHECK(messages[0].images.empty()); // would, but is older
  // A forgotten image (no data) is left out and said, and does not end the newest.
  std::vector<ChatMessage> forgotten{shown({{"image/png", png}}), shown({{"image/png", ""}, {"image/png", png}})};
  keep_images_within(forgotten, ImageBudget{});
  CAF_REQUIRE_EQUAL(forgotten[1].images.size(), 1u);
  CAF_CHECK_EQUAL(forgotten[1].images[0].base64, png);
  CAF_CHECK(contains(forgotten[1].text, "1 image(s) of this result not sent again"));
  CAF_CHECK_EQUAL(forgotten[0].images.size(), 1u);
}

CAF_TEST(a long session keeps the data of the newest images only) {
  std::vector<ChatMessage> messages;
  for (size_t i = 0; i < kRequestImagesMax + 5; ++i)
    messages.push_back(shown({{"image/png", png}}));
  forget_old_images(messages);
  for (size_t i = 0; i < messages.size(); ++i) {
    CAF_REQUIRE_EQUAL(messages[i].images.size(), 1u); // each keeps its place
    CAF_CHECK_EQUAL(messages[i].images[0].base64.empty(), i < 5);
  }
  // A request then says which results' images were not sent, as before forgetting.
  auto sent = messages;
  keep_images_within(sent, ImageBudget{});
  CAF_CHECK(contains(sent[0].text, "1 image(s) of this result not sent again"));
  CAF_CHECK_EQUAL(sent[5].images.size(), 1u);
}
