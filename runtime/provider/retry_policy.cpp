#include "runtime/provider/retry_policy.hpp"

#include <algorithm>
#include <cmath>
#include <ctime>
#include <string>

namespace jp {

double retry_after_secs(std::string_view value, std::chrono::system_clock::time_point now) {
  while (!value.empty() && (value.front() == ' ' || value.front() == '\t'))
    value.remove_prefix(1);
  while (!value.empty() && (value.back() == ' ' || value.back() == '\t' || value.back() == '\r'))
    value.remove_suffix(1);
  if (value.empty())
    return -1;
  if (value.find_first_not_of("0123456789.") == std::string_view::npos) {
    try {
      return std::stod(std::string(value));
    } catch (...) {
      return -1;
    }
  }
  // An HTTP date: "Sun, 06 Nov 1994 08:49:37 GMT".
  std::tm tm{};
  std::string text(value);
  if (!::strptime(text.c_str(), "%a, %d %b %Y %H:%M:%S", &tm))
    return -1;
  auto at = std::chrono::system_clock::from_time_t(::timegm(&tm));
  return std::max(0.0, std::chrono::duration<double>(at - now).count());
}

std::chrono::milliseconds retry_delay(const RetryPolicy& policy, int attempt,
                                      std::string_view retry_after, std::mt19937_64& rng) {
  // A wait asked of 0 (or a date past) is no wait at all: every retry would go at
  // once, spent within a second. The backoff then, as OpenAI's and Anthropic's SDKs do.
  if (auto secs = retry_after_secs(retry_after, std::chrono::system_clock::now()); secs > 0)
    return std::chrono::milliseconds(static_cast<int64_t>(secs * 1000));
  double cap = policy.max_backoff_secs * 1000;
  double exp = static_cast<double>(policy.base_backoff_ms) * std::pow(2.0, std::max(0, attempt - 1));
  double full = std::min(cap, exp);
  std::uniform_real_distribution<double> jitter(0.5, 1.0);
  return std::chrono::milliseconds(static_cast<int64_t>(full * jitter(rng)));
}

bool retryable_status(long status) {
  return status == 408 || status == 409 || status == 425 || status == 429 ||
         (status >= 500 && status <= 599);
}

} // namespace jp
