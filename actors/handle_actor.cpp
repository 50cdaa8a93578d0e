#include "actors/handle_actor.hpp"

#include <atomic>
#include <caf/all.hpp>
#include <cctype>
#include <optional>
#include <fmt/format.h>

#include "messages/atoms.hpp"
#include "messages/json.hpp"
#include "messages/json_codec.hpp"
#include "runtime/io_thread.hpp"
#include "runtime/output_buffer.hpp"
#include "runtime/process.hpp"

namespace jp {

namespace {

constexpr size_t stderr_tail_bytes = 8 * 1024;
constexpr size_t trace_lines = 20;

struct handle_state {
  std::string id;
  LaunchSpec spec;
  caf::actor registry;
  std::shared_ptr<Process> proc;
  std::unique_ptr<OutputBuffer> out;
  std::string stdout_capture; // for structured output, while it fits the cap
  bool stdout_overflow = false;
  std::string stderr_tail;
  bool exited = false;
  bool aborting = false;
  bool gone = false;
  bool retired = false; // the registry has the final state; quit once aborts are answered
  // The control channel (fd 3): partial line, the question the tool waits on, and a
  // final state it declared (adopted when it exits).
  std::string control_line;
  std::optional<Question> waiting;
  std::optional<ToolState> declared;
  HandleReport final;
  std::vector<caf::response_promise> abort_waiters;

