#include "actors/input_watch.hpp"

#include "messages/json.hpp"
#include "runtime/process/input_wait.hpp"
#include "runtime/process/proc_stat.hpp"
#include "runtime/process/text_tail.hpp"
#include "runtime/terminal/readable_text.hpp"

namespace jp {

namespace {

constexpr size_t recent_text_bytes = 2048; // where a prompt is looked for
constexpr size_t line_shown_bytes = 200;   // of a question, or a last line

/// The line the tool is on (the text after its last line break), as a terminal shows
/// it: a pipe's line may be redrawn, coloured.
std::string after_last_line(std::string_view text) {
  auto nl = text.rfind('\n');
  return readable_text(nl == std::string_view::npos ? text : text.substr(nl + 1));
}

/// What a waiting tool shows on its current line (its prompt), if anything: a line
/// already ended is output, not a question. Its end, if long.
std::string current_line(std::string_view text) {
  auto shown = after_last_line(text);
  auto line = utf8_tail(shown, line_shown_bytes);
  auto first = line.find_first_not_of(" \t");
  if (first == std::string_view::npos)
    return {};
  auto last = line.find_last_not_of(" \t");
  return sanitize_utf8(line.substr(first, last - first + 1));
}

} // namespace

InputWatch::InputWatch(const std::string& prompt_pattern, bool terminal, bool pipe)
  : terminal_(terminal), pipe_(pipe && !terminal) {
  // Checked when the config was loaded; a spec from elsewhere that is wrong has none.
  if (!prompt_pattern.empty())
    if (auto p = PromptPattern::compile(prompt_pattern))
      prompt_ = std::move(*p);
}

void InputWatch::saw(std::string_view text) {
  // Only the tail can hold a prompt or the last line: never copy a whole big chunk.
  keep_tail(recent_, text, recent_text_bytes);
}

bool InputWatch::probe(pid_t pid, std::chrono::milliseconds quiet_for, pid_t* reader) const {
  if (reader)
    *reader = 0;
  bool waits = false;
  if (prompt_)
    waits = prompt_->found_in(after_last_line(recent_));
  if (!waits && (terminal_ || pipe_)) {
    bool brief_poll = false;
    pid_t found = input_reader(pid, terminal_, &brief_poll, input());
    waits = found != 0 && (!brief_poll || quiet_for >= brief_poll_quiet);
    if (reader && waits)
      *reader = found;
  }
  return waits;
}

InputWatch::ReaderMark InputWatch::mark_reader(pid_t leader) const {
  if (!terminal_ && !pipe_)
    return {};
  pid_t reader = input_reader(leader, terminal_, nullptr, input());
  if (reader == 0)
    reader = leader; // busy: once it reads the input it sleeps again, and has run
  return {reader, run_count(reader)};
}

InputWatch::ReaderMark InputWatch::stdin_read(pid_t leader, pid_t known) const {
  pid_t reader = known != 0 ? known : input_reader(leader, false, nullptr, input());
  return reader == 0 ? ReaderMark{} : ReaderMark{reader, group_run_count(leader)};
}

bool InputWatch::reads_stdin(pid_t leader) const {
  return input_reader(leader, false, nullptr, input()) != 0;
}

bool InputWatch::reads_again(pid_t leader, const ReaderMark& mark, std::chrono::milliseconds quiet_for,
                             pid_t* found) const {
  if (found)
    *found = 0;
  if (mark.pid == 0)
    return false;
  bool brief_poll = false;
  pid_t reader = input_reader(leader, terminal_, &brief_poll, input());
  if (reader == 0 || (brief_poll && quiet_for < brief_poll_quiet))
    return false;
  if (found)
    *found = reader;
  if (reader != mark.pid || mark.line_open)
    return true;
  auto runs = run_count(reader);
  return runs != 0 && runs > mark.runs;
}

Question InputWatch::question() const {
  auto prompt = current_line(recent_);
  // A prompt printed as a line of its own (echo "Continue? [y/N]"; read): the last
  // line, when it reads as one; not any line a tool printed before it reads.
  if (prompt.empty())
    if (auto last = last_line(); !last.empty() && std::string_view("?:>])").find(last.back()) != std::string_view::npos)
      prompt = last;
  return Question{std::string(read_question_id), prompt.empty() ? "waiting for input" : prompt, "", {}, ""};
}

bool InputWatch::stopped(pid_t pid) {
  auto st = read_proc_stat(pid);
  return st && st->state == 'T'; // 't' is a debugger's stop: not for us to end
}

Question InputWatch::stopped_question() {
  return Question{std::string(stopped_question_id),
                  "[jp-actors: the tool is stopped (SIGSTOP) and does nothing until continued: an apply continues "
                  "it (SIGCONT, as a shell's `fg`), then types its input if any (\"\" for none); abort ends it]",
                  "", {}, ""};
}

std::string InputWatch::last_line() const {
  std::string_view text = recent_;
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r'))
    text.remove_suffix(1);
  return sanitize_utf8(utf8_tail(after_last_line(text), line_shown_bytes));
}

} // namespace jp
