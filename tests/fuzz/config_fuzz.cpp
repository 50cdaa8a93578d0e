// libFuzzer target (-DJP_FUZZ=ON, clang): TOML from a repository's .jp/config.toml
// or a script, read over the built-in defaults. A bad file must end in an error
// naming what is wrong, never a crash.
#include <cstdint>
#include <string_view>

#include "config/config_loader.hpp"
#include "tests/program_assert.hpp"
#include "runtime/store/script.hpp"
#include "tools/builtin_tools.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  // A config that loads names each tool by its key; a refusal says why.
  auto config = jp::apply_config_text(jp::default_config(), text, "fuzzed.toml");
  if (config.ok()) {
    for (auto& [name, tool] : config->tools)
      PROGRAM_ASSERT(tool.name == name);
  } else {
    PROGRAM_ASSERT(!config.error().empty());
  }
  auto script = jp::parse_script(text, "fuzzed.toml");
  PROGRAM_ASSERT(script.ok() || !script.error().empty());
  return 0;
}
