// Durations read from calls, scripts and config (timeout_secs, wait_ms, *_secs): a
// finite number >= 0. NaN or an infinity would otherwise slip through as "no timeout".
#pragma once

#include <string>
#include <string_view>

#include "result.hpp"

namespace jp {

/// Whether `value` is a duration: finite and not negative.
bool is_duration(double value);

/// What a duration must be, for error messages: "a finite number of seconds >= 0".
std::string duration_rule(std::string_view unit = "seconds");

/// Ok, or an error naming `key`, what is allowed and what it got.
Status check_duration(std::string_view key, double value, std::string_view unit = "seconds");

} // namespace jp
