#include "actors/io_thread_send.hpp"

#include <atomic>
#include <caf/actor.hpp>
#include <caf/actor_system.hpp>
#include <caf/execution_unit.hpp>
#include <caf/logger.hpp>
#include <deque>
#include <mutex>
#include <typeinfo>
#include <unordered_set>
#include <utility>

#include "runtime/actor_scheduler.hpp"
#include "runtime/process/io_thread.hpp"
#include "runtime/process/process.hpp"

namespace jp {

namespace {

/// Asleep on its condition variable with nothing queued: a job given to it runs as
/// soon as it wakes, behind nothing (a worker running a job has taken it off its
/// queue, so an empty queue alone does not say the worker is free).
bool asleep_and_idle(actor_scheduler::worker_type& w) {
  auto& d = w.data();
  std::lock_guard guard(d.waitdata.lock);
  return d.waitdata.sleeping && d.queue.empty();
}

/// Every worker but the first asleep and idle (the first is already).
bool others_asleep_and_idle(actor_scheduler& ws) {
  for (size_t i = 1; i < ws.num_workers(); ++i)
    if (!asleep_and_idle(*ws.worker_by_id(i)))
      return false;
  return true;
}

std::atomic<output_on_io> output_rule{default_output_on_io};

/// Whether a tool's output may run on the io thread, as output_rule says, the
/// first worker being asleep and idle already.
bool output_may_run_here(actor_scheduler& ws) {
  switch (output_rule.load(std::memory_order_relaxed)) {
    case output_on_io::first_idle:
      return true;
    case output_on_io::all_idle:
      return others_asleep_and_idle(ws);
    case output_on_io::never:
      return false;
  }
  return false;
}

std::atomic<others_live_on_io> others_live_rule{default_others_live_on_io};

/// Whether what the io thread sends may run there with other tools live, as
/// others_live_rule says, the first worker being asleep and idle already.
bool others_may_wait(actor_scheduler& ws) {
  return others_live_rule.load(std::memory_order_relaxed) == others_live_on_io::all_idle &&
         others_asleep_and_idle(ws);
}

// The actors keep_off_io_thread names, while they live; counted, so that a program
// with none (the benchmark) takes no lock to learn it.
std::mutex off_io_mtx;
std::unordered_set<const caf::resumable*> off_io;
std::atomic<size_t> off_io_count{0};

bool kept_off_io(const caf::resumable* job) {
  if (off_io_count.load(std::memory_order_acquire) == 0)
    return false;
  std::lock_guard guard(off_io_mtx);
  return off_io.count(job) > 0;
}

std::mutex foreign_mtx;
std::function<void(caf::resumable*)> foreign_take;
std::atomic<bool> foreign_taken{false}; // foreign_take is set: an embedder's system takes no lock

/// Enqueues `job` to a scheduler other than ours, as hand_foreign_jobs_to says.
void enqueue_foreign(caf::actor_system& sys, caf::resumable* job) {
  if (foreign_taken.load(std::memory_order_acquire)) {
    std::lock_guard guard(foreign_mtx);
    if (foreign_take)
      return foreign_take(job);
  }
  sys.scheduler().enqueue(job);
}

class IoThreadUnit final : public caf::execution_unit {
public:
  void use(caf::actor_system& sys, run_here here) {
    system_ = &sys;
    here_ = here;
  }
  bool draining() const { return draining_; }
  void leave() {
    if (draining_)
      leave_ = true;
  }

  void exec_later(caf::resumable* job) override {
    auto& sch = system_->scheduler();
    if (typeid(sch) != typeid(actor_scheduler))
      return enqueue_foreign(*system_, job); // another scheduler (the test DSL's, an embedder's): its own way
    auto& ws = static_cast<actor_scheduler&>(sch);
    auto n = ws.num_workers();
    auto* first = ws.worker_by_id(0);
    if (take_here(ws, *first, job))
      return;
    if (n == 1 || asleep_and_idle(*first))
      first->external_enqueue(job);
    else // it is busy (or about to be): the others in turn, none waits on it
      ws.worker_by_id(1 + next_++ % (n - 1))->external_enqueue(job);
  }

private:
  // What one event may run here: a one-shot call's end and the next call its
  // caller makes (handle, registry, turn, session, a new handle) are about ten
  // jobs. A job runs at most `kMessages` messages here before a worker takes it.
  static constexpr size_t kJobs = 32;
  static constexpr size_t kMessages = 16;

  /// Keeps `job` to run on this thread after the current event when it may: sent
  /// by io_thread_run (io_thread_run_output) with the first worker asleep and idle
  /// and no tool's process (but the sender's) left to watch, or made ready by a job
  /// running here, within the event's budget.
  bool take_here(actor_scheduler& ws, actor_scheduler::worker_type& first, caf::resumable* job) {
    auto here = std::exchange(here_, run_here::never);
    if (kept_off_io(job))
      return false;
    if (draining_) { // on the io thread, in drain()
      if (budget_ == 0)
        return false;
      --budget_;
      jobs_.push_back(job);
      return true;
    }
    auto* io = IoThread::current();
    if (here == run_here::never || io == nullptr || !asleep_and_idle(first) ||
        (here == run_here::sender_live && !output_may_run_here(ws)) ||
        (live_process_group_count() > (here == run_here::sender_live ? 1u : 0u) && !others_may_wait(ws)))
      return false; // a worker runs it: the io thread stays free for the live tools' events
    jobs_.push_back(job);
    if (!std::exchange(posted_, true))
      io->post([this] { drain(); });
    return true;
  }

