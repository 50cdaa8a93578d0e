// How a turn ended, as the turn loop answers (run_atom): an embedder tells a turn
// that completed from one the user interrupted or one that failed, and why.
#pragma once

#include <cstdint>
#include <string>

#include "error_code.hpp"

namespace jp {

enum class turn_outcome : uint8_t { completed, interrupted, failed };

inline const char* to_string(turn_outcome o) {
  switch (o) {
    case turn_outcome::completed: return "completed";
    case turn_outcome::interrupted: return "interrupted";
    case turn_outcome::failed: return "failed";
  }
  return "failed";
}

struct TurnResult {
  turn_outcome outcome = turn_outcome::completed;
  // What failed (none: nothing did, or CAF itself failed); interrupted alone:
  // interrupted.
  error_code code = error_code::none;
  // The sentence for the user ("": nothing to say). An interrupted turn has one only
  // when something failed as well, or it was interrupted twice.
  std::string error;
  // What the assistant said last (its final answer), or the result it handed back
  // with yield_to_parent (yielded): a sub-agent's result.
  std::string answer;
  bool yielded = false;
  friend bool operator==(const TurnResult&, const TurnResult&) = default;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, TurnResult& x) {
  return f(x.outcome, x.code, x.error, x.answer, x.yielded);
}

} // namespace jp