  static inline const char* name = "jp.handle";
};

using handle_actor_t = caf::stateful_actor<handle_state>;

std::vector<std::string> last_lines(std::string_view text, size_t n) {
  std::vector<std::string> lines;
  while (!text.empty() && lines.size() < n) {
    if (text.back() == '\n')
      text.remove_suffix(1);
    auto pos = text.rfind('\n');
    auto line = pos == std::string_view::npos ? text : text.substr(pos + 1);
    if (!line.empty() || !lines.empty())
      lines.push_back(sanitize_utf8(line));
    text = pos == std::string_view::npos ? std::string_view{} : text.substr(0, pos + 1);
  }
  return {lines.rbegin(), lines.rend()};
}

HandleReport running_report(handle_actor_t* self) {
  auto& st = self->state;
  auto taken = st.out->take();
  auto state = st.waiting ? ToolState::waiting(*st.waiting, std::move(taken.content))
                          : ToolState::running(std::move(taken.content));
  return {st.id, std::move(state), taken.omitted, std::move(taken.spill_path)};
}

/// One ToolState line from the control channel: waiting asks (the registry hears
/// of it), running adds content, stopped is the result the exit will report.
void adopt(handle_actor_t* self, std::string_view line) {
  auto& st = self->state;
  auto state = parse_tool_output(line);
  if (!state) {
    st.stderr_tail += fmt::format("[control channel] ignored a line that is not a ToolState: {}\n",
                                  state.error());
    return;
  }
  switch (state->kind) {
    case state_kind::waiting:
      // A question the config answers is answered at once: nobody is asked.
      if (auto it = st.spec.fixed_answers.find(state->question.id); it != st.spec.fixed_answers.end()) {
        if (st.proc)
          st.proc->write_stdin(it->second + "\n");
        break;
      }
      st.waiting = state->question;
      self->send(st.registry, waiting_atom::value, st.id, state->question);
      break;
    case state_kind::running:
      break;
    case state_kind::stopped:
      st.declared = *state;
      break;
  }
  if (!state->content.empty() && state->kind != state_kind::stopped)
    st.out->append(state->content);
}

// The final state once the process ended: what the tool said on stdout when it
// speaks the protocol, else plain text judged by the exit status.
ToolState final_state(handle_actor_t* self, const ExitInfo& info, std::string content) {
  auto& st = self->state;
  if (st.aborting && info.signaled) { // an exit of its own racing the abort is not one
    ToolError err{fmt::format("aborted ({})", info.describe()), last_lines(st.stderr_tail, trace_lines),
                  false};
    return ToolState::failure(std::move(err), std::move(content));
  }
  if (st.declared)
    return *st.declared;
  if (st.spec.structured_output && !st.stdout_overflow) {
    if (auto parsed = parse_tool_output(st.stdout_capture); parsed.ok())
      return *parsed;
  }
  if (info.success())
    return ToolState::success(std::move(content));
  ToolError err{info.describe(), last_lines(st.stderr_tail, trace_lines), false};
  return ToolState::failure(std::move(err), std::move(content));
}

void finish(handle_actor_t* self, ToolState state, uint64_t omitted, std::string spill) {
  auto& st = self->state;
  st.exited = true;
  st.final = HandleReport{st.id, std::move(state), omitted, std::move(spill)};
  st.proc.reset();
  st.out->close();
  self->send(st.registry, stopped_atom::value, st.final);
}

void deliver_aborts(handle_actor_t* self) {
  for (auto& rp : self->state.abort_waiters)
    rp.deliver(self->state.final);
  self->state.abort_waiters.clear();
}

// Unique per handle ever started by this process: ids repeat across turns and agents.
std::string spill_path(const LaunchSpec& spec, const std::string& id) {
  static std::atomic<uint64_t> seq{0};
  if (spec.spill_dir.empty())
    return {};
  std::string safe;
  for (char c : id)
    safe += std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.' ? c : '_';
  return fmt::format("{}/{}-{}-{}.log", spec.spill_dir, safe, ::getpid(), ++seq);
}

caf::behavior handle_behavior(handle_actor_t* self, std::string id, LaunchSpec spec, IoThread* io,
                              caf::actor registry) {
  auto& st = self->state;
  st.id = std::move(id);
  st.spec = std::move(spec);
  st.registry = std::move(registry);
  st.out = std::make_unique<OutputBuffer>(st.spec.output_cap, spill_path(st.spec, st.id));
  auto me = caf::actor_cast<caf::actor>(self);
  ProcessEvents events;
  events.on_output = [me](stream_kind s, std::string_view chunk) {
    if (s == stream_kind::control)
      caf::anon_send(me, control_atom::value, std::string(chunk));
    else
      caf::anon_send(me, output_atom::value, s == stream_kind::err, std::string(chunk));
  };
  events.on_exit = [me](const ExitInfo& info) {
    caf::anon_send(me, exited_atom::value, info.signaled, info.code, info.signal);
  };
  SpawnSpec ps{st.spec.argv, st.spec.cwd, st.spec.env, st.spec.stdin_pipe, st.spec.control_channel};
  auto proc = spawn_process(*io, std::move(ps), std::move(events));
  if (!proc) {
    finish(self, ToolState::failure(ToolError{proc.error(), {}, false}), 0, {});
  } else {
    st.proc = *proc;
    // If this actor dies, its process group goes with it.
    auto p = st.proc;
    self->attach_functor([p] { p->terminate(std::chrono::milliseconds(0), [] {}); });
  }
  return {
    [self](output_atom, bool is_err, std::string& chunk) {
      auto& st = self->state;
      if (st.exited)
        return;
      // The first output since the assistant last looked: the registry may notify.
      if (st.spec.notify_content && st.out->pending() == 0)
        self->send(st.registry, content_atom::value, st.id);
      st.out->append(chunk);
      // Consumed: let the io thread read on (it stops while we are far behind).
      if (st.proc)
        st.proc->ack(chunk.size());
      if (is_err) {
        st.stderr_tail += chunk;
        if (st.stderr_tail.size() > 2 * stderr_tail_bytes)
          st.stderr_tail.erase(0, st.stderr_tail.size() - stderr_tail_bytes);
      } else if (st.spec.structured_output && !st.stdout_overflow) {
        st.stdout_capture += chunk;
        if (st.stdout_capture.size() > st.spec.output_cap) {
          st.stdout_overflow = true;
          st.stdout_capture.clear();
        }
      }
    },
    [self](control_atom, std::string& chunk) {
      auto& st = self->state;
      if (st.proc)
        st.proc->ack(chunk.size());
      if (st.exited)
        return;
      st.control_line += chunk;
      for (auto nl = st.control_line.find('\n'); nl != std::string::npos; nl = st.control_line.find('\n')) {
        auto line = st.control_line.substr(0, nl);
        st.control_line.erase(0, nl + 1);
        if (line.find_first_not_of(" \t\r") != std::string::npos)
          adopt(self, line);
      }
      if (st.control_line.size() > st.spec.output_cap) // a line that never ends
        st.control_line.clear();
    },
    [self](exited_atom, bool signaled, int code, int signal) {
      auto& st = self->state;
      if (st.exited)
        return;
      auto taken = st.out->take();
      auto state = final_state(self, ExitInfo{signaled, code, signal}, std::move(taken.content));
      finish(self, std::move(state), taken.omitted, std::move(taken.spill_path));
      if (!st.aborting)
        deliver_aborts(self);
    },
    [self](retire_atom) {
      // "gone" may still be on its way (the registry can hear "stopped" first): an
      // abort waiting for it must get its answer before this actor goes.
      self->state.retired = true;
      if (self->state.abort_waiters.empty())
        self->quit();
    },
    [self](gone_atom) {
      self->state.gone = true;
      if (self->state.exited)
        deliver_aborts(self);
      if (self->state.retired)
        self->quit();
    },
    [self](fetch_atom) -> HandleReport {
      if (self->state.exited)
        return self->state.final;
      return running_report(self);
    },
    [self](apply_atom, const std::string& input_json) -> caf::result<HandleReport> {
      auto& st = self->state;
      if (st.exited)
        return caf::make_error(caf::sec::runtime_error,
                               fmt::format("Handle `{}` has stopped; it takes no more input", st.id));
      if (!st.spec.stdin_pipe)
        return caf::make_error(caf::sec::runtime_error,
                               fmt::format("Handle `{}` ({}) does not read input", st.id, st.spec.tool));
      auto input = Json::parse(input_json);
      std::string bytes;
      if (st.waiting) {
        // The answer to the pending question, as one JSON line (the control channel's
        // other half); the tool runs on.
        bytes = (input.ok() ? input->dump() : Json(input_json).dump()) + "\n";
        st.waiting.reset();
        self->send(st.registry, waiting_atom::value, st.id, Question{});
      } else if (input.ok() && input->is_string()) {
        bytes = input->as_string();
      } else {
        bytes = (input.ok() ? input->dump() : input_json) + "\n";
      }
      auto size = bytes.size();
      if (!st.proc->write_stdin(std::move(bytes))) {
        // Refused, not queued: the caller may retry once the tool has read more.
        auto queued = st.proc->stdin_queued();
        auto limit = fmt::format("limit {} MiB", kStdinQueueLimit >> 20);
        if (size > kStdinQueueLimit)
          return caf::make_error(caf::sec::runtime_error,
                                 fmt::format("Handle `{}`: an input of {} bytes is more than a tool's "
                                             "input queue holds ({})",
                                             st.id, size, limit));
        if (queued == 0) // read since: the count no longer says why
          return caf::make_error(caf::sec::runtime_error,
                                 fmt::format("Handle `{}`: the tool has not read earlier input; "
                                             "not queueing more ({})",
                                             st.id, limit));
        return caf::make_error(caf::sec::runtime_error,
                               fmt::format("Handle `{}`: the tool has not read {} bytes of earlier "
                                           "input; not queueing more ({})",
                                           st.id, queued, limit));
      }
      return running_report(self);
    },
    [self](abort_atom) -> caf::result<HandleReport> {
      auto& st = self->state;
      if (st.exited && !st.aborting)
        return st.final;
      if (st.exited && st.gone)
        return st.final;
      auto rp = self->make_response_promise<HandleReport>();
      st.abort_waiters.push_back(rp);
      if (!st.aborting) {
        st.aborting = true;
        auto me = caf::actor_cast<caf::actor>(self);
        st.proc->terminate(std::chrono::milliseconds(st.spec.grace_ms),
                           [me] { caf::anon_send(me, gone_atom::value); });
      }
      return rp;
    },
  };
}

} // namespace

caf::actor spawn_process_handle(caf::local_actor* parent, const std::string& id,
                                const LaunchSpec& spec, IoThread& io, const caf::actor& registry) {
  return parent->spawn(handle_behavior, id, spec, &io, registry);
}

} // namespace jp
