// libFuzzer target (-DJP_FUZZ=ON, clang): what a tool prints, as the model reads it:
// a terminal's text (TerminalText, in chunks cut anywhere) and each look's lines as a
// terminal shows them (readable_text, a sequence a look ends inside held for the
// next, the line it ended inside of carried to it). A tool's output is hostile:
// whatever the bytes, neither may crash, and a look shows no more than what was
// written and the carried line it may show again whole (moves and erases pad nothing;
// a tab written over shows the blanks of its columns: 7 bytes more at most).
// Input: the terminal's width, then chunks ending at 0xFF; 0xFE ends a look.
#include <cstdint>
#include <string>

#include "runtime/terminal/readable_text.hpp"
#include "runtime/terminal/terminal_text.hpp"
#include "tests/program_assert.hpp"

static size_t tabs(const std::string& s) {
  size_t n = 0;
  for (char c : s)
    n += c == '\t';
  return n;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1)
    return 0;
  jp::TerminalText text(data[0] % 120);
  std::string chunk;
  std::string look; // the text since the last look
  std::string held; // a sequence the last look ended inside
  jp::OpenLine open; // the line it ended inside of
  auto take = [&](bool last) {
    auto bytes = held + look;
    held.clear();
    auto carried = open.text.size() + 7 * tabs(open.text);
    auto shown = jp::readable_text(bytes, last ? nullptr : &held, &open);
    PROGRAM_ASSERT(shown.size() + held.size() <= bytes.size() + 7 * tabs(bytes) + carried);
    look.clear();
  };
  for (size_t i = 1; i < size; ++i) {
    if (data[i] == 0xff || data[i] == 0xfe) {
      look += text.feed(chunk);
      chunk.clear();
      if (data[i] == 0xfe)
        take(false);
    } else {
      chunk += static_cast<char>(data[i]);
    }
  }
  look += text.feed(chunk);
  look += text.flush();
  take(true);
  // A pipe's bytes, read as they are.
  std::string raw(reinterpret_cast<const char*>(data), size);
  PROGRAM_ASSERT(jp::readable_text(raw).size() <= raw.size() + 7 * tabs(raw));
  return 0;
}
