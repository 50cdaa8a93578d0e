// The permission policy: one table of decisions (tools/permission.hpp).
#define CAF_SUITE permission
#include <caf/test/unit_test.hpp>

#include "tools/permission.hpp"

using namespace jp;

namespace {

ToolConfig tool(run_mode run) {
  ToolConfig t;
  t.name = "deploy";
  t.run = run;
  t.stateful = true;
  return t;
}

permission_kind decide(const ToolConfig& t, std::optional<action_kind> action, PermissionPolicy policy = {},
                       std::set<std::string> this_turn = {}) {
  return decide_permission(t, action, policy, this_turn).kind;
}

} // namespace

CAF_TEST(spawn and one-shot calls follow run; other actions run unattended) {
  auto ask = tool(run_mode::ask);
  CAF_CHECK(decide(ask, std::nullopt) == permission_kind::ask);
  CAF_CHECK(decide(ask, action_kind::spawn) == permission_kind::ask);
  for (auto a : {action_kind::fetch, action_kind::apply, action_kind::abort})
    CAF_CHECK(decide(ask, a) == permission_kind::run);
  CAF_CHECK(decide(tool(run_mode::unattended), action_kind::spawn) == permission_kind::run);
  auto skip = tool(run_mode::skip);
  auto refused = decide_permission(skip, std::nullopt, {}, {});
  CAF_CHECK(refused.kind == permission_kind::refuse);
  CAF_CHECK_EQUAL(refused.message, "`deploy` was not run: its configuration says run = \"skip\" "
                                   "(conversation.tools.deploy.run)");
  CAF_CHECK(decide(skip, action_kind::fetch) == permission_kind::run);
}

CAF_TEST(spawn permissions override per action) {
  auto t = tool(run_mode::unattended);
  t.action_permissions[action_kind::apply] = run_mode::ask;
  t.action_permissions[action_kind::spawn] = run_mode::skip;
  CAF_CHECK(decide(t, action_kind::apply) == permission_kind::ask);
  CAF_CHECK(decide(t, action_kind::spawn) == permission_kind::refuse);
  CAF_CHECK(decide(t, action_kind::fetch) == permission_kind::run);
}

CAF_TEST(a per action skip names the per action key) {
  auto t = tool(run_mode::unattended);
  t.action_permissions[action_kind::abort] = run_mode::skip;
  auto refused = decide_permission(t, action_kind::abort, {}, {});
  CAF_CHECK(refused.kind == permission_kind::refuse);
  CAF_CHECK_EQUAL(refused.message, "`deploy` was not run: its configuration says abort = \"skip\" "
                                   "(conversation.tools.deploy.spawn.permissions.abort)");
}

CAF_TEST(allowed tools and yes for this turn run without asking) {
  auto ask = tool(run_mode::ask);
  CAF_CHECK(decide(ask, std::nullopt, PermissionPolicy{true, {"deploy"}}) == permission_kind::run);
  CAF_CHECK(decide(ask, std::nullopt, PermissionPolicy{true, {"other"}}) == permission_kind::ask);
  CAF_CHECK(decide(ask, std::nullopt, {}, {"deploy"}) == permission_kind::run);
}

CAF_TEST(without enforcement every call is the users own) {
  PermissionPolicy trusted{false, {}};
  CAF_CHECK(decide(tool(run_mode::ask), std::nullopt, trusted) == permission_kind::run);
  CAF_CHECK(decide(tool(run_mode::skip), action_kind::spawn, trusted) == permission_kind::run);
}

CAF_TEST(refusal texts tell the assistant and the user what to do) {
  CAF_CHECK_EQUAL(no_one_to_ask(tool(run_mode::ask), std::nullopt),
                  "`deploy` needs the user's permission to run (run = \"ask\") and there is no terminal "
                  "to ask on; nothing was run. Allow it with --allow deploy, or set "
                  "conversation.tools.deploy.run = \"unattended\"");
  // An action that asks by its own key names that key, not `run`.
  auto repl = tool(run_mode::unattended);
  repl.action_permissions[action_kind::abort] = run_mode::ask;
  CAF_CHECK_EQUAL(no_one_to_ask(repl, action_kind::abort),
                  "`deploy` needs the user's permission to abort it (abort = \"ask\") and there is no terminal "
                  "to ask on; nothing was done. Allow it with --allow deploy, or set "
                  "conversation.tools.deploy.spawn.permissions.abort = \"unattended\"");
  // A workspace's own tool: not told to set itself unattended in the repository.
  auto theirs = tool(run_mode::ask);
  theirs.shaped_by_workspace = true;
  CAF_CHECK_EQUAL(no_one_to_ask(theirs, std::nullopt),
                  "`deploy` needs the user's permission to run (it is a tool this workspace's .jp/config.toml "
                  "defines or changes) and there is no terminal to ask on; nothing was run. Allow it with "
                  "--allow deploy");
  CAF_CHECK_EQUAL(denied("deploy", {permission_answer::no, {}}),
                  "The user did not allow `deploy` to run; nothing was run");
  CAF_CHECK_EQUAL(denied("deploy", {permission_answer::no_with_reason, "use staging"}),
                  "The user did not allow `deploy` to run; nothing was run. The user says: use staging");
}
