// `query --attach` (issue 19): a file's text and a directory's listing are added to
// the prompt with their paths; too much, a binary file or a missing path is refused
// with an error that names the path and what is allowed (runtime/attachments).
#define CAF_SUITE attachments
#include <caf/test/unit_test.hpp>

#include <filesystem>
#include <fstream>

#include "contains.hpp"
#include "runtime/attachments.hpp"
#include "temp_dir.hpp"

using namespace jp;
using namespace jp::testing;

namespace {

struct fixture {
  temp_dir dir;
  std::string at(const std::string& name) const { return (dir.path / name).string(); }
};

} // namespace

CAF_TEST_FIXTURE_SCOPE(attachments_tests, fixture)

CAF_TEST(a text file comes after the prompt with its path) {
  dir.write("notes.md", "# Notes\nline two");
  auto p = prompt_with_attachments("summarize this", {at("notes.md")});
  CAF_REQUIRE(p.ok());
  CAF_CHECK_EQUAL(*p, "summarize this\n\n<attachment path=\"" + at("notes.md") + "\">\n# Notes\nline two\n</attachment>");
  // Without attachments the prompt is as typed.
  auto plain = prompt_with_attachments("just this", {});
  CAF_REQUIRE(plain.ok());
  CAF_CHECK_EQUAL(*plain, "just this");
}

CAF_TEST(a directory is a sorted listing of what is below it without git) {
  std::filesystem::create_directories(dir.path / "d" / "sub");
  std::filesystem::create_directories(dir.path / "d" / ".git" / "objects");
  dir.write("d/b.txt", "12345");
  dir.write("d/sub/a.txt", "");
  dir.write("d/.git/HEAD", "ref");
  auto p = prompt_with_attachments("look", {at("d")});
  CAF_REQUIRE(p.ok());
  CAF_CHECK(contains(*p, "<attachment path=\"" + at("d") + "\" kind=\"directory\">\nb.txt (5 bytes)\nsub/\nsub/a.txt (0 bytes)\n</attachment>"));
  CAF_CHECK(!contains(*p, ".git"));
}

CAF_TEST(attachments past the bound are refused saying how much is allowed) {
  dir.write("big.log", std::string(3000, 'x'));
  dir.write("small.txt", std::string(600, 'y'));
  AttachLimits limits;
  limits.max_bytes = 2048;
  auto p = prompt_with_attachments("q", {at("big.log")}, limits);
  CAF_REQUIRE(!p.ok());
  CAF_CHECK(contains(p.error(), "--attach " + at("big.log") + ": it has 2.9 KiB, more than the 2.0 KiB the "
                                "attachments may have together"));
  // Together: the second one finds less room.
  dir.write("half.txt", std::string(1500, 'z'));
  p = prompt_with_attachments("q", {at("half.txt"), at("small.txt")}, limits);
  CAF_REQUIRE(!p.ok());
  CAF_CHECK(contains(p.error(), "(what is left: 548 bytes)"));
  CAF_CHECK(prompt_with_attachments("q", {at("small.txt"), at("small.txt")}, limits).ok());
}

CAF_TEST(a binary file or a path that is not there is refused naming it) {
  std::ofstream(dir.path / "logo.png", std::ios::binary) << std::string("\x89PNG\r\n\x1a\n\0\0\0\rIHDR", 16);
  auto p = prompt_with_attachments("q", {at("logo.png")});
  CAF_REQUIRE(!p.ok());
  CAF_CHECK(contains(p.error(), "--attach " + at("logo.png") + ": a binary file"));
  dir.write("latin1.txt", "caf\xe9");
  CAF_CHECK(contains(prompt_with_attachments("q", {at("latin1.txt")}).error(), "not UTF-8 text"));
  CAF_CHECK(contains(prompt_with_attachments("q", {at("nope")}).error(),
                     "--attach " + at("nope") + ": no such file or directory"));
}

CAF_TEST_FIXTURE_SCOPE_END()
