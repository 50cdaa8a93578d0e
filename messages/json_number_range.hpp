// Which numbers Json::parse reads, said wherever one past them is refused (the
// parser's own error and an MCP request refused under its id say the same).
#pragma once

#include <string_view>

namespace jp {

inline constexpr std::string_view json_number_range =
  "a number without a fraction or an exponent is read only up to 18446744073709551615 (write a larger one with "
  "an exponent, 1e20), any other up to about 1.8e308";

} // namespace jp
