// libFuzzer target (-DJP_FUZZ=ON, clang): a tool call's arguments as a model sends
// them -- JSON text read with duplicate keys refused, then as a stateful command
// and as an await request. Bad input must end in an error value, never a crash.
#include <cstdint>
#include <string_view>

#include "tests/program_assert.hpp"
#include "messages/json.hpp"
#include "messages/json_codec.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto args = jp::Json::parse(text, jp::duplicate_keys::refuse);
  if (!args.ok())
    return 0;
  // A command or request that was read writes back to arguments that read the same.
  if (auto cmd = jp::command_from_arguments("fuzzed", *args); cmd.ok()) {
    auto again = jp::command_from_arguments("fuzzed", jp::to_arguments(*cmd));
    PROGRAM_ASSERT(again.ok());
    PROGRAM_ASSERT(again->action == cmd->action && again->id == cmd->id);
  }
  if (auto req = jp::await_request_from_json(*args); req.ok()) {
    auto again = jp::await_request_from_json(jp::to_json(*req));
    PROGRAM_ASSERT(again.ok());
    PROGRAM_ASSERT(*again == *req);
  }
  return 0;
}
