// From a tool call to what a handle starts: the argv (no shell unless the tool asks
// for one), cwd, environment, stdin and output limits.
#pragma once

#include "../config/config.hpp"
#include "../messages/json.hpp"
#include "../messages/launch_spec.hpp"
#include "../messages/result.hpp"
#include "../runtime/process/held_result.hpp"

namespace jp {

/// `args` are the tool's own parameters (no action/id); `answers` maps question ids
/// to answers (also passed as JP_TOOL_ANSWERS). `stateful` calls get a stdin pipe
/// when the tool declares `apply`.
Result<LaunchSpec> make_launch_spec(const Config& config, const ToolConfig& tool, const Json& args,
                                    const Json& answers, bool stateful);

/// What a handle of `tool` is given besides its run: its notifications, prompt
/// pattern, waits and turn-end policy (a spawn's, or a one-shot run that may go on
/// as a handle).
void set_handle_settings(LaunchSpec& spec, const ToolConfig& tool);

/// A sub-agent's spawn (the `agent` tool): its AgentSpec from `args`, one level below
/// `parent_depth` (0: a top-level agent). Refused, naming the limit or the tool, when
/// it would sit deeper than [agents] max_depth or asks for a tool its parent lacks.
Result<LaunchSpec> make_agent_launch_spec(const Config& config, const ToolConfig& tool, const Json& args,
                                          int parent_depth, bool stateful);

/// Where full outputs are spilled: <workspace>/<state_dir>/output.
std::string spill_dir(const Config& config);

/// What a sub-agent's answer and a foreach's results are held to: the output cap,
/// the whole spilled as a process's output is.
ResultHold result_hold(const Config& config);

} // namespace jp
