// Where the io thread's messages are scheduled: the first CAF worker while it has
// nothing queued, the others in turn when it is behind. Checked on CAF's own
// scheduler (threads, not the test DSL's), with every worker held by a job of the
// test's, so that nothing queued is taken or stolen before it is looked at.
#define CAF_SUITE io_thread_send
#include <caf/test/unit_test.hpp>

#include <atomic>
#include <caf/all.hpp>
#include <caf/policy/work_stealing.hpp>
#include <caf/scheduler/coordinator.hpp>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <vector>

#include "actors/io_thread_send.hpp"
#include "runtime/actor_config.hpp"

using namespace jp;

namespace {

using stealing_scheduler = caf::scheduler::coordinator<caf::policy::work_stealing>;
constexpr auto bound = std::chrono::seconds(20); // generous: never a timing claim

/// Holds the worker that runs it until released (a worker runs one job at a time,
/// so one per worker holds them all).
class Hold final : public caf::resumable {
public:
  Hold(std::mutex& m, std::condition_variable& cv, int& running, bool& released)
    : m_(m), cv_(cv), running_(running), released_(released) {}

  subtype_t subtype() const override { return function_object; }

  resume_result resume(caf::execution_unit*, size_t) override {
    std::unique_lock lock(m_);
    ++running_;
    cv_.notify_all();
    cv_.wait(lock, [this] { return released_; });
    return done;
  }

  // Owned by the test, which outlives the workers' use of it.
  void intrusive_ptr_add_ref_impl() override {}
  void intrusive_ptr_release_impl() override {}

private:
  std::mutex& m_;
  std::condition_variable& cv_;
  int& running_;
  bool& released_;
};

struct held_workers {
  // Before the system: its end joins the workers, which use these until released.
  std::mutex m;
  std::condition_variable cv;
  int running = 0;
  bool released = false;
  std::vector<std::unique_ptr<Hold>> holds;
  RuntimeActorConfig cfg{4, nullptr, nullptr};
  caf::actor_system sys{cfg};
  stealing_scheduler& sch = dynamic_cast<stealing_scheduler&>(sys.scheduler());

  /// Every worker running a Hold: true once all are (bounded wait).
  bool hold_all() {
    for (size_t i = 0; i < sch.num_workers(); ++i) {
      holds.push_back(std::make_unique<Hold>(m, cv, running, released));
      sch.worker_by_id(i)->external_enqueue(holds.back().get());
    }
    std::unique_lock lock(m);
    return cv.wait_for(lock, bound, [this] { return running == static_cast<int>(sch.num_workers()); });
  }

  void release() {
    std::lock_guard lock(m);
    released = true;
    cv.notify_all();
  }

  bool queued_at(size_t worker) { return !sch.worker_by_id(worker)->data().queue.empty(); }

  ~held_workers() { release(); }
};

} // namespace

CAF_TEST_FIXTURE_SCOPE(io_thread_send_tests, held_workers)

CAF_TEST(the first worker takes the io thread messages until it is behind and the others take them then) {
  CAF_REQUIRE_EQUAL(sch.num_workers(), 4u);
  caf::scoped_actor self{sys};
  // Lazily started: an actor is scheduled only when its first message comes.
  auto echo = [](caf::event_based_actor*) -> caf::behavior { return {[](int x) { return x; }}; };
  auto first = sys.spawn<caf::lazy_init>(echo);
  auto second = sys.spawn<caf::lazy_init>(echo);
  auto third = sys.spawn<caf::lazy_init>(echo);
  auto replies = sys.spawn<caf::lazy_init>([](caf::event_based_actor* s, caf::actor to) -> caf::behavior {
    return {[s, to](int x) { s->send(to, x); }};
  }, caf::actor_cast<caf::actor>(self));
  // A message from outside first, through CAF's own turn, which then names the second
  // worker next: the first worker taking the io thread's next message is not CAF's
  // turn (the holds are queued at each worker directly, not through it).
  int warm = 0;
  self->send(replies, 0);
  self->receive([&](int y) { warm = y + 1; }, caf::after(bound) >> [] { CAF_FAIL("no reply"); });
  CAF_REQUIRE_EQUAL(warm, 1);
  CAF_REQUIRE(hold_all());
  for (size_t w = 0; w < 4; ++w)
    CAF_REQUIRE(!queued_at(w));

  // The first worker has nothing queued: it takes the message's receiver.
  io_thread_send(first, 1);
  CAF_CHECK(queued_at(0));
  CAF_CHECK(!queued_at(1) && !queued_at(2) && !queued_at(3));

  // It is behind now: the next goes to another worker, and the one after to a third.
  io_thread_send(second, 2);
  int others = int{queued_at(1)} + int{queued_at(2)} + int{queued_at(3)};
  CAF_CHECK_EQUAL(others, 1);
  io_thread_send(third, 3);
  others = int{queued_at(1)} + int{queued_at(2)} + int{queued_at(3)};
  CAF_CHECK_EQUAL(others, 2);
  CAF_CHECK(queued_at(0));

  // Released, the workers run what was queued: each message is delivered.
  release();
  for (auto [a, x] : {std::pair{first, 1}, {second, 2}, {third, 3}}) {
    int got = 0;
    self->request(a, bound, x).receive([&](int y) { got = y; }, [&](caf::error& e) { CAF_FAIL(to_string(e)); });
    CAF_CHECK_EQUAL(got, x);
  }
  io_thread_send(replies, 7);
  int got = 0;
  self->receive([&](int y) { got = y; }, caf::after(bound) >> [] { CAF_FAIL("no reply"); });
  CAF_CHECK_EQUAL(got, 7);
  for (auto& a : {first, second, third, replies})
    self->send_exit(a, caf::exit_reason::user_shutdown);
}

CAF_TEST_FIXTURE_SCOPE_END()
