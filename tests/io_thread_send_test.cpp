// Where the io thread's messages are scheduled: the first CAF worker when it is
// asleep with nothing queued, else the others in turn. Checked on CAF's own
// scheduler (threads, not the test DSL's), with the workers not under test held by
// jobs of the test's, so that nothing queued is taken or stolen before it is
// looked at (idle workers look for work to steal only every hour here), and that a
// worker asleep is woken for what it is given, from the io thread or from outside.
#define CAF_SUITE io_thread_send
#include <caf/test/unit_test.hpp>

#include <algorithm>
#include <caf/all.hpp>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "actors/io_thread_send.hpp"
#include "actors/send_after_queued.hpp"
#include "runtime/actor_config.hpp"
#include "runtime/actor_scheduler.hpp"
#include "runtime/process/io_thread.hpp"
#include "runtime/process/process.hpp"

using namespace jp;

namespace {

constexpr auto bound = std::chrono::seconds(20); // generous: never a timing claim

struct Gate {
  std::mutex m;
  std::condition_variable cv;
  int running = 0;
};

/// Holds the worker that runs it until released (a worker runs one job at a time).
class Hold final : public caf::resumable {
public:
  explicit Hold(Gate& g) : g_(g) {}

  subtype_t subtype() const override { return function_object; }

  resume_result resume(caf::execution_unit* ctx, size_t) override {
    std::unique_lock lock(g_.m);
    ran_on = ctx;
    ++g_.running;
    g_.cv.notify_all();
    g_.cv.wait(lock, [this] { return released; });
    return done;
  }

  // Owned by the test, which outlives the workers' use of it.
  void intrusive_ptr_add_ref_impl() override {}
  void intrusive_ptr_release_impl() override {}

  caf::execution_unit* ran_on = nullptr; // guarded by the gate's mutex
  bool released = false;                 // likewise

private:
  Gate& g_;
};

RuntimeActorConfig& configured(RuntimeActorConfig& cfg) {
  // An idle worker wakes to steal every 10 ms by default: here it sleeps until
  // work is given to it, so a job queued at a held worker stays there, and a job
  // given to a sleeping worker without waking it is never run (the report's wait
  // fails long before the hour).
  cfg.set("work-stealing.relaxed-sleep-duration", caf::timespan{std::chrono::hours(1)});
  return cfg;
}

/// Waits (bounded) until worker `i` sleeps on its condition variable.
bool worker_asleep(actor_scheduler& sch, size_t i) {
  auto until = std::chrono::steady_clock::now() + bound;
  auto& d = sch.worker_by_id(i)->data().waitdata;
  while (std::chrono::steady_clock::now() < until) {
    {
      std::lock_guard guard(d.lock);
      if (d.sleeping)
        return true;
    }
    std::this_thread::yield();
  }
  return false;
}

/// How often worker `i` was woken for a job (actor_scheduler.hpp): unchanged over
/// a span, it slept throughout (it leaves its sleep only for a job, or after the
/// hour set above).
uint64_t worker_wakeups(actor_scheduler& sch, size_t i) {
  auto& d = sch.worker_by_id(i)->data();
  std::lock_guard guard(d.waitdata.lock);
  return d.wakeups;
}

struct held_workers {
  // Before the system: its end joins the workers, which use these until released.
  Gate gate;
  std::vector<std::unique_ptr<Hold>> holds;
  RuntimeActorConfig cfg{4, nullptr, nullptr};
  caf::actor_system sys{configured(cfg)};
  actor_scheduler& sch = dynamic_cast<actor_scheduler&>(sys.scheduler());
  caf::scoped_actor self{sys};

  /// Every worker running a Hold: true once all are (bounded wait). One Hold at a
  /// time, each to a worker not yet held: a free worker may steal it first (then
  /// that one is held, and the next Hold goes to the one passed over). All at once,
  /// a Hold stolen by one worker left its own queued behind it, for a worker that
  /// does not look to steal again here.
  bool hold_all() {
    auto until = std::chrono::steady_clock::now() + bound;
    std::unique_lock lock(gate.m);
    while (gate.running < static_cast<int>(sch.num_workers())) {
      size_t free = 0;
      while (std::any_of(holds.begin(), holds.end(),
                         [&](auto& h) { return h->ran_on == sch.worker_by_id(free); }))
        ++free;
      holds.push_back(std::make_unique<Hold>(gate));
      int before = gate.running;
      lock.unlock();
      sch.worker_by_id(free)->external_enqueue(holds.back().get());
      lock.lock();
      if (!gate.cv.wait_until(lock, until, [&] { return gate.running > before; }))
        return false;
    }
    return true;
  }

