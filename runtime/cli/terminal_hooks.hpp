// The agent loop's hooks for a terminal (or a pipe): the assistant's text to
// stdout as it streams, questions and permissions on /dev/tty, and what happens as
// a transcript or as `--json` events (runtime/store/event_log.hpp).
#pragma once

#include <mutex>
#include <cstdio>
#include <atomic>
#include <chrono>
#include <map>
#include <set>
#include <memory>
#include <optional>
#include <string>

#include "actors/turn_hooks.hpp"
#include "runtime/cli/markdown_renderer.hpp"
#include "runtime/cli/tool_views.hpp"
#include "runtime/store/event_log.hpp"

namespace jp {

/// Writes each chunk as it comes; flush() ends the line it left open.
class StdoutRenderer final : public ResponseRenderer {
public:
  explicit StdoutRenderer(std::FILE* out) : out_(out) {}
  void render(const std::string& chunk) override;
  void flush() override;
  void reset() override;

private:
  std::FILE* out_;
  bool open_line_ = false;
  bool shown_ = false; // of this response: a retry before anything showed needs no mark
};

/// Markdown rendered for a terminal as it streams (runtime/cli/markdown_renderer.hpp):
/// a block is written once it is complete; flush() writes what is held.
class MarkdownRenderer final : public ResponseRenderer {
public:
  /// `color`: ANSI styles (off under NO_COLOR). `reasoning`: the model's reasoning
  /// is shown (dimmed) before the answer, else not at all.
  MarkdownRenderer(std::FILE* out, bool color, bool reasoning)
    : out_(out), markdown_(color), color_(color), show_reasoning_(reasoning) {}
  void render(const std::string& chunk) override;
  void flush() override;
  void reset() override;
  void render_reasoning(const std::string& chunk) override;

private:
  void write(const std::string& text);
  void end_reasoning();
  std::FILE* out_;
  MarkdownStream markdown_;
  bool color_;
  bool show_reasoning_;
  bool in_reasoning_ = false; // reasoning was written and the answer has not begun
  bool shown_ = false;        // of this response: a retry before anything showed needs no mark
};

/// The renderer for the assistant's answers on `out`: markdown rendered for a
/// terminal (styled unless NO_COLOR is set; the reasoning shown per `style`), the
/// answer's text as it comes otherwise (no reasoning: a pipe gets the answer).
std::shared_ptr<ResponseRenderer> answer_renderer(std::FILE* out, const StyleConfig& style);

/// tty_ask / tty_ask_permission.
class TtyPromptBackend final : public PromptBackend {
public:
  /// `log`: the transcript on the same terminal, whose progress lines are held
  /// while a dialog is open (none: nothing to hold).
  /// `config`: the tools a permission is asked for (a workspace's own is said so).
  explicit TtyPromptBackend(std::shared_ptr<EventLog> log = nullptr, std::shared_ptr<const Config> config = nullptr);
  ~TtyPromptBackend() override;
  std::optional<Json> ask(const std::string& tool, const Question& q) override;
  std::optional<PermissionReply> permit(const std::string& tool, const Json& args) override;
  std::optional<InterruptChoice> interrupt_menu(interrupted_while what) override;
  bool offers_menu() const override { return true; }
  void cancel() override;
  void end_dialog() override;

private:
  /// Runs one dialog: none once cancelled; one at a time.
  template <class F>
  auto dialog(std::unique_lock<std::mutex>& lock, F run) -> decltype(run());
  std::shared_ptr<EventLog> log_;
  std::shared_ptr<const Config> config_;
  int cancel_fd_ = -1; // an eventfd: readable while the dialog shown must end
  std::atomic<bool> cancelled_{false}; // ... and every later one too
  // One dialog on the terminal at a time: the menu and a tool's question must not
  // read each other's lines.
  std::mutex dialog_;
};

/// The turn as run --json's events, or a transcript; retries are reported on stderr.
class EventLogObserver final : public TurnObserver {
public:
  /// Where the assistant's text goes: nowhere (a renderer shows it), a transcript's
  /// step line (a script's text), or a `response` event (query --json).
  enum class text_mode { none, step_line, response_event };
  /// The live lines of running handles are the per-tool views (runtime/cli/
  /// tool_views); `terminal_tools` names the tools that run on a terminal. With
  /// `call_views` the calls are worded by the views too (one line as a call starts,
  /// one as it ends) instead of the transcript's full lines.
  EventLogObserver(std::shared_ptr<EventLog> log, std::string agent, text_mode text,
                   std::set<std::string> terminal_tools = {}, bool call_views = false);
  void turn_start() override;
  void model_round(int n, const ModelRound& r) override;
  void response(int n, const std::string& text) override;
  void retry(const std::string& why) override;
  void warning(const std::string& text) override;
  void interrupt_choice(const InterruptChoice& choice) override;
  void tool_call(int n, int index, const ToolCall& call) override;
  void tool_result(int n, int index, const std::string& tool, bool ok, const std::string& content,
                   double elapsed_ms) override;
  void notification(const Notification& n) override;
  void handle_counts(const HandleCounts& counts) override { counts_ = counts; }
  void turn_end(const std::vector<HandleSummary>& handles, const std::vector<Notification>& undelivered,
                const std::string& error, bool interrupted) override;
  bool wants_progress() const override { return log_->live(); }
  void progress(const std::vector<HandleSummary>& running) override;

private:
  std::shared_ptr<EventLog> log_;
  std::string agent_;
  text_mode text_;
  std::optional<HandleCounts> counts_; // handle_counts() comes just before turn_end()
  std::set<std::string> terminal_tools_;
  bool call_views_;
  std::map<std::string, HandleOrigin> origins_;   // handle id -> the call that spawned it
  /// A call running now, by (response, index): what it was called with, and since when.
  struct RunningCall {
    std::string tool;
    Json arguments;
    std::chrono::steady_clock::time_point started;
  };
  std::map<std::pair<int, int>, RunningCall> calls_;
};

/// The tools of `config` that run on a terminal (io = "pty"), for the views.
std::set<std::string> terminal_tools_of(const Config& config);

} // namespace jp
