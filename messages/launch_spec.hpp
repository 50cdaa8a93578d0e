// What a handle needs to start its tool: resolved argv and limits. Plain data so a
// registry on another node can be asked to start it.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "agent_spec.hpp"
#include "child_spec.hpp"
#include "tool_limits.hpp"
#include "tool_state.hpp"

namespace jp {

/// The longest an assistant may ask spawn, fetch or apply to wait (wait_ms).
inline constexpr int64_t kMaxWaitMs = 60000;

struct LaunchSpec {
  std::string tool;               // tool name, for reports and turn-end events
  std::string node;               // the configured node it runs on ("" = here)
  std::string arguments = "{}";   // the call's own parameters (JSON text): what an
                                  // executor other than a process is given
  std::vector<std::string> argv;  // argv[0] looked up in PATH when it has no '/'
  std::string cwd;                // "" = inherit
  std::vector<std::string> env;   // "KEY=VALUE" overrides
  // Inherited variables: secret-looking ones are left out unless named in env_pass;
  // env_drop (the provider's key variable) is left out whatever its name.
  std::vector<std::string> env_pass;
  std::vector<std::string> env_drop;
  bool stdin_pipe = false;        // apply writes here; otherwise stdin is /dev/null
  bool control_channel = false;   // io = "control": ToolState lines on fd 3, answers on stdin
  bool pty = false;               // io = "pty": a terminal of rows x cols (stdin_pipe too)
  int rows = 24;
  int cols = 80;
  std::string prompt_pattern;     // regex on the last output line: waiting for input
  int64_t wait_ms = 0;            // spawn/fetch/apply wait this long by default ...
  int64_t settle_ms = 100;        // ... for output to be quiet this long
  // questions.<id>.answer from config (JSON text by question id): a control-channel
  // question with one is answered at once instead of waiting; a handle that exits
  // asking one is not told to configure it.
  std::map<std::string, std::string> fixed_answers;
  // The answers a one-shot call has so far (JSON object text, "" none): a node's tool
  // gets them with its node's own (the node runs it; its env is the node's to make).
  std::string answers;
  bool structured_output = false; // read stdout as Outcome/ToolState JSON at exit
  uint64_t output_cap = 32 * 1024;
  int64_t grace_ms = 2000;        // abort: SIGTERM -> SIGKILL
  std::string spill_dir;          // where the full output goes when the cap cuts it
  std::string spill_root;         // spill_dir is below it (the workspace): trusted as it is,
                                  // while no link below it is followed ("" = spill_dir)
  uint64_t spill_max_bytes = 64ull << 20;     // one spill file: head and tail kept beyond
  uint64_t spill_budget_bytes = 512ull << 20; // all of spill_dir: the oldest files go first
  ToolLimits limits;              // what its processes may use (runtime.tool_limits and
                                  // the tool's own limits, the lower of each)
  std::vector<std::string> daemons; // runtime.daemons: what may outlive it (SpawnSpec::daemons)
  // Notifications while nobody fetches or awaits it ([spawn.notifications]).
  bool notify_success = false;
  bool notify_failure = false;
  bool notify_content = false;
  bool notify_waiting = false;
  ChildSpec child; // what the registry does with it at turn end ([spawn.lifecycle])
  // A sub-agent instead of a process (argv empty): the `agent` tool's spawn.
  bool subagent = false;
  AgentSpec agent;
  friend bool operator==(const LaunchSpec&, const LaunchSpec&) = default;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, LaunchSpec& x) {
  return f(x.tool, x.node, x.arguments, x.argv, x.cwd, x.env, x.env_pass, x.env_drop, x.stdin_pipe, x.control_channel, x.pty, x.rows, x.cols,
           x.prompt_pattern, x.wait_ms, x.settle_ms, x.fixed_answers, x.answers,
           x.structured_output,
           x.output_cap, x.grace_ms, x.spill_dir, x.spill_root, x.spill_max_bytes, x.spill_budget_bytes, x.limits, x.daemons, x.notify_success, x.notify_failure,
           x.notify_content, x.notify_waiting, x.child, x.subagent, x.agent);
}

/// Whether a one-shot run's question is answered while it runs (the answer sent to
/// the running tool), rather than by running it again with the answer once it exited
/// asking (needs_input): a control tool's, and a node's tool's, whose io is the
/// node's config's to say.
inline bool answered_while_running(const LaunchSpec& spec) {
  return spec.control_channel || !spec.node.empty();
}

} // namespace jp
