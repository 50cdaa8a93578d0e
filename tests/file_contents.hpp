// What has been written to a stdio file so far (a tmpfile a test hands as output), or
// is in a file named by its path.
#pragma once

#include <cstdio>
#include <fstream>
#include <iterator>
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

inline std::string contents(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

} // namespace jp::testing
