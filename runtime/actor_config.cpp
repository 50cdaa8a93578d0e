#include "runtime/actor_config.hpp"

#include <caf/atom.hpp>
#include <caf/io/middleman.hpp>
#include <caf/openssl/manager.hpp>
#include <condition_variable>
#include <fmt/format.h>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

#include "config/config.hpp"

#include "messages/error_category.hpp"
#include "messages/type_registration.hpp"
#include "runtime/actor_scheduler.hpp"
#include "runtime/node/node_protocol.hpp"

namespace jp {

namespace {

/// Starts `count` threads at once and ends them, or throws the failure to start one
/// as std::system_error. CAF 0.17's actor_system cannot take a thread it fails to
/// start: it unwinds with its started threads joinable and the process aborts
/// ("terminate called without an active exception"). So where this user's tasks
/// are at their limit (ulimit -u, a container's pids.max) the threads the system
/// will start are tried first, and the failure is an error the caller can tell.
void try_starting_threads(size_t count) {
  std::mutex m;
  std::condition_variable cv;
  bool done = false;
  std::vector<std::thread> started;
  std::error_code failed;
  for (size_t i = 0; i < count && !failed; ++i) {
    try {
      started.emplace_back([&] {
        std::unique_lock lock(m);
        cv.wait(lock, [&] { return done; });
      });
    } catch (const std::system_error& e) {
      failed = e.code();
    }
  }
  {
    std::lock_guard lock(m);
    done = true;
  }
  cv.notify_all();
  for (auto& t : started)
    t.join();
  if (failed)
    throw std::system_error(failed, fmt::format("cannot start the runtime's {} threads", count));
}

// Besides the scheduler's workers: CAF's clock, the middleman's multiplexer, a
// detached actor (a person asked, an LLM round trip), and one to spare.
constexpr size_t kThreadsBesideWorkers = 4;

} // namespace

RuntimeActorConfig::RuntimeActorConfig(size_t worker_threads, const NodeServerConfig* network, const TlsConfig* tls) {
  try_starting_threads(jp::worker_threads(uint64_t{worker_threads}) + kThreadsBesideWorkers);
  register_message_types(*this);
  register_error_category(*this);
  set("logger.console", caf::atom("none"));
  // CAF's idle workers poll in 50 µs sleeps for a while before blocking; a message
  // to such a worker waits out the sleep, and every tool call crosses several
  // actors. Skip that phase: spin briefly, then block on a condition variable that
  // an enqueue signals (profile of W1/W5 in bench/README.md).
  set("work-stealing.moderate-poll-attempts", size_t{0});
  set("scheduler.max-threads", jp::worker_threads(uint64_t{worker_threads}));
  // CAF lets an actor run until its mailbox is empty: a handle whose output never
  // stops (`yes` on a terminal) kept the only worker, and no other call, abort or
  // Ctrl-C was answered. After this many messages it goes to the back of the queue.
  set("scheduler.max-throughput", size_t{100});
  load<actor_scheduler>(); // work stealing, its sleeping workers woken after the lock is let go
  if (network) {
    load<caf::io::middleman>();
    // Off by default in CAF: a partition would go unnoticed.
    auto span = [](double secs) { return caf::timespan{static_cast<int64_t>(secs * 1e9)}; };
    set("middleman.heartbeat-interval", span(network->heartbeat_secs));
    set("middleman.connection-timeout", span(network->timeout_secs));
    // A node and a client of builds whose messages differ refuse each other at the
    // handshake, said as such, rather than connecting and failing on the first message.
    set("middleman.app-identifiers", std::vector<std::string>{node_protocol});
    if (tls && tls->enabled()) {
      auto pinned = PinnedTls::pin(*tls, "tls");
      if (!pinned) {
        tls_refused = pinned.error();
        return;
      }
      tls_pinned.emplace(std::move(*pinned));
      // Both a certificate and a CA: CAF then verifies the peer's certificate on both
      // sides (mutual TLS); its anonymous fallback (no certificate) is never used.
      load<caf::openssl::manager>();
      openssl_certificate = tls_pinned->certificate();
      openssl_key = tls_pinned->key();
      openssl_cafile = tls_pinned->ca();
    }
  }
}

} // namespace jp
