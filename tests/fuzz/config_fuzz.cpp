// libFuzzer target (-DJP_FUZZ=ON, clang): TOML from a repository's .jp/config.toml
// or a script, read over the built-in defaults. A bad file must end in an error
// naming what is wrong, never a crash.
#include <cstdint>
#include <string_view>

#include "config/config_loader.hpp"
#include "runtime/script.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)jp::apply_config_text(jp::default_config(), text, "fuzzed.toml");
  (void)jp::parse_script(text, "fuzzed.toml");
  return 0;
}
