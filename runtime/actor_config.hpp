// The actor system configuration every jp-actors runtime uses (the CLI, embedders,
// the real-process tests, the benchmark): message types and the "jp" error category
// registered, CAF's console logger off, and a scheduler tuned for latency.
#pragma once

#include <caf/actor_system_config.hpp>
#include <cstddef>
#include <optional>
#include <string>

#include "../config/tls_files.hpp"

namespace jp {

struct NodeServerConfig;
struct TlsConfig;

struct RuntimeActorConfig : caf::actor_system_config {
  /// `worker_threads`: runtime.worker_threads (threads of CAF's scheduler); 0, as
  /// when the config leaves it out: by the cores (jp::worker_threads).
  /// `network`: a node, or a client of one: CAF's middleman is loaded, with
  /// heartbeats so that a silent peer is lost after its timeout.
  /// `tls`: this process's certificate, key and CA for mutual TLS (CAF's openssl
  /// module, given the files as checked now: config/tls_files.hpp); none: plain
  /// transport only. Files that cannot be used leave TLS off, and say why in
  /// tls_refused. Throws std::system_error when the threads the actor system will
  /// start cannot all be started (this user's tasks at their limit: ulimit -u, a
  /// container's pids.max): CAF's actor system aborts the process on such a failure.
  explicit RuntimeActorConfig(size_t worker_threads = 0, const NodeServerConfig* network = nullptr,
                              const TlsConfig* tls = nullptr);

  std::optional<PinnedTls> tls_pinned; // what CAF loads; it lives as long as the system
  std::string tls_refused;             // why TLS was asked for and is off ("": it is not)
};

} // namespace jp
