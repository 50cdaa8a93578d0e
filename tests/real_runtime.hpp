// A real actor system (threads, not the deterministic scheduler) with an io thread
// and a registry over real processes, for tests of handles and the CLI's pieces.
// Every wait is bounded; every process group is gone when the fixture ends.
#pragma once

#include <caf/all.hpp>
#include <caf/test/unit_test.hpp>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <string>
#include <thread>

#include "actors/await_hub.hpp"
#include "actors/registry_actor.hpp"
#include "messages/atoms.hpp"
#include "runtime/actor_config.hpp"
#include "runtime/process/io_thread.hpp"
#include "runtime/process/process.hpp"
#include "proc_syscall.hpp"
#include "temp_dir.hpp"

namespace jp::testing {

using real_config = RuntimeActorConfig;

inline constexpr auto bound = std::chrono::seconds(20); // generous: never a timing claim

struct real_runtime {
  IoThread io;
  real_config cfg;
  caf::actor_system sys{cfg};
  caf::scoped_actor self{sys};
  temp_dir dir;
  registry_actor registry = spawn_registry(sys, process_handle_factory(io));

  ~real_runtime() {
    self->send_exit(registry, caf::exit_reason::user_shutdown);
  }

  LaunchSpec shell(const std::string& command, int64_t grace_ms = 2000) {
    LaunchSpec s;
    s.tool = "shell";
    s.argv = {"bash", "-c", command};
    s.stdin_pipe = true;
    s.grace_ms = grace_ms;
    s.spill_dir = (dir.path / "output").string();
    return s;
  }

  /// Request with a bounded wait; returns {value, error text}.
  template <class T, class Handle, class... Ts>
  std::pair<T, std::string> ask(const Handle& dest, Ts&&... xs) {
    std::pair<T, std::string> out{};
    self->request(dest, bound, std::forward<Ts>(xs)...)
      .receive([&](T& x) { out.first = std::move(x); },
               [&](caf::error& err) { out.second = error_text(err); });
    return out;
  }

  /// Fetches until `pred(all content so far)` holds or the bound passes.
  template <class Pred>
  std::string fetch_until(const std::string& id, Pred pred) {
    std::string seen;
    auto deadline = std::chrono::steady_clock::now() + bound;
    while (std::chrono::steady_clock::now() < deadline) {
      auto [r, err] = ask<HandleReport>(registry, fetch_atom::value, id, LookOptions{});
      if (!err.empty())
        return seen;
      seen += r.state.content;
      if (pred(seen) || r.state.stopped())
        return seen;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return seen;
  }

  /// A tool that speaks the control channel: bash running `script` (fd 3 is the channel).
  LaunchSpec control_tool(const std::string& tool, const std::string& script) {
    LaunchSpec s = shell("");
    s.tool = tool;
    s.argv = {"bash", "-c", script};
    s.control_channel = true;
    return s;
  }

  /// Fetches `id` (a look of up to 10 s) once `pid` sleeps in system call `nr`.
  std::pair<HandleReport, std::string> fetch_once_blocked(const std::string& id, pid_t pid, long nr) {
    auto blocked = [&] {
      auto s = sleeping_in(pid);
      return s && s->nr == nr;
    };
    auto until = std::chrono::steady_clock::now() + bound; // against a hang only
    while (!blocked() && std::chrono::steady_clock::now() < until)
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    CAF_REQUIRE(blocked());
    return ask<HandleReport>(registry, fetch_atom::value, id, LookOptions{10000});
  }

  /// Fetches `id` until it asks a question or stops, or the bound passes; the last report.
  HandleReport fetch_until_asked(const std::string& id) {
    HandleReport r;
    auto deadline = std::chrono::steady_clock::now() + bound;
    do {
      r = ask<HandleReport>(registry, fetch_atom::value, id, LookOptions{}).first;
    } while (r.state.kind != state_kind::waiting && !r.state.stopped() && std::chrono::steady_clock::now() < deadline);
    return r;
  }
};

/// The handles' statuses now; this test's actor hears of their changes from now on.
inline std::vector<HandleStatus> watch_handles(real_runtime& rt, const std::vector<std::string>& ids) {
  auto [statuses, err] =
    rt.ask<std::vector<HandleStatus>>(rt.registry, watch_atom::value, ids, caf::actor_cast<watcher_actor>(rt.self));
  CAF_REQUIRE_EQUAL(err, "");
  return std::move(statuses);
}

/// `await all` over handles watched since `statuses` (watch_handles): a hub answers.
inline AwaitResult await_watched(real_runtime& rt, std::vector<std::string> ids, std::vector<HandleStatus> statuses) {
  AwaitHub hub;
  auto fx = hub.add(1, AwaitRequest{{}, std::move(ids), -1}, std::move(statuses));
  while (fx.answers.empty())
    rt.self->receive([&](update_atom, HandleStatus& s) { fx = hub.update(s); },
                     caf::after(std::chrono::seconds(30)) >> [] { CAF_FAIL("no handle stopped within 30 s"); });
  return *fx.answers[0].result;
}

/// `await all` as a turn runs it: this test's actor watches, a hub answers.
inline AwaitResult await_all(real_runtime& rt, std::vector<std::string> ids) {
  auto statuses = watch_handles(rt, ids);
  return await_watched(rt, std::move(ids), std::move(statuses));
}

inline bool group_gone(pid_t pgid) {
  return ::kill(-pgid, 0) == -1 && errno == ESRCH;
}

} // namespace jp::testing
