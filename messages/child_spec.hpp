// A handle's child spec (OTP's supervisor child spec): what the registry, its
// supervisor, does with the handle when the turn ends. Plain data; the text
// spellings live in json_codec.hpp (and the config and script loaders read them).
#pragma once

#include <cstdint>
#include <map>
#include <string>

namespace jp {

/// At turn end, if still running ([spawn.lifecycle] on_turn_end): ask the inquiry
/// (RFD 037), wait until it stops (or await_timeout_secs), or abort it now.
enum class turn_end_policy : uint8_t { inquire, await, abort };

/// The turn-end inquiry's answer for one handle.
enum class inquiry_answer : uint8_t { wait, abort };

/// The inquiry's answers, by handle id (a handle without one is aborted).
using InquiryAnswers = std::map<std::string, inquiry_answer>;

/// What the supervisor applied at turn end (none: not yet ended).
enum class turn_end_outcome : uint8_t { none, aborted, awaited, inquired_wait, inquired_abort };

/// Whether the turn end waited for the handle (its result is the assistant's).
inline bool waited(turn_end_outcome o) {
  return o == turn_end_outcome::awaited || o == turn_end_outcome::inquired_wait;
}

struct ChildSpec {
  turn_end_policy on_turn_end = turn_end_policy::abort;
  double await_timeout_secs = 300; // how long await (or an inquiry's wait) waits
  friend bool operator==(const ChildSpec&, const ChildSpec&) = default;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, ChildSpec& x) {
  return f(x.on_turn_end, x.await_timeout_secs);
}

} // namespace jp
