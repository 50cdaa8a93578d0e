#include "tools/permission.hpp"

#include <fmt/format.h>

#include "messages/json_codec.hpp"

namespace jp {

std::string permission_key(const ToolConfig& tool, std::optional<action_kind> action) {
  if (action && tool.action_permissions.count(*action))
    return fmt::format("conversation.tools.{}.spawn.permissions.{}", tool.name, to_string(*action));
  return fmt::format("conversation.tools.{}.run", tool.name);
}

PermissionDecision decide_permission(const ToolConfig& tool, std::optional<action_kind> action,
                                     const PermissionPolicy& policy,
                                     const std::set<std::string>& allowed_this_turn) {
  if (!policy.enforce)
    return {};
  switch (permission_mode(tool, action)) {
    case run_mode::unattended: return {};
    case run_mode::skip: {
      // The key, and its last part as the setting ("run", "apply").
      auto key = permission_key(tool, action);
      return {permission_kind::refuse,
              fmt::format("`{}` was not run: its configuration says {} = \"skip\" ({})", tool.name,
                          key.substr(key.rfind('.') + 1), key)};
    }
    case run_mode::ask:
      if (policy.allowed.count(tool.name) || allowed_this_turn.count(tool.name))
        return {};
      return {permission_kind::ask, {}};
  }
  return {};
}

std::string no_one_to_ask(const ToolConfig& tool, std::optional<action_kind> action, const PermissionPolicy& policy) {
  auto& why_nobody = policy.why_nobody;
  auto allow = policy.allow_hint;
  if (auto at = allow.find("{}"); at != std::string::npos) // a program's text: no format string
    allow.replace(at, 2, tool.name);
  // The key that asks: `run`, or the action's own where spawn.permissions sets it.
  auto key = permission_key(tool, action);
  auto setting = key.substr(key.rfind('.') + 1);
  auto what = setting == "run" ? std::string("run") : fmt::format("{} it", setting);
  auto done = setting == "run" || setting == "spawn" ? "run" : "done";
  // Not "set it unattended" in a repository's own config: that would let it run
  // itself unasked.
  if (tool.shaped_by_workspace)
    return fmt::format("`{}` needs the user's permission to {} (it is a tool this workspace's .jp/config.toml "
                       "defines or changes) and {}; nothing was {}. Allow it with {}",
                       tool.name, what, why_nobody, done, allow);
  return fmt::format("`{}` needs the user's permission to {} ({} = \"ask\") and {}; nothing "
                     "was {}. Allow it with {}, or set {} = \"unattended\"",
                     tool.name, what, setting, why_nobody, done, allow, key);
}

std::string denied(const std::string& tool, const PermissionReply& reply) {
  if (reply.answer == permission_answer::unasked)
    return fmt::format("`{}` was not run: the user's permission could not be asked ({}); nothing was run", tool,
                       reply.reason);
  if (reply.answer == permission_answer::no_with_reason && !reply.reason.empty())
    return fmt::format("The user did not allow `{}` to run; nothing was run. The user says: {}", tool,
                       reply.reason);
  return fmt::format("The user did not allow `{}` to run; nothing was run", tool);
}

void workspace_tools_ask(Config& config, const std::set<std::string>& allowed) {
  for (auto& [name, tool] : config.tools)
    if (tool.shaped_by_workspace && !allowed.count(name)) {
      if (tool.run == run_mode::unattended)
        tool.run = run_mode::ask;
      for (auto& [action, mode] : tool.action_permissions)
        if (mode == run_mode::unattended && action == action_kind::spawn)
          mode = run_mode::ask;
    }
}

} // namespace jp
