// The CLI's markdown for a terminal (runtime/cli/markdown_renderer): a streamed
// answer renders the same however it was split, a block is shown only once it is
// complete, and NO_COLOR gives the same layout without escape sequences.
#define CAF_SUITE markdown_renderer
#include <caf/test/unit_test.hpp>

#include <string>
#include <string_view>

#include "contains.hpp"
#include "runtime/cli/markdown_renderer.hpp"

using namespace jp;
using namespace jp::testing;

namespace {

// A recorded answer: the blank line inside the python fence is followed by a line in
// the first column, which must not end the block there.
constexpr std::string_view answer = R"md(# Setting up the project

This guide shows how to *configure* the **build** with `cmake`, and where to find
the [documentation](https://example.com/docs). See also <https://example.com>.

## Steps

- Install the dependencies:
  - a C++20 compiler
  - CMake 3.20 or newer
- Clone the repository

1. Configure the build:

   ```sh
   cmake -B build
   ```

2. Build it with ~~make~~ `cmake --build build`.

3. Run the tests.

```python
# not a heading
def greet(name):
    return f"*not emphasis* {name}"

print(greet("world"))
```

| Option | Default | Meaning |
|:-------|:-------:|--------:|
| `JP_COLOR` | on | colored output |
| `JP_DEBUG` | off | **verbose** logs |

> **Note:** the cache lives in `~/.cache/jp`.
> Delete it to start over.

---

That is all &amp; good luck!)md";

std::string split_in_two(std::string_view text, std::size_t at, bool color) {
  MarkdownStream stream(color);
  auto out = stream.feed(text.substr(0, at));
  out += stream.feed(text.substr(at));
  return out + stream.finish();
}

/// Whether every line that styles its text ends with those styles reset.
bool styles_closed(std::string_view text) {
  std::size_t start = 0;
  for (auto nl = text.find('\n'); nl != std::string_view::npos; nl = text.find('\n', start)) {
    auto line = text.substr(start, nl - start);
    auto last = line.rfind('\x1b');
    if (last != std::string_view::npos && line.substr(last, 4) != "\x1b[0m")
      return false;
    start = nl + 1;
  }
  return true;
}

} // namespace

CAF_TEST(the output does not depend on where the answer was split) {
  for (bool color : {true, false}) {
    auto whole = render_markdown(answer, color);
    CAF_CHECK(contains(whole, "Setting up the project"));
    std::size_t first_bad = answer.size() + 1; // none
    for (std::size_t at = 0; at <= answer.size(); ++at) {
      auto split = split_in_two(answer, at, color);
      if (split != whole) {
        CAF_CHECK_EQUAL(split, whole);
        first_bad = at;
        break;
      }
    }
    CAF_CHECK_EQUAL(first_bad, answer.size() + 1);
    // A byte at a time: everything but the last block comes before finish().
    MarkdownStream stream(color);
    std::string streamed;
    for (char c : answer)
      streamed += stream.feed(std::string_view(&c, 1));
    auto last = stream.finish();
    CAF_CHECK_EQUAL(streamed + last, whole);
    CAF_CHECK(contains(streamed, "Delete it to start over."));
    CAF_CHECK(!contains(streamed, "good luck"));
    CAF_CHECK_EQUAL(last, "\nThat is all & good luck!\n");
  }
}

CAF_TEST(without color the layout stays and no escape sequence is written) {
  auto out = render_markdown(answer, false);
  CAF_CHECK(!contains(out, "\x1b"));
  CAF_CHECK(contains(out, "Setting up the project\n\nThis guide shows how to configure the build with `cmake`, "
                          "and where to find\nthe documentation (https://example.com/docs). "
                          "See also https://example.com.\n\nSteps\n\n"));
  CAF_CHECK(contains(out, "\n• Install the dependencies:\n  • a C++20 compiler\n  • CMake 3.20 or newer\n"
                          "• Clone the repository\n"));
  // The loose list is rendered in pieces, and goes on counting.
  CAF_CHECK(contains(out, "\n1. Configure the build:\n\n   ── sh\n     cmake -B build\n\n"
                          "2. Build it with make `cmake --build build`.\n\n3. Run the tests.\n"));
  // Code verbatim, with its blank line, indented under a line naming the language.
  CAF_CHECK(contains(out, "\n── python\n  # not a heading\n  def greet(name):\n"
                          "      return f\"*not emphasis* {name}\"\n\n  print(greet(\"world\"))\n\n"));
  // Columns padded to their widths, aligned as the delimiter row says.
  CAF_CHECK(contains(out, "\nOption     | Default |        Meaning\n"
                          "-----------|---------|---------------\n"
                          "`JP_COLOR` |   on    | colored output\n"
                          "`JP_DEBUG` |   off   |   verbose logs\n\n"));
  CAF_CHECK(contains(out, "\n> Note: the cache lives in `~/.cache/jp`.\n> Delete it to start over.\n\n"));
  std::string rule;
  for (int i = 0; i < 40; ++i)
    rule += "─";
  CAF_CHECK(contains(out, "\n" + rule + "\n\nThat is all & good luck!\n"));
  // No control character in the answer itself reaches the terminal: ESC, BEL, and
  // the C1 CSI (U+009B, written as UTF-8 or as an entity).
  auto hostile = render_markdown("clear \x1b[2J screen \xC2\x9b" "2J &#155;2J\n\n```\n\x1b]0;title\x07\n```", false);
  CAF_CHECK_EQUAL(hostile, "clear \xEF\xBF\xBD[2J screen \xEF\xBF\xBD" "2J \xEF\xBF\xBD" "2J\n\n──\n  "
                           "\xEF\xBF\xBD]0;title\xEF\xBF\xBD\n");
}

