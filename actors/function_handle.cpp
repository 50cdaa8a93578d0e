#include "actors/function_handle.hpp"

#include <atomic>
#include <caf/all.hpp>
#include <chrono>
#include <fmt/format.h>
#include <limits>
#include <mutex>
#include <thread>
#include <optional>

#include "actors/waiting_looks.hpp"
#include "messages/atoms.hpp"
#include "messages/json.hpp"
#include "messages/error_category.hpp"
#include "messages/thrown_text.hpp"
#include "runtime/process/held_result.hpp"

namespace jp {

namespace {

/// What the actor and its exit share: the invocation's abort is called once, by
/// whichever comes first (an abort, or the actor going away while the work runs).
struct Work {
  std::function<void()> abort;
  std::atomic<bool> abort_called{false};
  std::atomic<bool> done{false};
  /// Calls the abort unless it was called or the work is done; false when there is none.
  bool abort_once() {
    if (done.load() || abort_called.exchange(true))
      return false;
    if (abort)
      try {
        abort();
      } catch (...) {
        // Its failure to stop shows as a result that does not come: the grace ends it.
      }
    return true;
  }
};

struct function_state {
  function_state() = default;
  std::string id;
  std::string tool;
  LaunchSpec spec;
  supervisor_actor supervisor;
  std::shared_ptr<Work> work;
  std::function<void(const Json&)> input;
  std::string output; // reported since the last look (its tail, when more than the cap)
  uint64_t omitted = 0;
  std::string last_line;
  bool stopped = false;
  HandleReport final;
  bool aborting = false;
  std::vector<caf::typed_response_promise<HandleReport>> aborts;
  WaitingLooks looks;
  std::chrono::steady_clock::time_point last_output; // a waiting look is answered once quiet since
  bool settling = false;                             // the settle timer is out
  static inline const char* name = "jp.function";
};

// Besides the handle interface: what the work reports from its own threads, and timers.
using function_actor = handle_actor::extend<
  caf::reacts_to<content_atom, std::string>,   // progress text
  caf::reacts_to<stopped_atom, ToolState>,     // its result was set
  caf::reacts_to<timeout_atom, uint64_t>>;     // a waiting look's time is up (0: the abort's grace)
using function_actor_t = function_actor::stateful_base<function_state>;

constexpr uint64_t grace_timer = 0;
constexpr uint64_t settle_timer = std::numeric_limits<uint64_t>::max(); // looks count up from 1

HandleReport look(function_actor_t* self) {
  auto& st = self->state;
  if (st.stopped)
    return st.final;
  HandleReport r{st.id, ToolState::running(std::move(st.output)), st.omitted, {}, {}};
  st.output.clear();
  st.omitted = 0;
  return r;
}

void answer_looks(function_actor_t* self) {
  for (auto& rp : self->state.looks.take_all())
    rp.deliver(look(self));
}

caf::result<HandleReport> look_with(function_actor_t* self, const LookOptions& opts) {
  auto& st = self->state;
  auto wait = opts.wait_ms < 0 ? st.spec.wait_ms : opts.wait_ms;
  // Output that is still coming (within settle_ms of the last) is read with what
  // follows it: a look between an MCP call's progress and its log line got half.
  if (st.stopped || wait <= 0 || (!st.output.empty() && !st.settling))
    return look(self);
  auto rp = self->make_response_promise<HandleReport>();
  auto id = st.looks.add(rp);
  self->delayed_send(self, std::chrono::milliseconds(wait), timeout_atom::value, id);
  return rp;
}

void stop(function_actor_t* self, ToolState state) {
  auto& st = self->state;
  if (st.stopped)
    return;
  st.stopped = true;
  st.work->done = true;
  st.input = nullptr;
  state.kind = state_kind::stopped;
  // A failure carries what it reported since the last look, as a process's does (its
  // last words say why: "disk full"); a result is what the function set.
  uint64_t cut_before = 0; // of that, what the cap had cut already
  if (!state.ok && state.content.empty()) {
    state.content = std::exchange(st.output, {});
    cut_before = std::exchange(st.omitted, 0);
  }
  // Held to the output cap as a process's output is (its head and tail, the whole in
  // a spill file): an MCP tool's megabyte would otherwise reach the model whole.
  // A failure's text is its error's message (an MCP result marked isError).
  uint64_t omitted = cut_before;
  std::string file;
  hold_state(ResultHold{st.spec.output_cap, st.spec.spill_dir, st.spec.spill_root,
                        SpillLimits{st.spec.spill_max_bytes, st.spec.spill_budget_bytes}},
             st.id, state, omitted, file);
  st.final = HandleReport{st.id, std::move(state), omitted, std::move(file), {}};
  st.final.own_end = !st.aborting;
  // The supervisor hears first: an abort's answer comes after its stopped report.
  self->send(st.supervisor, stopped_atom::value, st.final);
  answer_looks(self);
  for (auto& rp : st.aborts)
    rp.deliver(st.final);
  st.aborts.clear();
}

/// The result as the handle reports it: as set, or, once aborted, as an abort.
ToolState result_of(const function_state& st, ToolState r) {
  if (!st.aborting)
    return r;
  auto said = r.ok ? r.content : r.error.message;
  // "aborted" already (an MCP call's cancel): not said twice.
  return ToolState::failure(
    ToolError{said.empty() || said == "aborted" ? "aborted" : "aborted: " + said, r.error.trace, false});
}

void add_output(function_actor_t* self, const std::string& text) {
  auto& st = self->state;
  if (st.stopped || text.empty())
    return;
  bool news = st.output.empty();
  st.output += text;
  auto cap = st.spec.output_cap;
  if (cap > 0 && st.output.size() > cap) {
    auto cut = st.output.size() - cap;
    st.output.erase(0, cut);
    st.omitted += cut;
  }
  if (auto line = last_line_of(text); !line.empty())
    st.last_line = std::move(line);
  if (news)
    self->send(st.supervisor, content_atom::value, st.id);
  // As a process handle's: a waiting look gets the output once it has settled, so
  // what comes together (a progress message and a log line) is read together.
  st.last_output = std::chrono::steady_clock::now();
  if (st.spec.settle_ms <= 0)
    return answer_looks(self);
  if (!st.settling) {
    st.settling = true;
    self->delayed_send(self, std::chrono::milliseconds(st.spec.settle_ms), timeout_atom::value, settle_timer);
  }
}

/// The settle timer: the waiting looks are answered if the output has been quiet
/// for settle_ms, else it is set again for the rest. Output a look took meanwhile
/// leaves nothing to answer with: the looks that came after wait on for more.
void on_settle(function_actor_t* self) {
  auto& st = self->state;
  st.settling = false;
  auto due = st.last_output + std::chrono::milliseconds(st.spec.settle_ms);
  auto now = std::chrono::steady_clock::now();
  if (now >= due) {
    if (!st.output.empty())
      answer_looks(self);
    return;
  }
  st.settling = true;
  self->delayed_send(self, std::chrono::duration_cast<std::chrono::milliseconds>(due - now) + std::chrono::milliseconds(1),
                     timeout_atom::value, settle_timer);
}

function_actor::behavior_type function_behavior(function_actor_t* self, std::string id, LaunchSpec spec,
                                                FunctionTool fn, supervisor_actor supervisor) {
  auto& st = self->state;
  st.id = std::move(id);
  st.tool = spec.tool;
  st.spec = std::move(spec);
  st.supervisor = std::move(supervisor);
  st.work = std::make_shared<Work>();
  // Held weakly by what the work keeps: a strong reference would keep this actor alive.
  auto me = self->address();
  auto to_me = [me](auto... xs) {
    if (auto h = caf::actor_cast<caf::actor>(me))
      caf::anon_send(h, xs...);
  };
  // A result set before the function returned is its first look's answer, and what
  // it reported before then is its output at once (a failure set then carries it);
  // what comes later (maybe on another thread) comes as messages.
  struct Early {
    std::mutex mtx;
    bool starting = true;
    std::optional<ToolState> state;
    std::string said;                                  // reported by the function itself, as it ran
    std::thread::id caller = std::this_thread::get_id(); // (another thread's reports come as messages)
  };
  auto early = std::make_shared<Early>();
  Progress progress = [to_me, early](const std::string& text) {
    {
      std::lock_guard lock(early->mtx);
      if (early->starting && std::this_thread::get_id() == early->caller) {
        early->said += text;
        return;
      }
    }
    to_me(content_atom::value, text);
  };
  // Gone while the work runs (its registry ended): the work is stopped too.
  self->attach_functor([work = st.work] { work->abort_once(); });
  std::optional<ToolState> now; // set before the function returned
  std::string said_first;       // reported before it returned
  try {
    auto args = Json::parse(st.spec.arguments);
    auto inv = fn(args ? *args : Json::object(), progress);
    st.work->abort = std::move(inv.abort);
    st.input = std::move(inv.input);
    inv.result.on_set([early, to_me](ToolState s) {
      {
        std::lock_guard lock(early->mtx);
        if (early->starting) {
          early->state = std::move(s);
          return;
        }
      }
      to_me(stopped_atom::value, std::move(s));
    });
  } catch (const std::exception& e) {
    now = ToolState::failure(ToolError{fmt::format("{} failed to start: {}", st.tool, e.what()), {}, false});
  } catch (...) {
    now = ToolState::failure(ToolError{fmt::format("{} failed to start", st.tool), {}, false});
  }
  {
    std::lock_guard lock(early->mtx);
    early->starting = false;
    if (!now)
      now = std::move(early->state);
    said_first = std::move(early->said);
  }
  add_output(self, said_first);
  if (now)
    stop(self, std::move(*now));
  return {
    [self](fetch_atom, const LookOptions& opts) { return look_with(self, opts); },
    [self](apply_atom, const std::string& input_json, const LookOptions& opts) -> caf::result<HandleReport> {
      auto& st = self->state;
      if (st.stopped)
        return make_error(error_code::input_refused,
                          fmt::format("Handle `{}` has stopped and takes no more input", st.id));
      if (!st.input)
        return make_error(error_code::input_refused,
                          fmt::format("Handle `{}` ({}) takes no input: its work reads none", st.id, st.tool));
      auto input = Json::parse(input_json);
      try {
        st.input(input ? *input : Json(input_json));
      } catch (...) {
        return make_error(error_code::input_refused,
                          fmt::format("Handle `{}` ({}) refused the input: {}", st.id, st.tool, thrown_text()));
      }
      return look_with(self, opts);
    },
    [self](abort_atom) -> caf::result<HandleReport> {
      auto& st = self->state;
      if (st.stopped)
        return st.final;
      auto rp = self->make_response_promise<HandleReport>();
      st.aborts.push_back(rp);
      if (!st.aborting) {
        st.aborting = true;
        st.input = nullptr;
        if (!st.work->abort) {
          // Nothing stops it: it runs on to its end, and abort only stops waiting for
          // it -- now, not after a grace its result has no reason to come within.
          stop(self, ToolState::failure(ToolError{"aborted: the tool has no way to stop its work, which runs on "
                                                  "to its end; its result is no longer waited for",
                                                  {}, false}));
          return rp;
        }
        st.work->abort_once();
        // Its result should come soon; after the grace it is no longer waited for.
        self->delayed_send(self, std::chrono::milliseconds(std::max<int64_t>(st.spec.grace_ms, 0)),
                           timeout_atom::value, grace_timer);
      }
      return rp;
    },
    [self](peek_atom) {
      // Its output is what the function reported as it ran (an MCP call's progress
      // and log messages): the last of it is its progress message too.
      HandleProgress p{self->state.last_line};
      p.message = self->state.last_line;
      return p;
    },
    [](answer_atom, const std::string&) {
      // One-shot questions are the process handles'; a function asks nothing.
    },
    [self](rename_atom, std::string& id) { self->state.id = std::move(id); },
    [self](retire_atom) { self->quit(); },
    [self](content_atom, const std::string& text) { add_output(self, text); },
    [self](stopped_atom, ToolState& s) { stop(self, result_of(self->state, std::move(s))); },
    [self](timeout_atom, uint64_t timer) {
      auto& st = self->state;
      if (timer == grace_timer) {
        if (!st.stopped)
          stop(self, ToolState::failure(ToolError{
                       fmt::format("aborted: its result did not come within the grace of {} ms and is no "
                                   "longer waited for",
                                   st.spec.grace_ms),
                       {}, false}));
        return;
      }
      if (timer == settle_timer)
        return on_settle(self);
      if (auto rp = st.looks.take(timer))
        rp->deliver(look(self));
    },
  };
}

} // namespace

HandleFactory function_handle_factory(FunctionTool fn) {
  return [fn](caf::local_actor* parent, const std::string& id, LaunchSpec& spec,
              const supervisor_actor& supervisor) -> handle_actor {
    return caf::actor_cast<handle_actor>(parent->spawn(function_behavior, id, std::move(spec), fn, supervisor));
  };
}

} // namespace jp
