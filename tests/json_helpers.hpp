// JSON literals in tests: parse or fail the test.
#pragma once

#include <caf/test/unit_test.hpp>
#include <string_view>

#include "messages/json.hpp"

namespace jp::testing {

inline Json parse(std::string_view text) {
  auto j = Json::parse(text);
  CAF_REQUIRE(j.ok());
  return *j;
}

} // namespace jp::testing
