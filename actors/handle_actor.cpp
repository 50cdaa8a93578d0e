#include "actors/handle_actor.hpp"
#include "actors/io_thread_send.hpp"
#include "actors/no_terminal.hpp"
#include "actors/output_route.hpp"
#include "actors/send_after_queued.hpp"
#include "runtime/process/chunk_pool.hpp"

#include <atomic>
#include <caf/all.hpp>
#include <cctype>
#include <chrono>
#include <csignal>
#include <optional>
#include <fmt/format.h>

#include "actors/control_channel.hpp"
#include "actors/exited_without_stopping.hpp"
#include "actors/handle_terminal.hpp"
#include "actors/input_watch.hpp"
#include "actors/pipe_input.hpp"
#include "messages/answer_check.hpp"
#include "messages/atoms.hpp"
#include "messages/error_category.hpp"
#include "messages/json.hpp"
#include "messages/json_codec.hpp"
#include "messages/last_line.hpp"
#include "runtime/process/io_thread.hpp"
#include "runtime/process/held_result.hpp"
#include "runtime/process/output_buffer.hpp"
#include "runtime/process/private_file.hpp"
#include "runtime/process/process.hpp"
#include "runtime/process/text_tail.hpp"
#include "runtime/terminal/readable_text.hpp"

namespace jp {

namespace {

constexpr size_t stderr_tail_bytes = 8 * 1024;
constexpr size_t trace_lines = 20;

using clock = std::chrono::steady_clock;

/// Where the handle is in its life. The process runs until it exits; an abort adds
/// the wait for its whole group to be gone, which the abort's answer waits for.
enum class phase {
  running,  // the process runs; nobody asked it to stop
  stopping, // abort sent: SIGTERM, then SIGKILL after the grace; the process still runs
  reaping,  // aborted and exited; the aborts wait until its whole group is gone
  stopped,  // the final state is known and every abort is answered
  retiring, // retired while reaping: quit once the group is gone
};

/// What moves a handle on: an abort asked, the process exited, its group is gone
/// (only after an abort), the registry has the final state and lets it go.
enum class event { abort, exit, gone, retire };

/// Every transition of the lifecycle; an event a phase does not expect leaves it.
/// `gone` follows `exit` (process.hpp: on_exit runs before on_gone), and the
/// registry retires a handle only once it heard `stopped`.
phase next(phase p, event e) {
  switch (e) {
    case event::abort:
      return p == phase::running ? phase::stopping : p;
    case event::exit:
      return p == phase::running ? phase::stopped : p == phase::stopping ? phase::reaping : p;
    case event::gone:
      return p == phase::reaping || p == phase::retiring ? phase::stopped : p;
    case event::retire:
      return p == phase::reaping ? phase::retiring : p;
  }
  return p;
}

/// The process has exited: the final report is known.
bool has_exited(phase p) {
  return p != phase::running && p != phase::stopping;
}

/// A fetch or apply (or a spawn's first look) waiting for the output to settle.
struct Look {
  caf::response_promise rp;
  LookOptions options;
  clock::time_point deadline;
  uint64_t output_seq = 0; // output chunks seen when it began
  bool for_news = false;   // a waiting tool's: it ends at new output, not at the wait
  // Not answered before this unless output came since it began: the program is yet to
  // act on what the look followed (a lone Esc, a new size).
  clock::time_point not_before{};
  // An apply ending in Ctrl-C: not answered on settled output before its SIGINT went
  // out (the tool reading what came before it, or kInterruptWait on), nor before the
  // tool had settle_ms from then to act on it (`interrupt_seen`: when it was found gone).
  bool after_interrupt = false;
  clock::time_point interrupt_seen{};
};

// A program reads a lone Esc as the Escape key only once no more bytes follow within
// its escape delay (ncurses' ESCDELAY and vim's timeoutlen are 1000 ms by default):
// a look right after it showed the screen from before (vim still in insert mode).
constexpr auto kEscapeDelay = std::chrono::milliseconds(1100);
// A program redraws for a new size at its SIGWINCH, which comes with the look.
constexpr auto kResizeRedraw = std::chrono::milliseconds(500);

struct handle_state {
  std::string id;
  LaunchSpec spec;
  supervisor_actor registry;
  std::shared_ptr<Process> proc;
  std::unique_ptr<OutputBuffer> out;
  std::shared_ptr<OutputRoute> route = std::make_shared<OutputRoute>();
  std::string stdout_capture; // for structured output, while it fits the cap
  bool stdout_overflow = false; // the capture is given up for good, whatever the phase
  std::string stderr_tail;
  std::string held_sequence; // a pipe's escape sequence cut by a look's end (take_output)
  OpenLine open_line;         // the line the last look's text ended inside of (take_output)
  phase at = phase::running;
  HandleReport final;
  std::vector<caf::response_promise> abort_waiters;
  // The io mode's pieces: a terminal (io = pty), a control channel (io = control),
  // neither for a plain pipe. Waiting for input is watched in every mode.
  std::unique_ptr<HandleTerminal> term;
  std::unique_ptr<ControlChannel> control;
  InputWatch watch;
  std::vector<Look> looks;
  uint64_t output_seq = 0;
  clock::time_point last_output = clock::now();
  // Bookkeeping of the settle timer, not of the lifecycle: output came since the
  // last probe; and the tick on its way (its number, 0: none) and when it comes. One
  // needed sooner (a look's deadline before an idle probe's) is sent anew: the one
  // before it is then passed over when it comes.
  bool probe_due = false;
  uint64_t tick = 0;
  uint64_t ticks_sent = 0;
  clock::time_point tick_at;
  // Input was written and no output came since: the tool may not have read it yet
  // (a pty hands input to its reader from a kernel work queue, later under load),
  // so its old prompt and its blocked read say nothing about waiting now; who read
  // it as it went in tells (InputWatch::reads_again).
  std::optional<InputWatch::ReaderMark> unanswered;
  // A control tool found reading its stdin with no question asked: who, and since
  // when (read_without_question).
  std::optional<InputWatch::ReaderMark> bare_read;
  clock::time_point bare_read_since;
  bool input_ended = false; // an apply ended its input (Ctrl-D): its stdin is closed
  bool waiting_shown = false; // a look answered with the tool's present wait for input
  std::string input_note;     // said once with the next look: what typing may not have done

