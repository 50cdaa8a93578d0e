#include "actors/agent_actor.hpp"

#include <caf/all.hpp>
#include <chrono>
#include <fmt/format.h>

#include "actors/registry_actor.hpp"
#include "messages/atoms.hpp"
#include "messages/call_result.hpp"
#include "messages/handle_summary.hpp"
#include "messages/notification.hpp"
#include "runtime/event_log.hpp"
#include "runtime/provider/scripted_provider.hpp"

namespace jp {

namespace {

using clock_type = std::chrono::steady_clock;

struct agent_state {
  ScriptAgent agent;
  std::shared_ptr<EventLog> log;
  caf::actor turn;
  caf::response_promise done;
  size_t next_step = 0;
  size_t outstanding = 0;
  size_t failures = 0;
  bool ticking = false; // a progress timer is armed
  static inline const char* name = "jp.agent";
};

using agent_actor_t = caf::stateful_actor<agent_state>;

double ms_since(clock_type::time_point t0) {
  return std::chrono::duration<double, std::milli>(clock_type::now() - t0).count();
}

void end_turn(agent_actor_t* self) {
  auto& st = self->state;
  self->request(st.turn, caf::infinite, turn_end_atom::value)
    .then(
      [self](std::vector<HandleSummary>& handles) {
        // What no response carried is listed with the turn's end, not lost.
        self->request(self->state.turn, caf::infinite, pending_atom::value)
          .then([self, handles](std::vector<Notification>& undelivered) {
            auto& st = self->state;
            st.log->turn_end(st.agent.name, handles, undelivered);
            self->send_exit(st.turn, caf::exit_reason::user_shutdown);
            st.done.deliver(st.failures);
            self->quit();
          });
      },
      [self](caf::error& err) {
        auto& st = self->state;
        self->send_exit(st.turn, caf::exit_reason::user_shutdown);
        st.done.deliver(std::move(err));
        self->quit();
      });
}

void run_step(agent_actor_t* self);

constexpr auto progress_interval = std::chrono::milliseconds(500);

void arm_progress(agent_actor_t* self) {
  if (self->state.ticking)
    return;
  self->state.ticking = true;
  self->delayed_send(self, progress_interval, tick_atom::value);
}

// On a terminal: while a step's calls are outstanding, show what is running.
void on_tick(agent_actor_t* self) {
  auto& st = self->state;
  st.ticking = false;
  if (st.outstanding == 0)
    return;
  self->request(st.turn, caf::infinite, list_atom::value)
    .then([self](std::vector<HandleSummary>& running) {
      auto& st = self->state;
      if (st.outstanding > 0)
        st.log->progress(st.agent.name, running);
    });
  arm_progress(self);
}

void call_done(agent_actor_t* self) {
  if (--self->state.outstanding == 0)
    run_step(self);
}

void run_calls(agent_actor_t* self, int step_no, const ScriptStep& step) {
  auto& st = self->state;
  st.outstanding = step.calls.size();
  if (st.log->live())
    arm_progress(self);
  for (size_t i = 0; i < step.calls.size(); ++i) {
    auto& call = step.calls[i];
    int index = static_cast<int>(i);
    st.log->tool_call(st.agent.name, step_no, index, call.tool, call.arguments);
    auto t0 = clock_type::now();
    self->request(st.turn, caf::infinite, call_atom::value, call.tool, call.arguments.dump())
      .then(
        [self, step_no, index, tool = call.tool, t0](CallResult& r) {
          auto& st = self->state;
          if (!r.ok)
            ++st.failures;
          for (auto& n : r.notifications)
            st.log->notification(st.agent.name, n);
          st.log->tool_result(st.agent.name, step_no, index, tool, r.ok, r.content, ms_since(t0));
          call_done(self);
        },
        [self, step_no, index, tool = call.tool, t0](caf::error& err) {
          auto& st = self->state;
          ++st.failures;
          st.log->tool_result(st.agent.name, step_no, index, tool, false, caf::to_string(err),
                              ms_since(t0));
          call_done(self);
        });
  }
}

void run_step(agent_actor_t* self) {
  auto& st = self->state;
  // Skip steps without calls; after the last one the turn ends.
  while (st.next_step < st.agent.steps.size() && st.agent.steps[st.next_step].calls.empty()) {
    st.log->step(st.agent.name, static_cast<int>(st.next_step + 1), st.agent.steps[st.next_step].text);
    ++st.next_step;
  }
  if (st.next_step >= st.agent.steps.size())
    return end_turn(self);
  auto step_no = static_cast<int>(++st.next_step);
  auto& step = st.agent.steps[st.next_step - 1];
  st.log->step(st.agent.name, step_no, step.text);
  std::vector<Json> args;
  for (auto& c : step.calls)
    args.push_back(c.arguments);
  // RFD 037: a batch's spawns are registered before any call of the batch runs.
  self->request(st.turn, caf::infinite, batch_atom::value, spawn_ids_of(args))
    .then([self, step_no, &step](bool) { run_calls(self, step_no, step); },
          [self, step_no, &step](caf::error& err) {
            // The batch is rejected whole: every call of it fails with the reason.
            auto& st = self->state;
            auto reason = error_text(err);
            for (size_t i = 0; i < step.calls.size(); ++i) {
              st.log->tool_call(st.agent.name, step_no, static_cast<int>(i), step.calls[i].tool,
                                step.calls[i].arguments);
              st.log->tool_result(st.agent.name, step_no, static_cast<int>(i), step.calls[i].tool,
                                  false, reason, 0);
              ++st.failures;
            }
            run_step(self);
          });
}

caf::behavior agent_behavior(agent_actor_t* self, ScriptAgent agent, TurnContext ctx,
                             std::shared_ptr<EventLog> log) {
  self->state.agent = std::move(agent);
  self->state.log = std::move(log);
  // A script answers the turn-end inquiry from its [agents.on_turn_end] table, and
  // questions put to the assistant from its [agents.questions] table.
  auto inquiry = make_scripted_inquiry(self->state.agent);
  ctx.inquire = [inquiry](const std::vector<HandleSummary>& outstanding) { return inquiry->turn_end(outstanding); };
  ctx.ask_assistant = [inquiry](const std::string& tool, const Question& q) { return inquiry->answer(tool, q); };
  self->state.turn = spawn_turn(self->system(), std::move(ctx));
  return {
    [self](run_atom) -> caf::result<size_t> {
      self->state.done = self->make_response_promise();
      run_step(self);
      return self->state.done;
    },
    [self](tick_atom) { on_tick(self); },
  };
}

} // namespace

caf::actor spawn_agent(caf::actor_system& sys, ScriptAgent agent, TurnContext ctx,
                       std::shared_ptr<EventLog> log) {
  return sys.spawn(agent_behavior, std::move(agent), std::move(ctx), std::move(log));
}

} // namespace jp
