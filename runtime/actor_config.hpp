// The actor system configuration every jp-actors runtime uses (the CLI, embedders,
// the real-process tests, the benchmark): message types and the "jp" error category
// registered, CAF's console logger off, and a scheduler tuned for latency.
#pragma once

#include <caf/actor_system_config.hpp>
#include <cstddef>

namespace jp {

struct RuntimeActorConfig : caf::actor_system_config {
  /// `worker_threads`: runtime.worker_threads (threads of CAF's scheduler).
  explicit RuntimeActorConfig(size_t worker_threads = 1);
};

} // namespace jp
