#include "runtime/node/port_listener_owner.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <utility>
#include <fmt/format.h>
#include <unistd.h>

namespace jp {

std::optional<std::vector<uid_t>> port_listeners(uint16_t port) {
  std::vector<uid_t> uids;
  bool read_any = false; // a table with a socket in it: our own connection is one
  for (auto* table : {"/proc/net/tcp", "/proc/net/tcp6"}) {
    std::FILE* f = std::fopen(table, "re");
    if (!f)
      continue;
    char line[512];
    bool header = true;
    while (std::fgets(line, sizeof line, f)) {
      if (std::exchange(header, false))
        continue;
      read_any = true; // a table that lists nothing (WSL1, a filtered /proc) tells nothing
      // "sl local_address rem_address st tx:rx tr:when retrnsmt uid ...": the local
      // address is ADDRESS:PORT in hex, state 0A is LISTEN.
      char local[72] = {}, state[8] = {};
      unsigned long uid = 0;
      if (std::sscanf(line, "%*s %71s %*s %7s %*s %*s %*s %lu", local, state, &uid) != 3 ||
          std::string_view(state) != "0A")
        continue;
      auto* colon = std::strrchr(local, ':');
      if (colon && std::strtoul(colon + 1, nullptr, 16) == port)
        uids.push_back(static_cast<uid_t>(uid));
    }
    std::fclose(f);
  }
  if (!read_any)
    return std::nullopt;
  return uids;
}

Status token_may_go_to(uint16_t port) {
  auto uids = port_listeners(port);
  if (!uids)
    return Status::success();
  if (uids->empty())
    return Status::fail(fmt::format("nothing listens on port {} any more (what answered closed it): the node "
                                    "token is not sent",
                                    port));
  for (auto uid : *uids)
    if (uid != ::getuid() && uid != 0)
      return Status::fail(fmt::format("what listens on port {} is another user's (uid {}), not a node of yours: the "
                                      "node token, which runs tools as you, is not sent to it. Start your node "
                                      "(`jp-actors node`) and give the address it prints",
                                      port, uid));
  return Status::success();
}

} // namespace jp
