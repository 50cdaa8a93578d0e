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

} // namespace

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
