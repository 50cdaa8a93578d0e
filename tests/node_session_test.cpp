// A node session on CAF's deterministic scheduler, over scripted handles: the orders
// of its messages that real processes and a real network make only by chance.
#define CAF_SUITE node_session
#include "actor_fixture.hpp"
#include "actors/node_session.hpp"
#include "actors/node_stopping.hpp"
#include "config/config_loader.hpp"
#include "contains.hpp"
#include "messages/error_category.hpp"
#include "tools/builtin_tools.hpp"

using namespace jp;
using namespace jp::testing;

namespace {

const std::string key = "the session's key";

struct session_fixture : registry_fixture {
  caf::actor client = sys.spawn([] { return caf::behavior{[](int) {}}; });
  std::shared_ptr<NodeStopping> stopping = std::make_shared<NodeStopping>();
  node_session_actor session;

  session_fixture() {
    auto config = apply_config_text(default_config(), R"(
[conversation.tools.far]
summary = "Runs on the node"
command = { program = "true" }
run = "unattended"
spawn.stateful = true
)",
                                     "test");
    CAF_REQUIRE(config.ok());
    session = spawn_node_session(sys, std::make_shared<const Config>(std::move(*config)), fake_factory(),
                                 stopping, client, key);
    settle();
  }

  ~session_fixture() {
    anon_send_exit(session, caf::exit_reason::user_shutdown);
    anon_send_exit(client, caf::exit_reason::user_shutdown);
    settle();
  }

  /// A client's remote handle: it hears of its handle's changes.
  caf::actor remote_handle() {
    return sys.spawn([] { return caf::behavior{[](update_atom, const HandleStatus&) {}}; });
  }

  auto spawn_request(const std::string& id, const caf::actor& owner) {
    return self->request(session, caf::infinite, spawn_atom::value, key, id, std::string("far"), std::string("{}"),
                         std::string(), owner);
  }

  /// The client spawns `id` again for `second` while the session hears that
  /// `first`, the id's owner, went: the session takes the spawn, then the owner's
  /// end, before the registry answers the spawn. Returns the spawn's error ("" none).
  std::string spawn_again_as_first_owner_goes(const std::string& id, const caf::actor& first,
                                              const caf::actor& second) {
    auto again = spawn_request(id, second);
    anon_send_exit(first, caf::exit_reason::user_shutdown);
    CAF_REQUIRE(sched.prioritize(session));
    sched.run_once(); // the spawn: the id is starting, the registry asked
    CAF_REQUIRE(sched.prioritize(first));
    sched.run_once(); // the first owner ends: its down is the session's next message
    CAF_REQUIRE(sched.prioritize(session));
    sched.run_once(); // the down, while the id is starting
    settle();
    std::string err;
    again.receive([](HandleReport&) {}, [&](caf::error& e) { err = error_text(e); });
    return err;
  }

  std::pair<HandleReport, std::string> fetch(const std::string& id) {
    return ask<HandleReport>(session, fetch_atom::value, key, id, LookOptions{});
  }
};

} // namespace

CAF_TEST_FIXTURE_SCOPE(node_session_tests, session_fixture)

CAF_TEST(a handle whose owner goes while its id is refused to a second spawn is let go of) {
  auto first = remote_handle();
  auto [r, err] = ask<HandleReport>(session, spawn_atom::value, key, std::string("x"), std::string("far"),
                                    std::string("{}"), std::string(), first);
  CAF_REQUIRE_EQUAL(err, "");
  CAF_REQUIRE(r.state.kind == state_kind::running);
  // The old handle still runs: the registry refuses the second spawn, and the old
  // handle, whose owner has gone, is aborted rather than left running for the session.
  auto refused = spawn_again_as_first_owner_goes("x", first, remote_handle());
  CAF_CHECK(contains(refused, "already exists"));
  auto [got, gone] = fetch("x");
  if (gone.empty())
    CAF_MESSAGE("x is still there: " << static_cast<int>(got.state.kind));
  CAF_CHECK(contains(gone, "not found"));
}

CAF_TEST(a handle whose id is spawned again as its old owner goes belongs to the new owner) {
  auto first = remote_handle();
  auto [r, err] = ask<HandleReport>(session, spawn_atom::value, key, std::string("x"), std::string("far"),
                                    std::string("{}"), std::string(), first);
  CAF_REQUIRE_EQUAL(err, "");
  finish("x", "done"); // the old handle stopped: the id may be spawned again
  auto second = remote_handle();
  CAF_REQUIRE_EQUAL(spawn_again_as_first_owner_goes("x", first, second), "");
  // The old owner's end does not touch the new handle...
  auto [now, nerr] = fetch("x");
  CAF_CHECK_EQUAL(nerr, "");
  CAF_CHECK(now.state.kind == state_kind::running);
  // ...nor does a later spawn of the id that is refused, its owner alive...
  auto [again, aerr] = ask<HandleReport>(session, spawn_atom::value, key, std::string("x"), std::string("far"),
                                         std::string("{}"), std::string(), remote_handle());
  CAF_CHECK(contains(aerr, "already exists"));
  auto [still, serr] = fetch("x");
  CAF_CHECK_EQUAL(serr, "");
  CAF_CHECK(still.state.kind == state_kind::running);
  // ...but its own owner's end does.
  anon_send_exit(second, caf::exit_reason::user_shutdown);
  settle();
  CAF_CHECK(contains(fetch("x").second, "not found"));
}

CAF_TEST(a handle is watched for the node s stop from its spawn on) {
  // A node stopping while a spawn is answered waits for that handle's stop to be
  // told too: counted from the spawn, not from its answer.
  auto spawned = spawn_request("x", remote_handle());
  CAF_REQUIRE(sched.prioritize(session));
  sched.run_once(); // the spawn taken; the registry not yet asked
  CAF_CHECK_EQUAL(stopping->watched(), 1);
  settle();
  spawned.receive([](HandleReport&) {}, [](caf::error& e) { CAF_FAIL("spawn: " << error_text(e)); });
  CAF_CHECK_EQUAL(stopping->watched(), 1);
  finish("x", "done"); // its stop is told to its remote handle
  CAF_CHECK_EQUAL(stopping->watched(), 0);
  // A spawn refused counts nothing.
  auto first = remote_handle();
  CAF_REQUIRE_EQUAL(ask<HandleReport>(session, spawn_atom::value, key, std::string("y"), std::string("far"),
                                      std::string("{}"), std::string(), first).second, "");
  auto refused = ask<HandleReport>(session, spawn_atom::value, key, std::string("y"), std::string("far"),
                                   std::string("{}"), std::string(), remote_handle());
  CAF_CHECK(contains(refused.second, "already exists"));
  CAF_CHECK_EQUAL(stopping->watched(), 1); // y's alone
}

CAF_TEST_FIXTURE_SCOPE_END()
