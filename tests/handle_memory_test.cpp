// A handle's memory while its tool floods it, measured as the peak RSS of a runner
// of its own: the peak another test reached before would hide it, and ASan's
// quarantine (freed memory held back, up to 256 MiB by default) grows with the
// bytes that passed, bounded or not. Here it holds none (below); ASan's other
// checks stay on.
#define CAF_SUITE handle_memory
#include <caf/test/unit_test.hpp>

#include <fstream>
#include <sys/resource.h>

#include "messages/json_codec.hpp"
#include "real_runtime.hpp"
#include "contains.hpp"

// Read by AddressSanitizer at start-up, where the runner is built with it; the
// environment's ASAN_OPTIONS add to it.
extern "C" const char* __asan_default_options() {
  return "quarantine_size_mb=0";
}

using namespace jp;
using namespace jp::testing;

CAF_TEST_FIXTURE_SCOPE(handle_memory_tests, real_runtime)

CAF_TEST(huge output stays bounded; its head and tail are in the bounded spill file) {
  rusage before{};
  ::getrusage(RUSAGE_SELF, &before);
  constexpr size_t size = 128u << 20;
  auto spec = shell("head -c " + std::to_string(size) + " /dev/zero | tr '\\0' x");
  spec.spill_max_bytes = 4u << 20;
  ask<HandleReport>(registry, spawn_atom::value, std::string("flood"), spec);
  auto res = await_all(*this, {"flood"});
  CAF_REQUIRE_EQUAL(res.completed.size(), 1u);
  auto [r, err] = ask<HandleReport>(registry, fetch_atom::value, std::string("flood"), LookOptions{});
  CAF_CHECK(r.state.ok);
  CAF_CHECK(r.state.content.size() < 33 * 1024);
  CAF_CHECK(contains(r.state.content, "bytes omitted]"));
  CAF_CHECK_EQUAL(r.omitted_bytes + 32 * 1024, size);
  CAF_REQUIRE(!r.output_file.empty());
  // The spill file: its head, a marker saying how much is left out, its tail.
  auto spilled = std::filesystem::file_size(r.output_file);
  CAF_CHECK_LESS_OR_EQUAL(spilled, spec.spill_max_bytes);
  CAF_CHECK_GREATER(spilled, spec.spill_max_bytes - 1024);
  std::ifstream in(r.output_file, std::ios::binary);
  std::string file((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto marker = file.find("\n…[");
  CAF_REQUIRE(marker != std::string::npos);
  auto omitted = std::stoull(file.substr(marker + 5));
  CAF_CHECK_EQUAL(file.find_first_not_of('x'), marker);
  CAF_CHECK_EQUAL(omitted + file.size() - (file.find("]…\n", marker) + 5 - marker), size);
  rusage after{};
  ::getrusage(RUSAGE_SELF, &after);
  // Peak RSS may not grow by anything like the output's size: half of it at most
  // (22-30 MB here under ASan, 13-17 without, at 64 MiB and at 128 MiB alike).
  CAF_CHECK_LESS(after.ru_maxrss - before.ru_maxrss, long(size / 2 / 1024)); // KiB
  auto content = response_content(r);
  CAF_CHECK(contains(content, "\"output_file\""));
}

CAF_TEST(control lines that are not tool states keep the handle bounded) {
  // Each such line is said in the output (bounded there) and kept for a failure's
  // trace: that copy grew by a note a line, 150 MB for these 2 million.
  rusage before{};
  ::getrusage(RUSAGE_SELF, &before);
  auto spec = control_tool("sloppy", "yes x | head -n 2000000 >&3; exit 3");
  ask<HandleReport>(registry, spawn_atom::value, std::string("notes"), spec);
  auto res = await_all(*this, {"notes"});
  CAF_REQUIRE_EQUAL(res.completed.size(), 1u);
  auto& s = res.completed[0].state;
  CAF_CHECK(!s.ok);
  // Its trace still ends with the last of them.
  CAF_REQUIRE(!s.error.trace.empty());
  CAF_CHECK(contains(s.error.trace.back(), "[control channel] ignored a line that is not a ToolState"));
  rusage after{};
  ::getrusage(RUSAGE_SELF, &after);
  CAF_CHECK_LESS(after.ru_maxrss - before.ru_maxrss, 64L * 1024); // KiB
}

CAF_TEST_FIXTURE_SCOPE_END()
