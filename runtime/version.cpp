#include "runtime/version.hpp"

namespace jp {

const char* version() {
  return JP_ACTORS_VERSION; // CMakeLists.txt defines it for this file alone
}

} // namespace jp