CAF_TEST(with color headings and spans are styled and code is verbatim) {
  auto out = render_markdown(answer, true);
  CAF_CHECK(out.starts_with("\x1b[1m\x1b[4mSetting up the project\x1b[0m\n\n"));
  CAF_CHECK(contains(out, "\n\x1b[1mSteps\x1b[0m\n"));
  CAF_CHECK(contains(out, "how to \x1b[3mconfigure\x1b[0m the \x1b[1mbuild\x1b[0m with \x1b[36mcmake\x1b[0m,"));
  CAF_CHECK(!contains(out, "`"));
  CAF_CHECK(contains(out, "\x1b[9mmake\x1b[0m"));
  CAF_CHECK(contains(out, "the \x1b[4mdocumentation\x1b[0m\x1b[2m (https://example.com/docs)\x1b[0m."));
  // An autolink shows its URL once.
  CAF_CHECK(contains(out, "See also \x1b[4mhttps://example.com\x1b[0m.\n"));
  CAF_CHECK(contains(out, "\n\x1b[2m── python\x1b[0m\n  # not a heading\n"));
  CAF_CHECK(contains(out, "\n      return f\"*not emphasis* {name}\"\n"));
  CAF_CHECK(contains(out, "\x1b[1mOption\x1b[0m   \x1b[2m│\x1b[0m \x1b[1mDefault\x1b[0m"));
  CAF_CHECK(contains(out, "\n\x1b[2m│\x1b[0m \x1b[1mNote:\x1b[0m the cache lives in \x1b[36m~/.cache/jp\x1b[0m.\n"));
  CAF_CHECK(styles_closed(out));
  // Where an inner span ends, the enclosing style comes back.
  auto nested = render_markdown("**bold *both* bold** and ~~gone `code` gone~~", true);
  CAF_CHECK_EQUAL(nested, "\x1b[1mbold \x1b[3mboth\x1b[0m\x1b[1m bold\x1b[0m and "
                          "\x1b[9mgone \x1b[36mcode\x1b[0m\x1b[9m gone\x1b[0m\n");
  // A style open across a line break is closed at the line's end and reopened.
  auto broken = render_markdown("> *one\n> two*", true);
  CAF_CHECK_EQUAL(broken, "\x1b[2m│\x1b[0m \x1b[3mone\x1b[0m\n\x1b[2m│\x1b[0m \x1b[3mtwo\x1b[0m\n");
}

CAF_TEST(a half received code fence or table waits until it is complete) {
  MarkdownStream stream(false);
  // The blank line inside the fence, then a line in the first column: still the fence.
  auto first = stream.feed("Intro paragraph.\n\n```sh\necho one\n\nec");
  CAF_CHECK_EQUAL(first, "Intro paragraph.\n");
  auto fence = stream.feed("ho two\n```\n\n| a | b |\n|---|--");
  CAF_CHECK_EQUAL(fence, "\n── sh\n  echo one\n\n  echo two\n");
  auto rows = stream.feed("-|\n| 1 | 22 |\n");
  CAF_CHECK_EQUAL(rows, "");
  auto table = stream.finish();
  CAF_CHECK_EQUAL(table, "\na | b\n--|---\n1 | 22\n");
  // An unclosed fence at the end is shown as it is.
  auto unclosed = render_markdown("```\nstill *code*", false);
  CAF_CHECK_EQUAL(unclosed, "──\n  still *code*\n");
}

CAF_TEST(reset drops what is held) {
  MarkdownStream stream(false);
  auto shown = stream.feed("# Old answer\n\nhalf a para");
  CAF_CHECK_EQUAL(shown, "Old answer\n");
  stream.reset();
  auto held = stream.feed("New answer");
  CAF_CHECK_EQUAL(held, "");
  auto rest = stream.finish();
  CAF_CHECK_EQUAL(rest, "New answer\n");
  // An open fence is forgotten too: a blank line ends blocks again.
  stream.feed("```\ncode\n\n");
  stream.reset();
  auto para = stream.feed("para\n\nnext\n");
  CAF_CHECK_EQUAL(para, "para\n");
}
