#include "runtime/embedding/runtime_access.hpp"

#include <caf/all.hpp>
#include <cmath>
#include <fmt/format.h>

#include "actors/io_thread_send.hpp"
#include "messages/atoms.hpp"
#include "messages/error_category.hpp"

namespace jp {

namespace {

using Pending = Session::Impl::Pending;

// The session whose callback this thread runs now, if any: its destructor, called
// from that callback, cannot wait for it.
thread_local const Pending* t_in_callback = nullptr;

/// Runs the program's callback `k` with `arg`. On the session's client actor an
/// exception from it would end that actor, and every later call of the session
/// would wait forever; on the calling thread (a refusal) it would leave the call.
template <class K, class Arg>
void run_callback(K& k, Arg& arg) {
  try {
    k(arg);
  } catch (...) {
    // The program's own fault, and its to see: the session goes on.
  }
}

/// The reply to call `n`, to whoever waits for it.
void answer(const std::shared_ptr<Pending>& pending, uint64_t n, SessionReply reply) {
  std::function<void(SessionReply&)> k;
  {
    std::lock_guard lock(pending->mtx);
    auto it = pending->waiting.find(n);
    if (it == pending->waiting.end() || pending->ended)
      return;
    k = std::move(it->second);
    pending->waiting.erase(it);
    ++pending->running;
  }
  auto outer = std::exchange(t_in_callback, pending.get());
  run_callback(k, reply);
  t_in_callback = outer;
  {
    std::lock_guard lock(pending->mtx);
    --pending->running;
  }
  pending->idle.notify_all();
}

/// A call refused before it is made: answered at once, on the calling thread.
void refuse(const std::function<void(CallResult)>& done, CallResult refusal) {
  run_callback(done, refusal);
}

/// A session's client: forwards each call to the turn in the order it came, and
/// hands each answer to its waiter.
caf::behavior session_client(caf::event_based_actor* self, turn_actor turn, std::shared_ptr<Pending> pending) {
  auto fail = [pending](uint64_t n) {
    return [pending, n](caf::error& err) {
      SessionReply r;
      r.error = error_text(err);
      answer(pending, n, std::move(r));
    };
  };
  return {
    [=](call_atom, uint64_t n, const std::string& tool, const std::string& args) {
      self->request(turn, caf::infinite, call_atom::value, tool, args)
        .then([pending, n](CallResult& c) { answer(pending, n, SessionReply{std::move(c), {}, {}, {}}); },
              fail(n));
    },
    [=](list_atom, uint64_t n) {
      self->request(turn, caf::infinite, list_atom::value)
        .then([pending, n](std::vector<HandleSummary>& hs) { answer(pending, n, SessionReply{{}, std::move(hs), {}, {}}); },
              fail(n));
    },
    [=](turn_end_atom, uint64_t n) {
      self->request(turn, caf::infinite, turn_end_atom::value)
        .then(
          [pending, n](std::vector<HandleSummary>& hs, std::string& failure) {
            answer(pending, n, SessionReply{{}, std::move(hs), std::move(failure), {}});
          },
          fail(n));
    },
  };
}

/// Registers `k` for the next call and sends the call's message to the client.
template <class Atom, class... Ts>
void send_call(Session::Impl& s, std::function<void(SessionReply&)> k, Atom what, Ts... xs) {
  uint64_t n;
  {
    std::lock_guard lock(s.pending->mtx);
    n = ++s.pending->next;
    s.pending->waiting.emplace(n, std::move(k));
  }
  send_from_callback(s.client, what, n, std::move(xs)...); // a callback's next call
}

template <class T>
std::pair<std::shared_ptr<std::promise<T>>, std::future<T>> promise_pair() {
  auto p = std::make_shared<std::promise<T>>();
  auto f = p->get_future();
  return {std::move(p), std::move(f)};
}

// The arguments of the calls the session makes itself, written as the text the turn
// reads (no JSON tree built and dumped: an await of many ids is most of its cost).

std::string look_args(const char* action, const std::string& id, int64_t wait_ms, const Json* input = nullptr) {
  std::string args = "{\"action\":\"";
  args += action;
  args += "\",\"id\":";
  append_json_string(args, id);
  if (wait_ms >= 0)
    fmt::format_to(std::back_inserter(args), ",\"wait_ms\":{}", wait_ms);
  if (input) {
    args += ",\"input\":";
    input->dump_to(args);
  }
  args += '}';
  return args;
}

std::string await_args(const char* which, const std::vector<std::string>& ids, double timeout_secs) {
  std::string args = "{\"";
  args += which;
  args += "\":[";
  for (size_t i = 0; i < ids.size(); ++i) {
    if (i)
      args += ',';
    append_json_string(args, ids[i]);
  }
  args += ']';
  if (timeout_secs >= 0) {
    args += ",\"timeout_secs\":";
    Json(timeout_secs).dump_to(args);
  }
  args += '}';
  return args;
}

/// Sends a call whose arguments are already text.
void call_text(Session::Impl& impl, const std::string& tool, std::string args, std::function<void(CallResult)> done) {
  send_call(
    impl,
    [done](SessionReply& r) { done(r.error.empty() ? std::move(r.call) : CallResult{false, std::move(r.error)}); },
    call_atom::value, tool, std::move(args));
}

} // namespace

Session::Session(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {
  impl_->client = impl_->rt->sys->spawn(session_client, impl_->turn, impl_->pending);
}
Session::Session(Session&&) noexcept = default;
Session& Session::operator=(Session&& other) noexcept {
  // The session replaced ends as its destructor ends it (a default move dropped its
  // actors unended: its handles ran on, and ~Runtime waited for them forever).
  if (this != &other) {
    Session replaced(std::move(*this));
    impl_ = std::move(other.impl_);
  }
  return *this;
}

Session::~Session() {
  if (!impl_)
    return;
  // Calls still unanswered end with it: their callbacks are dropped here (futures
  // hold a broken promise), not when its client goes (its turn, ending, could answer
  // them first: an aborted spawn's report).
  decltype(impl_->pending->waiting) unanswered;
  {
    // And a callback running now ends before this returns (it may use what the
    // program frees next), unless it is the one destroying the session.
    std::unique_lock lock(impl_->pending->mtx);
    unanswered.swap(impl_->pending->waiting);
    impl_->pending->ended = true;
    int own = t_in_callback == impl_->pending.get() ? 1 : 0;
    impl_->pending->idle.wait(lock, [&] { return impl_->pending->running <= own; });
  }
  // Its turn takes its registry, and so every handle, with it.
  caf::anon_send_exit(impl_->client, caf::exit_reason::user_shutdown);
  caf::anon_send_exit(impl_->turn, caf::exit_reason::user_shutdown);
}

void Session::call(const std::string& tool, const Json& arguments, std::function<void(CallResult)> done) {
  // The turn takes a call that names no tool as a look at the handle its id names
  // (look() below): from here it would re-spawn an id with its old tool.
  if (tool.empty())
    return refuse(done, CallResult{false, "the call names no tool (the name is empty): give the name of a tool the "
                                          "config offers; a handle's fetch, apply and abort are Session::fetch, "
                                          "apply and abort"});
  call_text(*impl_, tool, arguments.dump(), std::move(done));
}


namespace {

/// The future of a call whose other form takes a callback.
template <class Start>
std::future<CallResult> future_of(Start start) {
  auto [p, f] = promise_pair<CallResult>();
  start([p](CallResult r) { p->set_value(std::move(r)); });
  return std::move(f);
}

} // namespace

std::future<CallResult> Session::call(const std::string& tool, const Json& arguments) {
  return future_of([&](auto done) { call(tool, arguments, std::move(done)); });
}

void Session::spawn(const std::string& tool, const std::string& id, const Json& params, int64_t wait_ms,
                    std::function<void(CallResult)> done) {
  // A JSON text that did not parse must not become a spawn with no parameters.
  if (!params.is_object() && !params.is_null())
    return refuse(done, CallResult{false, fmt::format("spawn `{}` of {}: params must be a JSON object of the "
                                                      "tool's parameters, got {}",
                                                      cut_text(id), tool, cut_text(params.dump(), 100))});
  Json args = params.is_object() ? params : Json::object();
  args.set("action", "spawn");
  args.set("id", id);
  if (wait_ms >= 0)
    args.set("wait_ms", wait_ms);
  call(tool, args, std::move(done));
}

std::future<CallResult> Session::spawn(const std::string& tool, const std::string& id, const Json& params,
                                       int64_t wait_ms) {
  return future_of([&](auto done) { spawn(tool, id, params, wait_ms, std::move(done)); });
}

namespace {

/// A look at handle `id`: the turn sends it through the tool the handle was spawned
/// with (a call naming no tool), one the session spawned or a one-shot call moved to
/// the background, running or stopped.
void look(Session::Impl& impl, std::string args, std::function<void(CallResult)> done) {
  call_text(impl, "", std::move(args), std::move(done));
}

} // namespace

void Session::fetch(const std::string& id, int64_t wait_ms, std::function<void(CallResult)> done) {
  look(*impl_, look_args("fetch", id, wait_ms), std::move(done));
}

std::future<CallResult> Session::fetch(const std::string& id, int64_t wait_ms) {
  return future_of([&](auto done) { fetch(id, wait_ms, std::move(done)); });
}

void Session::apply(const std::string& id, const Json& input, int64_t wait_ms,
                    std::function<void(CallResult)> done) {
  look(*impl_, look_args("apply", id, wait_ms, &input), std::move(done));
}

std::future<CallResult> Session::apply(const std::string& id, const Json& input, int64_t wait_ms) {
  return future_of([&](auto done) { apply(id, input, wait_ms, std::move(done)); });
}

void Session::abort(const std::string& id, std::function<void(CallResult)> done) {
  look(*impl_, look_args("abort", id, -1), std::move(done));
}

std::future<CallResult> Session::abort(const std::string& id) {
  return future_of([&](auto done) { abort(id, std::move(done)); });
}

namespace {

/// An await's call, or its refusal for a timeout that is no number of seconds.
void await_call(Session::Impl& impl, const char* which, const std::vector<std::string>& ids, double timeout_secs,
                std::function<void(CallResult)> done) {
  if (!std::isfinite(timeout_secs))
    return refuse(done, CallResult{false, fmt::format("await timeout_secs {}: expected a finite number of seconds "
                                                      "(< 0: no timeout)",
                                                      timeout_secs)});
  call_text(impl, "await", await_args(which, ids, timeout_secs), std::move(done));
}

} // namespace

void Session::await_all(const std::vector<std::string>& ids, double timeout_secs,
                        std::function<void(CallResult)> done) {
  await_call(*impl_, "all", ids, timeout_secs, std::move(done));
}

std::future<CallResult> Session::await_all(const std::vector<std::string>& ids, double timeout_secs) {
  return future_of([&](auto done) { await_all(ids, timeout_secs, std::move(done)); });
}

void Session::await_any(const std::vector<std::string>& ids, double timeout_secs,
                        std::function<void(CallResult)> done) {
  await_call(*impl_, "any", ids, timeout_secs, std::move(done));
}

std::future<CallResult> Session::await_any(const std::vector<std::string>& ids, double timeout_secs) {
  return future_of([&](auto done) { await_any(ids, timeout_secs, std::move(done)); });
}

std::future<std::vector<HandleSummary>> Session::list() {
  auto [p, f] = promise_pair<std::vector<HandleSummary>>();
  send_call(
    *impl_,
    [p](SessionReply& r) {
      if (r.error.empty())
        p->set_value(std::move(r.handles));
      else
        p->set_exception(std::make_exception_ptr(std::runtime_error(r.error)));
    },
    list_atom::value);
  return std::move(f);
}

std::future<std::pair<std::vector<HandleSummary>, std::string>> Session::end() {
  using Ended = std::pair<std::vector<HandleSummary>, std::string>;
  auto [p, f] = promise_pair<Ended>();
  send_call(
    *impl_,
    [p](SessionReply& r) { p->set_value(Ended{std::move(r.handles), r.error.empty() ? std::move(r.failure) : r.error}); },
    turn_end_atom::value);
  return std::move(f);
}

} // namespace jp