  void release(Hold& h) {
    std::lock_guard lock(gate.m);
    h.released = true;
    gate.cv.notify_all();
  }

  void release_all() {
    for (auto& h : holds)
      release(*h);
  }

  /// The Hold the first worker runs.
  Hold* first_workers_hold() {
    std::lock_guard lock(gate.m);
    for (auto& h : holds)
      if (h->ran_on == sch.worker_by_id(0))
        return h.get();
    return nullptr;
  }

  bool queued_at(size_t worker) { return !sch.worker_by_id(worker)->data().queue.empty(); }

  int queued_at_others() { return int{queued_at(1)} + int{queued_at(2)} + int{queued_at(3)}; }

  /// Waits (bounded) until the first worker sleeps on its condition variable.
  bool first_asleep() {
    return asleep(0);
  }

  bool asleep(size_t i) { return worker_asleep(sch, i); }

  /// An actor started by its first message, which answers each int it gets to the
  /// test with whether the first worker ran it.
  caf::actor reporter() {
    auto first = sch.worker_by_id(0);
    return sys.spawn<caf::lazy_init>(
      [first](caf::event_based_actor* s, caf::actor to) -> caf::behavior {
        return {[=](int x) { s->send(to, x, s->context() == first); }};
      },
      caf::actor_cast<caf::actor>(self));
  }

  /// The report of message `x` (bounded wait): whether the first worker ran it.
  bool ran_on_first(int x) {
    bool first = false;
    int got = -1;
    self->receive(
      [&](int y, bool on_first) {
        got = y;
        first = on_first;
      },
                  caf::after(bound) >> [] { CAF_FAIL("no report"); });
    CAF_CHECK_EQUAL(got, x);
    return first;
  }

  ~held_workers() { release_all(); }
};

} // namespace

CAF_TEST_FIXTURE_SCOPE(io_thread_send_tests, held_workers)

CAF_TEST(a first worker asleep with nothing queued takes the io thread messages) {
  CAF_REQUIRE_EQUAL(sch.num_workers(), 4u);
  auto a = reporter();
  auto b = reporter();
  CAF_REQUIRE(hold_all());
  auto* mine = first_workers_hold();
  CAF_REQUIRE(mine != nullptr);
  release(*mine); // the first worker is free; the others stay held
  // Twice, each time the first worker asleep: CAF's own turn would name two
  // different workers, and every other is held.
  int x = 0;
  for (auto& receiver : {a, b}) {
    CAF_REQUIRE(first_asleep());
    io_thread_send(receiver, ++x);
    CAF_CHECK_EQUAL(queued_at_others(), 0);
    CAF_CHECK(ran_on_first(x));
  }
  for (auto& r : {a, b})
    self->send_exit(r, caf::exit_reason::user_shutdown);
}

CAF_TEST(a first worker that is running something is passed over and the others take turns) {
  CAF_REQUIRE_EQUAL(sch.num_workers(), 4u);
  auto a = reporter();
  auto b = reporter();
  CAF_REQUIRE(hold_all());
  // Running a job with nothing queued: a message given to it would wait behind
  // that job for as long as it runs.
  io_thread_send(a, 1);
  CAF_CHECK(!queued_at(0));
  CAF_CHECK_EQUAL(queued_at_others(), 1);
  io_thread_send(b, 2);
  CAF_CHECK(!queued_at(0));
  CAF_CHECK_EQUAL(queued_at_others(), 2);
  // Released, the workers run what was queued: each message is delivered.
  release_all();
  std::vector<int> got;
  for (int i = 0; i < 2; ++i)
    self->receive([&](int y, bool) { got.push_back(y); }, caf::after(bound) >> [] { CAF_FAIL("no report"); });
  std::sort(got.begin(), got.end());
  CAF_CHECK_EQUAL(got, (std::vector<int>{1, 2}));
  for (auto& r : {a, b})
    self->send_exit(r, caf::exit_reason::user_shutdown);
}

