// [experiment] shared_registry = true: the top-level agents of a run see each
// other's handles -- one agent fetches and awaits a handle another spawned -- while
// each agent still owns (and ends) its own.
#define CAF_SUITE shared_registry
#include <caf/test/unit_test.hpp>

#include <fmt/format.h>
#include <map>
#include <tuple>

#include "cli_run.hpp"
#include "messages/json.hpp"
#include "temp_dir.hpp"
#include "contains.hpp"

using namespace jp;
using namespace jp::testing;

namespace {

/// `builder` spawns `build`, which says it started and then waits for a `go` file;
/// `tester` waits until it started, fetches it (still running: the gate is shut),
/// opens the gate and awaits it. The builder's turn lasts until the tester is done
/// (a handle is seen while its owner's turn lasts). `experiment` is the
/// [experiment] table's body.
std::string two_agents(const std::string& experiment) {
  return fmt::format(R"(
[experiment]
{}

[[agents]]
name = "builder"
  [[agents.steps]]
  [[agents.steps.calls]]
  tool = "shell"
  arguments = {{ action = "spawn", id = "build", wait_ms = 0, command = "touch started; until [ -e go ]; do sleep 0.01; done; echo built" }}
  [[agents.steps.calls]]
  tool = "await"
  arguments = {{ all = ["build"], timeout_secs = 60 }}
  # Its handles are seen while its turn lasts: it lasts until the tester is done.
  [[agents.steps]]
  [[agents.steps.calls]]
  tool = "shell"
  arguments = {{ command = "until [ -e tested ]; do sleep 0.01; done; echo over" }}

[[agents]]
name = "tester"
  [[agents.steps]]
  [[agents.steps.calls]]
  tool = "shell"
  arguments = {{ command = "until [ -e started ]; do sleep 0.01; done; echo seen" }}
  [[agents.steps]]
  [[agents.steps.calls]]
  tool = "shell"
  arguments = {{ action = "fetch", id = "build" }}
  [[agents.steps]]
  [[agents.steps.calls]]
  tool = "shell"
  arguments = {{ command = "touch go" }}
  [[agents.steps]]
  [[agents.steps.calls]]
  tool = "await"
  arguments = {{ all = ["build"], timeout_secs = 60 }}
  [[agents.steps]]
  [[agents.steps.calls]]
  tool = "shell"
  arguments = {{ command = "touch tested" }}
)",
                     experiment);
}

Run run_in_workspace(const std::string& script) {
  temp_dir ws;
  ws.write("script.toml", script);
  return cli_in(ws.path.string(), fmt::format("run {}/script.toml --json", ws.path.string()));
}

} // namespace

CAF_TEST(with a shared registry one agent fetches and awaits a handle another spawned) {
  auto r = run_in_workspace(two_agents("shared_registry = true"));
  JP_REQUIRE_OK(r);
  auto res = results_of(r);
  auto fetched = content(res, "tester", 2, 0);
  auto awaited = content(res, "tester", 4, 0);
  if (!ok(res, "tester", 2, 0) || !contains(fetched, R"("id":"build","state":"running")") || !ok(res, "tester", 4, 0) ||
      !contains(awaited, R"({"id":"build","state":"stopped","result":"built\n"})"))
    CAF_FAIL("fetch: " << fetched << "\nawait: " << awaited << "\nrun:\n" << r.stdout_text);
  // Its owner awaited it too, and its turn end is the owner's alone.
  CAF_CHECK(contains(content(res, "builder", 1, 1), R"("result":"built\n")"));
}

CAF_TEST(another agent looking at a handle leaves its owner the news and cannot drive it) {
  // The owner never looks at `build`; the tester fetches and awaits it, then tries
  // to abort it. The owner still hears it finished (README: each agent alone hears
  // its handles' notifications), and the abort is refused saying whose it is.
  auto r = run_in_workspace(R"(
[experiment]
shared_registry = true

[[agents]]
name = "builder"
  [[agents.steps]]
  [[agents.steps.calls]]
  tool = "shell"
  arguments = { action = "spawn", id = "build", wait_ms = 0, command = "touch started; until [ -e go ]; do sleep 0.01; done; echo built" }
  [[agents.steps]]
  [[agents.steps.calls]]
  tool = "shell"
  arguments = { command = "until [ -e tested ]; do sleep 0.01; done; echo over" }

[[agents]]
name = "tester"
  [[agents.steps]]
  [[agents.steps.calls]]
  tool = "shell"
  arguments = { command = "until [ -e started ]; do sleep 0.01; done; echo seen" }
  [[agents.steps]]
  [[agents.steps.calls]]
  tool = "shell"
  arguments = { action = "fetch", id = "build" }
  [[agents.steps]]
  [[agents.steps.calls]]
  tool = "shell"
  arguments = { command = "touch go" }
  [[agents.steps]]
  [[agents.steps.calls]]
  tool = "await"
  arguments = { all = ["build"], timeout_secs = 60 }
  [[agents.steps]]
  [[agents.steps.calls]]
  tool = "shell"
  arguments = { action = "abort", id = "build" }
  [[agents.steps]]
  [[agents.steps.calls]]
  tool = "shell"
  arguments = { command = "touch tested" }
)");
  JP_REQUIRE_OK(r);
  auto res = results_of(r);
  CAF_REQUIRE(contains(content(res, "tester", 4, 0), R"({"id":"build","state":"stopped","result":"built\n"})"));
  auto over = content(res, "builder", 2, 0);
  if (!contains(over, "Handle `build` (shell) finished: built"))
    CAF_FAIL("the owner was not told: " << over << "\nrun:\n" << r.stdout_text);
  CAF_CHECK(!ok(res, "tester", 5, 0));
  CAF_CHECK(contains(content(res, "tester", 5, 0), "Handle `build` not found among this agent's handles (if another "
                                                   "agent spawned it, it can be awaited and fetched, but only that "
                                                   "agent can abort it)"));
}

