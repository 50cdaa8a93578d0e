// A tool's prompt_pattern: a regular expression (ECMAScript syntax) looked for in the
// last line of its output each time the handle probes whether it waits for input.
// The pattern is the config's and the line is the tool's (a workspace's, a hostile
// program's output): a pattern that backtracks without end on some line, such as
// `^(a|aa)+$` on sixty a's and a `!`, must not hold the handle's thread. Matched with
// Boost.Regex, whose matcher gives up past a bound on its steps (a few milliseconds
// on a long line): then the line is taken as no match. std::regex ran on for hours,
// and recursed deeper the longer the line.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "../messages/result.hpp"

namespace jp {

class PromptPattern {
public:
  /// The pattern compiled (at most 200 bytes), or why it is none.
  static Result<PromptPattern> compile(const std::string& pattern);

  /// Whether `line`'s last 200 bytes hold a match; false where the matcher gave up.
  bool found_in(std::string_view line) const;

private:
  struct Compiled;
  std::shared_ptr<const Compiled> compiled_; // shared: copies of a spec share one
};

} // namespace jp
