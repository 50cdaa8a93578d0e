// libFuzzer target (-DJP_FUZZ=ON, clang): a tool call's arguments as a model sends
// them -- JSON text read with duplicate keys refused, then as a stateful command
// and as an await request. Bad input must end in an error value, never a crash.
#include <cstdint>
#include <string_view>

#include "messages/json.hpp"
#include "messages/json_codec.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto args = jp::Json::parse(text, jp::duplicate_keys::refuse);
  if (!args.ok())
    return 0;
  if (auto cmd = jp::command_from_arguments("fuzzed", *args); cmd.ok())
    (void)jp::to_arguments(*cmd).dump();
  if (auto req = jp::await_request_from_json(*args); req.ok())
    (void)jp::to_json(*req).dump();
  return 0;
}