CAF_TEST(an await on another agents handle that asks waits for its owner to answer) {
  // Only the owner can apply to it: the tester is not blocked by the question (an
  // await whose handles only this assistant could unblock returns at once; this
  // one times out instead).
  temp_dir ws;
  ws.write("tools.toml", R"(
[conversation.tools.asker]
summary = "asks whom"
command = { program = "bash", args = ["-c", "echo '{\"type\":\"waiting\",\"question\":{\"id\":\"who\",\"text\":\"Whom?\"}}' >&3; touch asked; read a; echo hello $a"] }
io = "control"
run = "unattended"
[conversation.tools.asker.spawn]
stateful = true
)");
  ws.write("script.toml", R"(
[experiment]
shared_registry = true

[[agents]]
name = "owner"
  [[agents.steps]]
  [[agents.steps.calls]]
  tool = "asker"
  arguments = { action = "spawn", id = "q", wait_ms = 0 }
  [[agents.steps]]
  [[agents.steps.calls]]
  tool = "shell"
  arguments = { command = "until [ -e tested ]; do sleep 0.01; done; echo over" }
  [[agents.steps]]
  [[agents.steps.calls]]
  tool = "asker"
  arguments = { action = "apply", id = "q", input = "Ada" }
  [[agents.steps]]
  [[agents.steps.calls]]
  tool = "await"
  arguments = { all = ["q"], timeout_secs = 60 }

[[agents]]
name = "tester"
  [[agents.steps]]
  [[agents.steps.calls]]
  tool = "shell"
  arguments = { command = "until [ -e asked ]; do sleep 0.01; done; echo seen" }
  [[agents.steps]]
  [[agents.steps.calls]]
  tool = "await"
  arguments = { all = ["q"], timeout_secs = 2 }
  [[agents.steps]]
  [[agents.steps.calls]]
  tool = "shell"
  arguments = { command = "touch tested" }
)");
  auto r = cli_in(ws.path.string(), fmt::format("--config {0}/tools.toml run {0}/script.toml --json", ws.path.string()));
  JP_REQUIRE_OK(r);
  auto res = results_of(r);
  auto awaited = content(res, "tester", 2, 0);
  CAF_CHECK(contains(awaited, R"("timed_out":true)"));
  CAF_CHECK(contains(awaited, R"({"id":"q","state":"waiting")"));
}

CAF_TEST(without a shared registry the handles of another agent are not found) {
  // The tester cannot see `build`, so it opens the gate itself after its failed fetch.
  auto r = run_in_workspace(two_agents("name = \"apart\""));
  JP_REQUIRE_OK(r);
  auto res = results_of(r);
  CAF_CHECK(!ok(res, "tester", 2, 0));
  CAF_CHECK(contains(content(res, "tester", 2, 0), "Handle `build` not found"));
  CAF_CHECK(!ok(res, "tester", 4, 0));
  CAF_CHECK(contains(content(res, "tester", 4, 0), "Handle `build` not found"));
}

CAF_TEST(a shared registry names a handle no agent has) {
  auto r = run_in_workspace(R"(
[experiment]
shared_registry = true
[[agents]]
name = "a"
  [[agents.steps]]
  [[agents.steps.calls]]
  tool = "await"
  arguments = { all = ["nobody"], timeout_secs = 1 }
)");
  JP_REQUIRE_OK(r);
  auto res = results_of(r);
  CAF_CHECK(contains(content(res, "a", 1, 0),
                     "Handle `nobody` not found (in this agent or the agents sharing its registry)"));
}

CAF_TEST(agents are told apart by name and shared_registry is a boolean) {
  temp_dir ws;
  ws.write("dup.toml", "[[agents]]\nname = \"a\"\n[[agents]]\nname = \"a\"\n");
  auto dup = cli_in(ws.path.string(), fmt::format("run {}/dup.toml", ws.path.string()));
  CAF_CHECK_EQUAL(dup.status, 1);
  CAF_CHECK(contains(dup.out, "agents: two [[agents]] are named `a`; give each its own name"));
  ws.write("bad.toml", "[experiment]\nshared_registry = \"yes\"\n[[agents]]\nname = \"a\"\n");
  auto bad = cli_in(ws.path.string(), fmt::format("run {}/bad.toml", ws.path.string()));
  CAF_CHECK_EQUAL(bad.status, 1);
  CAF_CHECK(contains(bad.out, "experiment.shared_registry: expected true or false, got \"yes\""));
}
