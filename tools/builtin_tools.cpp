#include "tools/builtin_tools.hpp"

#include <algorithm>
#include <filesystem>
#include <fmt/format.h>
#include <string_view>
#include <system_error>

#include "tools/schema.hpp"

namespace jp {

namespace {

ParameterConfig parameter(std::string name, std::string type, std::string description,
                          bool required = false) {
  ParameterConfig p;
  p.name = std::move(name);
  p.type = std::move(type);
  p.description = std::move(description);
  p.required = required;
  return p;
}

ParameterConfig string_array(std::string name, std::string description) {
  auto p = parameter(std::move(name), "array", std::move(description));
  p.items_type = "string";
  return p;
}

ToolConfig builtin(std::string name, std::string summary) {
  ToolConfig t;
  t.name = std::move(name);
  t.source = "builtin";
  t.summary = std::move(summary);
  // Built-ins only touch the runtime's own state or run what the assistant asked
  // for explicitly; a user who wants prompts sets run = "ask" in their config.
  t.run = run_mode::unattended;
  return t;
}

/// The shell's description as `t` has it: a handle's actions (those it offers; typed
/// on a terminal), or a run to its end alone. A config that makes the shell one-shot,
/// a terminal's or with fewer actions changes what the model must be told.
std::string shell_description(const ToolConfig& t) {
  constexpr std::string_view runs = "Runs `command` with `bash -c` in the workspace (or `cwd`)";
  if (!t.stateful)
    return fmt::format("{} to its end and returns its output.", runs);
  bool terminal = t.io == io_mode::pty;
  auto text = fmt::format("{}{} as a background handle that you drive with `action`:\n", runs,
                          terminal ? " on a terminal of its own" : "");
  auto actions = declared_actions(t);
  for (auto a : actions)
    switch (a) {
      case action_kind::spawn:
        text += "- spawn: start it under a handle `id` you choose (unique among live handles); returns as soon as "
                "it stops (with its result) or its output settles, waiting at most `wait_ms`.\n";
        break;
      case action_kind::fetch:
        text += "- fetch: the state (running | waiting | stopped with result or error) and the output produced "
                "since your last look.\n";
        break;
      case action_kind::apply:
        text += terminal ? "- apply: type `input` on its terminal (\"\\n\" is Enter, \"\\u0003\" Ctrl-C, \"\\u0004\" "
                           "Ctrl-D).\n"
                         : "- apply: write `input` to the command's stdin (end lines with \"\\n\"; end with "
                           "\"\\u0004\" (Ctrl-D) to close its stdin: end of input; \"\\u0003\" (Ctrl-C) interrupts "
                           "it).\n";
        break;
      case action_kind::abort:
        text += "- abort: stop the command and its children.\n";
        break;
    }
  bool fetched = std::find(actions.begin(), actions.end(), action_kind::fetch) != actions.end();
  text += fetched ? "Use the `await` tool to wait for handles instead of polling with fetch."
                  : "Use the `await` tool to wait for handles.";
  text += runs_without_action(t) ? " Without `action` the command runs to its end and you get its output."
                                 : " Every call names its `action`: on a terminal a command may wait for input "
                                   "forever, so it runs only as a handle.";
  return text;
}

ToolConfig shell_tool() {
  auto t = builtin("shell", "Run a shell command");
  // How long such a call runs before it goes on as a handle is the config's: the
  // schema says it (background_note).
  t.parameters = {
      parameter("command", "string", "Shell command, run with bash -c", true),
      parameter("cwd", "string", "Working directory, relative to the workspace and inside it"),
      parameter("env", "object", "Extra environment variables (name -> string value)"),
      parameter("tty", "boolean",
                "Run it on a terminal of its own, for a program that needs one "
                "(a password prompt, a full-screen program, a REPL's line editing). Its output is "
                "then the terminal's text, and `input` is typed: \\n is Enter, \\u0003 Ctrl-C, "
                "\\u0004 Ctrl-D; fetch or apply with \"screen\": true also returns its screen."),
  };
  t.parameters.back().spawn_only = true; // tty: only a handle can type into it
  t.stateful = true;
  t.actions = {action_kind::spawn, action_kind::fetch, action_kind::apply,
               action_kind::abort};
  t.description = shell_description(t);
  // Most commands are short: spawn (and fetch, apply) wait up to a second for them to
  // stop or for their output to settle, so `echo hi` answers in one call.
  t.wait_ms = 1000;
  // A generic shell has no useful partial result to inquire about at turn end
  // (DESIGN.md's turn_end example shows shell handles aborted).
  t.lifecycle.on_turn_end = turn_end_policy::abort;
  return t;
}

ToolConfig await_tool() {
  // Texts from RFD 037 "Schema"; timeout_secs is a number (DESIGN.md: fractions).
  auto t = builtin("await", "Block until stateful tool handles reach completion");
  t.description =
      "Block until stateful tool handles reach completion. Use `any` to wait for the "
      "first handle to finish, `all` to wait for every handle to finish, or both to "
      "combine conditions (both must hold: one of `any` and every one of `all` "
      "finished). A handle that waits for input only you can give (a prompt, "
      "a question) returns the await at once: it is listed in `pending` as `waiting` "
      "with its question; answer it with `apply`, then await again.";
  t.parameters = {
      string_array("any", "Handle IDs. Returns when at least one of these handles "
                          "reaches 'stopped'."),
      string_array("all", "Handle IDs. Returns when every one of these handles "
                          "reaches 'stopped'."),
      parameter("timeout_secs", "number",
                "Maximum seconds to wait. If exceeded, returns with current handle "
                "states. Omit for no timeout."),
  };
  t.one_of_required = {"any", "all"};
  return t;
}

ToolConfig agent_tool() {
  auto t = builtin(agent_tool_name, "Run a sub-agent: an assistant of its own on a task you give it");
  t.description =
      "Starts a sub-agent: an assistant with its own turn and handles, in this workspace, "
      "working on `prompt`. Without `action` the call blocks and returns its result. As a "
      "handle you drive with `action`:\n"
      "- spawn: start it under a handle `id` you choose; returns at once.\n"
      "- fetch: what it said since your last look, and its progress.\n"
      "- apply: send it `input`: its next message (queued while it works).\n"
      "- abort: end its turn and everything it started.\n"
      "Its result is what it hands back with yield_to_parent, else its final answer. "
      "Use `await` to wait for sub-agents and other handles together.";
  t.parameters = {
      parameter("prompt", "string", "The task: the sub-agent's first message", true),
      string_array("tools", "Names of the tools it may use (a subset of yours; await comes with any); [] for none, omit for all of yours"),
      parameter("model", "string", "Model to use instead of yours"),
      parameter("system_prompt", "string", "System prompt instead of yours"),
      parameter("script", "string", "In a scripted run: the [[subagents]] entry it plays"),
  };
  t.input_description = "Its next message (queued while it works), or the answer to the question it waits on.";
  t.stateful = true;
  t.actions = {action_kind::spawn, action_kind::fetch, action_kind::apply, action_kind::abort};
  t.wait_ms = 0;
  t.lifecycle.on_turn_end = turn_end_policy::abort;
  return t;
}

ToolConfig foreach_tool() {
  auto t = builtin(foreach_tool_name, "Run one sub-agent per element of a list, a few at a time");
  t.description =
      "Starts one sub-agent per element of `elements`, each with `prompt` where {{element}} "
      "is replaced by its element, at most `max_concurrent` at a time. Without `action` the "
      "call blocks. As a handle: spawn answers at once; fetch shows each element's progress; "
      "when a sub-agent waits on a question, the handle waits on it (its text names the "
      "element) and apply answers it with `input`; abort ends them all. Its result is a "
      "JSON array in element order of {element, result} or {element, error}.";
  t.parameters = {
      string_array("elements", "The elements, one sub-agent each"),
      parameter("prompt", "string", "The task for each element; {{element}} is replaced by it", true),
      parameter("max_concurrent", "integer", "How many run at once (default and most: [agents] max_concurrent)"),
      string_array("tools", "Names of the tools they may use (a subset of yours; await comes with any); [] for none, omit for all of yours"),
      parameter("model", "string", "Model to use instead of yours"),
      parameter("script", "string", "In a scripted run: the [[subagents]] entry each plays"),
  };
  t.input_description =
    "The answer to the question one of its sub-agents waits on (the handle's question names the element).";
  t.parameters[0].required = true;
  t.stateful = true;
  t.actions = {action_kind::spawn, action_kind::fetch, action_kind::apply, action_kind::abort};
  t.wait_ms = 0;
  t.lifecycle.on_turn_end = turn_end_policy::abort;
  return t;
}

ToolConfig describe_tools_tool() {
  auto t = builtin("describe_tools", "Describe tools in detail");
  t.description = "Returns the full description and parameters of the named tools.";
  t.parameters = {
      string_array("tools", "Names of the tools to describe; omit for all tools."),
  };
  return t;
}

std::string current_directory() {
  std::error_code ec;
  auto cwd = std::filesystem::current_path(ec);
  return ec ? std::string(".") : cwd.string();
}

} // namespace

ToolConfig yield_to_parent_tool() {
  auto t = builtin(yield_tool_name, "Hand your result to the agent that started you, ending your turn");
  t.description = "Ends your turn: `result` goes to the agent that started you as your result.";
  t.parameters = {parameter("result", "string", "Your result, as your parent should read it", true)};
  return t;
}

std::string described_as_configured(const ToolConfig& t) {
  static const std::string built_in = shell_tool().description;
  if (t.source == "builtin" && t.name == "shell" && t.description == built_in)
    return shell_description(t);
  return t.description;
}

Config default_config() {
  Config c;
  for (auto t : {shell_tool(), await_tool(), agent_tool(), foreach_tool(), describe_tools_tool()})
    c.tools.emplace(t.name, std::move(t));
  c.workspace = current_directory();
  return c;
}

} // namespace jp
