// The control channel of a handle with io = "control" (and of one-shot runs): the
// tool writes ToolState JSON lines on fd 3 and reads answers as JSON lines on stdin.
// This reads the lines and keeps what they declared; the handle acts on each step.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "../messages/tool_state.hpp"

namespace jp {

class ControlChannel {
public:
  /// A line may be as long as `line_cap` (the handle's output cap) or 4 MiB, the
  /// larger: a result is one line, and the cap bounds only one that never ends.
  static constexpr std::size_t min_line_cap = std::size_t{4} << 20;
  ControlChannel(std::size_t line_cap, std::map<std::string, std::string> fixed_answers)
      : line_cap_(line_cap > min_line_cap ? line_cap : min_line_cap), fixed_answers_(std::move(fixed_answers)) {}

  /// What one line asks of the handle, in this order: note it (not a ToolState),
  /// write `answer` to stdin (a question the config answers), tell of the question
  /// now asked, then add `content` to the output.
  struct Step {
    std::string note;
    std::optional<std::string> answer;
    bool asks = false; // question() is new
    std::string content;
  };

  /// Bytes read from the channel; then take the steps of its whole lines with next().
  void feed(std::string_view chunk) { line_ += chunk; }
  /// The next whole line's step, read; none when no whole line is left.
  std::optional<Step> next();
  /// At the tool's exit: the step of a last line it wrote without its end (printf
  /// '{"type":"stopped",...}' >&3), if any. It asks nothing: nobody can answer now.
  std::optional<Step> finish();

  /// The question the tool waits on, if any.
  const std::optional<Question>& question() const { return question_; }
  /// The question was answered (or the answer is on its way).
  void answered() { question_.reset(); }
  /// The final state the tool declared (adopted when it exits).
  const std::optional<ToolState>& declared() const { return declared_; }

private:
  Step read(std::string_view line);
  Step over_long() const; // a line past the cap, said as such

  std::size_t line_cap_;
  std::map<std::string, std::string> fixed_answers_;
  std::string line_; // partial line
  bool over_long_ = false; // the line under way passed line_cap_ and is dropped to its end
  std::optional<Question> question_;
  std::optional<ToolState> declared_;
};

} // namespace jp
