// Whether the node TLS name check is in force in a program linked as this one is
// (runtime/node/node_certificate_name.cpp): linked as usual it is, and a node's
// address is dialled; linked with the library's symbols hidden
// (-Wl,--exclude-libs,ALL), libssl's own SSL_connect is found first, and TLS to a
// node is refused rather than made unchecked. argv[1]: "in-force" or "refused".
#include <cstring>

#include "runtime/node/node_certificate_name.hpp"
#include "tests/program_assert.hpp"

int main(int argc, char** argv) {
  PROGRAM_ASSERT(argc == 2);
  auto dial = jp::dial_node_checking_name("127.0.0.1", 9);
  if (std::strcmp(argv[1], "in-force") == 0) {
    PROGRAM_ASSERT(dial.ok());
    PROGRAM_ASSERT(*dial == "127.0.0.1");
  } else {
    PROGRAM_ASSERT(!dial.ok());
    PROGRAM_ASSERT(dial.error().find("OpenSSL's own SSL_connect is used") != std::string::npos);
  }
  return 0;
}
