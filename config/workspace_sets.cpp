#include "config/workspace_sets.hpp"

#include <filesystem>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "config/code_variable.hpp"
#include "config/placeholder.hpp"
#include "config/workspace_limits.hpp"
#include "messages/json.hpp"

namespace jp {

namespace {

/// How its calls run, at the least asking: a spawn's own permission may be looser
/// than `run` ([spawn.permissions]).
run_mode loosest(const ToolConfig& tool) {
  auto mode = permission_mode(tool, std::nullopt);
  if (tool.stateful)
    for (auto action : {action_kind::spawn, action_kind::fetch, action_kind::apply, action_kind::abort}) {
      auto m = permission_mode(tool, action);
      if (m == run_mode::unattended || (m == run_mode::ask && mode == run_mode::skip))
        mode = m;
    }
  return mode;
}

/// The limits set, as a config says them: "memory_mb = 64, cpu_secs = 60".
std::string limits_text(const ToolLimits& l) {
  std::vector<std::string> parts;
  for (auto& k : kToolLimitKeys)
    if (l.*k.field != 0)
      parts.push_back(fmt::format("{} = {}", k.key, l.*k.field));
  return fmt::format("{}", fmt::join(parts, ", "));
}

/// A command line as the note shows it: runs of blanks (and line breaks) as one
/// space, and a long one as its head and its tail (a payload after 400 spaces, or
/// after a long harmless start, was cut off the note).
std::string shown_command(const std::string& program, const std::vector<std::string>& args) {
  std::string all = program;
  for (auto& arg : args)
    all += " " + arg;
  std::string squeezed;
  for (char c : all) {
    bool blank = c == ' ' || c == '\t' || c == '\n' || c == '\r';
    if (!blank)
      squeezed += c;
    else if (!squeezed.empty() && squeezed.back() != ' ')
      squeezed += ' ';
  }
  constexpr size_t kept = 80;
  if (squeezed.size() <= 2 * kept + 20)
    return squeezed;
  // Whole characters: the cut points back up to a character's start.
  auto start = [&](size_t at) {
    while (at > 0 && (static_cast<unsigned char>(squeezed[at]) & 0xC0) == 0x80)
      --at;
    return at;
  };
  auto head_end = start(kept), tail_start = start(squeezed.size() - kept);
  return fmt::format("{} …({} bytes)… {}", squeezed.substr(0, head_end), tail_start - head_end,
                     squeezed.substr(tail_start));
}

/// Where its process runs when that is not the workspace: ", in `/`" (its own cwd,
/// followed through links, outside it: an absolute one, or one the tool lets out),
/// or that it will not run there (a relative one that leads out through a link);
/// ", in any directory the model names".
std::string outside_note(const ToolConfig& tool, const std::string& workspace) {
  // A cwd with a placeholder is the model's choice, as the launch reads it.
  if (auto placeholders = find_placeholders(tool.cwd); !placeholders || !placeholders->empty())
    return tool.cwd_outside_workspace ? ", in any directory the model names" : "";
  if (tool.cwd.empty())
    return "";
  namespace fs = std::filesystem;
  std::error_code root_ec, ec;
  auto root = fs::weakly_canonical(workspace, root_ec);
  auto resolved = fs::weakly_canonical(fs::path(workspace) / tool.cwd, ec);
  if (root_ec || ec) // not resolved: nothing to say of where it is
    return "";
  auto relative = resolved.lexically_relative(root);
  if (!relative.empty() && *relative.begin() != "..")
    return "";
  // A relative one leads out through a link only where the tool lets it (launch).
  if (tool.cwd[0] != '/' && !tool.cwd_outside_workspace)
    return fmt::format(", its cwd leads out of the workspace to {}: refused when called",
                       json_quote_cut(resolved.string(), 100));
  return fmt::format(", in {} outside the workspace", json_quote_cut(resolved.string(), 100));
}

} // namespace

std::vector<std::string> what_workspace_sets(const Config& before, const Config& after, const Config& final) {
  std::vector<std::string> sets;
  for (auto& [name, tool] : after.tools) {
    auto now = final.tools.find(name);
    if (now == final.tools.end() || now->second.program != tool.program || now->second.node != tool.node)
      continue; // a later layer of the user's own replaced it
    auto was = before.tools.find(name);
    if (was == before.tools.end()) {
      auto where = tool.node.empty() ? what_tool_runs(tool) + outside_note(now->second, final.workspace)
                                     : fmt::format("runs on node {}", tool.node);
      sets.push_back(fmt::format("tool `{}` ({}, {})", name, where, to_string(loosest(now->second))));
    } else {
      if (tool.description != was->second.description || tool.summary != was->second.summary)
        sets.push_back(fmt::format("what tool `{}` tells the model", name));
      // Lowered only, but a tool that fails for it should be traced to the file.
      if (tool.limits != was->second.limits && now->second.limits == tool.limits)
        sets.push_back(fmt::format("the limits of tool `{}` ({})", name, limits_text(tool.limits)));
    }
  }
  // What it chose and no later layer (--model, --cfg, --config) chose over it.
  auto chose = [](const auto& b, const auto& a, const auto& f) { return a != b && f == a; };
  auto &a = after.assistant, &b = before.assistant, &f = final.assistant;
  if (chose(b.model, a.model, f.model))
    sets.push_back(fmt::format("assistant.model = {}", json_quote_cut(a.model)));
  if (chose(b.inquiry_model, a.inquiry_model, f.inquiry_model))
    sets.push_back(fmt::format("assistant.inquiry_model = {}", json_quote_cut(a.inquiry_model)));
  if (chose(b.max_tokens, a.max_tokens, f.max_tokens))
    sets.push_back(fmt::format("assistant.max_tokens = {}", a.max_tokens));
  if (chose(b.system_prompt, a.system_prompt, f.system_prompt))
    sets.push_back("assistant.system_prompt");
  if (chose(before.runtime.tool_limits, after.runtime.tool_limits, final.runtime.tool_limits))
    sets.push_back(fmt::format("runtime.tool_limits ({})", limits_text(after.runtime.tool_limits)));
  for (auto& lowered : workspace_lowered(before, after, final))
    sets.push_back(lowered);
  return sets;
}

std::string workspace_tool_note(const Config& config, const std::string& name) {
  auto it = config.tools.find(name);
  if (it == config.tools.end() || !it->second.shaped_by_workspace)
    return {};
  std::string note = "a tool this workspace's .jp/config.toml defines or changes";
  if (it->second.node.empty() && !it->second.program.empty())
    note += "; it " + what_tool_runs(it->second);
  return note;
}

std::string what_tool_runs(const ToolConfig& tool) {
  // Its command line and what it sets in its environment, as the file says them:
  // `ls` alone hid LD_PRELOAD = "repo.so", and `bash` what it was given to run.
  std::vector<std::string> env;
  for (auto& [k, v] : tool.env)
    env.push_back(code_variable_reader(k).empty() ? k : fmt::format("{} (chooses code it runs)", k));
  return fmt::format("runs `{}`{}{}", shown_command(tool.program, tool.args), tool.shell ? " as a shell script" : "",
                     env.empty() ? "" : fmt::format(" setting {}", fmt::join(env, ", ")));
}

} // namespace jp
