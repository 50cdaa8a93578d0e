// An environment variable set for a test's scope and given back at its end (also
// when a check fails): a test's XDG_STATE_HOME or key must not leak into the next.
#pragma once

#include <optional>
#include <stdlib.h>
#include <string>

namespace jp::testing {

struct scoped_env {
  std::string name;
  std::optional<std::string> before; // unset before when empty

  scoped_env(std::string variable, const std::string& value) : name(std::move(variable)) {
    if (const char* was = ::getenv(name.c_str()))
      before = was;
    ::setenv(name.c_str(), value.c_str(), 1);
  }
  ~scoped_env() {
    if (before)
      ::setenv(name.c_str(), before->c_str(), 1);
    else
      ::unsetenv(name.c_str());
  }
  scoped_env(const scoped_env&) = delete;
  scoped_env& operator=(const scoped_env&) = delete;
};

} // namespace jp::testing
