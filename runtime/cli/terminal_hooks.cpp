#include "runtime/cli/terminal_hooks.hpp"

#include <cstdlib>
#include <sys/eventfd.h>
#include <unistd.h>

#include "runtime/cli/tty_prompt.hpp"

namespace jp {

void StdoutRenderer::render(const std::string& chunk) {
  if (chunk.empty())
    return;
  std::fwrite(chunk.data(), 1, chunk.size(), out_);
  std::fflush(out_);
  open_line_ = chunk.back() != '\n';
}

void StdoutRenderer::flush() {
  if (open_line_)
    std::fputc('\n', out_);
  open_line_ = false;
  std::fflush(out_);
}

void StdoutRenderer::reset() {
  // What was shown cannot be taken back: mark where the retried response starts.
  flush();
  std::fputs("[retrying the response]\n", out_);
  std::fflush(out_);
}

void MarkdownRenderer::write(const std::string& text) {
  if (text.empty())
    return;
  std::fwrite(text.data(), 1, text.size(), out_);
  std::fflush(out_);
}

void MarkdownRenderer::render(const std::string& chunk) {
  write(markdown_.feed(chunk));
}

void MarkdownRenderer::flush() {
  write(markdown_.finish());
}

void MarkdownRenderer::reset() {
  // What was shown cannot be taken back; what was held is dropped.
  markdown_.reset();
  write("[retrying the response]\n");
}

std::shared_ptr<ResponseRenderer> answer_renderer(std::FILE* out) {
  if (!isatty(::fileno(out)))
    return std::make_shared<StdoutRenderer>(out);
  // no-color.org: set and not empty.
  const char* no_color = std::getenv("NO_COLOR");
  return std::make_shared<MarkdownRenderer>(out, !(no_color && *no_color));
}

TtyPromptBackend::TtyPromptBackend() : cancel_fd_(::eventfd(0, EFD_CLOEXEC)) {}

TtyPromptBackend::~TtyPromptBackend() {
  if (cancel_fd_ >= 0)
    ::close(cancel_fd_);
}

std::optional<Json> TtyPromptBackend::ask(const std::string& tool, const Question& q) {
  std::lock_guard lock(dialog_); // after the menu, if it is open
  return tty_ask(tool, q, cancel_fd_);
}

std::optional<PermissionReply> TtyPromptBackend::permit(const std::string& tool, const Json& args) {
  std::lock_guard lock(dialog_);
  return tty_ask_permission(tool, args, cancel_fd_);
}

std::optional<InterruptChoice> TtyPromptBackend::interrupt_menu(interrupted_while what) {
  // Ctrl-C at a question on the terminal answers the question: the turn stops, as
  // it did before there was a menu (the menu and the question would share a line).
  std::unique_lock lock(dialog_, std::try_to_lock);
  if (!lock.owns_lock())
    return std::nullopt;
  return tty_interrupt_menu(what, cancel_fd_);
}

void TtyPromptBackend::cancel() {
  // Readable from now on: the prompt shown ends, and no later one waits.
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
  std::fprintf(stderr, "jp-actors: %s\n", why.c_str());
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

void EventLogObserver::tool_call(int n, int index, const ToolCall& call) {
  auto args = Json::parse(call.arguments);
  log_->tool_call(agent_, n, index, call.name, args ? *args : Json(call.arguments));
}

void EventLogObserver::tool_result(int n, int index, const std::string& tool, bool ok, const std::string& content,
                                   double elapsed_ms) {
  log_->tool_result(agent_, n, index, tool, ok, content, elapsed_ms);
}

void EventLogObserver::notification(const Notification& n) {
  log_->notification(agent_, n);
}

void EventLogObserver::turn_end(const std::vector<HandleSummary>& handles,
                                const std::vector<Notification>& undelivered, const std::string& error) {
  log_->turn_end(agent_, handles, undelivered, error, counts_);
}

void EventLogObserver::progress(const std::vector<HandleSummary>& running) {
  log_->progress(agent_, running);
}

} // namespace jp
