// A turn: owns the registry of its handles and turns each tool call into protocol
// messages -- one-shot wrapping, stateful dispatch, `await`, `describe_tools`.
// Its interface is turn_actor (actors/interfaces.hpp):
//   (batch_atom, vector<string> spawn_ids) -> bool       pre-register a batch's spawns
//   (call_atom, tool, args_json)           -> CallResult  tool "": a fetch, apply or
//        abort through the tool handle `id` was spawned with (a program's look)
//   (call_atom, tool, args_json, tag)      -> CallResult  the same, tagged by its caller
//   (abort_atom, tag)                      -> void   ends the tagged call's one-shot run
//        and aborts the handle it spawned (not one it fetches, applies to or
//        aborts), or keeps it from starting; its answer says how it ended
//   (retire_atom, tag)                     -> void   the tagged call was answered: an abort
//        of the tag that came after its answer is forgotten (the tag may be used again)
//   (list_atom)                            -> vector<HandleSummary>  handles still running
//   (user_abort_atom, id)                  -> HandleReport  a person aborts a handle
//        (`handles abort`, from another terminal): as the assistant's abort would
//   (counts_atom)                          -> HandleCounts  its registry's
//   (turn_end_atom)                        -> vector<HandleSummary>, failure
//        every handle ended, and why the turn-end inquiry failed ("": it did not)
//   (pending_atom)                         -> vector<Notification>  not yet carried
//   (abort_all_atom)                       -> void   interrupted: end every handle now
//   (notify_atom, Notification)            -> void   from its registry
// Exiting the turn takes its registry, and so every handle, with it.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "interfaces.hpp"
#include "registry_actor.hpp"
#include "tool_set.hpp"
#include "../config/config.hpp"
#include "../messages/chat.hpp"
#include "../messages/json.hpp"
#include "../tools/permission.hpp"

namespace jp {

class IoThread;
class RegistryDirectory;

/// Asks a person to answer a tool's question; nullopt = no answer (cancelled).
/// Called on a detached actor: it may block.
using AskUser = std::function<std::optional<Json>(const std::string& tool, const Question&)>;

/// The turn-end inquiry (RFD 037 "inquire"): given the outstanding handles whose
/// tools say inquire, an answer per id (wait or abort); or why there is none.
/// Scripts answer from [agents.on_turn_end]; with a provider, the assistant does.
/// Called on a detached actor: it may block.
using TurnEndInquiry = std::function<Result<InquiryAnswers>(const std::vector<HandleSummary>& outstanding)>;

struct TurnContext {
  std::shared_ptr<const Config> config;
  IoThread* io = nullptr;
  AskUser ask_user; // empty: nobody to ask (no TTY)
  PermissionPolicy permissions;
  AskPermission ask_permission; // empty: nobody to ask; calls that need asking are refused
  TurnEndInquiry inquire;       // empty: nobody to ask; inquire handles are aborted
  // Answers questions whose target is "assistant" (a script's [agents.questions];
  // an LLM backend with the provider). nullopt: no answer.
  AskUser ask_assistant;
  // Starts the sub-agents of the `agent` tool (empty: none can run here), and how
  // deep this agent sits (0: top-level).
  HandleFactory subagents;
  int depth = 0;
  // Who runs a tool's handles instead of a process, by tool name (function tools, an
  // embedder's own executors).
  std::map<std::string, HandleFactory> executors;
  // The tools on offer as they change (an MCP server's list_changed): read before
  // each call, and replacing `config` and `executors` where they differ. Empty:
  // `config` for the turn's life.
  ToolsNow tools_now;
  // [experiment] shared_registry: the registries of the agents that share, and this
  // agent's name there (none: its handles are its own alone).
  std::shared_ptr<RegistryDirectory> shared_registry;
  std::string agent;
};

turn_actor spawn_turn(caf::actor_system& sys, TurnContext ctx);

/// The ids a batch of calls spawns: calls of a stateful tool whose arguments say
/// action = "spawn" (`calls` and `call_arguments` side by side).
std::vector<std::string> spawn_ids_of(const Config& config, const std::vector<ToolCall>& calls,
                                      const std::vector<Json>& call_arguments);

/// Whether `tool` takes `action` as the stateful protocol's: a stateful tool does; a
/// one-shot tool that declares a parameter named `action` (an MCP server's) takes it
/// as that parameter.
bool takes_action_protocol(const ToolConfig& tool);

} // namespace jp
