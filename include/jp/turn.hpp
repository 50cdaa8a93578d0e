// jp::Turn: one turn of the agent loop (RFD 026), from Runtime::run_turn(). The
// hooks say how it reaches the world; whatever is left empty comes from the
// runtime: the provider [assistant] names (assistant.script for "scripted"), an
// in-memory conversation, nobody to ask, nothing shown.
#pragma once

#include <functional>
#include <future>
#include <memory>
#include <string>

#include "actors/turn_hooks.hpp"
#include "messages/turn_result.hpp"
#include "runtime/provider/inquiry_backend.hpp"
#include "runtime/provider/provider.hpp"
#include "runtime/store/conversation_store.hpp"
#include "tools/permission.hpp"

namespace jp {

struct TurnHooks {
  /// Answers the requests (null: the one the config's [assistant] names). A
  /// provider of your own makes its own stream: see runtime/provider/provider.hpp.
  std::shared_ptr<Provider> provider;
  /// Answers the turn-end inquiry and tools' questions to the assistant (null with
  /// the provider from the config: that assistant's; else nobody, and handles
  /// whose tools say "inquire" are aborted at turn end).
  std::shared_ptr<InquiryBackend> inquiry;
  std::shared_ptr<ResponseRenderer> renderer; // the streamed text (null: not shown)
  std::shared_ptr<PromptBackend> prompts;     // a person to ask (null: nobody)
  std::shared_ptr<TurnObserver> observer;     // what happens, for a display or log
  /// Who watches the sub-agent at `path` ("assistant/worker1") that the `agent`
  /// tool starts (empty: nobody; its events are kept in the conversation anyway).
  /// The turn's provider answers sub-agents too.
  std::function<std::shared_ptr<TurnObserver>(const std::string& path)> subagent_observer;
  /// Where the conversation is kept (null: the runtime's in-memory store), and
  /// which one ("": the runtime's own, created on its first turn).
  std::shared_ptr<ConversationStore> store;
  std::string conversation_id;
  /// Whether tools' `run = "ask"` applies (the assistant's calls are not the
  /// user's): by default it does, and a tool that asks is refused when `prompts`
  /// is null.
  PermissionPolicy permissions{true, {}};
  /// The most assistant responses this turn may take (0: no limit).
  int64_t max_rounds = 0;
};

/// A provider that plays a script (TOML text, DESIGN.md "Scripts"): each request
/// gets the next step of its agent `agent` (the first when empty) -- its text and
/// tool calls -- and after the last step an answer without calls. For demos and
/// tests of a turn without a network. Errors name the line and key.
Result<std::shared_ptr<Provider>> scripted_provider(std::string_view script_toml, const std::string& agent = "");

class Turn {
public:
  /// Ends the turn now, with every handle it started: a result() kept beyond it says
  /// interrupted (code interrupted), "its jp::Turn was destroyed ...".
  ~Turn();
  Turn(Turn&&) noexcept;
  /// The turn assigned over ends first, as its destructor ends it.
  Turn& operator=(Turn&&) noexcept;

  /// How the turn ended: completed (with the assistant's last answer),
  /// interrupted, or failed (an error code in `code` and a sentence saying what to do).
  std::future<TurnResult>& result();
  /// Stops the turn cleanly, as a first Ctrl-C does (handles get their turn-end
  /// policy); a second call aborts every handle at once (within a second it lists
  /// those still running, so that the next turn is told each was aborted). With hooks.prompts that
  /// offer the interrupt menu (PromptBackend::offers_menu), a call while the turn
  /// streams or runs tools opens the menu instead (stop, continue or reply); a call
  /// while it is open aborts everything.
  void interrupt();

  struct Impl;

private:
  explicit Turn(std::shared_ptr<Impl> impl);
  std::shared_ptr<Impl> impl_;
  friend struct RuntimeAccess;
};

} // namespace jp
