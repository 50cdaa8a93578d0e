// When and how long to wait before asking a provider again ([assistant.request]):
// exponential backoff with jitter, Retry-After honoured, and which failures are
// worth a retry at all.
#pragma once

#include <chrono>
#include <cstdint>
#include <random>
#include <string_view>

namespace jp {

struct RetryPolicy {
  int max_retries = 5;
  int64_t base_backoff_ms = 1000;
  double max_backoff_secs = 60;
};

/// The wait before retry number `attempt` (1 = the first retry): base * 2^(attempt-1),
/// at most max_backoff, with jitter (between half and all of it) so that many
/// clients do not come back at once. A Retry-After header (seconds, or an HTTP date)
/// is honoured instead when the server sent one.
std::chrono::milliseconds retry_delay(const RetryPolicy& policy, int attempt,
                                      std::string_view retry_after, std::mt19937_64& rng);

/// The seconds a Retry-After value asks for; -1 when there is none or it cannot be
/// read. `now` is the current time (for the HTTP-date form).
double retry_after_secs(std::string_view value, std::chrono::system_clock::time_point now);

/// HTTP statuses a retry may cure: 408, 409, 425, 429, and 5xx (Anthropic's 529
/// "overloaded" included). Others (400, 401, 403, 404, ...) fail at once.
bool retryable_status(long status);

} // namespace jp
