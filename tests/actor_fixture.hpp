// A deterministic CAF test fixture (test_coordinator) with our message types
// registered, and a registry whose handles are scripted fakes the test drives:
// a fake stops when the test tells it to (finish), or when aborted.
#pragma once

#include <caf/test/dsl.hpp>
#include <map>

#include "actors/registry_actor.hpp"
#include "messages/atoms.hpp"
#include "messages/notification.hpp"
#include "messages/type_registration.hpp"

namespace jp::testing {

struct registered_config : caf::actor_system_config {
  registered_config() {
    register_message_types(*this);
  }
};

using finish_atom = caf::atom_constant<caf::atom("finish")>;

/// A handle the test drives: the handle interface, (finish_atom, result), and
/// (finish_atom, error, output): a failure with what it printed.
using fake_handle_actor = handle_actor::extend<caf::reacts_to<finish_atom, std::string>,
                                               caf::reacts_to<finish_atom, std::string, std::string>>;

struct fake_handle_state {
  std::string id;
  supervisor_actor registry;
  bool stopped = false;
  HandleReport final;
  std::vector<std::string> answers; // what (answer_atom) brought
};

inline fake_handle_actor::behavior_type
fake_handle(fake_handle_actor::stateful_pointer<fake_handle_state> self, std::string id,
            supervisor_actor registry) {
  self->state.id = std::move(id);
  self->state.registry = std::move(registry);
  // own_end: it ended by itself (finish), not by an abort, as a process handle says.
  auto stop = [self](ToolState s, bool own_end) {
    auto& st = self->state;
    if (st.stopped)
      return;
    st.stopped = true;
    st.final = HandleReport{st.id, std::move(s), 0, {}};
    st.final.own_end = own_end;
    self->send(st.registry, stopped_atom::value, st.final);
  };
  return {
    [self](fetch_atom, const LookOptions&) {
      return self->state.stopped ? self->state.final
                                 : HandleReport{self->state.id, ToolState::running(), 0, {}};
    },
    [self](apply_atom, const std::string& input, const LookOptions&) {
      return HandleReport{self->state.id, ToolState::running(input), 0, {}};
    },
    [self](answer_atom, const std::string& answer) { self->state.answers.push_back(answer); },
    [stop](finish_atom, const std::string& result) { stop(ToolState::success(result), true); },
    [stop](finish_atom, const std::string& error, const std::string& output) {
      stop(ToolState::failure(ToolError{error, {}, false}, output), true);
    },
    [self](peek_atom) { return HandleProgress{"last line of " + self->state.id}; },
    [self](rename_atom, const std::string& id) { self->state.id = id; },
    [self](retire_atom) { self->quit(); },
    [self, stop](abort_atom) {
      stop(ToolState::failure(ToolError{"aborted", {}, false}), false);
      return self->state.final;
    },
  };
}

struct registry_fixture : test_coordinator_fixture<registered_config> {
  std::map<std::string, fake_handle_actor> handles; // the fakes, by id
  registry_actor registry;

  /// Runs every pending message, but fires no timer: time moves only when a test
  /// calls advance_time.
  void settle() {
    sched.run();
  }

  /// Handles are fakes, kept in `handles` by id.
  HandleFactory fake_factory() {
    return [this](caf::local_actor* parent, const std::string& id, const LaunchSpec&,
                  const supervisor_actor& supervisor) -> handle_actor {
      auto h = parent->spawn(fake_handle, id, supervisor);
      handles[id] = h;
      return h;
    };
  }

  registry_fixture() {
    registry = spawn_registry(sys, fake_factory());
    settle();
  }

  ~registry_fixture() {
    anon_send_exit(registry, caf::exit_reason::user_shutdown);
    settle();
  }

  /// Sends a request, runs the scheduler to quiescence, returns the reply or error.
  template <class T, class Handle, class... Ts>
  std::pair<T, std::string> ask(const Handle& dest, Ts&&... xs) {
    auto h = self->request(dest, caf::infinite, std::forward<Ts>(xs)...);
    settle();
    std::pair<T, std::string> out{};
    bool got = false;
    h.receive([&](T& x) { out.first = std::move(x); got = true; },
              [&](caf::error& err) { out.second = error_text(err); got = true; });
    CAF_REQUIRE(got);
    return out;
  }

  void finish(const std::string& id, const std::string& result) {
    anon_send(handles.at(id), finish_atom::value, result);
    settle();
  }
};

} // namespace jp::testing