  static inline const char* name = "jp.handle";
};

// What its process and its own timer tell it, besides the handle interface.
using process_handle_actor = handle_actor::extend<
  caf::reacts_to<output_atom, bool, std::string>, // stderr?, a chunk
  caf::reacts_to<control_atom, std::string>,      // fd 3 bytes
  caf::reacts_to<exited_atom, bool, int, int, std::string>, // signaled, code, signal, left_running_note
  caf::reacts_to<gone_atom>,                      // its whole group is gone (after an abort)
  caf::reacts_to<leave_atom>,                     // retired: what was queued with the retire ran
  caf::reacts_to<tick_atom, uint64_t>>;           // settle timer (its number)
using handle_actor_t = process_handle_actor::stateful_base<handle_state>;

std::vector<std::string> last_lines(std::string_view text, size_t n) {
  std::vector<std::string> lines;
  while (!text.empty() && lines.size() < n) {
    if (text.back() == '\n')
      text.remove_suffix(1);
    auto pos = text.rfind('\n');
    auto line = pos == std::string_view::npos ? text : text.substr(pos + 1);
    if (!line.empty() || !lines.empty())
      lines.push_back(sanitize_utf8(readable_text(line)));
    text = pos == std::string_view::npos ? std::string_view{} : text.substr(0, pos + 1);
  }
  return {lines.rbegin(), lines.rend()};
}

bool detects_input_wait(const handle_state& st) {
  return !has_exited(st.at) && st.proc && st.watch.enabled();
}

/// The question the tool asked on its control channel, if any.
const std::optional<Question>& asked(const handle_state& st) {
  static const std::optional<Question> none;
  return st.control ? st.control->question() : none;
}

/// Its last line as a person would see it: on a terminal, the screen's last row with
/// text (a full-screen program redraws: its output's last line is no line of its
/// screen); else its output's last line.
std::string last_line_shown(const handle_state& st) {
  if (!st.term)
    return st.watch.last_line();
  auto screen = st.term->render();
  for (auto row = screen.rows.rbegin(); row != screen.rows.rend(); ++row)
    if (row->find_first_not_of(' ') != std::string::npos)
      return row->substr(0, row->find_last_not_of(' ') + 1);
  return {};
}

/// A full-screen program's screen as text for its result: its rows less trailing
/// blanks, under a line saying what they are ("" when it was blank).
std::string last_screen_text(const Screen& screen) {
  std::vector<std::string_view> rows;
  for (auto& row : screen.rows) {
    auto end = row.find_last_not_of(' ');
    rows.push_back(end == std::string::npos ? std::string_view() : std::string_view(row).substr(0, end + 1));
  }
  while (!rows.empty() && rows.back().empty())
    rows.pop_back();
  if (rows.empty())
    return {};
  std::string out = "[jp-actors: it ended on the full-screen program's screen, which showed:]\n";
  for (auto row : rows)
    out.append(row).push_back('\n');
  return out;
}

/// The report of a look; with the screen when asked for, or while a full-screen
/// program has the terminal (its output is no text then: terminal_text.hpp).
HandleReport with_screen(const handle_state& st, HandleReport r, const LookOptions& o) {
  if (st.term && (o.screen || st.term->full_screen()))
    r.screen = st.term->render(st.spec.output_cap);
  return r;
}

/// Its final report as a look or an abort after its exit tells it: one that exited
/// asking (its last words a needs_input, no final state) is stopped, its question
/// said, as the registry tells it once it hears of the stop. A look that came first
/// (a node's spawn, its first look over the network) showed it waiting, and an
/// await took it for a question `apply` could answer. (Not the stop's report: a
/// one-shot run's question goes to its registry with it, which runs it again answered.)
HandleReport told_final(const handle_state& st) {
  auto r = st.final;
  if (!r.state.stopped())
    r.state = exited_without_stopping(st.id, r.state, st.spec.fixed_answers.count(r.state.question.id) > 0);
  return r;
}

HandleReport looked_final(const handle_state& st, const LookOptions& o) {
  return with_screen(st, told_final(st), o);
}

/// Whether a part of a look is no text: 64 bytes or more, a quarter or more of them
/// not text (a binary file `cat` printed). Each of its bytes would be a U+FFFD, three
/// times its size in the model's context, telling it nothing.
bool is_binary(std::string_view part) {
  return part.size() >= 64 && not_text_bytes(part) * 4 >= part.size();
}

std::string binary_note(uint64_t n) {
  return fmt::format("[jp-actors: {} bytes of binary output left out (not text): to look at it, pipe it through "
                     "`od -c | head` or write it to a file and run `file` on it]\n",
                     n);
}

/// The output since the last look, as a terminal would show its lines: a pipe's
/// bytes, or a terminal's text (its line redraws kept: terminal_text.hpp). A sequence
/// or a UTF-8 character cut by the look's end is shown with the next look, once
/// whole; at the end, dropped (a character, as U+FFFD). A part that is no text (its
/// head or its tail, or the whole) is left out, saying so, and counted as omitted.
OutputBuffer::Taken take_output(handle_state& st, bool last = false) {
  auto taken = st.out->take();
  auto bytes = std::move(st.held_sequence) + taken.content;
  st.held_sequence.clear();
  // Where the head ends when the middle was left out (before the open character goes).
  auto head_end = bytes.size() - taken.content.size() + taken.head;
  std::string open_character;
  if (!last) {
    open_character = bytes.substr(bytes.size() - incomplete_utf8_tail(bytes));
    bytes.resize(bytes.size() - open_character.size());
  }
  auto* held = last ? nullptr : &st.held_sequence;
  if (taken.omitted == 0) {
    if (is_binary(bytes)) {
      taken.content = binary_note(bytes.size());
      taken.omitted = bytes.size(); // none of it is shown
    } else {
      taken.content = readable_text(bytes, held, &st.open_line);
    }
  } else {
    // The head and the tail each on its own: a redraw of lines in the tail (cursor up)
    // must not reach back over the omission into the head; and a binary tail (a
    // build's text, then an archive it printed) leaves the head's text shown.
    auto marker = omission_marker(taken.omitted);
    std::string_view all(bytes);
    auto head_bytes = all.substr(0, head_end), tail_bytes = all.substr(head_end + marker.size());
    std::string head, tail;
    // Both binary, or parts too short to judge alone (a cap under 256 bytes) that
    // are binary together: all of it is one note.
    bool short_parts = head_bytes.size() < 64 || tail_bytes.size() < 64;
    auto both = short_parts ? std::string(head_bytes) + std::string(tail_bytes) : std::string();
    if ((is_binary(head_bytes) && is_binary(tail_bytes)) || (short_parts && is_binary(both))) {
      // All of it, the middle too: one note of what it printed since the last look.
      taken.omitted += head_bytes.size() + tail_bytes.size();
      taken.content = binary_note(taken.omitted);
      st.held_sequence += open_character;
      return taken;
    }
    if (is_binary(head_bytes)) {
      head = binary_note(head_bytes.size());
      taken.omitted += head_bytes.size();
    } else {
      head = readable_text(head_bytes, nullptr, &st.open_line);
    }
    st.open_line = {};
    if (is_binary(tail_bytes)) {
      tail = binary_note(tail_bytes.size());
      taken.omitted += tail_bytes.size();
    } else {
      tail = readable_text(tail_bytes, held, &st.open_line);
    }
    taken.content = head + marker + tail;
  }
  st.held_sequence += open_character; // after a sequence it ends inside of, if any
  return taken;
}

/// What to tell of a typed line longer than a terminal's line buffer: a program
/// that reads whole lines (`read`, `input()` without readline) gets only its first
/// 4095 bytes, and the kernel drops the rest without a word ("": none is).
std::string long_line_note(std::string_view typed) {
  constexpr size_t kMaxCanonLine = 4095; // N_TTY's buffer, less the line's end
  size_t longest = 0;
  for (size_t at = 0; at < typed.size();) {
    auto end = typed.find_first_of("\r\n", at);
    auto line = (end == std::string_view::npos ? typed.size() : end) - at;
    longest = std::max(longest, line);
    at = end == std::string_view::npos ? typed.size() : end + 1;
  }
  if (longest <= kMaxCanonLine)
    return {};
  return fmt::format("[jp-actors: a line of {} bytes was typed; a program reading whole lines from its terminal "
                     "gets only the first {} (the kernel drops the rest): for longer text, write it to a file the "
                     "program reads]\n",
                     longest, kMaxCanonLine);
}

HandleReport running_report(handle_actor_t* self, const LookOptions& o = {}) {
  auto& st = self->state;
  auto taken = take_output(st);
  taken.content.insert(0, std::exchange(st.input_note, {})); // its end is still the prompt
  auto& question = asked(st);
  auto state = question         ? ToolState::waiting(*question, std::move(taken.content))
               : st.watch.waiting ? ToolState::waiting(*st.watch.waiting, std::move(taken.content))
                                  : ToolState::running(std::move(taken.content));
  st.waiting_shown = st.watch.waiting.has_value();
  return with_screen(st, {st.id, std::move(state), taken.omitted, std::move(taken.spill_path)}, o);
}

/// The tool waits for input (a probe found it reading, or its prompt showed) or no
/// longer does: the registry hears of it, for awaits and notifications.
void set_input_wait(handle_actor_t* self, bool waiting, std::optional<Question> question = {}) {
  auto& st = self->state;
  if (waiting == st.watch.waiting.has_value())
    return;
  st.waiting_shown = false;
  if (waiting) {
    st.watch.waiting = question ? std::move(*question) : st.watch.question();
    // A look waiting now answers with it: no notification needed then.
    self->send(st.registry, waiting_atom::value, st.id, *st.watch.waiting, !st.looks.empty());
  } else {
    st.watch.waiting.reset();
    self->send(st.registry, waiting_atom::value, st.id, Question{}, false);
  }
}

// How long a control tool must sit reading its stdin, every thread of it asleep,
// before the read counts as one without a question (read_without_question).
constexpr auto kQuestionOnItsWay = std::chrono::milliseconds(500);
/// How soon a probe that found input or output on its way asks again.
constexpr auto kInFlightRecheck = std::chrono::milliseconds(20);

/// Whether a tool found waiting for input waits without a question. Always, but for
/// a control tool found reading its stdin: it writes its question on fd 3 before it
/// reads, and that line may still be on its way to us (the io thread, this mailbox);
/// and a tool may keep a reader of its answers on stdin while it works. A read that
/// has lasted kQuestionOnItsWay, no thread of the tool run meanwhile and no
/// question come, is neither: nothing here holds a line that long. A heuristic, as
/// the probe of a pipe tool is; a wait told stands until something ends it.
/// `reader`: the process the probe found reading (0: its prompt told it).
bool read_without_question(handle_state& st, pid_t reader) {
  if (!st.control || st.watch.waiting)
    return true;
  auto mark = st.watch.stdin_read(st.proc->pid(), reader);
  if (mark.pid == 0)
    return true; // its prompt pattern, not a read
  auto now = clock::now();
  if (!st.bare_read || st.bare_read->pid != mark.pid || st.bare_read->runs != mark.runs) {
    st.bare_read = mark;
    st.bare_read_since = now;
  }
  return now - st.bare_read_since >= kQuestionOnItsWay;
}

void arm_tick(handle_actor_t* self, clock::time_point now, clock::time_point at);

/// Input on its way to the tool or output on its way here: its prompt, or its reader
/// asleep, says nothing yet (a shell's prompt from before the line typed; a shell
/// back in its read while what it printed of that line is still to be read here).
/// Asked again soon: the tool may take the input without a word, which no output
/// would bring a probe for.
bool io_in_flight(handle_actor_t* self) {
  auto& st = self->state;
  if (!st.proc->input_unread() && !st.proc->output_unread())
    return false;
  st.probe_due = true;
  auto now = clock::now();
  arm_tick(self, now, now + kInFlightRecheck);
  return true;
}

/// Whether the tool is stopped (SIGSTOP), for an apply or an answer to continue it:
/// the probe's finding, its leader's state read here only where no probe runs while
/// it is idle (nothing watched, settle_ms 0, a control question asked). A probed
/// tool's apply, the round trip's path, reads no /proc: a stop not yet probed is
/// unknown to the model anyway.
bool stopped_by_signal(const handle_state& st) {
  if (st.watch.waits_stopped())
    return true;
  bool probed_when_idle = st.watch.enabled() && st.spec.settle_ms > 0 && !asked(st);
  return !has_exited(st.at) && st.proc && !probed_when_idle && InputWatch::stopped(st.proc->pid());
}

/// Quiet output and a tool reading its terminal, or a last line matching the
/// tool's prompt pattern: it waits for input.
void probe_input_wait(handle_actor_t* self) {
  auto& st = self->state;
  st.probe_due = false;
  if (!detects_input_wait(st) || asked(st))
    return;
  // Stopped (SIGSTOP): it runs no more of itself, whatever it read; an apply
  // continues it.
  if (InputWatch::stopped(st.proc->pid())) {
    st.unanswered.reset();
    set_input_wait(self, true, InputWatch::stopped_question());
    return;
  }
  if (st.watch.waits_stopped())
    set_input_wait(self, false); // continued: it runs, and is probed as ever
  auto quiet_for = std::chrono::duration_cast<std::chrono::milliseconds>(clock::now() - st.last_output);
  if (st.unanswered) {
    // No output since the input went in: it waits again once it took the input.
    pid_t reader = 0;
    if (st.watch.reads_again(st.proc->pid(), *st.unanswered, quiet_for, &reader) && !io_in_flight(self) &&
        read_without_question(st, reader)) {
      st.unanswered.reset();
      set_input_wait(self, true);
    }
    return;
  }
  pid_t reader = 0;
  auto waits = st.watch.probe(st.proc->pid(), quiet_for, &reader);
  set_input_wait(self, waits && !io_in_flight(self) && read_without_question(st, reader));
}

bool quiet(const handle_state& st, clock::time_point now) {
  return now - st.last_output >= std::chrono::milliseconds(st.spec.settle_ms);
}

// How often a handle nobody looks at is probed: an await (which asks the registry,
// not the handle) learns so that its tool sits reading input it will not get, though
// the tool said nothing first (a silent `read`, `cat` waiting for its input).
constexpr auto kIdleProbe = std::chrono::seconds(1);

/// Whether the tool is probed now and then while it runs: it can be told to wait,
/// does not yet, and its output settles (settle_ms 0 probes at every chunk already).
bool probes_when_idle(const handle_state& st) {
  // A stopped tool too: continued by another (a kill -CONT), it runs again unsaid.
  return detects_input_wait(st) && (!st.watch.waiting || st.watch.waits_stopped()) && !asked(st) &&
         st.spec.settle_ms > 0;
}

/// Whether a look has waited enough: the handle stopped or asks, its time is up,
/// or its output settled (quiet) where the tool now waits for input, or, when that
/// cannot be told or a busy tool looks the same (a pipe without a prompt pattern),
/// where some output came since the look began.
bool look_done(const handle_state& st, Look& look, clock::time_point now) {
  if (has_exited(st.at) || asked(st) || now >= look.deadline)
    return true;
  if (look.after_interrupt) {
    if (st.proc && st.proc->interrupt_pending())
      return false;
    if (look.interrupt_seen == clock::time_point{})
      look.interrupt_seen = now;
    if (now - look.interrupt_seen < std::chrono::milliseconds(st.spec.settle_ms))
      return false; // output from before the signal is no answer to it
  }
  if (now < look.not_before && st.output_seq == look.output_seq)
    return false;
  if (!quiet(st, now))
    return false;
  if (look.for_news)
    return st.output_seq > look.output_seq;
  if (st.watch.waiting)
    return true;
  return (!detects_input_wait(st) || st.watch.settles_on_output()) && st.output_seq > look.output_seq;
}

void schedule_tick(handle_actor_t* self);

/// Answers the looks that have waited enough.
void settle_looks(handle_actor_t* self) {
  auto& st = self->state;
  auto now = clock::now();
  if (!has_exited(st.at) && (st.probe_due || !st.looks.empty() || probes_when_idle(st)) && quiet(st, now))
    probe_input_wait(self);
  for (size_t i = 0; i < st.looks.size();) {
    if (!look_done(st, st.looks[i], now)) {
      ++i;
      continue;
    }
    auto look = std::move(st.looks[i]);
    st.looks.erase(st.looks.begin() + static_cast<std::ptrdiff_t>(i));
    look.rp.deliver(has_exited(st.at) ? looked_final(st, look.options) : running_report(self, look.options));
  }
  schedule_tick(self);
}

/// One timer at a time: when output should have settled, or the next look's deadline,
/// or (nobody looking) the next idle probe.
void schedule_tick(handle_actor_t* self) {
  auto& st = self->state;
  if (has_exited(st.at))
    return;
  bool probe = st.probe_due && detects_input_wait(st);
  bool idle = st.looks.empty() && !probe;
  if (idle && !probes_when_idle(st))
    return;
  auto now = clock::now();
  // Without a settle time (0) output settles looks as it comes: the timer is for
  // their deadlines only.
  auto settle = std::chrono::milliseconds(st.spec.settle_ms);
  if (settle.count() == 0 && st.looks.empty())
    return;
  auto at = clock::time_point::max();
  if (settle.count() > 0)
    at = st.last_output + settle > now ? st.last_output + settle : now + settle;
  if (idle)
    at = std::max(at, now + kIdleProbe);
  for (auto& look : st.looks)
    at = std::min(at, look.deadline);
  arm_tick(self, now, at);
}

/// The timer set for `at`, unless the one on its way comes soon enough.
void arm_tick(handle_actor_t* self, clock::time_point now, clock::time_point at) {
  auto& st = self->state;
  if (st.tick != 0 && st.tick_at <= at)
    return;
  st.tick = ++st.ticks_sent;
  st.tick_at = at;
  auto delay = std::max(std::chrono::duration_cast<std::chrono::milliseconds>(at - now),
                        std::chrono::milliseconds(1));
  self->delayed_send(self, delay, tick_atom::value, st.tick);
}

/// A look that may wait (wait_ms, else the tool's default) for output to settle.
/// `for_news`: a fetch that asked to wait (its own wait_ms) at a tool whose wait
/// for input a look has shown already, with nothing new to show, waits for its next
/// output (a screen that redraws, a REPL's job printing later) rather than answer
/// the same at once. (The first look at a new question answers at once.)
/// `at_least`: the program is yet to act on what came before (a lone Esc, a new
/// size); unless it answers sooner, the look waits this long, its wait made long
/// enough for it (an explicit wait_ms of 0 stays 0).
caf::result<HandleReport> look(handle_actor_t* self, const LookOptions& o, bool for_news = false,
                               std::chrono::milliseconds at_least = {}, bool after_interrupt = false) {
  auto& st = self->state;
  bool fetch = for_news; // (a fetch's look asks for news; for_news is narrowed below)
  auto wait = o.wait_ms >= 0 ? o.wait_ms : st.spec.wait_ms;
  if (at_least.count() > 0 && o.wait_ms != 0)
    wait = std::max<int64_t>(wait, at_least.count() + std::max<int64_t>(st.spec.settle_ms, 0) + 200);
  bool waits_already = st.watch.waiting && quiet(st, clock::now());
  for_news = for_news && waits_already && st.waiting_shown && o.wait_ms > 0 && st.out->pending() == 0;
  // (A program that waits still has to act on a new size, or a lone Esc: at_least.)
  if (wait <= 0 || asked(st) || (waits_already && !for_news && at_least.count() == 0))
    return running_report(self, o);
  auto rp = self->make_response_promise<HandleReport>();
  auto now = clock::now();
  // A fetch's news include output no look has shown yet: a fetch made just after it
  // came (a node's spawn, whose look is its client's first fetch) waited its whole
  // wait for more. (An apply's look waits for what its input does.)
  auto since = st.output_seq;
  if (fetch && st.out->pending() > 0 && since > 0 && at_least.count() == 0 && !after_interrupt)
    --since;
  st.looks.push_back(
    Look{rp, o, now + std::chrono::milliseconds(wait), since, for_news, now + at_least, after_interrupt});
  schedule_tick(self);
  return rp;
}

/// Whether `input` is a terminal's typing ({"keys": [...]}, perhaps with "text"), as
/// handle_terminal takes it.
bool is_terminal_keys(const Json& input) {
  auto* keys = input.is_object() ? input.find("keys") : nullptr;
  if (!keys || !keys->is_array())
    return false;
  for (auto& [key, value] : input.as_object())
    if (key != "keys" && key != "text")
      return false;
  return std::all_of(keys->as_array().begin(), keys->as_array().end(), [](const Json& k) { return k.is_string(); });
}

caf::error look_error(const handle_state& st, const LookOptions& o) {
  if (st.term)
    return {};
  if (auto why = no_terminal(o, st.id, st.spec.tool,
                             st.spec.tool == "shell" ? " and the shell spawned with \"tty\": true" : "");
      !why.empty())
    return make_error(error_code::bad_arguments, std::move(why));
  return {};
}

/// Whether the size changed.
bool apply_resize(handle_actor_t* self, const LookOptions& o) {
  auto& st = self->state;
  if (o.rows <= 0 || !st.term || (o.rows == st.spec.rows && o.cols == st.spec.cols))
    return false;
  st.spec.rows = o.rows;
  st.spec.cols = o.cols;
  st.term->resize(o.rows, o.cols);
  if (st.proc)
    st.proc->resize(o.rows, o.cols);
  return true;
}

/// A chunk of output runs on the io thread only when `out` takes it with no file
/// made and at most this much written to disk: a flood's spill head is written by
/// a worker alongside the reads (W4 at 256 MiB was slower with it on the io thread),
/// a chatty tool's lines are not.
constexpr uint64_t io_thread_write_max = 64 * 1024;
/// A terminal's text may be longer than its chunk by what it held back before (a
/// lone CR, a split character).
constexpr uint64_t terminal_held_max = 8;

void note_out_room(handle_state& st) {
  st.route->set_room(st.out->append_room(io_thread_write_max), st.out->close_room());
}

/// A chunk of `bytes` handled (or dropped): on the io thread, with a chunk behind it
/// sent for a worker, the handle leaves the io thread before that chunk.
void output_handled(handle_state& st, uint64_t bytes) {
  if (st.route->handled(bytes, io_thread_running() != nullptr))
    io_thread_leave();
}

/// One step of the control channel: a question ends a wait (the registry hears of
/// it), content is output.
void adopt(handle_actor_t* self, const ControlChannel::Step& step) {
  auto& st = self->state;
  // A line the tool meant for jp-actors and got wrong: said where it is read (its
  // output, for whoever looks) as well as in a failure's trace.
  keep_tail(st.stderr_tail, step.note, stderr_tail_bytes); // bounded however many it writes
  if (!step.note.empty()) {
    st.out->append(step.note);
    note_out_room(st);
  }
  if (step.answer && st.proc) {
    st.proc->write_stdin(*step.answer);
    st.bare_read.reset(); // its read now has something to take
  }
  if (step.asks) {
    // Its question, not a read without one, is what it waits on.
    st.bare_read.reset();
    set_input_wait(self, false);
    self->send(st.registry, waiting_atom::value, st.id, *st.control->question(), !st.looks.empty());
    settle_looks(self);
  }
  if (!step.content.empty()) {
    st.out->append(step.content);
    note_out_room(st);
  }
}

/// What the model is told when the command's exit killed what it left running in
/// the background (ExitInfo::left_running): without it, it believes the server it
/// started with `&` runs, and debugs why it does not answer. "" when nothing was.
std::string left_running_note(const ExitInfo& info) {
  if (info.left_running == 0)
    return {};
  auto n = info.left_running;
  std::string names;
  for (size_t i = 0; i < info.left_commands.size(); ++i) {
    if (i > 0)
      names += i + 1 == info.left_commands.size() && n == info.left_commands.size() ? " and " : ", ";
    names += "`" + info.left_commands[i] + "`";
  }
  if (n > info.left_commands.size())
    names += fmt::format(" and {} more", n - info.left_commands.size());
  return fmt::format("[jp-actors: the command exited, and the {} {} it left running in the background {} "
                     "killed with it: {}. A handle's processes end with it: to keep a server running, "
                     "spawn it as a handle of its own (in the foreground, no `&`) and leave that handle running.]",
                     n, n == 1 ? "process" : "processes", n == 1 ? "was" : "were", names);
}

/// How it exited. A shell exits 128 + the signal that stopped its command: where
/// that is a resource limit's signal and the limit is set, say so (a first process
/// the signal stopped itself says it in describe()).
std::string exit_text(const ExitInfo& info, const ToolLimits& limits) {
  auto text = info.describe();
  if (!info.signaled && info.code == 128 + SIGXCPU && limits.cpu_secs)
    text += fmt::format(" (128 + {}, SIGXCPU: a process of it may have used up its CPU time limit)", SIGXCPU);
  else if (!info.signaled && info.code == 128 + SIGXFSZ && limits.file_size_mb)
    text += fmt::format(" (128 + {}, SIGXFSZ: a process of it may have written past its file size limit)", SIGXFSZ);
  return text;
}

// The final state once the process ended: what the tool said on stdout when it
// speaks the protocol, else plain text judged by the exit status.
ToolState final_state(handle_actor_t* self, const ExitInfo& info, OutputBuffer::Taken& taken) {
  auto& st = self->state;
  auto content = std::move(taken.content);
  if (st.at == phase::stopping && info.signaled) { // an exit of its own racing the abort is not one
    ToolError err{fmt::format("aborted ({})", info.describe()), last_lines(st.stderr_tail, trace_lines),
                  false};
    return ToolState::failure(std::move(err), std::move(content));
  }
  if (st.control && st.control->declared()) {
    // The result is what it declared, not its output (README: a `stopped` line is the
    // result), held to the output cap as a function tool's is: a declared one may
    // hold megabytes. What was cut or spilled is the result's, not the output's.
    auto state = *st.control->declared();
    taken.omitted = 0;
    taken.spill_path.clear();
    hold_state(ResultHold{st.spec.output_cap, st.spec.spill_dir, st.spec.spill_root,
                          SpillLimits{st.spec.spill_max_bytes, st.spec.spill_budget_bytes}},
               st.id, state, taken.omitted, taken.spill_path);
    return state;
  }
  // It asked and exited before any answer (nor said what came of it): said, as its
  // result would otherwise read as a plain success of nothing.
  if (st.control && st.control->question() && st.at != phase::stopping)
    content = with_last_line(std::move(content),
                             fmt::format("[jp-actors: it exited with its question `{}` unanswered]",
                                         cut_text(st.control->question()->id)));
  // A signal's shutdown signals every group at once (HUP, TERM, then KILL), before
  // each handle's own abort reaches it: aborted all the same (it read as the tool's
  // own failure). A SIGSEGV of its own is its own.
  if (info.signaled && new_processes_refused() &&
      (info.signal == SIGHUP || info.signal == SIGTERM || info.signal == SIGKILL)) {
    ToolError err{fmt::format("aborted ({}) as jp-actors ended on a signal", info.describe()),
                  last_lines(st.stderr_tail, trace_lines), false};
    return ToolState::failure(std::move(err), std::move(content));
  }
  if (st.spec.structured_output && !st.stdout_overflow) {
    if (auto parsed = parse_tool_output(st.stdout_capture); parsed.ok())
      return *parsed;
  }
  if (info.success())
    return ToolState::success(std::move(content));
  // A tool that catches SIGTERM and fails with a status of its own: say the abort
  // was under way (an exit 0 then is a clean stop, told as such).
  auto why = exit_text(info, st.spec.limits);
  if (st.at == phase::stopping)
    why += " (as it was being aborted)";
  ToolError err{std::move(why), last_lines(st.stderr_tail, trace_lines), false};
  return ToolState::failure(std::move(err), std::move(content));
}

void deliver_aborts(handle_actor_t* self) {
  for (auto& rp : self->state.abort_waiters)
    rp.deliver(told_final(self->state));
  self->state.abort_waiters.clear();
}

/// The one place the phase changes, with what entering the new phase does: an abort
/// starts the group's termination, a handle that is done answers its aborts, and a
/// retired handle with nothing left to answer quits.
void advance(handle_actor_t* self, event e) {
  auto& st = self->state;
  auto from = st.at;
  // Retired with no abort waiting for the group: nothing is left to answer.
  bool quit = e == event::retire && from != phase::reaping && from != phase::retiring;
  st.at = next(from, e);
  if (st.at == phase::stopping && from == phase::running) {
    auto me = process_handle_actor{self};
    st.proc->terminate(std::chrono::milliseconds(st.spec.grace_ms),
                       [me] { io_thread_run(me, gone_atom::value); });
  }
  if (e == event::gone && (from == phase::reaping || from == phase::retiring)) {
    deliver_aborts(self);
    quit = from == phase::retiring;
  }
  if (quit)
    self->quit();
}

void finish(handle_actor_t* self, ToolState state, uint64_t omitted, std::string spill) {
  auto& st = self->state;
  st.final = HandleReport{st.id, std::move(state), omitted, std::move(spill)};
  // No abort had reached it. A signal's shutdown signals every group itself, before
  // any abort: what ends then (killed, or a server exiting on its TERM) is ended by it.
  st.final.own_end = st.at == phase::running && !new_processes_refused();
  st.proc.reset();
  st.out->close();
  self->send(st.registry, stopped_atom::value, st.final);
}

process_handle_actor::behavior_type handle_behavior(handle_actor_t* self, std::string id, LaunchSpec spec,
                                                    IoThread* io, supervisor_actor registry) {
  auto& st = self->state;
  st.id = std::move(id);
  st.spec = std::move(spec);
  st.registry = std::move(registry);
  st.out = std::make_unique<OutputBuffer>(st.spec.output_cap, spill_path_for(st.spec.spill_dir, st.id), st.spec.spill_root,
                                          SpillLimits{st.spec.spill_max_bytes, st.spec.spill_budget_bytes});
  if (st.spec.pty)
    st.term = std::make_unique<HandleTerminal>(st.spec.rows, st.spec.cols);
  else if (st.spec.control_channel) // the process opens fd 3 only without a pty
    st.control = std::make_unique<ControlChannel>(st.spec.output_cap, st.spec.fixed_answers);
  st.watch = InputWatch(st.spec.prompt_pattern, st.spec.pty, st.spec.stdin_pipe && st.spec.settle_ms > 0);
  note_out_room(st);
  auto me = process_handle_actor{self};
  ProcessEvents events;
  events.on_output = [me, route = st.route](stream_kind s, std::string_view chunk) {
    if (s == stream_kind::control) { // what it says may be output: a worker's
      route->send_for_worker();
      io_thread_send(me, control_atom::value, std::string(chunk));
    } else if (route->send(chunk.size(), terminal_held_max)) {
      io_thread_run_output(me, output_atom::value, s == stream_kind::err, chunk_copy(chunk));
    } else {
      io_thread_send(me, output_atom::value, s == stream_kind::err, chunk_copy(chunk));
    }
  };
  // The handle's end writes the spill file's tail and appends a terminal's held
  // text: on the io thread only when that writes nothing to disk.
  events.on_exit = [me, route = st.route, slack = st.term ? terminal_held_max : 0](const ExitInfo& info) {
    auto left = left_running_note(info);
    if (info.input_unread > 0) // typed to it and gone with it: the model believed it was read
      left = with_last_line(std::move(left),
                            fmt::format("[jp-actors: it ended without reading the last {} bytes of its input]",
                                        info.input_unread));
    if (route->exit_here(slack)) {
      io_thread_run(me, exited_atom::value, info.signaled, info.code, info.signal, std::move(left));
    } else {
      route->exit_for_worker();
      io_thread_send(me, exited_atom::value, info.signaled, info.code, info.signal, std::move(left));
    }
  };
  SpawnSpec ps{st.spec.argv, st.spec.cwd,      st.spec.env,  st.spec.stdin_pipe, st.spec.control_channel,
               st.spec.pty,  st.spec.rows, st.spec.cols, st.spec.env_pass, st.spec.env_drop, false, st.spec.limits,
               st.spec.daemons};
  bool transient = false; // short of fds or processes: other tools' ends give them back
  auto proc = spawn_process(*io, std::move(ps), std::move(events), &transient);
  if (!proc) {
    finish(self, ToolState::failure(ToolError{proc.error(), {}, transient}), 0, {});
    advance(self, event::exit);
  } else {
    st.proc = *proc;
    st.watch.set_input(st.proc->input_file());
    // If this actor dies, its process group goes with it.
    auto p = st.proc;
    self->attach_functor([p] { p->terminate(std::chrono::milliseconds(0), {}); });
    schedule_tick(self); // its first idle probe, if it has them
  }
  return {
    [self](output_atom, bool is_err, std::string& chunk) {
      auto& st = self->state;
      if (has_exited(st.at))
        return output_handled(st, chunk.size());
      // The first output since the assistant last looked: the registry may notify.
      if (st.spec.notify_content && st.out->pending() == 0)
        self->send(st.registry, content_atom::value, st.id);
      std::string_view text = chunk;
      HandleTerminal::Fed fed;
      if (st.term) {
        fed = st.term->feed(chunk);
        if (!fed.replies.empty() && st.proc)
          st.proc->write_stdin(std::move(fed.replies));
        text = fed.text;
      }
      st.watch.saw(text);
      if (is_err) {
        keep_tail(st.stderr_tail, chunk, stderr_tail_bytes);
      } else if (st.spec.structured_output && !st.stdout_overflow) {
        st.stdout_capture += chunk;
        if (st.stdout_capture.size() > st.spec.output_cap) {
          st.stdout_overflow = true;
          st.stdout_capture.clear();
        }
      }
      auto consumed = chunk.size();
      // Last, so the buffer may keep the chunk itself rather than a copy of it.
      if (st.term)
        st.out->append(text);
      else
        st.out->append(std::move(chunk));
      chunk_done(std::move(chunk)); // unless the buffer kept it: for the next chunk
      note_out_room(st);
      ++st.output_seq;
      st.last_output = clock::now();
      // The echo at least: the input was taken. Not while it is still unread: what
      // came meanwhile is no answer to it (a shell's prompt from before the line).
      // (Asked only where a probe will use the mark: one with a reader to watch, as
      // a mark without one, a prompt pattern's alone, only output ends.)
      if (st.unanswered && !(st.unanswered->pid != 0 && detects_input_wait(st) && st.proc->input_unread()))
        st.unanswered.reset();
      if (detects_input_wait(st)) {
        st.probe_due = true;
        set_input_wait(self, false); // it talks: whatever it waited for came
        if (st.spec.settle_ms > 0)
          schedule_tick(self);
      }
      // Consumed: let the io thread read on (it stops while we are far behind).
      if (st.proc)
        st.proc->ack(consumed);
      // settle_ms = 0: a wait ends at the first new output, not after a quiet spell.
      if (st.spec.settle_ms == 0 && (st.probe_due || !st.looks.empty()))
        settle_looks(self);
      output_handled(st, consumed);
    },
    [self](control_atom, std::string& chunk) {
      auto& st = self->state;
      if (st.proc)
        st.proc->ack(chunk.size());
      if (!has_exited(st.at) && st.control) {
        st.control->feed(chunk);
        while (auto step = st.control->next())
          adopt(self, *step); // sets the room for what it appends
      }
      st.route->other_handled();
    },
    [self](exited_atom, bool signaled, int code, int signal, const std::string& left_note) {
      auto& st = self->state;
      if (has_exited(st.at))
        return;
      // A last control line without its end is read all the same (its output first).
      if (st.control)
        if (auto last = st.control->finish())
          adopt(self, *last);
      // Ended on the alternate screen (a crash of `top`, an error a full-screen
      // program shows as it dies): its output was no text, so its last screen is.
      bool on_screen = st.term && st.term->full_screen();
      if (st.term)
        st.out->append(st.term->flush());
      st.out->close(); // first: the report says whether its spill file was written whole
      auto taken = take_output(st, true);
      if (on_screen)
        taken.content += last_screen_text(st.term->render(st.spec.output_cap));
      auto state = final_state(self, ExitInfo{signaled, code, signal}, taken);
      // Its last line, past the output cap (bounded: a few short command lines): the
      // model must see it whatever the output was. Not after an abort: asked for.
      if (st.at != phase::stopping)
        state.content = with_last_line(std::move(state.content), left_note);
      state.content += std::exchange(st.input_note, {}); // a long typed line it read in part
      finish(self, std::move(state), taken.omitted, std::move(taken.spill_path));
      advance(self, event::exit);
      settle_looks(self);
    },
    [self](tick_atom, uint64_t tick) {
      if (tick != self->state.tick)
        return; // one sent before the one now on its way
      self->state.tick = 0;
      settle_looks(self);
    },
    [self](peek_atom) { return HandleProgress{last_line_shown(self->state)}; },
    // "gone" may still be on its way (the registry can hear "stopped" first): an
    // abort waiting for it gets its answer before this actor goes.
    // An actor's end costs (CAF wakes its clock thread to drop the actor's timers):
    // it waits behind what was queued with the retire, the watchers' news of the stop
    // (the registry sends the retire first) and the await answers that follow. An
    // order for latency only (send_after_queued.hpp): whenever it quits, it is done.
    [self](retire_atom) {
      send_after_queued(self, caf::make_message(leave_atom::value));
    },
    [self](leave_atom) { advance(self, event::retire); },
    [self](gone_atom) { advance(self, event::gone); },
    [self](fetch_atom, const LookOptions& o) -> caf::result<HandleReport> {
      auto& st = self->state;
      if (auto err = look_error(st, o))
        return err;
      if (has_exited(st.at))
        return looked_final(st, o);
      // A new size is as input: the look waits for the program's redraw.
      if (apply_resize(self, o))
        return look(self, o, false, kResizeRedraw);
      return look(self, o, true);
    },
    [self](apply_atom, const std::string& input_json, const LookOptions& o) -> caf::result<HandleReport> {
      auto& st = self->state;
      if (auto err = look_error(st, o))
        return err;
      if (has_exited(st.at))
        return make_error(error_code::input_refused,
                          fmt::format("Handle `{}` has stopped; it takes no more input", st.id));
      if (!st.spec.stdin_pipe)
        return make_error(error_code::input_refused,
                          fmt::format("Handle `{}` ({}) does not read input", st.id, st.spec.tool));
      // What is left to do with a tool that reads no more: Ctrl-C where it is a signal.
      auto still = (st.control || st.term) ? "fetch or await it, or abort it"
                                            : "fetch or await it, interrupt it with \\u0003 "
                                              "(Ctrl-C), or abort it";
      auto closed = [&] {
        return make_error(error_code::input_refused,
                          fmt::format("Handle `{}`: the tool closed its input; it reads no more "
                                      "(it still runs: {})",
                                      st.id, still));
      };
      std::string bytes;
      bool answering = false;
      bool ending = false;
      bool interrupting = false;
      // A terminal's Ctrl-C of its own, which drops what the program has not read:
      // input still queued here was not read either (a long apply before it).
      bool terminal_interrupt = false;
      if (st.term) {
        auto input = Json::parse(input_json);
        auto typed = st.term->typed_bytes(input.ok() ? *input : Json(input_json));
        if (!typed)
          return make_error(error_code::bad_arguments, fmt::format("Handle `{}`: {}", st.id, typed.error()));
        bytes = std::move(*typed);
        // As the program set its terminal: one that reads keys (readline, an editor)
        // gets a long line whole, and takes Ctrl-C as a key, after what came before.
        auto modes = st.proc->terminal_modes();
        if (!modes || modes->lines)
          st.input_note = long_line_note(bytes);
        terminal_interrupt = bytes == "\x03" && modes && modes->signals;
      } else if (asked(st)) {
        // The answer to the pending question (the control channel's other half); the
        // tool runs on. Answered once it went in (below). It reads what it declared.
        auto answer = answer_text_as_declared(*st.control->question(), input_json);
        if (!answer)
          return make_error(error_code::bad_arguments, fmt::format("Handle `{}`: {}", st.id, answer.error()));
        bytes = answer->dump() + "\n"; // one line, as the channel's answers are
        answering = true;
      } else {
        // Keys are a terminal's: on a pipe the object would go in as a JSON line,
        // and the model believe it pressed them. (Only that form: a JSON-lines tool's
        // own object may have a "keys" member.)
        if (auto input = Json::parse(input_json); input && is_terminal_keys(*input))
          return make_error(error_code::bad_arguments,
                            fmt::format("Handle `{}` ({}) runs on pipes: `keys` are for a handle on a terminal; "
                                        "send its input as text (\"\\n\" for Enter, \"\\u0003\" for Ctrl-C, "
                                        "\"\\u0004\" for Ctrl-D)",
                                        st.id, st.spec.tool));
        bytes = pipe_input(input_json);
        // Ctrl-D last, as a terminal takes it: end of input. The pipe is closed after
        // the text before it, so `sort`, `wc` or `sys.stdin.read()` can finish. Not a
        // control tool's: its stdin is where its questions' answers go.
        ending = !st.control && bytes.ends_with('\x04');
        // Ctrl-C last: SIGINT to the tool's group once the text before it is queued, as
        // a terminal interrupts its job (a server's clean shutdown, a test run's summary).
        interrupting = !st.control && bytes.ends_with('\x03');
        if (ending || interrupting)
          bytes.pop_back();
      }
      // A stopped tool (SIGSTOP) is continued first, as `fg` would: nothing it would
      // do with the input happens before. An empty apply continues it alone, its input
      // ended or not.
      if (stopped_by_signal(st)) {
        st.proc->resume();
        set_input_wait(self, false); // it runs again
        schedule_tick(self);
        if (bytes.empty() && !ending && !interrupting)
          return look(self, o, false, apply_resize(self, o) ? kResizeRedraw : std::chrono::milliseconds{});
      }
      // Ctrl-C alone is a signal, not input: it reaches a tool whose input is over too.
      bool signal_only = interrupting && bytes.empty();
      if (!signal_only && st.proc->input_closed())
        return closed();
      if (!signal_only && st.input_ended)
        return make_error(error_code::input_refused,
                          fmt::format("Handle `{}`: its input was ended (an apply ending in Ctrl-D, "
                                      "\\u0004); it reads no more (it still runs: {})",
                                      st.id, still));
      // The size first, as the schema says: the input may run something that asks for it.
      bool resized = apply_resize(self, o);
      auto size = bytes.size();
      bool lone_escape = st.term && bytes.ends_with('\x1b');
      if (size == 0 && !ending && !interrupting) // nothing typed: nothing answered
        return look(self, o, false, resized ? kResizeRedraw : std::chrono::milliseconds{});
      // Who reads the input, before it goes in: whether it took it is told by that.
      // A terminal hands a line to its reader at its end (Enter, Ctrl-D): text without
      // one leaves the reader asleep, waiting for the rest (raw mode wakes it).
      auto reader = detects_input_wait(st) ? st.watch.mark_reader(st.proc->pid()) : InputWatch::ReaderMark{};
      reader.line_open = st.term && bytes.find_first_of("\r\n\x04") == std::string::npos;
      auto not_typed = terminal_interrupt ? st.proc->stdin_queued() : 0;
      if (not_typed > 0)
        st.input_note = fmt::format("[jp-actors: the Ctrl-C dropped up to {} bytes of earlier input not typed yet, as a "
                                    "terminal drops what its program has not read]\n",
                                    not_typed);
      if (!signal_only && !(terminal_interrupt ? st.proc->write_stdin_dropping_queued(std::move(bytes))
                                                : st.proc->write_stdin(std::move(bytes)))) {
        // Refused, not queued: the caller may retry once the tool has read more.
        auto queued = st.proc->stdin_queued();
        auto limit = fmt::format("limit {} MiB", kStdinQueueLimit >> 20);
        if (size > kStdinQueueLimit)
          return make_error(error_code::input_refused,
                            fmt::format("Handle `{}`: an input of {} bytes is more than a tool's "
                                        "input queue holds ({})",
                                        st.id, size, limit));
        if (queued == 0) // read since: the count no longer says why
          return make_error(error_code::input_refused,
                            fmt::format("Handle `{}`: the tool has not read earlier input; "
                                        "not queueing more ({})",
                                        st.id, limit));
        return make_error(error_code::input_refused,
                          fmt::format("Handle `{}`: the tool has not read {} bytes of earlier "
                                      "input; not queueing more ({})",
                                      st.id, queued, limit));
      }
      if (!signal_only && st.proc->input_closed()) // found by this write: the input went nowhere
        return closed();
      if (ending) {
        st.proc->close_stdin();
        st.input_ended = true;
      }
      if (interrupting)
        st.proc->interrupt();
      if (answering) {
        st.control->answered();
        self->send(st.registry, waiting_atom::value, st.id, Question{}, false);
      }
      set_input_wait(self, false); // answered
      st.unanswered = reader;
      st.bare_read.reset();
      schedule_tick(self); // probed while idle again: an await learns it waits anew
      // A wait counts from the Ctrl-C, which may wait for the input before it: one
      // that ended with the wait, or with what the tool printed as it read that input,
      // would show the tool running, just before the signal. (A Ctrl-C alone goes at once.)
      auto wait = o.wait_ms >= 0 ? o.wait_ms : st.spec.wait_ms;
      if (interrupting && !signal_only && wait > 0) {
        auto longer = o;
        longer.wait_ms = wait + kInterruptWait.count();
        return look(self, longer, false, {}, true);
      }
      return look(self, o, false, lone_escape ? kEscapeDelay : resized ? kResizeRedraw : std::chrono::milliseconds{});
    },
    [self](rename_atom, std::string& id) {
      // A one-shot run that ran long goes on as a handle (the turn's background_after).
      self->state.id = std::move(id);
    },
    [self](answer_atom, const std::string& answer_json) {
      // A one-shot run's question, answered by the turn: the tool reads it and runs on;
      // its output is left for the final result. A read without a question (found
      // waiting for input) is answered the same way, a JSON line.
      auto& st = self->state;
      // A read without a question may have been ended by output since (stderr of
      // something else): it is answered while the tool still reads.
      if (has_exited(st.at) || !st.proc ||
          (!asked(st) && !st.watch.waiting && !st.watch.reads_stdin(st.proc->pid())))
        return;
      if (stopped_by_signal(st)) {
        // A one-shot run stopped (SIGSTOP): answered, it goes on; nothing reads the
        // answer, which goes nowhere.
        st.proc->resume();
        set_input_wait(self, false);
        schedule_tick(self);
        return;
      }
      if (asked(st)) {
        st.control->answered();
      } else {
        st.unanswered = st.watch.mark_reader(st.proc->pid());
        st.bare_read.reset();
        set_input_wait(self, false);
      }
      st.proc->write_stdin(answer_json + "\n");
      schedule_tick(self); // probed while idle again: it may read again
    },
    [self](abort_atom) -> caf::result<HandleReport> {
      auto& st = self->state;
      if (st.at == phase::stopped)
        return told_final(st);
      auto rp = self->make_response_promise<HandleReport>();
      st.abort_waiters.push_back(rp);
      advance(self, event::abort);
      return rp;
    },
  };
}

} // namespace

handle_actor spawn_process_handle(caf::local_actor* parent, const std::string& id, LaunchSpec spec,
                                  IoThread& io, const supervisor_actor& supervisor) {
  return parent->spawn(handle_behavior, id, std::move(spec), &io, supervisor);
}

} // namespace jp
