// Loading scripts: what a script may say and how a bad one is named.
#define CAF_SUITE script
#include <caf/test/unit_test.hpp>

#include "runtime/store/script.hpp"

using namespace jp;

namespace {

std::string await_step(const std::string& timeout) {
  return "[[agents]]\nname = \"a\"\n  [[agents.steps]]\n  [[agents.steps.calls]]\n  tool = \"await\"\n"
         "  arguments = { all = [\"x\"], timeout_secs = " + timeout + " }\n";
}

} // namespace

CAF_TEST(non finite numbers in arguments are refused naming the key) {
  for (auto bad : {"nan", "inf", "-inf", "+nan"}) {
    auto s = parse_script(await_step(bad), "t.toml");
    CAF_REQUIRE(!s.ok());
    CAF_CHECK_EQUAL(s.error().rfind("t.toml: agents[0].steps[0].calls[0].arguments.timeout_secs: ", 0), 0u);
    CAF_CHECK(s.error().find("a finite number of seconds >= 0") != std::string::npos);
  }
  auto nested = parse_script("[[agents]]\n  [[agents.steps]]\n  [[agents.steps.calls]]\n  tool = \"t\"\n"
                             "  arguments = { xs = [1.0, inf] }\n",
                             "t.toml");
  CAF_REQUIRE(!nested.ok());
  CAF_CHECK(nested.error().find("arguments.xs[1]: inf is not allowed") != std::string::npos);
  auto fine = parse_script(await_step("0.5"), "t.toml");
  CAF_CHECK(fine.ok());
}
