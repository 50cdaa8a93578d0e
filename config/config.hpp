// The configuration as plain data (DESIGN.md "Configuration"). config_loader.hpp
// builds it from TOML: built-in defaults -> $XDG_CONFIG_HOME/jp-actors/config.toml ->
// <workspace>/.jp/config.toml -> --config FILE -> --cfg key=value.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <optional>
#include <string>
#include <vector>

#include "../messages/child_spec.hpp"
#include "../messages/json.hpp"
#include "../messages/tool_limits.hpp"
#include "../messages/tool_state.hpp"

namespace jp {

/// How requests to the provider are made ([assistant.request]).
struct RequestConfig {
  int64_t max_retries = 5;
  int64_t base_backoff_ms = 1000;
  double max_backoff_secs = 60;
  // A stream quiet this long is retried; < 0: by the model (idle_timeout_for).
  double idle_timeout_secs = -1;
  uint64_t max_response_bytes = 64u << 20; // a larger response is an error
};

struct AssistantConfig {
  std::string provider = "scripted"; // scripted | openai | anthropic
  std::string model;
  std::string base_url;
  std::string api_key_env;   // "" = OPENAI_API_KEY / ANTHROPIC_API_KEY
  // openai only: sent as the query's api-version (Azure OpenAI's deployment URLs,
  // .../openai/deployments/NAME, need one); "" = none.
  std::string api_version;
  std::string system_prompt;
  // The model for the turn-end inquiry and tools' questions to the assistant ("" =
  // `model`): a cheaper one will do.
  std::string inquiry_model;
  std::string script;        // provider = "scripted": the script whose first agent answers
  // The most tokens a response may have (0: not sent, the model's own limit). Sent to
  // OpenAI's reasoning models as max_completion_tokens, to others as max_tokens
  // (openai_format.hpp). Anthropic requires one: 0 sends 4096 there. Not sent by
  // default: a reasoning model spends a limit on hidden reasoning first.
  int64_t max_tokens = 0;
  // A tool's images (an MCP tool's screenshot) go to the model with its result;
  // false for a model that takes no images (the provider would refuse the request).
  bool images = true;
  RequestConfig request;