CAF_TEST(a worker asleep is woken for a message from outside the workers) {
  auto a = reporter();
  // Every worker asleep (for the hour set above, unless woken): CAF hands the
  // message to one of them in turn, and that one must wake for it.
  for (size_t i = 0; i < sch.num_workers(); ++i)
    CAF_REQUIRE(asleep(i));
  caf::anon_send(a, 7);
  ran_on_first(7); // its report came (it checks the number; no report fails)
  self->send_exit(a, caf::exit_reason::user_shutdown);
}

CAF_TEST_FIXTURE_SCOPE_END()

// ---- io_thread_run: the io thread runs what an exit makes ready, when it may

namespace {

/// Workers asleep until given work (as above), and an io thread that outlives the
/// system, as in the runtime.
struct io_and_workers {
  IoThread io;
  RuntimeActorConfig cfg;
  caf::actor_system sys;
  actor_scheduler& sch = dynamic_cast<actor_scheduler&>(sys.scheduler());
  caf::scoped_actor self{sys};

  explicit io_and_workers(size_t workers) : cfg(workers, nullptr, nullptr), sys(configured(cfg)) {}

  bool asleep() { return worker_asleep(sch, 0); }

  uint64_t wakeups() { return worker_wakeups(sch, 0); }

  enum class passing { send, callback, spawning }; // how each actor of a chain goes on

  /// `n` actors in a row, each adding where it ran ("io" or "worker") to the path
  /// it is sent and passing it on; the last sends it to the test. Not started
  /// until the first message (nothing is scheduled before it). `how`: each sends
  /// from its context; or as an embedder's callback it runs would
  /// (send_from_callback); or sends and spawns an actor too.
  /// `kept_off`: the place (0 the first) of one kept off the io thread.
  caf::actor chain(int n, passing how = passing::send, int kept_off = -1) {
    caf::actor next = caf::actor_cast<caf::actor>(self);
    for (int i = 0; i < n; ++i) {
      next = sys.spawn<caf::lazy_init>(
        [how](caf::event_based_actor* s, caf::actor to) -> caf::behavior {
          return {[=](std::string path) {
            if (!path.empty())
              path += ',';
            path += IoThread::current() != nullptr ? "io" : "worker";
            if (how == passing::callback)
              send_from_callback(to, std::move(path));
            else
              s->send(to, std::move(path));
            if (how == passing::spawning)
              s->spawn([] {});
            s->quit();
          }};
        },
        next);
      if (n - 1 - i == kept_off)
        keep_off_io_thread(next);
    }
    return next;
  }

  /// What the io thread sends `first` (as an exit is sent), and the path the
  /// chain reports back (bounded wait).
  std::string run_from_io(const caf::actor& first) {
    io.post([first] { io_thread_run(first, std::string{}); });
    return reported_path();
  }

  /// The path a chain reports back (bounded wait).
  std::string reported_path() {
    std::string path;
    self->receive([&](std::string& p) { path = std::move(p); }, caf::after(bound) >> [] { CAF_FAIL("no report"); });
    return path;
  }

  /// `f`'s answer, run on the io thread (bounded wait; false when none came).
  bool on_io(std::function<bool()> f) {
    auto answer = std::make_shared<std::promise<bool>>();
    auto got = answer->get_future();
    io.post([answer, f] { answer->set_value(f()); });
    return got.wait_for(bound) == std::future_status::ready && got.get();
  }

  /// A tool's process, live until dropped (its group is killed then).
  std::shared_ptr<Process> live_tool() {
    auto p = spawn_process(io, SpawnSpec{.argv = {"/bin/sh", "-c", "exec sleep 30"}}, ProcessEvents{});
    if (!p.ok())
      CAF_FAIL("no tool process: " << p.error());
    return *p;
  }

