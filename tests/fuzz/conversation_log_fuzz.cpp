// libFuzzer target (-DJP_FUZZ=ON, clang): a conversation's log (.jp/conversations/
// ID/events.jsonl), which is in the workspace and so is no more trusted than the
// workspace is. Each line is read as an event as a resumed conversation reads it;
// whatever the bytes, reading must not crash, and an event that was read must write
// back to JSON that reads as the same event (its JSON the same once written).
#include <cstdint>
#include <string_view>

#include "tests/program_assert.hpp"
#include "messages/conversation_event_codec.hpp"
#include "messages/json.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  while (!text.empty()) {
    auto end = text.find('\n');
    auto line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    auto j = jp::Json::parse(line);
    if (!j.ok())
      continue;
    auto event = jp::conversation_event_from(*j);
    if (!event.ok())
      continue;
    auto written = jp::to_json(*event);
    auto again = jp::conversation_event_from(written);
    PROGRAM_ASSERT(again.ok());
    PROGRAM_ASSERT(jp::to_json(*again) == written);
    PROGRAM_ASSERT(again->index() == event->index());
  }
  return 0;
}
