#include "runtime/process/tcp_listeners.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <utility>

namespace jp {

std::optional<std::vector<TcpListener>> tcp_listeners(const std::string& net_dir) {
  std::vector<TcpListener> out;
  bool read_any = false;
  for (auto* table : {"/tcp", "/tcp6"}) {
    std::FILE* f = std::fopen((net_dir + table).c_str(), "re");
    if (!f)
      continue;
    char line[512];
    bool header = true;
    while (std::fgets(line, sizeof line, f)) {
      if (std::exchange(header, false))
        continue;
      read_any = true;
      // "sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode":
      // the local address is ADDRESS:PORT in hex, state 0A is LISTEN.
      char local[72] = {}, state[8] = {};
      unsigned long uid = 0, inode = 0;
      if (std::sscanf(line, "%*s %71s %*s %7s %*s %*s %*s %lu %*s %lu", local, state, &uid, &inode) != 4 ||
          std::string_view(state) != "0A")
        continue;
      auto* colon = std::strrchr(local, ':');
      if (!colon)
        continue;
      out.push_back(TcpListener{static_cast<uint16_t>(std::strtoul(colon + 1, nullptr, 16)),
                                static_cast<uid_t>(uid), inode});
    }
    std::fclose(f);
  }
  if (!read_any)
    return std::nullopt;
  return out;
}

} // namespace jp
