// The matcher's bound on its steps (Boost's default is 100 million: seconds).
// Defined before Boost.Regex is included, and it is included only here.
#define BOOST_REGEX_MAX_STATE_COUNT 1000000
#include "config/prompt_pattern.hpp"

#include <boost/regex.hpp>

namespace jp {

struct PromptPattern::Compiled {
  boost::regex re;
};

Result<PromptPattern> PromptPattern::compile(const std::string& pattern) {
  try {
    // no_mod_m: ^ and $ at the line's ends only, as std::regex's ECMAScript has them.
    PromptPattern p;
    p.compiled_ = std::make_shared<const Compiled>(
      Compiled{boost::regex(pattern, boost::regex::ECMAScript | boost::regex::no_mod_m)});
    return p;
  } catch (const boost::regex_error& e) {
    return Error{e.what()};
  }
}

bool PromptPattern::found_in(std::string_view line) const {
  if (!compiled_)
    return false;
  try {
    return boost::regex_search(line.begin(), line.end(), compiled_->re);
  } catch (const std::runtime_error&) {
    return false; // past the bound: no prompt this line can show in time
  }
}

} // namespace jp
