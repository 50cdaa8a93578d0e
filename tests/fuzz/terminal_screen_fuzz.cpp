// libFuzzer target (-DJP_FUZZ=ON, clang): what a terminal tool prints, in chunks cut
// anywhere, with resizes between them, fed to the screen jp-actors keeps of it
// (libvterm behind runtime/terminal/terminal_screen.cpp). A tool's output is hostile:
// whatever the bytes, the screen must neither crash nor hang, and it renders within
// its size. Input: a size, then chunks ending at 0xFF; 0xFE R C resizes.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "runtime/terminal/terminal_screen.hpp"
#include "tests/program_assert.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2)
    return 0;
  jp::TerminalScreen screen(1 + data[0] % 30, 1 + data[1] % 90);
  std::string chunk;
  auto feed = [&] {
    screen.feed(chunk);
    chunk.clear();
    auto shown = screen.render();
    PROGRAM_ASSERT(static_cast<int>(shown.rows.size()) <= shown.height);
    PROGRAM_ASSERT(shown.cursor_row >= 0 && shown.cursor_row < shown.height);
  };
  for (size_t i = 2; i < size; ++i) {
    if (data[i] == 0xff) {
      feed();
    } else if (data[i] == 0xfe && i + 2 < size) {
      feed();
      screen.resize(1 + data[i + 1] % 30, 1 + data[i + 2] % 90);
      i += 2;
    } else {
      chunk += static_cast<char>(data[i]);
    }
  }
  feed();
  return 0;
}
