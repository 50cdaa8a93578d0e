// Knowing when a handle's tool waits for input: the last lines of its plain text
// (where a prompt shows), the tool's prompt pattern, and for a terminal or a stdin
// pipe whether the tool is reading it (a control tool's read counts once its
// question cannot be on its way: handle_actor's read_without_question). Pipe tools
// with settle_ms = 0 (a probe would follow every chunk) are watched only with a
// prompt pattern.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <sys/types.h>

#include "../config/prompt_pattern.hpp"
#include "../runtime/process/input_wait.hpp"
#include "../messages/tool_state.hpp"

namespace jp {

class InputWatch {
public:
  InputWatch() = default; // watches nothing
  /// `pipe`: the tool's stdin is a pipe of ours, whose reading is watched.
  InputWatch(const std::string& prompt_pattern, bool terminal, bool pipe = false);

  /// What the tool's input is (Process::input_file): a read of another file (a
  /// shell's loop reading a file it redirected) is no wait for input.
  void set_input(std::optional<InputFile> input) { input_ = input; }
  /// Whether waiting can be told for this tool at all.
  bool enabled() const { return terminal_ || pipe_ || prompt_.has_value(); }
  /// Whether a wait also ends when output came and settled (the tool may be busy, not
  /// asking): a pipe without a prompt pattern, whose probe finds only a read.
  bool settles_on_output() const { return pipe_ && !terminal_ && !prompt_; }
  /// New plain text from the tool.
  void saw(std::string_view text);
  /// Whether the tool (group leader `pid`) waits now: its last line matches the
  /// prompt, or it reads its terminal; if in a poll that ends within a second by
  /// itself (it may look for a key between frames of its progress), once its output
  /// has been quiet (`quiet_for`) for `brief_poll_quiet`. `reader`, if given: the
  /// process it found reading its input (0: none, or its prompt told it unlooked).
  bool probe(pid_t pid, std::chrono::milliseconds quiet_for, pid_t* reader = nullptr) const;
  static constexpr std::chrono::milliseconds brief_poll_quiet{1500};
  /// Who reads the tool's input now (else `leader`) and how often it has run: taken
  /// as input goes in, to tell later that the tool took it without a word.
  struct ReaderMark {
    pid_t pid = 0;
    uint64_t runs = 0;
    bool line_open = false; // the input: text without a line's end, on a terminal
  };
  ReaderMark mark_reader(pid_t leader) const;
  /// Who reads the tool's stdin pipe now (pid 0: none; `known`: the reader a probe
  /// has just found, not looked for again) and how often the tool's processes have
  /// run: the same twice, all of them slept between.
  ReaderMark stdin_read(pid_t leader, pid_t known = 0) const;
  /// Whether a process of the tool is reading its stdin pipe now.
  bool reads_stdin(pid_t leader) const;
  /// Whether the tool reads its input again after taking what came since `mark`
  /// without output (a filter such as `sort`, a silent `read`, a password typed
  /// unechoed): blocked reading it, and another process than the marked one, or the
  /// marked one woken since. (Its blocked read alone says nothing: it may not have
  /// been handed the input yet.) With `mark.line_open` the terminal keeps the text
  /// until its line ends: the marked reader, still asleep, waits for the rest.
  /// A poll that ends by itself counts as in probe(), once quiet for long enough.
  /// `reader`, if given: the process found reading (0: none).
  bool reads_again(pid_t leader, const ReaderMark& mark, std::chrono::milliseconds quiet_for,
                   pid_t* reader = nullptr) const;
  /// The question of a tool found waiting: its current line (its last 200 bytes,
  /// whole characters), if it shows one.
  Question question() const;
  /// Whether the tool (group leader `pid`) is stopped (SIGSTOP; the terminal's
  /// Ctrl-Z and SIGTSTP do not stop its group, which has no parent in its session: the
  /// kernel drops them): it does nothing until continued, so it waits on the caller
  /// as a read does (Process::resume continues it).
  static bool stopped(pid_t pid);
  /// The question of a tool found stopped: what ends the wait. Its id is its own: no
  /// answer is read (nothing reads), the tool is only continued.
  static Question stopped_question();
  static constexpr std::string_view stopped_question_id = "stopped";
  /// Whether the wait told is a stopped tool's.
  bool waits_stopped() const { return waiting && waiting->id == stopped_question_id; }
  /// The last non-empty line of its output, at most 200 bytes of its end (whole
  /// characters).
  std::string last_line() const;

  /// What the last probe found: the tool waits on this.
  std::optional<Question> waiting;

private:
  const InputFile* input() const { return input_ ? &*input_ : nullptr; }
  std::optional<InputFile> input_;
  bool terminal_ = false;
  bool pipe_ = false;
  std::optional<PromptPattern> prompt_;
  std::string recent_;
};

} // namespace jp
