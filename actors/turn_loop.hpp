// The agent loop as a library (RFD 026): one conversation turn. The prompt goes to
// the provider; the assistant's text streams to the renderer; the tool calls of one
// response run as one batch through a turn actor (pre-registered, concurrent,
// answered in request order); the next request carries their responses; until the
// assistant answers without tool calls. Then the turn-end strategies (#4) apply.
// Everything is recorded in the conversation store as it happens.
//
// The caller supplies the world through TurnLoopContext: the provider, the tools
// (config), and the hooks below. Nothing here knows a terminal, a file path or the
// CLI.
//   (run_atom, prompt)  -> TurnResult    how the turn ended: completed, interrupted
//                                        or failed (its error_code and sentence)
//   (interrupt_atom)    -> void          stop the turn cleanly (first Ctrl-C)
//   (stop_atom)         -> void          the same, with no interrupt menu (jp-actors is ending)
//   (quit_atom)         -> void          abort every handle and end now (second Ctrl-C)
//   (list_atom)         -> vector<HandleSummary>  the turn's handles still running
//   (user_abort_atom, id) -> HandleReport a person aborts one (the control socket)
#pragma once

#include <atomic>

#include <caf/fwd.hpp>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "turn_actor.hpp"
#include "turn_hooks.hpp"
#include "../messages/chat.hpp"
#include "../messages/handle_summary.hpp"
#include "../messages/notification.hpp"
#include "../messages/turn_result.hpp"
#include "../runtime/store/conversation_store.hpp"
#include "../runtime/provider/provider.hpp"
#include "../tools/schema.hpp"

namespace jp {

class SubAgentHost;
class RegistryDirectory;
class LiveLoops;

struct TurnLoopContext {
  std::shared_ptr<const Config> config;
  IoThread* io = nullptr;
  std::shared_ptr<Provider> provider;
  dialect tool_dialect = dialect::openai; // the schemas the provider is sent
  // Those schemas, tool_declarations(*config, tool_dialect) as JSON text, when the
  // one who made this context has them already (sub-agents alike share one); null:
  // the loop makes them at its first request and keeps them for the turn.
  std::shared_ptr<const std::string> tools_json;
  std::string model;
  std::string system_prompt;
  int64_t max_tokens = 0; // 0: none sent (Anthropic: 4096)
  std::shared_ptr<ConversationStore> store;
  std::string conversation_id;
  std::shared_ptr<ResponseRenderer> renderer;  // null: the text is not shown
  std::shared_ptr<PromptBackend> prompts;      // null: nobody to ask
  std::shared_ptr<InquiryBackend> inquiry;     // null: inquire handles are aborted
  std::shared_ptr<TurnObserver> observer;      // null: nobody watches
  PermissionPolicy permissions;
  // Who runs the tools that are not processes, by tool name (function tools, an
  // embedder's own executors); sub-agents get the same.
  std::map<std::string, HandleFactory> executors;
  // The tools on offer as they change (an MCP server's list_changed): read before
  // each request, whose tools they are, and by the turn before each call. Empty:
  // `config` for the loop's life. Sub-agents keep the tools they started with.
  ToolsNow tools_now;
  // Sub-agents (actors/subagent_handle.hpp): who provides their assistants (null:
  // the `agent` tool is refused here), this agent's path in events ("main",
  // "main/worker1"), how deep it sits (0: a top-level agent), and the most assistant
  // responses one turn may take (0: no limit).
  std::shared_ptr<SubAgentHost> subagents;
  std::string agent_path = "main";
  // [experiment] shared_registry: the top-level agents' registries (none: not shared;
  // sub-agents never share).
  std::shared_ptr<RegistryDirectory> shared_registry;
  // Where this loop, and its sub-agents' loops, are added by agent_path for `handles
  // ls/abort` (actors/live_loops.hpp); null: nobody asks.
  std::shared_ptr<LiveLoops> live_loops;
  // The live sub-agents under this agent's top-level agent, at every depth, for
  // [agents] max_live (null at the top: its sub-agents make it).
  std::shared_ptr<std::atomic<uint64_t>> live_subagents;
  int depth = 0;
  int64_t max_rounds = 0;
};

caf::actor spawn_turn_loop(caf::actor_system& sys, TurnLoopContext ctx);

/// The conversation so far as provider messages, from its events. Notifications a
/// turn carried (turn_start's "notifications") go with its prompt.
std::vector<ChatMessage> messages_of(const std::vector<Json>& events);

} // namespace jp
