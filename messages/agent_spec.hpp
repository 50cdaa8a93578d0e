// What a sub-agent handle is started with (DESIGN.md "Sub-agents"): the `agent`
// tool's arguments, and how deep it sits. Plain data, carried in a LaunchSpec so the
// registry starts a sub-agent as it starts any handle.
#pragma once

#include <string>
#include <vector>

namespace jp {

struct AgentSpec {
  std::string prompt;               // its first user message
  // The parent's tools it may use, when `narrowed` (an empty list: none); else all.
  bool narrowed = false;
  std::vector<std::string> tools;
  std::string model;                // "": the parent's
  std::string system_prompt;        // "": the parent's
  std::string script;               // a script's [[subagents]] entry ("": none)
  int depth = 1;                    // 1: spawned by a top-level agent
  // `foreach`: one sub-agent per element, {{element}} in `prompt` replaced by it, at
  // most max_concurrent at a time.
  bool foreach = false;
  std::vector<std::string> elements;
  int max_concurrent = 0;
  std::string element;   // a foreach's sub-agent: its element
  int element_index = -1; // and the element's index
  // Called without `action`: its caller waits for its result, and nobody can apply
  // to its handle (nor to a foreach's sub-agents then).
  bool blocking = false;
  friend bool operator==(const AgentSpec&, const AgentSpec&) = default;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, AgentSpec& x) {
  return f(x.prompt, x.narrowed, x.tools, x.model, x.system_prompt, x.script, x.depth, x.foreach, x.elements, x.max_concurrent,
           x.element, x.element_index, x.blocking);
}

} // namespace jp
