// A scripted experiment (DESIGN.md "Scripts"): agents, each a list of steps; a step
// is one assistant response = one batch of tool calls.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "../../messages/child_spec.hpp"
#include "../../messages/json.hpp"
#include "../../messages/result.hpp"

namespace jp {

struct ScriptCall {
  std::string tool;
  Json arguments; // object
};

struct ScriptStep {
  std::string text;
  std::vector<ScriptCall> calls;
  // A step without calls answers with its text (and the narration before it),
  // ending the turn; what the agent says next (to a sub-agent's apply, or after a
  // turn end that waited for handles) plays the steps after it.
  bool end_turn = false;
};

struct ScriptAgent {
  std::string name;
  std::vector<ScriptStep> steps;
  // [agents.on_turn_end]: the answers to the turn-end inquiry, handle id -> "wait" |
  // "abort" (for handles whose tool says on_turn_end = "inquire").
  InquiryAnswers on_turn_end;
  // [agents.questions]: the assistant's answers to tools' questions whose target is
  // "assistant", question id -> answer (any TOML value, as JSON).
  std::map<std::string, Json> questions;
};

struct Script {
  static constexpr int max_repeat = 1000;
  std::string name;
  // [experiment] repeat: how many times the agents run, one after the other (the
  // report gives each figure's min, median and max).
  int repeat = 1;
  // [experiment] shared_registry: the top-level agents see each other's handles
  // (await and fetch reach another agent's; apply and abort stay with its owner).
  bool shared_registry = false;
  std::vector<ScriptAgent> agents;
  // [[subagents]]: played only by a sub-agent spawned with script = NAME; {{prompt}}
  // (and a foreach's {{element}}) in their texts and arguments are what it was
  // spawned with.
  std::vector<ScriptAgent> subagents;
};

struct Config;

/// Every call's tool is one `config` offers: a sub-agent's also `yield_to_parent`. A typo is refused before anything runs
/// rather than failing its call at run time in a run that exits 0. A name of a
/// configured MCP server's form (SERVER__tool) is left to run time. Every answer of
/// [agents.questions] is to a question a tool routes to the assistant.
Status check_script_tools(const Script& script, const Config& config, const std::string& origin);

/// Subagent `name` of `script` with {{prompt}} replaced by `prompt`, and {{element}}
/// by `element` (a foreach's; "" otherwise), in its steps' texts and string
/// arguments; or why there is none (naming those there are).
Result<ScriptAgent> scripted_subagent(const Script& script, const std::string& name, const std::string& prompt,
                                      const std::string& element = "");

/// Reads a script file; errors name the file, the key and what was expected.
Result<Script> load_script(const std::string& path);
Result<Script> parse_script(std::string_view toml_text, std::string_view origin);

} // namespace jp
