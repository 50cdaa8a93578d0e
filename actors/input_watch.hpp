// Knowing when a handle's tool waits for input: the last lines of its plain text
// (where a prompt shows), the tool's prompt pattern, and for a terminal whether the
// tool is reading it. Pipe and control tools are watched only with a prompt pattern.
#pragma once

#include <optional>
#include <regex>
#include <string>
#include <string_view>
#include <sys/types.h>

#include "../messages/tool_state.hpp"

namespace jp {

class InputWatch {
public:
  InputWatch() = default; // watches nothing
  InputWatch(const std::string& prompt_pattern, bool terminal);

  /// Whether waiting can be told for this tool at all.
  bool enabled() const { return terminal_ || prompt_.has_value(); }
  /// New plain text from the tool.
  void saw(std::string_view text);
  /// Whether the tool (group leader `pid`) waits now: its last line matches the
  /// prompt, or it reads its terminal.
  bool probe(pid_t pid) const;
  /// The question of a tool found waiting: its current line, if it shows one.
  Question question() const;
  /// The last non-empty line of its output, at most 200 bytes of its end.
  std::string last_line() const;

  /// What the last probe found: the tool waits on this.
  std::optional<Question> waiting;

private:
  bool terminal_ = false;
  std::optional<std::regex> prompt_;
  std::string recent_;
};

} // namespace jp
