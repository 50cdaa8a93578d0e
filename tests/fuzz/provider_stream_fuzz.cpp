// libFuzzer target (-DJP_FUZZ=ON, clang): a provider's response stream as bytes off
// the network -- SSE framing, then OpenAI's and Anthropic's event formats. The
// first input byte splits the rest into two chunks, so events cut across reads are
// covered. Nothing a server sends may crash the parsers.
#include <cstdint>
#include <string_view>

#include "tests/program_assert.hpp"
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
  // Each stream ends at most once, and nothing but its usage (once) comes after its
  // end; Anthropic counts once in all, OpenAI as often as the server counts before
  // the end (the last stands); counts are never negative but for -1 (not reported).
  int openai_done = 0, anthropic_done = 0, openai_usages = 0, anthropic_usages = 0;
  auto after_done = [](int& done, int& usages, bool counts_once) {
    return [&done, &usages, counts_once](jp::ChatEvent e) {
      if (e.kind == jp::chat_event_kind::usage) {
        if (counts_once || done > 0)
          PROGRAM_ASSERT(++usages == 1);
        PROGRAM_ASSERT(e.tokens_in >= -1 && e.tokens_out >= -1);
        return;
      }
      PROGRAM_ASSERT(done == 0);
      done += e.kind == jp::chat_event_kind::done;
    };
  };
  size_t data_bytes = 0;
  jp::SseParser parser(1 << 16);
  auto on_event = [&](const jp::SseEvent& e) {
    data_bytes += e.data.size();
    (void)openai.on_event(e, after_done(openai_done, openai_usages, false));
    (void)anthropic.on_event(e, after_done(anthropic_done, anthropic_usages, true));
  };
  parser.feed(bytes.substr(0, cut), on_event);
  parser.feed(bytes.substr(cut), on_event);
  PROGRAM_ASSERT(data_bytes <= bytes.size()); // events hold only what was sent
  return 0;
}
