#include "actors/foreach_handle.hpp"

#include <algorithm>
#include <caf/all.hpp>
#include <chrono>
#include <fmt/format.h>
#include <map>
#include <memory>
#include <optional>

#include "actors/no_terminal.hpp"
#include "actors/waiting_looks.hpp"
#include "messages/atoms.hpp"
#include "messages/error_code.hpp"
#include "messages/error_category.hpp"
#include "messages/response_cap.hpp"
#include "messages/json.hpp"

namespace jp {

namespace {

enum class element_phase { queued, running, done };

struct Element {
  std::string value;
  element_phase phase = element_phase::queued;
  std::string child_id;
  handle_actor handle;
  Question question; // what it waits on (id "": nothing)
  ToolState final;
  std::string output_file; // where its whole answer went when it was cut
};

struct foreach_state {
  foreach_state() = default; // not aggregate-built from the actor pointer
  std::string id;
  AgentSpec spec;
  SubAgentStarter start;
  supervisor_actor supervisor;
  std::vector<Element> elements;
  std::map<std::string, size_t> by_child; // child id -> element index
  size_t next = 0;
  int running = 0;
  std::optional<caf::actor_clock::time_point> no_room_since; // the next element waits for room
  bool retry_pending = false;                                  // a tick is on its way
  int peak = 0;
  bool aborting = false;
  bool stopped = false;
  // The element whose question the foreach's handle waits on (its supervisor was
  // told); `apply` answers it. One at a time: the next is put once it is answered.
  std::optional<size_t> surfaced;
  HandleReport final;
  uint64_t output_cap = 0; // its looks' and result's bytes (0: no cap)
  std::vector<caf::typed_response_promise<HandleReport>> aborts;
  WaitingLooks looks; // fetches waiting for an element's end, a question, or its own
  std::shared_ptr<std::vector<handle_actor>> live = std::make_shared<std::vector<handle_actor>>();
  static inline const char* name = "jp.foreach";
};

// Its sub-agents report to it as handles report to the registry; a tick retries
// the elements no room was left for; a waiting look's time runs out.
using foreach_actor = handle_actor::extend_with<supervisor_actor>::extend<caf::reacts_to<tick_atom>,
                                                                        caf::reacts_to<timeout_atom, uint64_t>>;

// How soon a foreach tries again to start an element the tree had no room for (one of
// its own ending retries at once; room made elsewhere is found so), and for how long
// with nothing of its own running: sub-agents that each await a foreach could fill
// the tree, and wait on each other.
constexpr auto kRoomRetry = std::chrono::milliseconds(200);
constexpr auto kRoomWait = std::chrono::seconds(30);
using foreach_actor_t = foreach_actor::stateful_base<foreach_state>;

std::string with_element(std::string text, const std::string& element) {
  static const std::string mark = "{{element}}";
  for (auto at = text.find(mark); at != std::string::npos; at = text.find(mark, at + element.size()))
    text.replace(at, mark.size(), element);
  return text;
}

/// The question the handle waits on (surface), named by its element.
Question surfaced_question(const foreach_state& st) {
  auto& e = st.elements[*st.surfaced];
  auto q = e.question;
  q.text = element_question_text(static_cast<int>(*st.surfaced), e.value, q.text);
  return q;
}

HandleReport look(foreach_actor_t* self) {
  auto& st = self->state;
  if (st.stopped)
    return st.final;
  size_t done = 0, failed = 0;
  for (auto& e : st.elements) {
    done += e.phase == element_phase::done;
    failed += e.phase == element_phase::done && !e.final.ok;
  }
  auto content = fmt::format("{} of {} done{}, {} running (at most {}), {} queued", done, st.elements.size(),
                             failed ? fmt::format(" ({} failed)", failed) : "", st.running, st.spec.max_concurrent,
                             st.elements.size() - done - static_cast<size_t>(st.running));
  // A line per element started, while the look stays within the output cap (a
  // foreach of thousands listed each): the running ones first (what to wait on or
  // answer), then the failed, then the done.
  size_t room = st.output_cap > 0 ? st.output_cap : SIZE_MAX;
  size_t not_shown = 0;
  auto show = [&](size_t i, const std::string& state) {
    auto line = fmt::format("\n[{}] {}: {}", i, cut_text(st.elements[i].value, 80), state);
    if (content.size() + line.size() > room)
      ++not_shown;
    else
      content += line;
  };
  for (size_t i = 0; i < st.elements.size(); ++i)
    if (auto& e = st.elements[i]; e.phase == element_phase::running)
      show(i, e.question.id.empty() ? "running" : fmt::format("waiting: {}", e.question.text));
  for (size_t i = 0; i < st.elements.size(); ++i)
    if (auto& e = st.elements[i]; e.phase == element_phase::done && !e.final.ok)
      show(i, "failed: " + e.final.error.message);
  for (size_t i = 0; i < st.elements.size(); ++i)
    if (auto& e = st.elements[i]; e.phase == element_phase::done && e.final.ok)
      show(i, "done");
  if (not_shown)
    content += fmt::format("\n[{} more not shown, past the output cap: its result lists every element]", not_shown);
  // Waiting as await shows it, with the question an apply answers.
  if (st.surfaced && !st.elements[*st.surfaced].question.id.empty())
    return HandleReport{st.id, ToolState::waiting(surfaced_question(st), std::move(content)), 0, {}, {}};
  return HandleReport{st.id, ToolState::running(std::move(content)), 0, {}, {}};
}

/// Answers the waiting looks: an element ended, one asks, or the foreach stopped.
void answer_looks(foreach_actor_t* self) {
  for (auto& rp : self->state.looks.take_all())
    rp.deliver(look(self));
}

/// A look now, or (wait_ms) once there is news or its time is up.
caf::result<HandleReport> look_with(foreach_actor_t* self, const LookOptions& opts) {
  auto& st = self->state;
  if (st.stopped || opts.wait_ms <= 0 || (st.surfaced && !st.elements[*st.surfaced].question.id.empty()))
    return look(self);
  auto rp = self->make_response_promise<HandleReport>();
  auto id = st.looks.add(rp);
  self->delayed_send(self, std::chrono::milliseconds(opts.wait_ms), timeout_atom::value, id);
  return rp;
}

const std::string& said(const Element& e) {
  return e.final.ok ? e.final.content : e.final.error.message;
}

/// Every element's result (or error), in element order, as a JSON array; the
/// element as `value(i)` gives it, its text from `text(i)`.
template <class Value, class Text>
std::string results_array(const std::vector<Element>& elements, Value value, Text text) {
  auto out = Json::array();
  for (size_t i = 0; i < elements.size(); ++i) {
    auto item = Json::object().set("element", value(i));
    item.set(elements[i].final.ok ? "result" : "error", text(i));
    if (!elements[i].output_file.empty())
      item.set("output_file", elements[i].output_file);
    out.push(std::move(item));
  }
  return out.dump();
}

/// `value` cut to its head within `room` bytes of JSON text, with "…(N bytes)"; what
/// was left out is added to `omitted`.
std::string head_within(const std::string& value, size_t room, uint64_t& omitted) {
  size_t keep = room > 24 ? room - 24 : 0; // the note's room
  auto cut = cut_text(value, keep);
  while (keep > 0 && json_string_size(cut) > room) // escapes take more than their bytes
    cut = cut_text(value, keep /= 2);
  omitted += value.size() - std::min(keep, value.size());
  return cut;
}

/// Every element is done: the array of results is its result. Past the output cap
/// each element keeps the tail of its result within a fair share of the room the
/// array leaves (none left: the result is left out): every element stays, and the
/// array stays JSON. The elements themselves (the caller's own input, given back to
/// tell the results apart) keep their heads within a fair share of half the cap
/// when they take more. (Each sub-agent's whole answer is in its conversation,
/// under its path, and in its output_file when its own answer was cut.)
void finish(foreach_actor_t* self) {
  auto& st = self->state;
  auto& els = st.elements;
  auto value_of = [&](size_t i) -> const std::string& { return els[i].value; };
  auto whole = results_array(els, value_of, [&](size_t i) { return said(els[i]); });
  uint64_t omitted = 0;
  if (st.output_cap > 0 && whole.size() > st.output_cap) {
    auto none = [](size_t) { return std::string(); };
    std::vector<std::string> values;
    std::vector<size_t> value_costs;
    for (auto& e : els) {
      values.push_back(e.value);
      value_costs.push_back(json_string_size(e.value));
    }
    auto skeleton = results_array(els, none, none).size();
    size_t half = static_cast<size_t>(st.output_cap / 2);
    size_t value_room = half > skeleton ? half - skeleton : 0;
    if (results_array(els, value_of, none).size() > half) {
      // Never cut below a head that still tells an element apart (a path's): where
      // the array's skeleton alone fills the cap, short elements stay whole.
      constexpr size_t kHeadMin = 64;
      auto shares = fair_shares(value_costs, value_room);
      for (size_t i = 0; i < values.size(); ++i)
        if (auto room = std::max(shares[i], kHeadMin); value_costs[i] > room)
          values[i] = head_within(values[i], room, omitted);
    }
    auto shown_value = [&](size_t i) -> const std::string& { return values[i]; };
    auto bare = results_array(els, shown_value, none).size();
    std::vector<size_t> costs;
    for (auto& e : els)
      costs.push_back(json_string_size(said(e)));
    auto shares = fair_shares(costs, st.output_cap > bare ? static_cast<size_t>(st.output_cap - bare) : 0);
    whole = results_array(els, shown_value, [&](size_t i) {
      auto& text = said(els[i]);
      if (costs[i] <= shares[i])
        return text;
      uint64_t left_out = 0;
      auto tail = keep_tail(text, shares[i], left_out);
      if (json_string_size(tail) <= shares[i]) {
        omitted += left_out;
        return tail;
      }
      // No room even for the omission's note (the array alone fills the cap): a
      // text no longer than the note stays, a longer one is left out whole.
      if (tail.size() >= text.size())
        return text;
      omitted += text.size();
      return std::string();
    });
  }
  st.stopped = true;
  auto state = st.aborting ? ToolState::failure(ToolError{"aborted: its running sub-agents were aborted and the "
                                                          "elements not yet started never ran",
                                                          {}, false},
                                                std::move(whole))
                           : ToolState::success(std::move(whole));
  st.final = HandleReport{st.id, std::move(state), omitted, {}, {}};
  st.final.own_end = !st.aborting;
  self->send(st.supervisor, stopped_atom::value, st.final);
  answer_looks(self);
  for (auto& rp : st.aborts)
    rp.deliver(st.final);
  st.aborts.clear();
}

void launch_more(foreach_actor_t* self) {
  auto& st = self->state;
  while (!st.aborting && st.running < st.spec.max_concurrent && st.next < st.elements.size()) {
    auto i = st.next++;
    auto& e = st.elements[i];
    AgentSpec child = st.spec;
    child.foreach = false;
    child.elements.clear();
    child.prompt = with_element(st.spec.prompt, e.value);
    child.element = e.value;
    child.element_index = static_cast<int>(i);
    e.child_id = fmt::format("{}[{}]", st.id, i);
    e.phase = element_phase::running;
    st.by_child[e.child_id] = i;
    e.handle = st.start(self, e.child_id, child, supervisor_actor{self});
    if (!e.handle) {
      // No room under the top-level agent now ([agents] max_live): the element waits,
      // for one of its own to end, or for the retry.
      st.by_child.erase(e.child_id);
      auto now = self->clock().now();
      if (st.running == 0 && st.no_room_since && now - *st.no_room_since >= kRoomWait) {
        e.phase = element_phase::done;
        e.final = ToolState::failure(ToolError{
          fmt::format("no room for its sub-agent for {} s: the sub-agents running under the top-level agent are "
                      "at the limit ([agents] max_live) and none of them ended",
                      kRoomWait.count()),
          {}, false});
        continue; // and the next ones as well while there is none
      }
      e.phase = element_phase::queued;
      st.next = i;
      // The wait counts while nothing of its own runs (one of those ending frees room).
      if (st.running > 0)
        st.no_room_since.reset();
      else if (!st.no_room_since)
        st.no_room_since = now;
      if (!st.retry_pending) {
        st.retry_pending = true;
        self->delayed_send(self, kRoomRetry, tick_atom::value);
      }
      break;
    }
    st.no_room_since.reset();
    ++st.running;
    st.peak = std::max(st.peak, st.running);
    st.live->push_back(e.handle);
    self->monitor(e.handle);
  }
  if (st.running == 0 && (st.next >= st.elements.size() || st.aborting) && !st.stopped)
    finish(self);
}

/// The handle waits on the first question an element waits on (none: it waits on
/// nothing): its supervisor hears of each change, so `await` returns it as waiting
/// and `apply` answers it.
void surface(foreach_actor_t* self) {
  auto& st = self->state;
  if (st.surfaced && !st.elements[*st.surfaced].question.id.empty())
    return; // still waiting on that one
  std::optional<size_t> next;
  for (size_t i = 0; i < st.elements.size() && !next; ++i)
    if (st.elements[i].phase == element_phase::running && !st.elements[i].question.id.empty())
      next = i;
  if (!next && !st.surfaced)
    return;
  st.surfaced = next;
  // A waiting look answered with it carries the question (no notification then).
  self->send(st.supervisor, waiting_atom::value, st.id, next ? surfaced_question(st) : Question{},
             next && !st.looks.empty());
  if (next)
    answer_looks(self);
}

/// Element `i` ended with `state` (its stop, or its actor's death), its whole answer
/// in `output_file` when that was cut.
void element_done(foreach_actor_t* self, size_t i, ToolState state, std::string output_file = {}) {
  auto& st = self->state;
  auto& e = st.elements[i];
  if (e.phase != element_phase::running)
    return;
  e.phase = element_phase::done;
  e.final = std::move(state);
  e.output_file = std::move(output_file);
  e.question = {};
  --st.running;
  self->demonitor(e.handle.address());
  std::erase(*st.live, e.handle);
  self->send(e.handle, retire_atom::value);
  if (!st.aborting)
    surface(self);
  launch_more(self);
  answer_looks(self);
}

foreach_actor::behavior_type foreach_behavior(foreach_actor_t* self, std::string id, AgentSpec spec,
                                              SubAgentStarter start, supervisor_actor supervisor,
                                              uint64_t output_cap) {
  auto& st = self->state;
  st.id = std::move(id);
  st.output_cap = output_cap;
  st.spec = std::move(spec);
  st.start = std::move(start);
  st.supervisor = std::move(supervisor);
  if (st.spec.max_concurrent < 1)
    st.spec.max_concurrent = 1;
  for (auto& v : st.spec.elements)
    st.elements.push_back(Element{v});
  // Its sub-agents end with it.
  self->attach_functor([live = st.live] {
    for (auto& h : *live)
      caf::anon_send_exit(h, caf::exit_reason::user_shutdown);
  });
  self->set_down_handler([self](caf::down_msg& dm) {
    auto& st = self->state;
    for (size_t i = 0; i < st.elements.size(); ++i)
      if (st.elements[i].handle && st.elements[i].handle.address() == dm.source)
        return element_done(self, i,
                            ToolState::failure(ToolError{fmt::format("its sub-agent died ({})", caf::to_string(dm.reason)),
                                                         {}, false}));
  });
  launch_more(self);
  return {
    [self](fetch_atom, const LookOptions& opts) -> caf::result<HandleReport> {
      if (auto why = no_terminal(opts, self->state.id, "a foreach"); !why.empty())
        return make_error(error_code::bad_arguments, std::move(why));
      return look_with(self, opts);
    },
    [self](apply_atom, const std::string& input, const LookOptions& opts) -> caf::result<HandleReport> {
      auto& st = self->state;
      if (auto why = no_terminal(opts, st.id, "a foreach"); !why.empty())
        return make_error(error_code::bad_arguments, std::move(why));
      if (!st.surfaced)
        return make_error(error_code::input_refused,
                          fmt::format("Handle `{}` is a foreach: it takes input only to answer the question one "
                                      "of its sub-agents waits on, and none waits now",
                                      st.id));
      // The answer goes to the element that asked; the look is the foreach's.
      auto rp = self->make_response_promise<HandleReport>();
      self->request(st.elements[*st.surfaced].handle, caf::infinite, apply_atom::value, input, opts)
        .then([self, rp](HandleReport&) mutable { rp.deliver(look(self)); },
              [rp](caf::error& err) mutable { rp.deliver(std::move(err)); });
      return rp;
    },
    [self](abort_atom) -> caf::result<HandleReport> {
      auto& st = self->state;
      if (st.stopped)
        return st.final;
      auto rp = self->make_response_promise<HandleReport>();
      st.aborts.push_back(rp);
      if (!st.aborting) {
        st.aborting = true;
        for (auto& e : st.elements)
          if (e.phase == element_phase::queued) {
            e.phase = element_phase::done;
            e.final = ToolState::failure(ToolError{"not started: the foreach was aborted", {}, false});
          }
        // Their stops (stopped_atom) drive the end; the replies add nothing.
        for (auto& e : st.elements)
          if (e.phase == element_phase::running)
            self->request(e.handle, caf::infinite, abort_atom::value).then([](HandleReport&) {}, [](caf::error&) {});
        if (st.running == 0)
          finish(self);
      }
      return rp;
    },
    [self](peek_atom) {
      auto& st = self->state;
      HandleProgress p;
      p.done = std::count_if(st.elements.begin(), st.elements.end(),
                             [](const Element& e) { return e.phase == element_phase::done; });
      p.running = st.running;
      p.total = static_cast<int64_t>(st.elements.size());
      return p;
    },
    [](answer_atom, const std::string&) {},
    [self](rename_atom, std::string& id) { self->state.id = std::move(id); },
    [self](retire_atom) { self->quit(); },
    [self](stopped_atom, HandleReport& r) {
      auto& st = self->state;
      if (auto it = st.by_child.find(r.id); it != st.by_child.end())
        element_done(self, it->second, std::move(r.state), std::move(r.output_file));
    },
    [self](waiting_atom, const std::string& child, Question& q, bool) {
      auto& st = self->state;
      if (auto it = st.by_child.find(child); it != st.by_child.end()) {
        st.elements[it->second].question = std::move(q);
        if (!st.aborting)
          surface(self);
      }
    },
    [](content_atom, const std::string&) {},
    [self](tick_atom) {
      self->state.retry_pending = false;
      launch_more(self);
    },
    [self](timeout_atom, uint64_t look_id) {
      if (auto rp = self->state.looks.take(look_id))
        rp->deliver(look(self));
    },
  };
}

} // namespace

std::string element_question_text(int index, const std::string& element, const std::string& text) {
  return fmt::format("[{}] {}: {}", index, cut_text(element, 80), text);
}

handle_actor spawn_foreach(caf::local_actor* spawner, const std::string& id, const AgentSpec& spec,
                           SubAgentStarter start, const supervisor_actor& supervisor, uint64_t output_cap) {
  return spawner->spawn(foreach_behavior, id, spec, std::move(start), supervisor, output_cap);
}

} // namespace jp
