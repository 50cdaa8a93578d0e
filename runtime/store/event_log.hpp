// What `jp-actors run` prints: JSONL events (DESIGN.md "Scripts") or a readable
// transcript. Thread-safe: agents run concurrently and each writes its events.
#pragma once

#include <cstdio>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "../../messages/chat.hpp"
#include "../../messages/json.hpp"
#include "../../messages/handle_summary.hpp"
#include "../../messages/notification.hpp"

namespace jp {

/// A tool's result as a transcript shows it (the live one and `conversations show`):
/// its first 400 bytes (cut at a character, saying how long it was), each line after
/// the first indented under the call.
std::string transcript_result(const std::string& content);

class EventLog {
public:
  /// What stamps each JSON event's "time" (RFC 3339 UTC, ms).
  using Clock = std::function<std::string()>;
  /// `live`: a transcript on a terminal: it also shows a progress line of the handles
  /// that are running while a step waits, and its lines are made terminal-safe. `now`: the clock (default: the system's).
  EventLog(std::FILE* out, bool json, bool live = false, Clock now = {});

  bool live() const { return live_; }
  /// A live transcript's progress lines (what the handles running now look like:
  /// the CLI's views draw them), replacing the last ones; the next line erases them.
  /// Each is cut to the terminal's width (less one column): a line that wrapped took
  /// two rows, of which the next redraw erased one, and old frames piled up.
  void progress(const std::vector<std::string>& lines);
  /// The width progress lines are cut to, instead of the terminal's (0: none).
  void set_columns(size_t columns) { columns_ = columns; }
  /// While a dialog is open on the terminal (a permission, a question, the interrupt
  /// menu) no progress lines are drawn -- redrawn every half second, they wrote over
  /// it and its answer -- and transcript lines wait until it closes. Holding erases
  /// the progress lines shown; nested holds count.
  void hold_progress(bool held);
  /// A line of the transcript, as the display words it (not in JSON).
  void line(const std::string& text);
  /// Whether tool_call and tool_result also write their transcript lines (a display
  /// that words calls itself turns them off; their events are kept either way).
  void set_call_lines(bool on) { call_lines_ = on; }

  /// An agent's turn began (JSON only: the report's wall time starts here).
  void turn_start(const std::string& agent);
  /// Response `step` ended: how long the model took, and its tokens (JSON only).
  void model_round(const std::string& agent, int step, const ModelRound& r);
  void step(const std::string& agent, int step, const std::string& text);
  /// The assistant's text of response `step` (a real provider's; JSON only: a
  /// transcript showed it as it streamed).
  void response(const std::string& agent, int step, const std::string& text);
  void tool_call(const std::string& agent, int step, int index, const std::string& tool,
                 const Json& arguments);
  void tool_result(const std::string& agent, int step, int index, const std::string& tool, bool ok,
                   const std::string& content, double elapsed_ms);
  /// A notification a tool response carried (logged before that response).
  void notification(const std::string& agent, const Notification& n);
  /// `undelivered`: notifications no response carried before the turn ended.
  /// `error`: why the turn failed ("" = it did not). `interrupted`: the user (or a
  /// signal) stopped it. `counts`: the turn's handles started and most at once
  /// (none: unknown).
  void turn_end(const std::string& agent, const std::vector<HandleSummary>& handles,
                const std::vector<Notification>& undelivered = {}, const std::string& error = {},
                bool interrupted = false, const std::optional<HandleCounts>& counts = std::nullopt);
  void run_end(size_t agents, double elapsed_ms, size_t handles_left);

  /// Every event, JSON or not, also goes to `sink` (the experiment report's builder).
  using Sink = std::function<void(const Json&)>;
  void set_sink(Sink sink) { sink_ = std::move(sink); }

private:
  /// Writes a JSON event (JSON mode) and hands it to the sink.
  void emit(const Json& e);
  void write(const std::string& line);
  /// A JSON event of `kind`, stamped: "event", then "time".
  Json event(const char* kind) const;
  void clear_progress();

  std::mutex mutex_;
  std::FILE* out_;
  bool json_;
  bool live_;
  Clock now_;
  Sink sink_;
  std::optional<size_t> columns_; // set_columns's, else the terminal's
  size_t progress_lines_ = 0; // progress lines on screen (the last without a newline)
  int progress_held_ = 0;     // dialogs open (hold_progress)
  std::string held_lines_;    // transcript lines written while one was
  bool call_lines_ = true;
};

} // namespace jp
