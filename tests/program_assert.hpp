// The assertion of the test programs that are not CAF test suites (the fuzz targets,
// the fake MCP server): a property that failed aborts with where it failed, in
// NDEBUG builds too. libFuzzer keeps the input as a crash; a test that started the
// fake server sees it die.
#pragma once

#include <cstdio>
#include <cstdlib>

#define PROGRAM_ASSERT(cond)                                                              \
  do {                                                                                    \
    if (!(cond)) {                                                                        \
      std::fprintf(stderr, "%s:%d: PROGRAM_ASSERT(%s) failed\n", __FILE__, __LINE__, #cond); \
      std::abort();                                                                       \
    }                                                                                     \
  } while (0)
