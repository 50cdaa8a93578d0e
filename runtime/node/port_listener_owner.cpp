#include "runtime/node/port_listener_owner.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include "runtime/process/tcp_listeners.hpp"

namespace jp {

std::optional<std::vector<uid_t>> port_listeners(uint16_t port) {
  auto listeners = tcp_listeners("/proc/net");
  if (!listeners)
    return std::nullopt;
  std::vector<uid_t> uids;
  for (auto& l : *listeners)
    if (l.port == port)
      uids.push_back(l.uid);
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