  /// An actor that gets `n` numbers from one that the io thread runs (io_thread_run),
  /// and reports where it handled each ("0:io,1:io,..."); it asks to leave the io
  /// thread while it handles `leave_at`.
  std::string numbered_run(int32_t n, int32_t leave_at = -1) {
    caf::actor test = caf::actor_cast<caf::actor>(self);
    auto counter = sys.spawn<caf::lazy_init>([test, leave_at](caf::event_based_actor* s) -> caf::behavior {
      return {[=](int32_t i) {
        bool on_io = IoThread::current() != nullptr;
        if (i == leave_at)
          io_thread_leave();
        s->send(test, std::to_string(i) + (on_io ? ":io" : ":worker"));
      }};
    });
    auto first = sys.spawn<caf::lazy_init>([counter, n](caf::event_based_actor* s) -> caf::behavior {
      return {[=](std::string) {
        for (int32_t i = 0; i < n; ++i)
          s->send(counter, i);
      }};
    });
    if (!asleep())
      CAF_FAIL("the worker is not asleep");
    io.post([first] { io_thread_run(first, std::string{}); });
    std::string reports;
    for (int32_t i = 0; i < n; ++i)
      reports += (i ? "," : "") + reported_path();
    return reports;
  }

  static std::string times(const char* where, int n) {
    std::string s;
    for (int i = 0; i < n; ++i)
      s += std::string(i ? "," : "") + where;
    return s;
  }
};

struct one_worker : io_and_workers {
  one_worker() : io_and_workers(1) {}
};

/// Jobs that hold a worker: a base before the system's, so that they outlive the
/// workers' use of them (the system's end joins the workers).
struct holds {
  Gate gate;
  Hold a{gate}, b{gate};
};

/// Two workers, for the output rule that asks whether every worker is asleep: the
/// second may be held by a job (as held_workers holds them), the first left free.
struct two_workers : holds, io_and_workers {
  two_workers() : io_and_workers(2) {}
  ~two_workers() {
    std::lock_guard lock(gate.m);
    a.released = b.released = true;
    gate.cv.notify_all();
  }

  /// Worker 1 held, worker 0 free (bounded waits). A Hold queued at worker 1 may be
  /// stolen by worker 0 first: then the second goes to worker 1, which cannot lose
  /// it to a held worker 0, and the first is let go.
  bool second_held() {
    std::unique_lock lock(gate.m);
    auto until = std::chrono::steady_clock::now() + bound;
    auto running = [&](int n) { return gate.cv.wait_until(lock, until, [&] { return gate.running >= n; }); };
    lock.unlock();
    sch.worker_by_id(1)->external_enqueue(&a);
    lock.lock();
    if (!running(1))
      return false;
    if (a.ran_on == sch.worker_by_id(1))
      return true;
    lock.unlock();
    sch.worker_by_id(1)->external_enqueue(&b);
    lock.lock();
    if (!running(2) || b.ran_on != sch.worker_by_id(1))
      return false;
    a.released = true;
    gate.cv.notify_all();
    return true;
  }
};

/// The output rule for one test, the default's after it (it is process-wide).
struct OutputRule {
  explicit OutputRule(output_on_io rule) { use_output_on_io(rule); }
  ~OutputRule() { use_output_on_io(default_output_on_io); }
};

/// The rule with other tools live for one test, the default's after it.
struct OthersLiveRule {
  explicit OthersLiveRule(others_live_on_io rule) { use_others_live_on_io(rule); }
  ~OthersLiveRule() { use_others_live_on_io(default_others_live_on_io); }
};

/// What a live tool's output, sent as the handle sends it, runs on: the chain's path.
template <class Fixture>
std::string output_path(Fixture& f) {
  auto first = f.chain(3);
  if (!worker_asleep(f.sch, 0))
    CAF_FAIL("the first worker is not asleep");
  f.io.post([first] { io_thread_run_output(first, std::string{}); });
  return f.reported_path();
}

} // namespace

CAF_TEST_FIXTURE_SCOPE(io_thread_output_rule_tests, two_workers)

CAF_TEST(a tool output runs on the io thread by the all idle rule when every worker sleeps) {
  auto live = live_tool();
  OutputRule all(output_on_io::all_idle);
  CAF_REQUIRE(worker_asleep(sch, 0) && worker_asleep(sch, 1)); // every worker: the all-idle rule
  CAF_CHECK_EQUAL(output_path(*this), "io,io,io");
}

CAF_TEST(with another worker busy a tool output runs on the io thread only by the first idle rule) {
  auto live = live_tool();
  CAF_REQUIRE(second_held());
  // The default (all-idle): the first worker, woken, runs it.
  CAF_CHECK_EQUAL(output_path(*this), "worker,worker,worker");
  OutputRule first(output_on_io::first_idle);
  CAF_CHECK_EQUAL(output_path(*this), "io,io,io"); // first-idle: the first sleeps
}

