// libFuzzer target for argument templates (built only with -DJP_FUZZ=ON and clang; see
// CMakeLists.txt here). Input: template bytes, then \x01, then a value. In the
// template '@' stands for {{tool.arguments.x}} and \x02 separates program from args
// elements. Besides finding crashes (ASan/UBSan), it checks the property that keeps
// shell = true safe: the script bash parses does not depend on the value, and the
// value arrives as argv elements of its own, byte for byte.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "config/shell_template.hpp"
#include "tests/program_assert.hpp"
#include "tools/argv_template.hpp"

using namespace jp;

namespace {

std::vector<std::string> split(std::string_view s, char sep) {
  std::vector<std::string> out;
  size_t pos = 0;
  for (;;) {
    auto at = s.find(sep, pos);
    out.emplace_back(s.substr(pos, at == std::string_view::npos ? std::string_view::npos : at - pos));
    if (at == std::string_view::npos)
      return out;
    pos = at + 1;
  }
}

std::string with_placeholders(std::string_view s) {
  std::string out;
  for (char c : s)
    out += c == '@' ? std::string("{{tool.arguments.x}}") : std::string(1, c);
  return out;
}

Result<std::vector<std::string>> expand(const ToolConfig& tool, std::string_view value) {
  auto args = Json::object().set("x", value);
  auto answers = Json::object();
  return expand_argv(tool, TemplateContext{args, answers});
}


} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  auto cut = input.find('\x01');
  auto tmpl = input.substr(0, cut);
  auto value = cut == std::string_view::npos ? std::string_view{} : input.substr(cut + 1);
  auto elements = split(tmpl, '\x02');
  ToolConfig tool;
  tool.name = "t";
  tool.program = with_placeholders(elements[0]);
  for (size_t i = 1; i < elements.size(); ++i)
    tool.args.push_back(with_placeholders(elements[i]));

  for (bool shell : {false, true}) {
    tool.shell = shell;
    (void)scan_shell_template(tool.program, tool.args);
    auto got = expand(tool, value);
    auto plain = expand(tool, "v");
    if (!plain.ok()) { // a template error, whatever the value
      PROGRAM_ASSERT(!got.ok());
      continue;
    }
    if (value.find('\0') != std::string_view::npos)
      continue; // refused where it is used; only crashes count here
    if (!got.ok()) { // only an argv whose program became "" is refused
      PROGRAM_ASSERT(!shell && value.empty());
      continue;
    }
    PROGRAM_ASSERT(got->size() == plain->size());
    if (!shell)
      continue;
    // bash -c SCRIPT NAME VALUE...: the same script whatever the value, and each
    // positional parameter is the value itself.
    PROGRAM_ASSERT((*got)[2] == (*plain)[2]);
    for (size_t i = 4; i < got->size(); ++i)
      PROGRAM_ASSERT((*got)[i] == value);
  }
  return 0;
}
