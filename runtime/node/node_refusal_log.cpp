#include "runtime/node/node_refusal_log.hpp"

#include <cstdio>
#include <fmt/format.h>

namespace jp {

void tell_refusal(int n, const std::string& line, const char* count_line, const char* who) {
  constexpr int told_each = 20;
  constexpr int then_every = 1000;
  if (n <= told_each)
    std::fprintf(stderr, "%s: %s%s\n", who, line.c_str(),
                 n == told_each ? fmt::format(" (from now on every {}th is told)", then_every).c_str() : "");
  else if (n % then_every == 0)
    std::fprintf(stderr, "%s: %s\n", who, fmt::format(fmt::runtime(count_line), n).c_str());
}

} // namespace jp
