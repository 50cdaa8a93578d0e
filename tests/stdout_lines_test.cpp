// The MCP server's stdout over stdio: lines written in order by a thread of their
// own, and a reader that stops reading holds up the next request (wait_room)
// instead of making the lines pile up without bound.
#define CAF_SUITE stdout_lines
#include <caf/test/unit_test.hpp>

#include <unistd.h>

#include <cstdio>
#include <optional>
#include <string>
#include <thread>

#include "runtime/cli/stdout_lines.hpp"

using namespace jp;

namespace {

/// Everything readable from `fd` until its write end is closed.
std::string read_all(int fd) {
  std::string all;
  char buf[65536];
  for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;)
    all.append(buf, static_cast<size_t>(n));
  return all;
}

} // namespace

CAF_TEST(lines nobody reads stay counted until written and wait_room returns once they are) {
  int fds[2];
  CAF_REQUIRE_EQUAL(::pipe(fds), 0);
  std::FILE* out = ::fdopen(fds[1], "w");
  CAF_REQUIRE(out != nullptr);
  constexpr size_t limit = 4u << 20;
  std::string a(3u << 20, 'a');
  std::string b(3u << 20, 'b');
  std::string read;
  {
    std::optional<StdoutLines> lines{std::in_place, out};
    lines->push(a);
    lines->push(b);
    // Nobody reads the pipe: no more than a pipe's buffer of them can have gone out.
    CAF_CHECK_GREATER_OR_EQUAL(lines->unwritten(), limit);
    std::thread reader([&] { read = read_all(fds[0]); });
    lines->wait_room(limit); // returns once the reader has taken enough
    CAF_CHECK_LESS(lines->unwritten(), limit);
    lines.reset(); // writes the rest
    std::fclose(out);
    reader.join();
  }
  ::close(fds[0]);
  CAF_CHECK_EQUAL(read.size(), a.size() + b.size() + 2);
  CAF_CHECK(read == a + "\n" + b + "\n");
}