CAF_TEST(with other tools live an exit and an output run on the io thread when every worker sleeps) {
  auto one = live_tool();
  auto two = live_tool();
  CAF_REQUIRE(worker_asleep(sch, 0) && worker_asleep(sch, 1)); // every worker: the all-idle rule
  CAF_CHECK_EQUAL(run_from_io(chain(3)), "io,io,io"); // the default: all-idle
  CAF_CHECK_EQUAL(output_path(*this), "io,io,io");
  OthersLiveRule worker(others_live_on_io::worker);
  CAF_REQUIRE(worker_asleep(sch, 0) && worker_asleep(sch, 1));
  CAF_CHECK_EQUAL(run_from_io(chain(3)), "worker,worker,worker"); // the io thread kept free
  CAF_CHECK_EQUAL(output_path(*this), "worker,worker,worker");
}

CAF_TEST(with other tools live and another worker busy an exit goes to a worker) {
  auto one = live_tool();
  auto two = live_tool();
  CAF_REQUIRE(second_held());
  CAF_CHECK_EQUAL(run_from_io(chain(3)), "worker,worker,worker");
}

CAF_TEST_FIXTURE_SCOPE_END()

CAF_TEST_FIXTURE_SCOPE(io_thread_run_tests, one_worker)

CAF_TEST(with nothing else to watch and the worker asleep the io thread runs the chain) {
  CAF_REQUIRE_EQUAL(live_process_group_count(), 0u);
  auto first = chain(3);
  CAF_REQUIRE(asleep());
  auto woken = wakeups();
  CAF_CHECK_EQUAL(run_from_io(first), "io,io,io");
  CAF_REQUIRE(on_io([] { return true; })); // what the io thread gave the worker is counted
  CAF_CHECK_EQUAL(wakeups(), woken); // never woken for it
}

CAF_TEST(the io thread runs an exit and the 32 jobs it makes ready and the workers the rest) {
  auto first = chain(40);
  CAF_REQUIRE(asleep());
  CAF_CHECK_EQUAL(run_from_io(first), times("io", 33) + "," + times("worker", 7));
}

CAF_TEST(an actor kept off the io thread runs on the worker and so does what it sends) {
  // The agent's loop: it syncs its conversation store and writes to stdout.
  CAF_REQUIRE(asleep());
  CAF_CHECK_EQUAL(run_from_io(chain(3, passing::send, 1)), "io,worker,worker");
  CAF_REQUIRE(asleep());
  CAF_CHECK_EQUAL(run_from_io(chain(3, passing::send, 0)), "worker,worker,worker");
  // Each name ended with its actor (all have quit): none is kept off now.
  auto until = std::chrono::steady_clock::now() + bound;
  while (actors_kept_off_io_thread() != 0 && std::chrono::steady_clock::now() < until)
    std::this_thread::yield();
  CAF_CHECK_EQUAL(actors_kept_off_io_thread(), 0u);
}

CAF_TEST(a callback run on the io thread sends on from there) {
  auto first = chain(3, passing::callback);
  CAF_REQUIRE(asleep());
  CAF_CHECK_EQUAL(run_from_io(first), "io,io,io");
  // From a worker, the same sends go to the worker (the scheduler's way).
  auto again = chain(2, passing::callback);
  caf::anon_send(again, std::string{});
  CAF_CHECK_EQUAL(reported_path(), "worker,worker");
}

CAF_TEST(with a tool process live the io thread runs the chain only while the worker sleeps) {
  auto live = live_tool();
  CAF_REQUIRE_EQUAL(live_process_group_count(), 1u);
  CAF_REQUIRE(asleep());
  CAF_CHECK_EQUAL(run_from_io(chain(3)), "io,io,io"); // the default: every worker asleep and idle
  OthersLiveRule worker(others_live_on_io::worker);
  CAF_REQUIRE(asleep());
  CAF_CHECK_EQUAL(run_from_io(chain(3)), "worker,worker,worker");
  // Dropped, its group is killed (Process); the next test starts with none live.
}

