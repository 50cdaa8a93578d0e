#include "runtime/actor_config.hpp"

#include <caf/atom.hpp>
#include <caf/io/middleman.hpp>
#include <caf/openssl/manager.hpp>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <fstream>
#include <fmt/format.h>
#include <mutex>
#include <string>
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

/// This process's threads, as the kernel counts them ("Threads:" of /proc/self/status);
/// 0 when it cannot be read.
size_t own_threads() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.starts_with("Threads:"))
      return std::strtoul(line.c_str() + 8, nullptr, 10);
  return 0;
}

/// Starts `count` threads at once and ends them, or throws the failure to start one
/// as std::system_error. CAF 0.17's actor_system cannot take a thread it fails to
/// start: it unwinds with its started threads joinable and the process aborts
/// ("terminate called without an active exception"). So where this user's tasks
/// are at their limit (ulimit -u, a container's pids.max) the threads the system
/// will start are tried first, and the failure is an error the caller can tell.
/// Best effort: another process of the user may take a task in between.
void try_starting_threads(size_t count) {
  std::mutex m;
  std::condition_variable cv;
  bool done = false;
  std::vector<std::thread> started;
  started.reserve(count); // no allocation to fail with threads running
  std::error_code failed;
  auto before = own_threads();
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
  // A joined thread's task still counts against the limit for a moment (the kernel
  // releases it after join returns): CAF's threads must not meet them there.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(100);
  while (own_threads() > before && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  if (failed)
    throw std::system_error(failed, fmt::format("cannot start the runtime's {} threads", count));
}

/// The threads CAF's actor system starts as it is built, the scheduler's `workers`
/// and: jp's clock (actor_scheduler), CAF's clock and its printer (a blocking actor);
/// with the network, the middleman's multiplexer and its actor (detached); with TLS,
/// the openssl manager's middleman actor. And one to spare.
size_t threads_at_start(size_t workers, bool network, bool tls) {
  return workers + 3 + (network ? 2 : 0) + (network && tls ? 1 : 0) + 1;
}

} // namespace

RuntimeActorConfig::RuntimeActorConfig(size_t worker_threads, const NodeServerConfig* network, const TlsConfig* tls) {
  try_starting_threads(threads_at_start(jp::worker_threads(uint64_t{worker_threads}), network != nullptr,
                                       tls != nullptr && tls->enabled()));
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
