// The hooks of the agent loop (RFD 026): how the loop reaches the world -- where
// the assistant's text goes, a person to ask, the assistant's structured answers
// (runtime/provider/inquiry_backend.hpp), and who watches. Plain interfaces: the CLI implements them for a terminal, tests
// capture, scripts answer from their tables.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "../messages/chat.hpp"
#include "../messages/handle_summary.hpp"
#include "../messages/json.hpp"
#include "../messages/notification.hpp"
#include "../messages/result.hpp"
#include "../runtime/provider/inquiry_backend.hpp"
#include "../tools/permission.hpp"

namespace jp {

/// Where the assistant's streamed text goes (RFD 026's ResponseRenderer).
class ResponseRenderer {
public:
  virtual ~ResponseRenderer() = default;
  /// A new piece of the response.
  virtual void render(const std::string& chunk) = 0;
  /// Emit anything buffered: before tool calls run, and when a response ends.
  virtual void flush() = 0;
  /// Forget the response so far: the provider retries it from the start.
  virtual void reset() = 0;
  /// A piece of the model's reasoning, where the provider streams it (the default:
  /// not shown). It is no part of the answer.
  virtual void render_reasoning(const std::string& /*chunk*/) {}
};

/// What the person chose when they interrupted the turn (RFD 026's interrupt menu).
struct InterruptChoice {
  enum class action {
    stop,   // end the turn (what an interrupt did before there was a menu)
    resume, // continue: the response streams on, the tools run on, nothing is lost
    reply,  // tell the assistant `text`: a response streaming is cut there (its text
            // kept) and the next request carries the reply; running tools run on
  };
  action what = action::stop;
  std::string text;
};

/// What the turn was doing when it was interrupted (the menu says so).
enum class interrupted_while { streaming, running_tools };

/// A person to ask (RFD 026's PromptBackend): a tool's question, a permission, and
/// what to do about an interrupt. Each may block; they are called off the actor
/// threads. nullopt: no answer.
class PromptBackend {
public:
  virtual ~PromptBackend() = default;
  virtual std::optional<Json> ask(const std::string& tool, const Question& q) = 0;
  virtual std::optional<PermissionReply> permit(const std::string& tool, const Json& args) = 0;
  /// Whether permit() asks a person. When not, an `ask` call is refused as it is
  /// where nobody can be asked (naming --allow).
  virtual bool asks_permission() const { return true; }
  /// The interrupt menu: stop, continue or reply. nullopt (the default: no menu
  /// here) stops the turn, as an interrupt without a menu does. While it is open,
  /// the response's text is held back from the renderer; a second interrupt aborts
  /// everything (and cancel() ends the menu).
  virtual std::optional<InterruptChoice> interrupt_menu(interrupted_while /*what*/) { return std::nullopt; }
  /// Whether interrupt_menu() asks anyone: without a menu an interrupt stops the
  /// turn at once, and a second one aborts what the turn end waits for.
  virtual bool offers_menu() const { return false; }
  /// The turn is ending (an interrupt, or an abort): a question or menu being
  /// asked ends now, unanswered, and none asked later waits.
  virtual void cancel() {}
  /// A question or menu being asked now ends, unanswered; later ones are asked as
  /// before (a sub-agent's turn ended, not the person's session).
  virtual void end_dialog() {}
};

/// What happens during a turn, for a display or a log (`--json`); all optional.
class TurnObserver {
public:
  virtual ~TurnObserver() = default;
  /// The turn began (before its first request).
  virtual void turn_start() {}
  /// Response `n` ended (every response, with text or not; before response()).
  virtual void model_round(int /*n*/, const ModelRound& /*r*/) {}
  virtual void response(int /*n*/, const std::string& /*text*/) {}
  virtual void retry(const std::string& /*why*/) {}
  /// What loading the conversation found wrong and passed over (a torn line, an
  /// image file gone), before the turn began.
  virtual void warning(const std::string& /*text*/) {}
  /// The loop took the person's choice at the interrupt menu (and acts on it now).
  virtual void interrupt_choice(const InterruptChoice& /*choice*/) {}
  virtual void tool_call(int /*n*/, int /*index*/, const ToolCall& /*call*/) {}
  virtual void tool_result(int /*n*/, int /*index*/, const std::string& /*tool*/, bool /*ok*/, const std::string& /*content*/,
                           double /*elapsed_ms*/) {}
  virtual void notification(const Notification& /*n*/) {}
  /// The turn's handles: how many it started, and the most that ran at once
  /// (called just before turn_end; not when the turn end itself failed).
  virtual void handle_counts(const HandleCounts& /*counts*/) {}
  /// The turn ended: what became of its handles, what no response carried, why it
  /// failed ("" = it did not), and whether it was interrupted.
  virtual void turn_end(const std::vector<HandleSummary>& /*handles*/, const std::vector<Notification>& /*undelivered*/,
                        const std::string& /*error*/, bool /*interrupted*/) {}
  /// A live display: while tools run, progress() is called every half second with
  /// the handles still running.
  virtual bool wants_progress() const { return false; }
  virtual void progress(const std::vector<HandleSummary>& /*running*/) {}
};

} // namespace jp
