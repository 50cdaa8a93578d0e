// libFuzzer target (-DJP_FUZZ=ON, clang): what a tool writes -- stdout at exit, or a
// control-channel line -- read as Outcome / ToolState JSON or refused as plain text.
// Whatever the bytes, reading them must not crash, and a state that was read must
// write back to JSON that reads again.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "tests/program_assert.hpp"
#include "messages/json_codec.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto state = jp::parse_tool_output(text);
  if (state.ok()) {
    // What we write, we must read, as the same state.
    auto again = jp::parse_tool_output(jp::to_json(*state).dump());
    PROGRAM_ASSERT(again.ok());
    PROGRAM_ASSERT(again->kind == state->kind);
  }
  return 0;
}