CAF_TEST(a live tool output runs on the io thread when no other tool is live) {
  auto live = live_tool();
  CAF_REQUIRE_EQUAL(live_process_group_count(), 1u);
  auto first = chain(3);
  CAF_REQUIRE(asleep());
  auto woken = wakeups();
  io.post([first] { io_thread_run_output(first, std::string{}); });
  CAF_CHECK_EQUAL(reported_path(), "io,io,io");
  CAF_REQUIRE(on_io([] { return true; })); // what the io thread gave the worker is counted
  CAF_CHECK_EQUAL(wakeups(), woken); // never woken for it
}

CAF_TEST(a tool output never runs on the io thread by the never rule) {
  OutputRule never(output_on_io::never);
  // An exit still does (the rule is the output's only).
  CAF_REQUIRE_EQUAL(live_process_group_count(), 0u);
  auto first = chain(2);
  CAF_REQUIRE(asleep());
  CAF_CHECK_EQUAL(run_from_io(first), "io,io");
  auto live = live_tool();
  CAF_CHECK_EQUAL(output_path(*this), "worker,worker,worker");
}

CAF_TEST(with another tool live a tool output goes to the worker by the worker rule) {
  auto one = live_tool();
  auto two = live_tool();
  CAF_REQUIRE_EQUAL(live_process_group_count(), 2u);
  OthersLiveRule worker(others_live_on_io::worker);
  auto first = chain(3);
  CAF_REQUIRE(asleep());
  io.post([first] { io_thread_run_output(first, std::string{}); });
  CAF_CHECK_EQUAL(reported_path(), "worker,worker,worker");
}

CAF_TEST(an actor that asks to leave the io thread goes on on the worker after that message) {
  // As a handle does when a chunk behind the one it handles is for a worker.
  CAF_CHECK_EQUAL(numbered_run(4, 1), "0:io,1:io,2:worker,3:worker");
  io_thread_leave(); // elsewhere than on the io thread running actors: nothing
}

CAF_TEST(what an actor sends itself behind the queued runs on the io thread after them) {
  // As a handle does with its end after its answer (send_after_queued): the job
  // asks to run again behind what is queued; here that is behind the chain, on
  // the io thread, not on a worker woken for it.
  auto rest = chain(2);
  caf::actor test = caf::actor_cast<caf::actor>(self);
  auto first = sys.spawn<caf::lazy_init>([rest, test](caf::event_based_actor* s) -> caf::behavior {
    auto where = [] { return std::string(IoThread::current() != nullptr ? "io" : "worker"); };
    return {
      [=](std::string) {
        s->send(rest, where());
        send_after_queued(s, caf::make_message(int32_t{1}));
      },
      [=](int32_t) {
        s->send(test, "end:" + where());
        s->quit();
      },
    };
  });
  CAF_REQUIRE(asleep());
  CAF_CHECK_EQUAL(run_from_io(first), "io,io,io"); // the chain first,
  CAF_CHECK_EQUAL(reported_path(), "end:io");      // then the end, on the io thread
}

CAF_TEST(an actor past its share of messages on the io thread goes on on the worker) {
  // The io thread stays an io thread: 16 messages of one actor, the rest a worker's.
  std::string expected;
  for (int i = 0; i < 20; ++i)
    expected += (i ? "," : "") + std::to_string(i) + (i < 16 ? ":io" : ":worker");
  CAF_CHECK_EQUAL(numbered_run(20), expected);
}

CAF_TEST(a plain io thread message still goes to the worker) {
  auto first = chain(2);
  CAF_REQUIRE(asleep());
  auto woken = wakeups();
  io.post([first] { io_thread_send(first, std::string{}); });
  CAF_CHECK_EQUAL(reported_path(), "worker,worker");
  CAF_CHECK_GREATER(wakeups(), woken); // counted, else "never woken" above could not fail
}

CAF_TEST(the io thread lets go of the system logger a spawn there took) {
  // CAF's spawn sets the spawning thread's logger to the system's and holds it; the
  // system's end waits for every holder, and the io thread outlives the system.
  auto first = chain(2, passing::spawning);
  CAF_REQUIRE(asleep());
  CAF_CHECK_EQUAL(run_from_io(first), "io,io");
  CAF_CHECK(on_io([] { return caf::logger::current_logger() == nullptr; }));
  // Let go here too, should it not have been: the fixture's end would wait forever.
  CAF_REQUIRE(on_io([] {
    caf::logger::set_current_actor_system(nullptr);
    return true;
  }));
}

CAF_TEST_FIXTURE_SCOPE_END()
