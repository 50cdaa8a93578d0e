// Messages the io thread sends to actors (a process's output, its exit, its group
// gone). CAF hands a message from outside its workers to the next worker in turn,
// usually one asleep for a while, whose wake-up is the slower (tens of µs on a
// virtual machine). These go to the first worker when it is asleep with nothing
// queued: what they start (the handle, the registry, the turn, the caller's
// answer) stays on the worker that ran it, so the first is the one that ran the
// previous event's work. A first worker that is running something is passed over:
// nothing waits behind a job (bench/README.md, "The io thread's messages to one
// worker"). An exit, or a tool's output, when every worker is asleep and idle (or,
// as the rules in io_thread_rules.hpp say, when the io thread has no other tool to
// watch), is not handed to a worker at all: the io thread runs what it makes ready
// itself (io_thread_run, io_thread_run_output).
#pragma once

#include <caf/abstract_actor.hpp>
#include <caf/actor_cast.hpp>
#include <caf/send.hpp>
#include <functional>

#include "io_thread_rules.hpp"

namespace caf {
class actor;
class actor_system;
class execution_unit;
class resumable;
} // namespace caf

namespace jp {

/// Whether a message the io thread sends may run on the io thread itself: never
/// (a worker runs it), when no tool's process is live (what an exit starts: its
/// own is gone), or when at most one is (a tool's output: its own, while it runs).
enum class run_here { never, none_live, sender_live };

/// The execution unit the io thread sends with: CAF schedules a receiver that was
/// idle through it (`exec_later`). One per thread that asks.
caf::execution_unit* io_thread_unit(caf::actor_system& sys, run_here here = run_here::never);

/// Keeps the io thread from ever running `actor` (for its life): a worker does. For
/// actors that may block on the disk or a pipe (the agent's loop: its conversation
/// store syncs, its observer writes to stdout), which the io thread, reading every
/// tool's pipes and reaping their exits, must not wait on.
void keep_off_io_thread(const caf::actor& actor);

/// How many actors keep_off_io_thread names now: each name ends with its actor, so
/// that a new actor at a dead one's address is not kept off (for tests).
std::size_t actors_kept_off_io_thread();

/// For CAF's deterministic test scheduler, whose queue only the test's thread may
/// touch: what the io thread makes ready under a scheduler other than ours is
/// handed to `take` (for the test's thread to enqueue) rather than enqueued there
/// from the io thread, which raced with the test's thread. Empty: enqueued there
/// (CAF's thread pools take jobs from any thread).
void hand_foreign_jobs_to(std::function<void(caf::resumable*)> take);

/// The io thread's unit while it runs actors itself (io_thread_run), else nullptr.
caf::execution_unit* io_thread_running();

/// Called by an actor the io thread runs (io_thread_running()): after the message
/// it handles now, it goes on on a worker. A no-op elsewhere.
void io_thread_leave();

namespace detail {

/// `dest` to enqueue to, with the message checked as caf::anon_send checks it.
template <class... Ts, class Dest>
caf::abstract_actor* receiver_of(const Dest& dest) {
  static_assert(sizeof...(Ts) > 0, "no message to send");
  using token = caf::detail::type_list<caf::detail::strip_and_convert_t<Ts>...>;
  static_assert(caf::response_type_unbox<caf::signatures_of_t<Dest>, token>::valid,
                "receiver does not accept given message");
  return caf::actor_cast<caf::abstract_actor*>(dest);
}

/// Enqueues to `dest` through the io thread's unit, which may run it here as `here` says.
template <class Dest, class... Ts>
void enqueue_from_io_thread(const Dest& dest, run_here here, Ts&&... xs) {
  if (auto* a = receiver_of<Ts...>(dest))
    a->eq_impl(caf::make_message_id(), nullptr, io_thread_unit(a->home_system(), here), std::forward<Ts>(xs)...);
}

} // namespace detail

/// caf::anon_send, from the io thread's unit.
template <class Dest, class... Ts>
void io_thread_send(const Dest& dest, Ts&&... xs) {
  detail::enqueue_from_io_thread(dest, run_here::never, std::forward<Ts>(xs)...);
}

/// io_thread_send for what ends a handle's work (its exit, its group gone): when
/// no tool's process is left for the io thread to watch and the first worker is
/// asleep with nothing queued, the receiver runs on the io thread itself, right
/// after the event, and so do the actors its message makes ready (the registry,
/// the turn, the caller, the caller's next call: 32 jobs at most, the rest go to
/// the workers), instead of a worker being woken for them: the io thread is awake
/// already and has nothing else to do, a sleeping worker's wake-up costs tens of
/// µs. With other tools live, only when every worker is asleep and idle
/// (others_live_on_io's default; its `worker` rule keeps the io thread free for
/// their events then too).
template <class Dest, class... Ts>
void io_thread_run(const Dest& dest, Ts&&... xs) {
  detail::enqueue_from_io_thread(dest, run_here::none_live, std::forward<Ts>(xs)...);
}

/// io_thread_run for a live tool's output: run on the io thread when that tool is
/// the only one live and the first worker is asleep with nothing queued. A worker
/// woken for every chunk cost a flood a fifth of its rate on two cores, and a
/// waiting look its answer's wake-up (bench/README.md, "A tool's output on the io
/// thread"); with no other tool live, only the io thread's few other users (an MCP
/// server's connections, an MCP client's timers) wait on it meanwhile, each event's
/// work bounded (32 jobs, 16 messages each).
/// Output its handle writes to disk (its spill file's head) goes to a worker: the
/// io thread must not wait on the disk, and a worker writes it alongside the reads
/// (the handle sends it with io_thread_send, and leaves the io thread before it
/// with io_thread_leave; OutputBuffer::append_room).
template <class Dest, class... Ts>
void io_thread_run_output(const Dest& dest, Ts&&... xs) {
  detail::enqueue_from_io_thread(dest, run_here::sender_live, std::forward<Ts>(xs)...);
}

/// caf::anon_send from code an actor runs outside its own context (an embedder's
/// callback): when that is the io thread running actors (io_thread_run), the
/// receiver runs there too, as it stays on the worker that runs such a callback.
template <class Dest, class... Ts>
void send_from_callback(const Dest& dest, Ts&&... xs) {
  if (auto* a = detail::receiver_of<Ts...>(dest))
    a->eq_impl(caf::make_message_id(), nullptr, io_thread_running(), std::forward<Ts>(xs)...);
}

} // namespace jp