  /// The variables that hold the provider's key, kept from every child's environment
  /// (tools and MCP servers) whatever they are called.
  std::vector<std::string> key_variables() const {
    std::vector<std::string> names{"OPENAI_API_KEY", "ANTHROPIC_API_KEY"};
    if (!api_key_env.empty())
      names.push_back(api_key_env);
    return names;
  }
};

/// One parameter of a tool (a JSON-schema property).
// Built with designated initializers in code ({.name = "x", .type = "number"}): every
// member has an initializer, so those left out raise no -Wextra warning.
struct ParameterConfig {
  std::string name{};
  std::string type = "string"; // string | integer | number | boolean | array | object
  std::string description{};
  bool required = false;
  std::vector<std::string> enum_values{}; // "enum" in TOML
  std::string items_type{};                // for arrays: "string", ...
  Json default_value{};                    // null = none
  bool spawn_only = false;               // a handle's (the shell's tty): refused without `action`
  // An MCP server's own schema of it, declared as it came where the dialect takes
  // any JSON Schema (nested objects, unions, enums of any type survive); null for
  // a config's parameters. The fields above are what jp-actors checks and what
  // gemini's subset gets.
  Json declared_schema{};
  // An MCP server's own name of it where that is not one the services take (`name`
  // is then made to fit); its arguments go to the server by this name. "" = `name`.
  std::string declared_name{};
};

enum class run_mode : uint8_t { ask, unattended, skip };
// control: pipe, plus fd 3 where the tool writes ToolState JSON lines (DESIGN.md)
enum class io_mode : uint8_t { pipe, pty, control };

struct NotificationConfig {
  bool on_success = true;
  bool on_failure = true;
  bool on_waiting = true;
  bool on_content = false;
  friend bool operator==(const NotificationConfig&, const NotificationConfig&) = default;
};

struct ToolConfig {
  std::string name;
  std::string source = "local";   // local | builtin
  std::string summary;            // one line
  std::string description;        // longer text, optional
  std::string input_description;  // what apply's `input` is ("" = as its io takes it)
  // local tools: argv templates ({{tool.arguments.x}}, {{tool.answers.y}})
  std::string program;
  std::vector<std::string> args;
  bool shell = false;             // `program args...` as a bash -c script; values as "$N"
  std::string cwd;                // template too; "" = workspace
  // A cwd from the assistant (templated, or the built-in shell's), or a relative one
  // here (through the workspace's links), may leave the workspace.
  bool cwd_outside_workspace = false;
  std::map<std::string, std::string> env; // values are templates
  std::vector<std::string> pass_env;       // secret-looking variables it inherits anyway
  // A workspace's config defined or changed it: runtime.pass_env does not reach it
  // (a repository's program must not get the secrets you pass your own tools).
  bool from_workspace = false;
  // The workspace's config defined it or set any of its keys (yours or built in: its
  // description, when it asks): over MCP it asks, on a node it is refused, unless
  // --allow names it (a repository's text reaches the model as the tool's).
  bool shaped_by_workspace = false;
  std::string origin; // the config source that last set its command, cwd or env ("" in code)
  run_mode run = run_mode::ask;
  io_mode io = io_mode::pipe;
  std::vector<ParameterConfig> parameters;
  std::vector<std::string> one_of_required; // at least one of these must be given
  // What an MCP server's schema takes besides its properties, as it declared it
  // ({"additionalProperties": .., "patternProperties": ..}); null: a key no parameter
  // names is refused (a model's typo).
  Json extra_keys;
  // [spawn]
  bool stateful = false;
  std::vector<action_kind> actions; // declared stateful actions (empty = all four)
  NotificationConfig notifications;
  ChildSpec lifecycle = {turn_end_policy::inquire}; // [spawn.lifecycle]
  // [spawn.permissions] <action> = "ask" | "unattended" | "skip": overrides, per
  // action, that spawn follows `run` and fetch/apply/abort run unattended.
  std::map<action_kind, run_mode> action_permissions;
  // [questions.<id>] answer = <json value>
  std::map<std::string, Json> answers;
  // [questions.<id>] target = "user" (default) | "assistant": who answers it when
  // no fixed answer is configured.
  std::map<std::string, std::string> question_targets;
  // Interactive sessions. A pty's size; a regex (ECMAScript) that the last line of
  // output matches when the tool waits for input (any io); how long spawn, fetch and
  // apply wait by default for output to settle (-1: 1000 ms for a pty, else 0); and
  // how long output must be quiet to count as settled (0: a wait ends at the first
  // new output).
  int rows = 24;
  int cols = 80;
  std::string prompt_pattern;
  int64_t wait_ms = -1;
  int64_t settle_ms = 100;
  // A call without `action` still running after this long goes on as a handle (the
  // call answers with its id and output so far) instead of holding the turn up: a
  // model that runs a server or a watcher one-shot. 0: never; -1: the tool's default
  // (background_after_secs()). Only a stateful pipe tool here that can be fetched
  // and aborted may set it.
  double background_after_secs = -1;
  // What its processes may use ([conversation.tools.NAME.limits]), within
  // runtime.tool_limits: the lower of the two where both set one.
  ToolLimits limits;
  // Runs on this configured node ([nodes.NAME]) instead of here ("": here). The node
  // runs its own configuration's tool of the same name; only the call's arguments
  // are sent.
  std::string node;
};

/// The permission a call of `tool` runs under (`action` empty: a one-shot call): spawn
/// and one-shot calls follow `run`, fetch/apply/abort run unattended, and
/// [spawn.permissions] overrides either per action.
inline run_mode permission_mode(const ToolConfig& tool, std::optional<action_kind> action) {
  if (!action)
    return tool.run;
  if (auto it = tool.action_permissions.find(*action); it != tool.action_permissions.end())
    return it->second;
  return *action == action_kind::spawn ? tool.run : run_mode::unattended;
}

/// Limits of the runtime itself ([runtime] table).
struct RuntimeConfig {
  uint64_t output_cap_bytes = 32 * 1024; // per response, head/tail cut beyond
  uint64_t response_cap_bytes = 64 * 1024; // a whole await response; each result keeps its tail
  uint64_t spill_max_bytes = 64ull << 20;   // one spill file: head and tail kept beyond
  uint64_t spill_budget_bytes = 512ull << 20; // all spill files of a workspace: oldest removed first
  double abort_grace_secs = 2.0;         // SIGTERM -> SIGKILL
  std::string state_dir = ".jp";         // relative to the workspace
  // Threads running actors; 0 (not set): chosen by the machine's cores
  // (worker_threads_for_cores, measured in bench/README.md "Worker threads").
  uint64_t worker_threads = 0;
  // How long the io thread polls for the next child event before it sleeps, in µs;
  // -1 (not set): chosen by the machine's cores (io_poll_us_for_cores).
  int64_t io_poll_us = -1;
  // Variables tools inherit even though their names look secret (*_TOKEN, ...).
  std::vector<std::string> pass_env;
  // What a tool starts on purpose to outlive it (a build's server: Gradle's daemon,
  // Bazel's): a process that left the tool's group with one of these as an argument
  // (or an argument's last part) is left running at the tool's exit and abort, with
  // what it started, and ended with jp-actors (runtime/process/kept_daemons.hpp).
  std::vector<std::string> daemons;
  // What every tool's processes may use ([runtime.tool_limits]; none set: ours).
  ToolLimits tool_limits;
};

/// Limits of sub-agents ([agents] table; DESIGN.md "Sub-agents").
struct AgentsConfig {
  uint64_t max_depth = 3;      // a sub-agent of a sub-agent ... at most this deep
  uint64_t max_concurrent = 8; // live sub-agents of one parent
  uint64_t max_live = 64;      // live sub-agents under one top-level agent, at every depth
  uint64_t max_rounds = 50;    // assistant responses in one sub-agent turn
};

/// Mutual TLS of a node or of a client of one: PEM files. Empty: none.
struct TlsConfig {
  std::string certificate;
  std::string key;
  std::string ca;
  bool enabled() const { return !certificate.empty() || !key.empty() || !ca.empty(); }
};

/// A node this runtime's tools may run on ([nodes.NAME]).
struct NodeConfig {
  std::string name;
  std::string address; // host:port
  TlsConfig tls;
};

/// What `jp-actors node` serves ([node]).
struct NodeServerConfig {
  std::string listen = "127.0.0.1:0"; // host:port (port 0: any free one)
  TlsConfig tls;
  // Connections are watched: a peer silent this long is lost (its handles end).
  double heartbeat_secs = 1;
  double timeout_secs = 5;
};

/// An MCP server whose tools this runtime offers ([mcp.servers.NAME]; DESIGN.md
/// "MCP"): its tools appear as NAME__tool.
struct McpServerConfig {
  std::string name;
  std::vector<std::string> command;       // stdio: the server's program and arguments
  std::map<std::string, std::string> env; // added to its environment (secrets are not inherited)
  // Where its process starts: "" = a directory of its own (mcp_server_directory), a
  // relative one in the workspace, an absolute one as it is.
  std::string cwd;
  std::string url;                        // or Streamable HTTP: its endpoint, http(s)://...
  std::map<std::string, std::string> headers; // sent with each request to `url` (e.g. Authorization)
  // How `url` is spoken to: "http" (Streamable HTTP, 2025-06-18) or "sse" (the legacy
  // HTTP+SSE transport of 2024-11-05: `url` is its event stream, which names where to POST).
  std::string transport = "http";
  double start_timeout_secs = 120;        // for its start (initialize, tools/list): npx/uvx may download it first
  double timeout_secs = 300;              // for each call, without an answer or progress
  run_mode run = run_mode::ask;           // its tools' permission, as a tool's `run`
  bool stateful = false;                  // its tools take spawn/fetch/abort (a call as a handle)
  std::map<std::string, bool> tool_stateful; // [mcp.servers.NAME.tools.TOOL] stateful, by the server's name
  std::set<std::string> tools_off;           // [mcp.servers.NAME.tools.TOOL] enabled = false: not offered
  // [mcp.servers.NAME.limits]: a stdio server's process and all it starts, within
  // runtime.tool_limits (the lower of each, as for a tool: start_mcp_tools).
  ToolLimits limits;
};

/// How the CLI shows what it shows ([style]).
struct StyleConfig {
  // The model's reasoning, where the provider streams it: "show" (dimmed, before
  // the answer, on a terminal) or "hide". Never part of the answer or the history.
  std::string reasoning = "show";
};

struct Config {
  AssistantConfig assistant;
  StyleConfig style;
  RuntimeConfig runtime;
  AgentsConfig agents;
  std::map<std::string, ToolConfig> tools; // by name; includes the built-ins
  std::map<std::string, NodeConfig> nodes; // by name ([nodes.NAME])
  NodeServerConfig node;                   // [node]: when this runtime is a node
  std::map<std::string, McpServerConfig> mcp_servers; // by name ([mcp.servers.NAME])
  std::string workspace;                   // absolute path
  // The workspace's .jp/config.toml (someone's repository), when it has one: a digest
  // of its text and what it set (workspace_sets.hpp), for the note a run gives when
  // the file is new or changed since the user was last told of it.
  struct WorkspaceLayer {
    std::string digest;
    std::vector<std::string> sets;
  };
  std::optional<WorkspaceLayer> workspace_layer;
};

std::string_view to_string(run_mode);
std::string_view to_string(io_mode);

/// Whether some tool runs on a node: then the runtime loads CAF's networking.
bool uses_nodes(const Config& config);

/// The TLS settings this process connects to nodes with: those of the nodes its
/// tools use (none: plain transport). One process has one identity, so the nodes
/// that have TLS must agree on it (check_node_tls).
const TlsConfig* client_tls(const Config& config);

/// Why the TLS settings of `where` cannot be used ("" = they can): all three of
/// certificate, key and ca, as OpenSSL loads them (config/tls_files.hpp); and one
/// client identity.
std::string check_tls(const TlsConfig& tls, const std::string& where);
std::string check_node_tls(const Config& config);

/// How long spawn, fetch and apply of `tool` wait for output to settle unless told.
int64_t default_wait_ms(const ToolConfig& tool);
/// Whether a call of `tool` without `action` can go on as a handle: one the
/// assistant can fetch and abort (stateful, those actions declared), run here on a pipe.
bool can_go_on_as_handle(const ToolConfig& tool);
/// How long a call of `tool` without `action` runs before it goes on as a handle (0:
/// it never does): its background_after_secs, or by default 120 for the built-in
/// shell while it can go on as one (its actions narrowed to no fetch or abort: never).
double background_after_secs(const ToolConfig& tool);

/// runtime.worker_threads when not set: one thread per four cores, from 1 to 4.
/// One keeps a tool call's messages on one thread (latency, W5); more spawn and
/// start sub-agents in parallel, up to 4 (bench/README.md "Worker threads").
size_t worker_threads_for_cores(unsigned cores);

/// runtime.io_poll_us when not set: 0 (sleep at once) below 8 cores, where a polling
/// io thread takes a core the tools need; else 100 µs, which keeps a round trip
/// with a tool (apply, then its echo) off the kernel's wake-up path
/// (bench/README.md "The io thread polls").
int64_t io_poll_us_for_cores(unsigned cores);

/// How long the io thread polls (runtime.io_poll_us, or by the cores when not set).
std::chrono::microseconds io_poll(const RuntimeConfig& runtime);

/// The scheduler threads runtime.worker_threads = `configured` asks for here (0: by
/// the cores this process may use). RuntimeActorConfig applies it.
size_t worker_threads(uint64_t configured);

/// <workspace>/<runtime.state_dir>/<sub> (state_dir may also be absolute).
std::string state_path(const Config& config, std::string_view sub);

} // namespace jp
