#include "runtime/cli/terminal_hooks.hpp"
#include "config/workspace_sets.hpp"

#include <cstdlib>
#include <utility>
#include <fmt/format.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "messages/terminal_safe.hpp"
#include "runtime/cli/tty_prompt.hpp"

namespace jp {

void StdoutRenderer::render(const std::string& chunk) {
  if (chunk.empty())
    return;
  std::fwrite(chunk.data(), 1, chunk.size(), out_);
  std::fflush(out_);
  open_line_ = chunk.back() != '\n';
  shown_ = true;
}

void StdoutRenderer::flush() {
  if (open_line_)
    std::fputc('\n', out_);
  open_line_ = false;
  shown_ = false; // the response ended
  std::fflush(out_);
}

void StdoutRenderer::reset() {
  // What was shown cannot be taken back: mark where the retried response starts
  // (nothing shown, nothing to mark: `query > answer.txt` keeps the answer alone).
  if (!shown_)
    return;
  flush();
  std::fputs("[retrying the response]\n", out_);
  std::fflush(out_);
}

void MarkdownRenderer::write(const std::string& text) {
  if (text.empty())
    return;
  std::fwrite(text.data(), 1, text.size(), out_);
  std::fflush(out_);
  shown_ = true;
}

void MarkdownRenderer::render(const std::string& chunk) {
  end_reasoning();
  write(markdown_.feed(chunk));
}

void MarkdownRenderer::flush() {
  end_reasoning();
  write(markdown_.finish());
  shown_ = false; // the response ended
}

void MarkdownRenderer::reset() {
  // What was shown cannot be taken back; what was held is dropped.
  end_reasoning();
  markdown_.reset();
  if (shown_)
    write("[retrying the response]\n");
  shown_ = false;
}

void MarkdownRenderer::render_reasoning(const std::string& chunk) {
  if (!show_reasoning_ || chunk.empty())
    return;
  auto text = terminal_safe(chunk);
  write(color_ ? "\x1b[2m" + text + "\x1b[0m" : text);
  in_reasoning_ = true;
}

/// The answer begins (or the response ends): set apart from the reasoning above it.
void MarkdownRenderer::end_reasoning() {
  if (!std::exchange(in_reasoning_, false))
    return;
  write("\n\n");
}

std::set<std::string> terminal_tools_of(const Config& config) {
  std::set<std::string> names;
  for (auto& [name, tool] : config.tools)
    if (tool.io == io_mode::pty)
      names.insert(name);
  return names;
}

std::shared_ptr<ResponseRenderer> answer_renderer(std::FILE* out, const StyleConfig& style) {
  if (!isatty(::fileno(out)))
    return std::make_shared<StdoutRenderer>(out);
  // no-color.org: set and not empty.
  const char* no_color = std::getenv("NO_COLOR");
  return std::make_shared<MarkdownRenderer>(out, !(no_color && *no_color), style.reasoning == "show");
}

TtyPromptBackend::TtyPromptBackend(std::shared_ptr<EventLog> log, std::shared_ptr<const Config> config)
  : log_(std::move(log)), config_(std::move(config)), cancel_fd_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {}

TtyPromptBackend::~TtyPromptBackend() {
  if (cancel_fd_ >= 0)
    ::close(cancel_fd_);
}

template <class F>
auto TtyPromptBackend::dialog(std::unique_lock<std::mutex>& lock, F run) -> decltype(run()) {
  // An end asked before this dialog began was for an earlier one: forgotten first,
  // then the cancel checked (cancel() sets it before it signals).
  uint64_t ended = 0;
  (void)!::read(cancel_fd_, &ended, sizeof ended);
  if (cancelled_)
    return std::nullopt;
  if (!log_)
    return run();
  // The live lines would be drawn over the dialog while it waits for its answer.
  log_->hold_progress(true);
  struct Release {
    EventLog& log;
    ~Release() { log.hold_progress(false); }
  } release{*log_};
  return run();
}

std::optional<Json> TtyPromptBackend::ask(const std::string& tool, const Question& q) {
  std::unique_lock lock(dialog_); // after the menu, if it is open
  return dialog(lock, [&] { return tty_ask(tool, q, cancel_fd_); });
}

std::optional<PermissionReply> TtyPromptBackend::permit(const std::string& tool, const Json& args) {
  std::unique_lock lock(dialog_);
  auto about = config_ ? workspace_tool_note(*config_, tool) : std::string();
  return dialog(lock, [&] { return tty_ask_permission(tool, args, cancel_fd_, about); });
}

std::optional<InterruptChoice> TtyPromptBackend::interrupt_menu(interrupted_while what) {
  // Ctrl-C at a question on the terminal answers the question: the turn stops, as
  // it did before there was a menu (the menu and the question would share a line).
  std::unique_lock lock(dialog_, std::try_to_lock);
  if (!lock.owns_lock())
    return std::nullopt;
  return dialog(lock, [&] { return tty_interrupt_menu(what, cancel_fd_); });
}

void TtyPromptBackend::cancel() {
  // The prompt shown ends, and no later one is shown.
  cancelled_ = true;
  end_dialog();
}

void TtyPromptBackend::end_dialog() {
  uint64_t one = 1;
  if (cancel_fd_ >= 0)
    (void)!::write(cancel_fd_, &one, sizeof one);
}

void EventLogObserver::turn_start() {
  log_->turn_start(agent_);
}

void EventLogObserver::model_round(int n, const ModelRound& r) {
  log_->model_round(agent_, n, r);
}

void EventLogObserver::response(int n, const std::string& text) {
  if (text_ == text_mode::step_line)
    log_->step(agent_, n, text);
  else if (text_ == text_mode::response_event)
    log_->response(agent_, n, text);
}

void EventLogObserver::retry(const std::string& why) {
  std::fprintf(stderr, "jp-actors: %s\n", shown_on(STDERR_FILENO, why).c_str());
}

void EventLogObserver::warning(const std::string& text) {
  std::fprintf(stderr, "jp-actors: warning: %s\n", shown_on(STDERR_FILENO, text).c_str());
}

void EventLogObserver::interrupt_choice(const InterruptChoice& choice) {
  switch (choice.what) {
    case InterruptChoice::action::stop:
      std::fputs("jp-actors: stopping the turn (Ctrl-C again within 2 s aborts everything)\n", stderr);
      break;
    case InterruptChoice::action::resume: std::fputs("jp-actors: continuing\n", stderr); break;
    case InterruptChoice::action::reply:
      std::fputs("jp-actors: your reply goes to the assistant with the next request\n", stderr);
      break;
  }
}

EventLogObserver::EventLogObserver(std::shared_ptr<EventLog> log, std::string agent, text_mode text,
                                   std::set<std::string> terminal_tools, bool call_views)
  : log_(std::move(log)), agent_(std::move(agent)), text_(text), terminal_tools_(std::move(terminal_tools)),
    call_views_(call_views) {
  if (call_views_)
    log_->set_call_lines(false);
}

void EventLogObserver::tool_call(int n, int index, const ToolCall& call) {
  auto args = Json::parse(call.arguments);
  auto arguments = args && args->is_object() ? *args : Json::object();
  // What the views know of a handle beyond its report: the call that spawned it.
  if (auto* id = arguments.find("id"); id && id->is_string())
    origins_[id->as_string()] = HandleOrigin{arguments, terminal_tools_.count(call.name) > 0};
  calls_[{n, index}] = RunningCall{call.name, arguments, std::chrono::steady_clock::now()};
  log_->tool_call(agent_, n, index, call.name, args ? *args : Json(call.arguments));
  if (call_views_)
    log_->line(fmt::format("[{}] {}", agent_, started_line(call.name, arguments)));
}

void EventLogObserver::tool_result(int n, int index, const std::string& tool, bool ok, const std::string& content,
                                   double elapsed_ms) {
  log_->tool_result(agent_, n, index, tool, ok, content, elapsed_ms);
  auto it = calls_.find({n, index});
  auto arguments = it != calls_.end() ? it->second.arguments : Json::object();
  if (it != calls_.end())
    calls_.erase(it);
  if (call_views_)
    log_->line(fmt::format("[{}] {}", agent_, completed_line(tool, arguments, ok, content, elapsed_ms)));
}

void EventLogObserver::notification(const Notification& n) {
  log_->notification(agent_, n);
}

void EventLogObserver::turn_end(const std::vector<HandleSummary>& handles,
                                const std::vector<Notification>& undelivered, const std::string& error,
                                bool interrupted) {
  log_->turn_end(agent_, handles, undelivered, error, interrupted, counts_);
}

void EventLogObserver::progress(const std::vector<HandleSummary>& running) {
  std::vector<std::string> lines;
  for (auto& h : running) {
    auto it = origins_.find(h.id);
    lines.push_back(fmt::format("[{}] {}", agent_, in_flight_line(h, it != origins_.end() ? it->second : HandleOrigin{})));
  }
  // One-shot calls are no handles (the registry lists none): their lines come from
  // the calls themselves -- the tool, how long, what it runs.
  auto now = std::chrono::steady_clock::now();
  for (auto& [at, call] : calls_) {
    if (call.arguments.find("action"))
      continue; // a handle's action: its handle has a line of its own
    HandleSummary h{"", call.tool, ToolState::running(), turn_end_policy::abort,
                    std::chrono::duration<double>(now - call.started).count()};
    lines.push_back(fmt::format("[{}] {}", agent_,
                                in_flight_line(h, HandleOrigin{call.arguments, terminal_tools_.count(call.tool) > 0})));
  }
  if (lines.empty())
    lines.push_back(fmt::format("[{}] ⋯ waiting on the step's calls", agent_));
  log_->progress(lines);
}

} // namespace jp