  /// Runs the jobs kept, and those they make ready, within the budget.
  void drain() {
    posted_ = false;
    draining_ = true;
    budget_ = kJobs;
    // Counted as one of the system's own threads while it runs actors: the system's
    // end waits for it (as it joins its workers) before it takes down what a job
    // running here still uses (an actor that ends here is let go here, after the
    // system counted it ended).
    auto* sys = system_;
    sys->inc_detached_threads();
    while (!jobs_.empty() || !later_.empty()) {
      auto& from = jobs_.empty() ? later_ : jobs_;
      auto* job = from.front();
      from.pop_front();
      switch (run(job)) {
        case caf::resumable::resume_later:
          // send_after_queued's job (a handle's end after its answer) asks to run
          // behind what is queued: here once this event's chain has run (the
          // next call's process started, the io thread idle until its exit),
          // within the budget. Handing it to a worker woke one for every one-shot
          // call (W1). An actor past its share of messages goes to a worker.
          if (job->subtype() == caf::resumable::function_object && budget_ > 0) {
            --budget_;
            later_.push_back(job);
          } else {
            sys->scheduler().enqueue(job);
          }
          break;
        case caf::resumable::done:
        case caf::resumable::awaiting_message:
        case caf::resumable::shutdown_execution_unit:
          caf::intrusive_ptr_release(job);
          break;
      }
    }
    draining_ = false;
    // A spawn here (a handle for the next call) set this thread's logger to the
    // system's, holding it: the system's end waits for it to be let go, and the io
    // thread outlives the system.
    caf::logger::set_current_actor_system(nullptr);
    sys->dec_detached_threads();
  }

  /// Runs an actor for up to kMessages messages, one at a time: one that asks to
  /// leave (io_thread_leave) stops after the message it asked in, and a worker
  /// runs the rest. A function object runs as it asks.
  caf::resumable::resume_result run(caf::resumable* job) {
    if (job->subtype() == caf::resumable::function_object)
      return job->resume(this, kMessages);
    leave_ = false;
    auto r = caf::resumable::resume_later;
    for (size_t i = 0; i < kMessages && r == caf::resumable::resume_later && !leave_; ++i)
      r = job->resume(this, 1);
    leave_ = false;
    return r;
  }

  size_t next_ = 0;
  run_here here_ = run_here::never; // whether the message being sent may run here
  bool posted_ = false;   // drain() is posted
  bool draining_ = false; // drain() runs
  bool leave_ = false;    // the actor running asked to go on on a worker
  size_t budget_ = 0;     // jobs drain() may still take
  std::deque<caf::resumable*> jobs_;
  std::deque<caf::resumable*> later_; // send_after_queued's jobs: run once jobs_ is empty
};

IoThreadUnit& unit_of_this_thread() {
  thread_local IoThreadUnit unit;
  return unit;
}

} // namespace

caf::execution_unit* io_thread_unit(caf::actor_system& sys, run_here here) {
  auto& unit = unit_of_this_thread();
  unit.use(sys, here);
  return &unit;
}

caf::execution_unit* io_thread_running() {
  auto& unit = unit_of_this_thread();
  return unit.draining() ? &unit : nullptr;
}

void keep_off_io_thread(const caf::actor& actor) {
  auto* a = caf::actor_cast<caf::abstract_actor*>(actor);
  auto* job = dynamic_cast<const caf::resumable*>(a); // a scheduled actor is its own job
  if (job == nullptr)
    return;
  {
    std::lock_guard guard(off_io_mtx);
    if (off_io.insert(job).second)
      off_io_count.fetch_add(1, std::memory_order_release);
  }
  a->attach_functor([job] {
    std::lock_guard guard(off_io_mtx);
    if (off_io.erase(job) > 0)
      off_io_count.fetch_sub(1, std::memory_order_release);
  });
}

std::size_t actors_kept_off_io_thread() {
  return off_io_count.load(std::memory_order_acquire);
}

void use_output_on_io(output_on_io rule) {
  output_rule.store(rule, std::memory_order_relaxed);
}

void use_others_live_on_io(others_live_on_io rule) {
  others_live_rule.store(rule, std::memory_order_relaxed);
}

void hand_foreign_jobs_to(std::function<void(caf::resumable*)> take) {
  std::lock_guard guard(foreign_mtx);
  foreign_take = std::move(take);
  foreign_taken.store(static_cast<bool>(foreign_take), std::memory_order_release);
}

void io_thread_leave() {
  unit_of_this_thread().leave();
}

} // namespace jp
