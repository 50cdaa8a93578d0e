// The actor system's clock (runtime/timeout_clock.hpp) is told of an actor's end
// only when that actor has set a timeout: an actor that ends with one pending is
// still let go (the clock's pending timeout holds a reference to it), and an actor
// that never set one is never counted. On CAF's own scheduler and clock thread,
// as jp-actors runs them.
#define CAF_SUITE timeout_clock
#include <caf/test/unit_test.hpp>

#include <caf/all.hpp>
#include <chrono>
#include <future>
#include <memory>

#include "runtime/actor_config.hpp"
#include "runtime/timeout_clock.hpp"

using namespace jp;

namespace {

constexpr auto bound = std::chrono::seconds(20); // generous: never a timing claim
constexpr auto never = std::chrono::seconds(3600);

enum class timeout_kind { none, receive, request };

/// Sets the timeout it is told to, answers an int once it is set, and tells its
/// destruction (the last reference let go, not its end).
class probe final : public caf::event_based_actor {
public:
  probe(caf::actor_config& cfg, std::shared_ptr<std::promise<void>> gone, timeout_kind kind, caf::actor peer)
    : event_based_actor(cfg), gone_(std::move(gone)), kind_(kind), peer_(std::move(peer)) {}

  ~probe() override { gone_->set_value(); }

  caf::behavior make_behavior() override {
    if (kind_ == timeout_kind::request) // the peer holds it unanswered
      request(peer_, never, 0).then([](int) {}, [](caf::error&) {});
    if (kind_ == timeout_kind::receive)
      return {[](int x) { return x; }, caf::after(never) >> [] {}};
    return {[](int x) { return x; }};
  }

private:
  std::shared_ptr<std::promise<void>> gone_; // shared: a probe kept too long outlives the test
  timeout_kind kind_;
  caf::actor peer_;
};

struct fixture {
  RuntimeActorConfig cfg{1, nullptr, nullptr};
  caf::actor_system sys{cfg};
  timeout_clock& clock = dynamic_cast<timeout_clock&>(sys.clock());
  caf::scoped_actor self{sys};
  // Takes a request and never answers it, keeping no reference to its sender (a
  // response promise would keep one).
  caf::actor peer = sys.spawn([]() -> caf::behavior {
    return {[](int) -> caf::delegated<int> { return {}; }};
  });

  ~fixture() { self->send_exit(peer, caf::exit_reason::user_shutdown); }

  /// Starts a probe and waits until it has set its timeout (its answer comes after).
  caf::actor started(const std::shared_ptr<std::promise<void>>& gone, timeout_kind kind) {
    auto p = sys.spawn<probe>(gone, kind, peer);
    bool answered = false;
    self->request(p, caf::infinite, 1).receive([&](int) { answered = true; }, [](caf::error&) {});
    CAF_REQUIRE(answered);
    return p;
  }

  /// Starts a probe of `kind`, ends it and lets go of the test's reference: it is
  /// destroyed, and counted by the clock only while it lived, if it set a timeout.
  void ends_and_is_let_go(timeout_kind kind) {
    auto gone = std::make_shared<std::promise<void>>();
    auto p = started(gone, kind);
    CAF_CHECK_EQUAL(clock.timed_actors(), kind == timeout_kind::none ? 0u : 1u);
    self->send_exit(p, caf::exit_reason::user_shutdown);
    p = nullptr;
    CAF_CHECK(gone->get_future().wait_for(bound) == std::future_status::ready);
    CAF_CHECK_EQUAL(clock.timed_actors(), 0u);
  }
};

} // namespace

CAF_TEST_FIXTURE_SCOPE(timeout_clock_tests, fixture)

CAF_TEST(an actor that ends with a receive timeout pending is let go by the clock) {
  ends_and_is_let_go(timeout_kind::receive);
}

CAF_TEST(an actor that ends with a request timeout pending is let go by the clock) {
  ends_and_is_let_go(timeout_kind::request);
}

CAF_TEST(an actor that never sets a timeout is never counted) {
  ends_and_is_let_go(timeout_kind::none);
}

CAF_TEST(a blocking actor that made a timed request is not counted after its end) {
  // As the CLI's control endpoint does: a scoped actor per request, asking with a
  // timeout; none may stay counted once it is gone.
  for (int i = 0; i < 3; ++i) {
    caf::scoped_actor asker{sys};
    bool answered = false;
    auto echo = sys.spawn([]() -> caf::behavior { return {[](int x) { return x; }}; });
    asker->request(echo, never, 1).receive([&](int) { answered = true; }, [](caf::error&) {});
    CAF_CHECK(answered);
    asker->send_exit(echo, caf::exit_reason::user_shutdown);
  }
  CAF_CHECK_EQUAL(clock.timed_actors(), 0u);
}

CAF_TEST_FIXTURE_SCOPE_END()
