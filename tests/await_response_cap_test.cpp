// One `await` over a hundred real handles with big outputs: the answer the assistant
// gets stays within runtime.response_cap_bytes.
#define CAF_SUITE await_response_cap
#include <caf/test/unit_test.hpp>

#include <fmt/format.h>

#include "real_turn.hpp"
#include "tools/builtin_tools.hpp"

using namespace jp;
using namespace jp::testing;

CAF_TEST_FIXTURE_SCOPE(await_response_cap_tests, real_turn)

CAF_TEST(an await over a hundred big outputs stays within the response cap) {
  constexpr int n = 100;
  auto ids = Json::array();
  for (int i = 0; i < n; ++i) {
    auto id = fmt::format("h{}", i);
    // 40 kB each, more than a response holds: each is cut and spilled. They start
    // writing once all are spawned, so no spawn's answer takes their output.
    auto command = fmt::format("until [ -e go ]; do sleep 0.2; done; "
                               "head -c 40000 /dev/zero | tr '\\0' x; echo; echo END of {}", id);
    auto args = Json::object().set("action", "spawn").set("id", id).set("wait_ms", int64_t{0}).set("command", command);
    auto r = call("shell", args.dump());
    CAF_REQUIRE(r.ok);
    ids.push(Json(id));
  }
  dir.write("go", "");
  auto r = call("await", Json::object().set("all", std::move(ids)).set("timeout_secs", int64_t{60}).dump());
  CAF_REQUIRE(r.ok);
  auto j = Json::parse(r.content);
  CAF_REQUIRE(j.ok());
  CAF_CHECK_LESS_OR_EQUAL(r.content.size(), default_config().runtime.response_cap_bytes);
  auto& completed = j->find("completed")->as_array();
  CAF_REQUIRE_EQUAL(completed.size(), static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    auto& c = completed[static_cast<size_t>(i)];
    CAF_CHECK(c.find("result")->as_string().ends_with(fmt::format("END of h{}\n", i)));
    CAF_CHECK(c.find("output_file") != nullptr);
  }
  auto* omitted = j->find("omitted_bytes");
  CAF_REQUIRE(omitted != nullptr);
  CAF_CHECK_GREATER(omitted->as_int(), int64_t{n} * 30000);
}

CAF_TEST_FIXTURE_SCOPE_END()
