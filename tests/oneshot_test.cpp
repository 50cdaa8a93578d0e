// One-shot calls (no `action`) end to end through the CLI: what the assistant sees
// when a tool speaks the protocol but ends mid-way, or fails transiently.
#define CAF_SUITE oneshot
#include <caf/test/unit_test.hpp>

#include <filesystem>
#include <fmt/format.h>
#include <string>

#include "cli_run.hpp"
#include "temp_dir.hpp"
#include "contains.hpp"

using namespace jp;
using namespace jp::testing;

namespace {

/// A workspace with tool `t` running a shell script whose body is `body`.
struct ToolWorkspace {
  temp_dir ws;
  explicit ToolWorkspace(const std::string& body) {
    ws.write("tool.sh", "#!/bin/sh\n" + body + "\n");
    std::filesystem::permissions(ws.path / "tool.sh", std::filesystem::perms::owner_all);
    ws.write("config.toml", fmt::format("[conversation.tools.t]\ncommand = {{ program = \"{}/tool.sh\" }}\n",
                                        ws.path.string()));
  }
  Run call(const std::string& args = "{}") {
    return cli_in(ws.path.string(), fmt::format("--config {}/config.toml call t '{}'", ws.path.string(), args));
  }
};

} // namespace

CAF_TEST(a one-shot tool that exits after a running state is an error saying what it printed) {
  ToolWorkspace w(R"(printf '{"type":"running","content":"half done"}\n')");
  auto r = w.call();
  CAF_CHECK_EQUAL(r.status, 1);
  CAF_CHECK(contains(r.out, "exited after reporting state `running`"));
  CAF_CHECK(contains(r.out, "half done"));
}

CAF_TEST(a one-shot tool that ends with a stopped state gives its result) {
  ToolWorkspace w(R"(printf '{"type":"stopped","result":"fine"}\n')");
  auto r = w.call();
  CAF_CHECK_EQUAL(r.status, 0);
  CAF_CHECK(contains(r.out, "fine"));
}

CAF_TEST(a transient one-shot failure tells the model it may retry) {
  ToolWorkspace w(R"(printf '{"type":"error","message":"registry busy","transient":true}\n')");
  auto r = w.call();
  CAF_CHECK_EQUAL(r.status, 1);
  CAF_CHECK(contains(r.out, "registry busy"));
  CAF_CHECK(contains(r.out, "transient: the same call may succeed if retried"));
  ToolWorkspace permanent(R"(printf '{"type":"error","message":"no such crate"}\n')");
  auto p = permanent.call();
  CAF_CHECK_EQUAL(p.status, 1);
  CAF_CHECK(!contains(p.out, "transient"));
}

CAF_TEST(a one-shot failure that says nothing tells the model so) {
  // An empty error result tells the model nothing, and Anthropic refuses it.
  ToolWorkspace w(R"(printf '{"type":"error","message":""}\n')");
  auto r = w.call();
  CAF_CHECK_EQUAL(r.status, 1);
  CAF_CHECK(contains(r.out, "the tool failed and said nothing"));
}

CAF_TEST(a one-shot tool that leaves a process running is told it was killed at its exit) {
  // The loop waits for the job's exec: named before it, it is the forked shell.
  ToolWorkspace w("sleep 1000 & until grep -q '^sleep' /proc/$!/cmdline; do :; done; echo started");
  auto r = w.call();
  CAF_CHECK_EQUAL(r.status, 0);
  CAF_CHECK(contains(r.out, "started\n[jp-actors: the command exited, and the 1 process it left running in the "
                            "background was killed with it: `sleep 1000`."));
  ToolWorkspace quiet("sleep 0 & wait; echo done");
  auto q = quiet.call();
  CAF_CHECK_EQUAL(q.status, 0);
  CAF_CHECK(contains(q.out, "done"));
  CAF_CHECK(!contains(q.out, "jp-actors:"));
}
