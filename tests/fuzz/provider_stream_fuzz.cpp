// libFuzzer target (-DJP_FUZZ=ON, clang): a provider's response stream as bytes off
// the network -- SSE framing, then OpenAI's and Anthropic's event formats. The
// first input byte splits the rest into two chunks, so events cut across reads are
// covered. Nothing a server sends may crash the parsers.
#include <cstdint>
#include <string_view>

#include "runtime/provider/anthropic_format.hpp"
#include "runtime/provider/openai_format.hpp"
#include "runtime/provider/sse.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0)
    return 0;
  std::string_view bytes(reinterpret_cast<const char*>(data + 1), size - 1);
  auto cut = bytes.empty() ? 0 : data[0] % (bytes.size() + 1);
  jp::OpenAiStream openai;
  jp::AnthropicStream anthropic;
  auto ignore = [](jp::ChatEvent) {};
  jp::SseParser parser(1 << 16);
  auto on_event = [&](const jp::SseEvent& e) {
    (void)openai.on_event(e, ignore);
    (void)anthropic.on_event(e, ignore);
  };
  parser.feed(bytes.substr(0, cut), on_event);
  parser.feed(bytes.substr(cut), on_event);
  return 0;
}
