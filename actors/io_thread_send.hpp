// Messages the io thread sends to actors (a process's output, its exit, its group
// gone). CAF hands a message from outside its workers to the next worker in turn,
// usually one asleep for a while, whose wake-up is the slower (tens of µs on a
// virtual machine). These go to the first worker when it is asleep with nothing
// queued: what they start (the handle, the registry, the turn, the caller's
// answer) stays on the worker that ran it, so the first is the one that ran the
// previous event's work. A first worker that is running something is passed over:
// nothing waits behind a job (bench/README.md, "The io thread's messages to one
// worker").
#pragma once

#include <caf/abstract_actor.hpp>
#include <caf/actor_cast.hpp>
#include <caf/send.hpp>

namespace caf {
class actor_system;
class execution_unit;
} // namespace caf

namespace jp {

/// The execution unit the io thread sends with: CAF schedules a receiver that was
/// idle through it (`exec_later`). One per thread that asks.
caf::execution_unit* io_thread_unit(caf::actor_system& sys);

/// caf::anon_send, from the io thread's unit.
template <class Dest, class... Ts>
void io_thread_send(const Dest& dest, Ts&&... xs) {
  static_assert(sizeof...(Ts) > 0, "no message to send");
  using token = caf::detail::type_list<caf::detail::strip_and_convert_t<Ts>...>;
  static_assert(caf::response_type_unbox<caf::signatures_of_t<Dest>, token>::valid,
                "receiver does not accept given message");
  if (auto* a = caf::actor_cast<caf::abstract_actor*>(dest))
    a->eq_impl(caf::make_message_id(), nullptr, io_thread_unit(a->home_system()), std::forward<Ts>(xs)...);
}

} // namespace jp
