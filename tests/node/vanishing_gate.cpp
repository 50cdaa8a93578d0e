// A node that goes while a client opens its session: it publishes a gate of this
// build's node protocol on 127.0.0.1, prints the port, and exits at the first open
// without answering (the connection drops with the request out).
// tests/node_test.cpp checks the client says the node was lost, and does not wait.
#include <caf/all.hpp>
#include <caf/io/middleman.hpp>
#include <cstdio>
#include <cstdlib>
#include <unistd.h>

#include "actors/interfaces.hpp"
#include "tools/builtin_tools.hpp"
#include "runtime/actor_config.hpp"
#include "tests/program_assert.hpp"

int main() {
  auto config = jp::default_config();
  jp::RuntimeActorConfig cfg{1, &config.node};
  caf::actor_system sys{cfg};
  auto gate = sys.spawn([]() -> jp::node_gate_actor::behavior_type {
    return {
      [](jp::open_atom, const std::string&, const caf::actor&, double, double) -> caf::result<caf::actor, std::string> {
        std::_Exit(0);
      },
      [](jp::list_atom, const std::string&) { return std::vector<jp::HandleSummary>{}; },
    };
  });
  auto port = sys.middleman().publish(gate, 0, "127.0.0.1", true);
  // Listening, or the test would wait for a port that never comes.
  PROGRAM_ASSERT(port.engaged() && *port > 0);
  std::printf("listening on 127.0.0.1:%u\n", static_cast<unsigned>(*port));
  std::fflush(stdout);
  for (;;)
    ::pause();
}
