// libFuzzer target (-DJP_FUZZ=ON, clang): a tool call's arguments as a model sends
// them -- JSON text read with duplicate keys refused, then as a stateful command
// and as an await request. Bad input must end in an error value, never a crash. An
// await read straight from its text (plain_await_request, the turn's short cut)
// takes exactly the requests the usual path takes, as they read there.
#include <cstdint>
#include <string_view>

#include "tests/program_assert.hpp"
#include "messages/json.hpp"
#include "messages/json_codec.hpp"
#include "messages/plain_await_request.hpp"
#include "tools/argument_validation.hpp"
#include "tools/builtin_tools.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto plain = jp::plain_await_request(text);
  auto args = jp::Json::parse(text, jp::duplicate_keys::refuse);
  if (!args.ok()) {
    PROGRAM_ASSERT(!plain);
    return 0;
  }
  {
    static const auto await_tool = jp::default_config().tools.at("await");
    auto usual = jp::await_request_from_json(*args);
    bool valid = usual.ok() && jp::validate_arguments(await_tool, *args);
    PROGRAM_ASSERT(valid == plain.has_value());
    if (valid)
      PROGRAM_ASSERT(*plain == *usual);
  }
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
