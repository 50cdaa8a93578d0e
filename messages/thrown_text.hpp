// What an exception says, for an error message: its what(), or that it was not a
// std::exception. For the places that catch what the program's own code threw.
#pragma once

#include <exception>
#include <string>

namespace jp {

/// `thrown`'s what(); by default the exception being handled (inside a catch).
inline std::string thrown_text(std::exception_ptr thrown = std::current_exception()) {
  try {
    if (thrown)
      std::rethrow_exception(thrown);
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
  }
  return "an exception that is not a std::exception";
}

} // namespace jp
