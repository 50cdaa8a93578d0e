// The PEM files of mutual TLS ([node.tls], [nodes.NAME.tls]): a certificate (chain),
// its private key and a CA file. CAF's openssl module loads them only when a
// connection is made, and throws what it cannot load: a node died of it at its first
// client, a client hung. So they are read and checked with OpenSSL at start, and
// CAF is given the very bytes that were checked, pinned in memory files: a file
// changed or removed later cannot make it throw either.
#pragma once

#include <string>

#include "../messages/result.hpp"

namespace jp {

struct TlsConfig;

class PinnedTls {
public:
  /// The files of `tls` read, checked and pinned; or why they cannot be used,
  /// naming `where`.KEY, the file and what is wrong with it.
  static Result<PinnedTls> pin(const TlsConfig& tls, const std::string& where);

  /// Paths that read what was checked (/proc/self/fd/N), for CAF to load.
  const std::string& certificate() const { return paths_[0]; }
  const std::string& key() const { return paths_[1]; }
  const std::string& ca() const { return paths_[2]; }

  PinnedTls(PinnedTls&&) noexcept;
  PinnedTls& operator=(PinnedTls&&) = delete;
  ~PinnedTls();

private:
  PinnedTls() = default;
  int fds_[3] = {-1, -1, -1};
  std::string paths_[3];
};

} // namespace jp
