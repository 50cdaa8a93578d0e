// Permissions (RFD 009 "Interaction with tool permission system"): whether a call
// may run, must be asked for, or is refused. The policy is data, decided in one
// place (decide_permission); the turn applies the decision.
//   - spawn and one-shot calls follow the tool's `run` (ask | unattended | skip);
//   - fetch/apply/abort run unattended;
//   - [spawn.permissions] <action> overrides either, per action.
#pragma once

#include <functional>
#include <optional>
#include <set>
#include <string>

#include "../config/config.hpp"
#include "../messages/json.hpp"
#include "../messages/permission_reply.hpp"

namespace jp {

struct PermissionPolicy {
  bool enforce = true;           // false: every call is the user's own (a script without --ask)
  std::set<std::string> allowed; // --allow TOOL: asked-for tools that may run
  // Why nobody can be asked where nobody can (what a refusal says), and how the
  // tool is allowed without asking ({} is its name).
  std::string why_nobody = "there is no terminal to ask on";
  std::string allow_hint = "--allow {}";
};

/// Asks the person whether `tool` may run with `args`. Blocking (called on a
/// detached actor); nullopt when the question could not be put or was not answered.
/// `tag`: the call's (an MCP request's id; "" none), so that its cancel can withdraw
/// the question.
using AskPermission = std::function<std::optional<PermissionReply>(const std::string& tool, const Json& args,
                                                                   const std::string& tag)>;

enum class permission_kind { run, ask, refuse };

struct PermissionDecision {
  permission_kind kind = permission_kind::run;
  std::string message; // refuse: why, for the assistant
};

/// The config key that sets the permission of a call of `tool` (`action` empty: a
/// one-shot call): conversation.tools.T.spawn.permissions.ACTION where that is set,
/// else conversation.tools.T.run. What a refusal names.
std::string permission_key(const ToolConfig& tool, std::optional<action_kind> action);

/// What a call of `tool` needs; `action` is empty for a one-shot call.
PermissionDecision decide_permission(const ToolConfig& tool, std::optional<action_kind> action,
                                     const PermissionPolicy& policy,
                                     const std::set<std::string>& allowed_this_turn);

/// The tool error when a call must be asked for and nobody can be asked.
/// It names the key that asks (permission_key).
std::string no_one_to_ask(const ToolConfig& tool, std::optional<action_kind> action,
                          const PermissionPolicy& policy = {});

/// The tool error when the user said no.
std::string denied(const std::string& tool, const PermissionReply& reply);

/// The tools a workspace's .jp/config.toml defines or changes (someone's repository)
/// ask before a model's call of them runs, whatever the file says, unless `allowed`
/// names them (--allow): its note is read once, if at all, and the model may be
/// led to call them by what the repository holds. (`mcp` and `query`; a script's
/// and a person's own calls are theirs.)
void workspace_tools_ask(Config& config, const std::set<std::string>& allowed);

} // namespace jp
