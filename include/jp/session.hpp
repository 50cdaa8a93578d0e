// jp::Session: handles driven by the program itself, with no model (from
// Runtime::session()). Every call goes through the protocol the assistant uses --
// the tool's schema, stateful actions, `await`, notifications -- and answers what
// the assistant would see (messages/call_result.hpp: `ok` false when the call itself
// failed; `content` the JSON text of the handle's state or the await result;
// `notifications` carried by that answer). Not its permissions: the calls are the
// program's own, so a tool with run = "ask" runs unasked (a Turn's model asks,
// through its hooks).
//
// Each call that answers a CallResult returns a std::future, or takes a callback;
// list() and end() return futures. Any thread may call; a callback runs on a
// runtime thread and must not block (nor wait on a future of this runtime) --
// except the answer to a call refused before it is made (spawn's params not an
// object, an await's timeout not a finite number), which is given at once, on the
// calling thread. An exception a callback throws is dropped: the session goes on.
// fetch, apply and abort reach any handle of the session: one it spawned, and one a
// one-shot call moved to the background (its answer names its id).
// end() applies each handle's turn-end policy (await, abort, inquire) as a turn does,
// and answers once that is done. Destroying the session aborts its handles without
// waiting: their processes are killed and reaped a moment after it returns. It does
// wait for a callback of the session running on another thread (none runs once it
// returned, so a callback may use what its owner frees next); its callbacks still
// unanswered are dropped, and their futures hold a broken promise. A
// session keeps its runtime's state alive: its handles end with the session, not
// with the Runtime object. A moved-from session (or runtime) may only be destroyed
// or assigned to.
#pragma once

#include <cstdint>
#include <functional>
#include <future>
#include <memory>
#include <string>
#include <vector>

#include "messages/call_result.hpp"
#include "messages/handle_summary.hpp"
#include "messages/json.hpp"

namespace jp {

class Session {
public:
  ~Session();
  Session(Session&&) noexcept;
  /// The session assigned over ends first, as its destructor ends it.
  Session& operator=(Session&&) noexcept;

  /// Any call, as the assistant makes it: `arguments` is the JSON object of a tool
  /// call (`action` and `id` included for a stateful one).
  std::future<CallResult> call(const std::string& tool, const Json& arguments);
  void call(const std::string& tool, const Json& arguments, std::function<void(CallResult)> done);

  /// Starts a handle `id` of `tool` with its own parameters (a JSON object; null:
  /// none); answers after its first look (`wait_ms` < 0: the tool's default wait).
  std::future<CallResult> spawn(const std::string& tool, const std::string& id, const Json& params,
                                int64_t wait_ms = -1);
  void spawn(const std::string& tool, const std::string& id, const Json& params, int64_t wait_ms,
             std::function<void(CallResult)> done);
  /// Output since the last look (waits up to `wait_ms` for some while it runs).
  std::future<CallResult> fetch(const std::string& id, int64_t wait_ms = 0);
  void fetch(const std::string& id, int64_t wait_ms, std::function<void(CallResult)> done);
  /// Input for the handle (a string is typed as it is; end lines with "\n").
  std::future<CallResult> apply(const std::string& id, const Json& input, int64_t wait_ms = 0);
  void apply(const std::string& id, const Json& input, int64_t wait_ms, std::function<void(CallResult)> done);
  std::future<CallResult> abort(const std::string& id);
  void abort(const std::string& id, std::function<void(CallResult)> done);
  /// RFD 037's await: until all (or any) of `ids` stopped, or `timeout_secs` passed
  /// (< 0: no timeout; NaN and infinities are refused).
  std::future<CallResult> await_all(const std::vector<std::string>& ids, double timeout_secs = -1);
  void await_all(const std::vector<std::string>& ids, double timeout_secs, std::function<void(CallResult)> done);
  std::future<CallResult> await_any(const std::vector<std::string>& ids, double timeout_secs = -1);
  void await_any(const std::vector<std::string>& ids, double timeout_secs, std::function<void(CallResult)> done);

  /// The handles still running.
  std::future<std::vector<HandleSummary>> list();
  /// Applies every running handle's turn-end policy; the handles ended, and why
  /// the turn-end inquiry failed ("" = it did not, or there was none).
  std::future<std::pair<std::vector<HandleSummary>, std::string>> end();

  struct Impl;

private:
  explicit Session(std::shared_ptr<Impl> impl);
  std::shared_ptr<Impl> impl_;
  friend struct RuntimeAccess;
};

} // namespace jp
