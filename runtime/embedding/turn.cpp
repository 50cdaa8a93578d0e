#include "runtime/embedding/runtime_access.hpp"

#include <caf/all.hpp>
#include <fmt/format.h>

#include "actors/provider_subagents.hpp"
#include "actors/turn_loop.hpp"
#include "messages/atoms.hpp"
#include "messages/error_category.hpp"
#include "messages/thrown_text.hpp"
#include "runtime/embedding/caller_thread_guard.hpp"
#include "runtime/provider/assistant.hpp"
#include "runtime/provider/scripted_provider.hpp"
#include "runtime/store/script.hpp"
#include "tools/protocol_guidance.hpp"

namespace jp {

namespace {

Turn failed_turn(std::shared_ptr<Runtime::Impl> rt, error_code code, std::string why) {
  auto t = std::make_shared<Turn::Impl>();
  t->rt = std::move(rt);
  std::promise<TurnResult> p;
  p.set_value(TurnResult{turn_outcome::failed, code, std::move(why), {}, false});
  t->result = p.get_future();
  return RuntimeAccess::turn(std::move(t));
}

} // namespace

Result<std::shared_ptr<Provider>> scripted_provider(std::string_view script_toml, const std::string& agent) {
  auto script = parse_script(script_toml, "script");
  if (!script)
    return Error{script.error()};
  for (auto& a : script->agents)
    if (agent.empty() || a.name == agent)
      return make_scripted_provider(a);
  if (agent.empty())
    return Error{"script: the script has no [[agents]]"};
  return Error{fmt::format("script: no agent named {} in it", json_quote_cut(agent))};
}

Turn::Turn(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}
Turn::Turn(Turn&&) noexcept = default;
Turn& Turn::operator=(Turn&& other) noexcept {
  // The turn replaced ends as its destructor ends it, with every handle it started.
  if (this != &other) {
    Turn replaced(std::move(*this));
    impl_ = std::move(other.impl_);
  }
  return *this;
}

// What a turn's result says when the program let go of its jp::Turn first.
constexpr const char* kDropped = "its jp::Turn was destroyed while it ran: every handle it started was aborted";

Turn::~Turn() {
  // A turn nobody holds any more ends now, with every handle it started.
  if (impl_ && impl_->loop)
    caf::anon_send(impl_->loop, quit_atom::value, std::string(kDropped));
}

std::future<TurnResult>& Turn::result() {
  return impl_->result;
}

void Turn::interrupt() {
  std::lock_guard lock(impl_->mtx);
  if (!impl_->loop)
    return;
  // The first stops it cleanly; the loop reads a second as "abort everything now".
  caf::anon_send(impl_->loop, interrupt_atom::value);
  ++impl_->interrupts;
}

Turn Runtime::run_turn(std::string prompt) {
  return run_turn(std::move(prompt), TurnHooks{});
}

Turn Runtime::run_turn(std::string prompt, TurnHooks hooks) {
  CallerThreadGuard caller; // caller_thread_guard.hpp
  auto config = impl_->snapshot();
  TurnLoopContext ctx;
  ctx.config = config;
  ctx.io = &impl_->io;
  std::shared_ptr<const Script> script; // a scripted assistant's: its [[subagents]]
  if (hooks.provider) {
    ctx.provider = hooks.provider;
    ctx.inquiry = hooks.inquiry;
    ctx.tool_dialect = tool_dialect_for(config->assistant);
  } else {
    auto kind = error_code::bad_arguments;
    auto assistant = make_assistant(*config, &kind);
    if (!assistant)
      return failed_turn(impl_, kind,
                         assistant.error() + "; or give the turn a provider of your own (TurnHooks::provider)");
    ctx.provider = assistant->provider;
    ctx.inquiry = hooks.inquiry ? hooks.inquiry : assistant->inquiry;
    ctx.tool_dialect = assistant->tool_dialect;
    script = assistant->script;
  }
  ctx.model = config->assistant.model;
  ctx.system_prompt = system_prompt_with_guidance(*config);
  ctx.max_tokens = config->assistant.max_tokens;
  ctx.renderer = hooks.renderer;
  ctx.prompts = hooks.prompts;
  ctx.observer = hooks.observer;
  ctx.permissions = hooks.permissions;
  // Said to a program, not to a person at a terminal (unless it says otherwise).
  if (ctx.permissions.why_nobody == PermissionPolicy{}.why_nobody)
    ctx.permissions.why_nobody = "this turn has no PromptBackend to ask the user through (TurnHooks::prompts)";
  if (ctx.permissions.allow_hint == PermissionPolicy{}.allow_hint)
    ctx.permissions.allow_hint = "TurnHooks::permissions.allowed holding \"{}\"";
  ctx.max_rounds = hooks.max_rounds;
  ctx.executors = impl_->executors_now();
  ctx.tools_now = impl_->tools_now();
  ctx.agent_path = "assistant";
  // The `agent` tool's sub-agents: the same provider answers them.
  ctx.subagents = subagent_host(ctx.provider, ctx.inquiry, script, hooks.subagent_observer);
  // The conversation: the one named, else the runtime's own in the store (made on
  // its first turn there, then continued). The program's store may throw.
  {
    std::lock_guard lock(impl_->conversations_mtx);
    ctx.store = hooks.store ? hooks.store : impl_->store;
    ctx.conversation_id = hooks.conversation_id;
    if (ctx.conversation_id.empty()) {
      auto& list = impl_->conversations;
      std::erase_if(list, [](auto& e) { return e.first.expired(); });
      auto same = [&](auto& e) { return !e.first.owner_before(ctx.store) && !ctx.store.owner_before(e.first); };
      if (auto own = std::find_if(list.begin(), list.end(), same); own != list.end())
        ctx.conversation_id = own->second;
      else {
        Result<std::string> id = Error{""};
        try {
          id = ctx.store->create();
        } catch (...) {
          id = Error{fmt::format("the conversation store threw: {}", thrown_text())};
        }
        if (!id)
          return failed_turn(impl_, error_code::store, id.error());
        ctx.conversation_id = *id;
        list.emplace_back(ctx.store, *id);
      }
    }
  }
  // Its turn starts once the conversation's turns before it are over (the next is
  // started as each ends, however it ended).
  auto queued = impl_->queued;
  auto key = std::make_pair(static_cast<const ConversationStore*>(ctx.store.get()), ctx.conversation_id);
  auto next = [queued, key] {
    std::function<void()> start;
    {
      std::lock_guard lock(queued->mtx);
      auto& q = queued->turns[key];
      q.pop_front();
      if (q.empty())
        queued->turns.erase(key);
      else
        start = q.front();
    }
    if (start)
      start();
  };
  auto t = std::make_shared<Turn::Impl>();
  t->rt = impl_;
  t->loop = spawn_turn_loop(*impl_->sys, std::move(ctx));
  impl_->track(t->loop.address());
  auto p = std::make_shared<std::promise<TurnResult>>();
  t->result = p->get_future();
  auto waiter = impl_->sys->spawn([loop = t->loop, prompt = std::move(prompt), p, next](caf::event_based_actor* self) {
    // The loop gone without an answer: dropped before it ran (its run bounced, or it
    // quit as it was asked), or ended otherwise (killed, a bug), which still ends
    // this turn and starts the next: else both waited for good.
    auto unanswered = [self, p, next](const caf::error& why) {
      next();
      if (!why || why == caf::sec::request_receiver_down)
        p->set_value(TurnResult{turn_outcome::interrupted, error_code::interrupted,
                                "its jp::Turn was destroyed before it ran", {}, false});
      else
        p->set_value(TurnResult{turn_outcome::failed, error_code::none,
                                fmt::format("the turn's actor ended without answering ({}): the handles it "
                                            "started went with it; run the turn again",
                                            error_text(why)), {}, false});
      self->quit();
    };
    // Heard only once its run is asked: a loop dropped while queued bounces the run.
    auto asked = std::make_shared<bool>(false);
    self->monitor(loop);
    self->set_down_handler([unanswered, asked](caf::down_msg& down) {
      if (*asked)
        unanswered(down.reason);
    });
    return caf::behavior{[=](run_atom) {
      *asked = true;
      self->request(loop, caf::infinite, run_atom::value, prompt)
        .then(
          [self, p, next](TurnResult& r) {
            next();
            p->set_value(std::move(r));
            self->quit();
          },
          [unanswered](caf::error& err) { unanswered(err); });
    }};
  });
  auto start = [waiter] { caf::anon_send(waiter, run_atom::value); };
  bool first;
  {
    std::lock_guard lock(queued->mtx);
    auto& q = queued->turns[key];
    first = q.empty();
    q.push_back(start);
  }
  if (first)
    start();
  return RuntimeAccess::turn(std::move(t));
}

} // namespace jp
