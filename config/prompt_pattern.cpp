// The matcher's bound on its steps (Boost's default is 100 million: seconds).
// Defined before Boost.Regex is included, and it is included only here.
#define BOOST_REGEX_MAX_STATE_COUNT 1000000
#include "config/prompt_pattern.hpp"

#include <boost/regex.hpp>
#include <fmt/format.h>

namespace jp {

namespace {

// Boost's bound on the steps grows with the line's length times the pattern's size
// squared (perl_matcher's estimate_max_state_count): both are held small, a prompt
// is short, so a search costs milliseconds at worst.
constexpr size_t kPatternMax = 200;
constexpr size_t kLineTailMax = 200;

} // namespace

struct PromptPattern::Compiled {
  boost::regex re;
};

Result<PromptPattern> PromptPattern::compile(const std::string& pattern) {
  if (pattern.size() > kPatternMax)
    return Error{fmt::format("a prompt pattern may have up to {} bytes (this one has {}); a prompt is short",
                             kPatternMax, pattern.size())};
  try {
    // no_mod_m: ^ and $ at the line's ends only, as std::regex's ECMAScript has them.
    PromptPattern p;
    p.compiled_ = std::make_shared<const Compiled>(
      Compiled{boost::regex(pattern, boost::regex::ECMAScript | boost::regex::no_mod_m)});
    return p;
  } catch (const boost::regex_error& e) {
    return Error{fmt::format("not a valid regular expression (ECMAScript syntax): {}", e.what())};
  }
}

bool PromptPattern::found_in(std::string_view line) const {
  if (!compiled_)
    return false;
  // The line's end, where a prompt is: `^` matches only where the line begins.
  auto flags = boost::match_default;
  if (line.size() > kLineTailMax) {
    line.remove_prefix(line.size() - kLineTailMax);
    flags |= boost::match_not_bol | boost::match_not_bob; // (no_mod_m makes ^ the buffer's start)
  }
  try {
    return boost::regex_search(line.begin(), line.end(), compiled_->re, flags);
  } catch (const std::runtime_error&) {
    return false; // past the bound: no prompt this line can show in time
  }
}

} // namespace jp
