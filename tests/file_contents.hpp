// What has been written to a stdio file so far (a tmpfile a test hands as output).
#pragma once

#include <cstdio>
#include <string>

namespace jp::testing {

inline std::string contents(std::FILE* f) {
  std::fflush(f);
  std::rewind(f);
  std::string out;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0)
    out.append(buf, n);
  return out;
}

} // namespace jp::testing
