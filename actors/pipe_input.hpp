// What `apply` writes to the stdin pipe of a handle with io = "pipe" (or "control"
// when no question is pending).
#pragma once

#include <string>

namespace jp {

/// A JSON string is written as its text; any other input as one JSON line (as
/// given when it is not JSON).
std::string pipe_input(const std::string& input_json);

} // namespace jp
