#include "tools/launch.hpp"
#include "tools/builtin_tools.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fmt/format.h>

#include "config/placeholder.hpp"
#include "tools/argument_validation.hpp"
#include "tools/secret_variables.hpp"
#include "tools/argv_template.hpp"
#include "tools/function_tool.hpp"
#include "tools/schema.hpp"
#include "tools/working_directory.hpp"

namespace jp {

std::string spill_dir(const Config& config) {
  return state_path(config, "output");
}

ResultHold result_hold(const Config& config) {
  return {config.runtime.output_cap_bytes, spill_dir(config), config.workspace,
          SpillLimits{config.runtime.spill_max_bytes, config.runtime.spill_budget_bytes}};
}

namespace {

// A NUL byte would silently cut an argv element or environment entry.
Status refuse_nul(std::string_view text, std::string_view what) {
  if (text.find('\0') == std::string_view::npos)
    return Status::success();
  return Error{fmt::format("shell: {} holds a NUL byte (\\u0000), which cannot be passed to a "
                           "process; send it without NUL bytes", what)};
}

// The built-in `shell`: its `command` argument is the one place a shell is asked for.
Result<LaunchSpec> shell_spec(const Json& args) {
  LaunchSpec spec;
  auto* cmd = args.find("command");
  if (!cmd || !cmd->is_string())
    return Error{"shell: parameter `command` (a string) is required"};
  if (auto s = refuse_nul(cmd->as_string(), "parameter `command`"); !s)
    return Error{s.error};
  spec.argv = {"bash", "-c", cmd->as_string()};
  // `tty`: a terminal of its own, as an io = "pty" tool has (typed input, a screen);
  // a spawn's only (refuse_spawn_only).
  if (auto* tty = args.find("tty"); tty && tty->is_bool() && tty->as_bool())
    spec.pty = true;
  // No editor can work without a terminal: `git commit` (no -m), `git merge` and
  // `rebase --continue` would wait for one forever. With `true` git takes the message
  // it has or stops ("empty commit message"). The call's own `env` may set another.
  spec.env.push_back("GIT_EDITOR=true");
  if (auto* cwd = args.find("cwd"); cwd && cwd->is_string())
    spec.cwd = cwd->as_string();
  // The object, or the JSON text of one (the gemini dialect's form).
  if (auto* given = args.find("env"); auto env = given ? object_argument(*given) : std::nullopt)
    for (auto& [k, v] : env->as_object()) {
      if (v.is_null())
        continue; // absent, as a null key is everywhere
      // "B=C": x would set B to "C=x"; "" a nameless entry.
      if (k.empty() || k.find('=') != std::string::npos)
        return Error{fmt::format("shell: `env` entry {}: a variable's name may not be empty or hold '='",
                                 json_quote_cut(k))};
      // A number or a boolean is its text (PORT = 8080); a structure is no value.
      if (v.is_array() || v.is_object())
        return Error{fmt::format("shell: `env` entry {} is an {}: a variable's value is a string (a number or a "
                                 "boolean is taken as its text)",
                                 json_quote_cut(k), v.described())};
      auto entry = k + "=" + (v.is_string() ? v.as_string() : v.dump());
      if (auto s = refuse_nul(entry, fmt::format("`env` entry {}", json_quote_cut(k))); !s)
        return Error{s.error};
      spec.env.push_back(std::move(entry));
    }
  return spec;
}

Result<LaunchSpec> local_spec(const ToolConfig& tool, const Json& args, const Json& answers) {
  TemplateContext ctx{args, answers};
  auto argv = expand_argv(tool, ctx);
  if (!argv) // it names the tool
    return Error{argv.error()};
  LaunchSpec spec;
  spec.argv = std::move(*argv);
  spec.structured_output = true;
  if (!tool.cwd.empty()) {
    auto cwd = expand_template(tool.cwd, ctx);
    if (!cwd)
      return Error{fmt::format("{}: cwd: {}", tool.name, cwd.error())};
    spec.cwd = std::move(*cwd);
  }
  for (auto& [k, v] : tool.env) {
    auto value = expand_template(v, ctx);
    if (!value)
      return Error{fmt::format("{}: env.{}: {}", tool.name, k, value.error())};
    spec.env.push_back(k + "=" + *value);
  }
  return spec;
}

} // namespace

Result<LaunchSpec> make_launch_spec(const Config& config, const ToolConfig& tool, const Json& given,
                                    const Json& answers, bool stateful) {
  // A gemini call's object parameters come as JSON text: its template, function or
  // server gets the objects ({{tool.arguments.o.field}} included).
  auto args = arguments_as_declared(given, tool.parameters);
  // What the model was told a parameter left out means (its config's default) is
  // what the tool gets. Not an MCP server's (its own to apply, and not checked here),
  // nor a spawn's own parameter's (a one-shot call takes none).
  if (args.is_object())
    for (auto& p : tool.parameters)
      if (!p.default_value.is_null() && p.declared_schema.is_null() && !p.spawn_only)
        if (auto* v = args.find(p.name); !v || v->is_null())
          args.set(p.name, p.default_value);
  // Function and MCP tools' executors, and nodes, are given the arguments themselves: no argv.
  bool executor = tool.source == function_tool_source || tool.source.rfind("mcp.", 0) == 0 || !tool.node.empty();
  auto spec = executor ? Result<LaunchSpec>(LaunchSpec{})
              : tool.source == "builtin" && tool.name == "shell" ? shell_spec(args)
                                                                 : local_spec(tool, args, answers);
  if (!spec)
    return spec;
  spec->tool = tool.name;
  spec->node = tool.node;
  spec->arguments = args.dump();
  // A cwd with a placeholder is the assistant's choice (an unterminated one counts: the
  // check is kept where unsure); a relative one goes through the workspace's links.
  auto cwd_placeholders = find_placeholders(tool.cwd);
  bool cwd_from_assistant = tool.source == "builtin" || !cwd_placeholders || !cwd_placeholders->empty();
  bool cwd_in_workspace = !spec->cwd.empty() && spec->cwd[0] != '/';
  auto cwd = working_directory(config.workspace, spec->cwd,
                               (cwd_from_assistant || cwd_in_workspace) && !tool.cwd_outside_workspace);
  if (!cwd)
    return Error{fmt::format("{}: {}", tool.name, cwd.error())};
  spec->cwd = std::move(*cwd);
  if (answers.is_object() && !answers.as_object().empty()) {
    spec->answers = answers.dump();
    spec->env.push_back("JP_TOOL_ANSWERS=" + spec->answers);
  }
  // Secrets stay out of what a model can make a tool print: the provider's key
  // whatever its variable is called, and secret-looking names unless passed (by
  // runtime.pass_env only to tools no workspace's config shaped).
  if (!tool.from_workspace)
    spec->env_pass = config.runtime.pass_env;
  spec->env_pass.insert(spec->env_pass.end(), tool.pass_env.begin(), tool.pass_env.end());
  spec->env_drop = secret_variables(config);
  auto actions = declared_actions(tool);
  spec->stdin_pipe = stateful
                     && std::find(actions.begin(), actions.end(), action_kind::apply) != actions.end();
  spec->output_cap = config.runtime.output_cap_bytes;
  spec->grace_ms = static_cast<int64_t>(config.runtime.abort_grace_secs * 1000);
  spec->spill_dir = spill_dir(config);
  spec->spill_root = config.workspace;
  spec->spill_max_bytes = config.runtime.spill_max_bytes;
  spec->spill_budget_bytes = config.runtime.spill_budget_bytes;
  spec->limits = tightest(config.runtime.tool_limits, tool.limits);
  spec->daemons = config.runtime.daemons;
  if (tool.io == io_mode::pty)
    spec->pty = true;
  if (spec->pty) { // the tool's terminal, or the shell's `tty`
    spec->rows = tool.rows;
    spec->cols = tool.cols;
  } else if (tool.source == "local" && tool.node.empty() && !tool.env.count("GIT_EDITOR")) {
    // As the shell's: without a terminal, `git commit` (no -m) would wait for an
    // editor forever; with `true` git takes the message it has or stops. The
    // tool's own env may set another.
    spec->env.insert(spec->env.begin(), "GIT_EDITOR=true");
  }
  // fd 3 is open on the one-shot path too: its ToolState lines count as when stateful.
  if (tool.io == io_mode::control) {
    spec->control_channel = true;
    spec->stdin_pipe = true; // answers arrive on stdin
  }
  // Any io: the registry tells a handle that exits asking a configured question
  // from one that asks what nothing answers.
  for (auto& [id, answer] : tool.answers)
    spec->fixed_answers[id] = answer.dump();
  if (stateful)
    set_handle_settings(*spec, tool);
  return spec;
}

void set_handle_settings(LaunchSpec& spec, const ToolConfig& tool) {
  spec.notify_success = tool.notifications.on_success;
  spec.notify_failure = tool.notifications.on_failure;
  spec.notify_content = tool.notifications.on_content;
  spec.notify_waiting = tool.notifications.on_waiting;
  spec.prompt_pattern = tool.prompt_pattern;
  spec.settle_ms = tool.settle_ms;
  spec.wait_ms = default_wait_ms(tool);
  spec.child = tool.lifecycle;
}

Result<LaunchSpec> make_agent_launch_spec(const Config& config, const ToolConfig& tool, const Json& args,
                                          int parent_depth, bool stateful) {
  LaunchSpec spec;
  spec.tool = tool.name;
  spec.subagent = true;
  auto& a = spec.agent;
  a.depth = parent_depth + 1;
  a.blocking = !stateful;
  if (static_cast<uint64_t>(a.depth) > config.agents.max_depth)
    return Error{fmt::format("a sub-agent here would be {} levels deep, beyond the limit ([agents] max_depth = {}); "
                             "do the work yourself or hand it back to your parent",
                             a.depth, config.agents.max_depth)};
  auto text = [&](const char* key) {
    auto* v = args.find(key);
    return v && v->is_string() ? v->as_string() : std::string();
  };
  a.prompt = text("prompt");
  if (tool.name == foreach_tool_name) {
    a.foreach = true;
    if (auto* els = args.find("elements"); els && els->is_array())
      for (auto& e : els->as_array())
        a.elements.push_back(e.as_string());
    auto most = static_cast<int64_t>(config.agents.max_concurrent);
    a.max_concurrent = static_cast<int>(most);
    // A number, as models write it: 2.0 is 2 (it was ignored, and 8 ran at once).
    if (auto* m = args.find("max_concurrent"); m && m->is_number()) {
      auto n = m->as_number();
      if (n < 1 || n > static_cast<double>(most) || n != std::floor(n))
        return Error{fmt::format("`max_concurrent` is {}; it must be a whole number from 1 to {} ([agents] "
                                 "max_concurrent)",
                                 n, most)};
      a.max_concurrent = static_cast<int>(n);
    }
    if (a.prompt.find("{{element}}") == std::string::npos)
      return Error{"`prompt` has no {{element}}: each sub-agent would get the same task; put {{element}} where its "
                   "element goes"};
  }
  a.model = text("model");
  a.system_prompt = text("system_prompt");
  a.script = text("script");
  if (auto* tools = args.find("tools"); tools && tools->is_array()) {
    a.narrowed = true;
    for (auto& t : tools->as_array()) {
      auto& name = t.as_string();
      if (!config.tools.count(name) || name == yield_tool_name) {
        std::vector<std::string> names;
        for (auto& [n, _] : config.tools)
          if (n != yield_tool_name)
            names.push_back(n);
        return Error{fmt::format("`tools` names `{}`, which is not one of your tools ({}); a sub-agent's tools "
                                 "narrow yours",
                                 cut_text(name), fmt::join(names, ", "))};
      }
      a.tools.push_back(name);
    }
  }
  if (stateful) {
    spec.notify_success = tool.notifications.on_success;
    spec.notify_failure = tool.notifications.on_failure;
    spec.notify_content = tool.notifications.on_content;
    spec.notify_waiting = tool.notifications.on_waiting;
    spec.wait_ms = default_wait_ms(tool);
    spec.child = tool.lifecycle;
  }
  return spec;
}

} // namespace jp
