// A workspace that cannot be written (a read-only checkout, someone else's
// directory) still runs `call`, `query` and `conversations`: its state goes to the
// user's own state directory, and the run says so once. When nothing can be written
// at all, the run still answers and says what is not kept.
#define CAF_SUITE read_only_workspace
#include <caf/test/unit_test.hpp>

#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <sstream>
#include <string>

#include "fake_provider_server.hpp"
#include "other_user.hpp"
#include "contains.hpp"

using namespace jp;
using namespace jp::testing;

namespace {

size_t count(const std::string& s, const std::string& x) {
  size_t n = 0;
  for (auto pos = s.find(x); pos != std::string::npos; pos = s.find(x, pos + x.size()))
    ++n;
  return n;
}

/// The path after "[full output: " up to the next space or "]".
std::string full_output_path(const std::string& out) {
  auto at = out.find("[full output: ");
  if (at == std::string::npos)
    return {};
  at += 14;
  return out.substr(at, out.find_first_of(" ]", at) - at);
}

struct ReadOnly {
  other_user_area area;
  std::string ws = area.make_dir("ws", false);
  FakeProviderServer server;

  ReadOnly() {
    // The assistant's config, given with --config (readable by the other user).
    area.dir.write("assistant.toml", fmt::format("[assistant]\nprovider = \"anthropic\"\nmodel = \"test-model\"\n"
                                                 "base_url = \"{}\"\napi_key_env = \"JP_READ_ONLY_TEST_KEY\"\n",
                                                 server.base_url()));
  }
  Run query(const std::string& state, const std::string& prompt) {
    server.push({200, provider_fixture("anthropic_text.sse")});
    return area.run(ws, state, fmt::format("--config '{}/assistant.toml' query '{}'", area.dir.path.string(), prompt),
                    "JP_READ_ONLY_TEST_KEY=test");
  }
};

} // namespace

CAF_TEST(a call in a read only workspace keeps its full output in the user state and says so once) {
  ReadOnly ro;
  auto state = ro.area.make_dir("state", true);
  auto r = ro.area.run(ro.ws, state, R"(call shell '{"command":"seq 1 200000"}')");
  JP_REQUIRE_OK(r);
  CAF_CHECK_EQUAL(count(r.out, fmt::format("note: {}/.jp cannot be written", ro.ws)), 1u);
  auto file = full_output_path(r.out);
  CAF_CHECK(file.starts_with(state + "/jp-actors/workspaces/ws-"));
  CAF_CHECK(!contains(r.out, "not written"));
  std::ifstream in(file);
  std::stringstream text;
  text << in.rdbuf();
  CAF_CHECK(text.str().starts_with("1\n2\n3\n"));
  CAF_CHECK(text.str().ends_with("199999\n200000\n"));
  CAF_CHECK(!std::filesystem::exists(ro.ws + "/.jp"));
}

CAF_TEST(a workspace whose .jp is a file says so and keeps its state in the user state) {
  // A repository's own file where the directory goes: "Not a directory", not a
  // permission the user would look for in vain.
  other_user_area area;
  auto ws = area.make_dir("ws", true);
  area.dir.write("ws/.jp", "not a directory\n");
  auto state = area.make_dir("state", true);
  auto r = area.run(ws, state, R"(call shell '{"command":"seq 1 200000"}')");
  JP_REQUIRE_OK(r);
  CAF_CHECK(contains(r.out, fmt::format("note: {}/.jp cannot be written (Not a directory)", ws)));
  CAF_CHECK(full_output_path(r.out).starts_with(state + "/jp-actors/workspaces/ws-"));
}

CAF_TEST(a read only workspace keeps its conversation in the user state) {
  ReadOnly ro;
  auto state = ro.area.make_dir("state", true);
  auto first = ro.query(state, "first question");
  JP_REQUIRE_OK(first);
  CAF_CHECK_EQUAL(count(first.out, "cannot be written"), 1u);
  auto second = ro.query(state, "second question");
  JP_REQUIRE_OK(second);
  // The second query continued the first conversation, read back from the user state.
  auto seen = ro.server.requests();
  CAF_REQUIRE_EQUAL(seen.size(), 2u);
  CAF_CHECK(contains(seen[1].body, "first question"));
  auto ls = ro.area.run(ro.ws, state, "conversations ls");
  CAF_CHECK_EQUAL(ls.status, 0);
  CAF_CHECK(contains(ls.out, "first question"));
  CAF_CHECK(!std::filesystem::exists(ro.ws + "/.jp"));
}

CAF_TEST(with nothing writable a query still answers and says what is not kept) {
  ReadOnly ro;
  auto state = ro.area.make_dir("state", false);
  auto r = ro.query(state, "hello");
  JP_REQUIRE_OK(r);
  CAF_CHECK_EQUAL(count(r.out, "conversations and full outputs are not kept by this run"), 1u);
  CAF_CHECK_EQUAL(count(r.out, "cannot be cleaned up by the next start"), 1u);
  CAF_CHECK_EQUAL(ro.server.requests().size(), 1u);
  CAF_CHECK(!std::filesystem::exists(ro.ws + "/.jp"));
}

CAF_TEST(a writable workspace keeps its state in the workspace and says nothing) {
  other_user_area area;
  auto ws = area.make_dir("ws", true);
  auto state = area.make_dir("state", true);
  auto r = area.run(ws, state, R"(call shell '{"command":"seq 1 200000"}')");
  JP_REQUIRE_OK(r);
  CAF_CHECK(!contains(r.out, "note:"));
  CAF_CHECK(full_output_path(r.out).starts_with(ws + "/.jp/output/"));
}
