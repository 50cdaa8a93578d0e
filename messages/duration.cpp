#include "messages/duration.hpp"

#include <cmath>
#include <fmt/format.h>

namespace jp {

bool is_duration(double value) {
  return std::isfinite(value) && value >= 0;
}

std::string duration_rule(std::string_view unit) {
  return fmt::format("a finite number of {} >= 0", unit);
}

Status check_duration(std::string_view key, double value, std::string_view unit) {
  if (is_duration(value))
    return Status::success();
  return Error{fmt::format("`{}` must be {} (NaN, infinities and negative numbers are not "
                           "durations), got {}",
                           key, duration_rule(unit), value)};
}

} // namespace jp
