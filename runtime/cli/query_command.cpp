#include "runtime/cli/query_command.hpp"
#include "tools/permission.hpp"

#include "actors/live_loops.hpp"
#include "actors/mcp_tools.hpp"
#include "actors/provider_subagents.hpp"

#include <atomic>
#include <csignal>
#include <caf/all.hpp>
#include <chrono>
#include <csignal>
#include <fcntl.h>
#include <filesystem>
#include <fmt/format.h>
#include <thread>
#include <unistd.h>

#include "actors/registry_actor.hpp"
#include "actors/turn_loop.hpp"
#include "messages/blank.hpp"
#include "messages/atoms.hpp"
#include "messages/conversation_event_codec.hpp"
#include "messages/terminal_safe.hpp"
#include "runtime/actor_config.hpp"
#include "runtime/attachments.hpp"
#include "runtime/cli/command_failure.hpp"
#include "runtime/cli/control_endpoint.hpp"
#include "runtime/cli/terminal_hooks.hpp"
#include "runtime/cli/signal_shutdown.hpp"
#include "runtime/store/conversation_store.hpp"
#include "runtime/store/event_log.hpp"
#include "runtime/store/own_conversations.hpp"
#include "runtime/process/io_thread.hpp"
#include "runtime/process/process.hpp"
#include "runtime/provider/assistant.hpp"
#include "runtime/store/script.hpp"
#include "tools/protocol_guidance.hpp"

namespace jp {

namespace {

// -- Ctrl-C: the first stops the turn cleanly (on a terminal: opens the interrupt
// menu, drawn by TtyPromptBackend), a second within 2 s aborts everything.

int g_signal_pipe[2] = {-1, -1};

void on_sigint(int) {
  char c = 'i';
  (void)!::write(g_signal_pipe[1], &c, 1);
}

/// Turns SIGINTs into messages to the loop, off the signal handler.
class InterruptWatch {
public:
  /// `menu`: the loop asks the person what the interrupt means (it says so itself).
  InterruptWatch(caf::actor loop, bool menu) {
    if (::pipe2(g_signal_pipe, O_CLOEXEC) != 0)
      return;
    thread_ = std::thread([loop, menu] {
      auto last = std::chrono::steady_clock::time_point{};
      char c;
      while (::read(g_signal_pipe[0], &c, 1) == 1 && c == 'i') {
        auto now = std::chrono::steady_clock::now();
        bool twice = last != std::chrono::steady_clock::time_point{} && now - last < std::chrono::seconds(2);
        last = now;
        if (twice) {
          std::fputs("\njp-actors: interrupted again: aborting every handle\n", stderr);
          caf::anon_send(loop, quit_atom::value);
        } else {
          if (!menu)
            std::fputs("\njp-actors: interrupted: ending the turn (Ctrl-C again within 2 s aborts everything)\n",
                       stderr);
          caf::anon_send(loop, interrupt_atom::value);
        }
      }
    });
    previous_ = std::signal(SIGINT, on_sigint);
  }
  ~InterruptWatch() {
    if (!thread_.joinable())
      return;
    std::signal(SIGINT, previous_);
    char c = 'q';
    (void)!::write(g_signal_pipe[1], &c, 1);
    thread_.join();
    ::close(g_signal_pipe[0]);
    ::close(g_signal_pipe[1]);
  }

private:
  std::thread thread_;
  void (*previous_)(int) = SIG_DFL;
};

/// The conversation this query continues: --continue's; else the active one when it
/// is the user's own (`root`: the file store's; "" for one in memory, all its own);
/// else a new one (--new: always new). It becomes the active one, and the user's own.
Result<std::string> conversation_for(ConversationStore& store, const std::string& root, const QueryOptions& options) {
  // A repository may hold any `active` (a link, a FIFO, a directory, junk): no reason
  // not to start, and no conversation of its to continue.
  auto active = store.active();
  if (!active) {
    std::fprintf(stderr, "jp-actors: note: %s: a new conversation is started\n", active.error().c_str());
    active = std::string();
  }
  std::string id = options.continue_id;
  bool recorded = root.empty(); // the user's own already (the record read once)
  if (id.empty() && !options.new_conversation && !active->empty()) {
    if (recorded || own_conversation(root, *active)) {
      id = *active;
      recorded = true;
    } else
      std::fprintf(stderr,
                   "jp-actors: note: this workspace's active conversation %s is not recorded as yours (it was "
                   "started before jp-actors kept that record, or a repository committed it, or the record in "
                   "your state directory could not be read), and its turns would be taken as yours: a new "
                   "conversation is started; `jp-actors conversations show %s` shows it, `jp-actors query "
                   "--continue %s \"...\"` continues it\n",
                   active->c_str(), active->c_str(), active->c_str());
  }
  if (id.empty()) {
    auto made = store.create();
    if (!made)
      return made;
    id = *made;
  }
  if (id != *active)
    if (auto s = store.set_active(id); !s)
      std::fprintf(stderr, "jp-actors: warning: %s: the next query starts a new conversation\n", s.error.c_str());
  if (!recorded)
    if (auto s = remember_own_conversation(root, id); !s)
      std::fprintf(stderr, "jp-actors: warning: %s: the next query starts a new conversation\n", s.error.c_str());
  return id;
}

std::string one_line(std::string s, size_t max) {
  for (auto& c : s)
    if (c == '\n' || c == '\r' || c == '\t')
      c = ' ';
  return cut_text(s, max); // at a character (a byte's cut showed as U+FFFD)
}

} // namespace

int run_query(std::shared_ptr<const Config> config, const QueryOptions& options) {
  if (is_blank(options.prompt))
    return command_failed("the prompt is empty: say what to ask, e.g. jp-actors query \"run the tests\"");
  {
    auto asking = std::make_shared<Config>(*config);
    workspace_tools_ask(*asking, {options.allow.begin(), options.allow.end()});
    config = std::move(asking);
  }
  auto prompt = prompt_with_attachments(options.prompt, options.attach, config->workspace);
  if (!prompt)
    return command_failed(prompt.error());
  auto assistant = make_assistant(*config);
  if (!assistant)
    return command_failed(assistant.error());
  std::shared_ptr<ConversationStore> store;
  std::shared_ptr<FileConversationStore> files;
  if (options.keep_conversation)
    store = files = std::make_shared<FileConversationStore>(state_path(*config, "conversations"), config->workspace);
  else
    store = std::make_shared<MemoryConversationStore>();
  // --continue of none there: one error, before anything is marked active.
  if (files && !options.continue_id.empty())
    if (auto there = files->known(options.continue_id); !there)
      return command_failed(there.error);
  auto id = conversation_for(*store, files ? files->root() : std::string(), options);
  if (!id)
    return command_failed(id.error());
  // One query at a time continues a conversation (held until this returns).
  ConversationHold held;
  if (files) {
    auto hold = files->hold(*id);
    if (!hold)
      return command_failed(hold.error());
    held = std::move(*hold);
  }
  IoThread io{io_poll(config->runtime)};
  auto mcp = start_mcp_tools(config, io);
  config = mcp.config;
  RuntimeActorConfig cfg{config->runtime.worker_threads, uses_nodes(*config) ? &config->node : nullptr,
                       client_tls(*config)};
  caf::actor_system sys{cfg};
  bool tty = isatty(STDOUT_FILENO) != 0;
  auto log = std::make_shared<EventLog>(stdout, options.json, tty);
  TurnLoopContext ctx;
  ctx.config = config;
  ctx.io = &io;
  ctx.executors = mcp.executors;
  ctx.tools_now = mcp.now;
  ctx.provider = assistant->provider;
  ctx.tool_dialect = assistant->tool_dialect;
  ctx.model = config->assistant.model;
  ctx.system_prompt = system_prompt_with_guidance(*config);
  ctx.max_tokens = config->assistant.max_tokens;
  ctx.store = store;
  ctx.conversation_id = *id;
  if (!options.json)
    ctx.renderer = answer_renderer(stdout, config->style);
  if (isatty(STDIN_FILENO))
    ctx.prompts = std::make_shared<TtyPromptBackend>(log, config);
  ctx.inquiry = assistant->inquiry;
  auto text = options.json ? EventLogObserver::text_mode::response_event : EventLogObserver::text_mode::none;
  // On a terminal the calls are shown by the per-tool views; a pipe gets the transcript.
  bool views = tty && !options.json;
  auto terminal_tools = terminal_tools_of(*config);
  ctx.observer = std::make_shared<EventLogObserver>(log, "assistant", text, terminal_tools, views);
  // A sub-agent's text has no renderer: the transcript shows it as a script's step.
  auto sub_text = options.json ? text : EventLogObserver::text_mode::step_line;
  ctx.subagents = subagent_host(assistant->provider, assistant->inquiry, assistant->script,
                                [log, sub_text, terminal_tools, views](const std::string& path) {
                                  return std::make_shared<EventLogObserver>(log, path, sub_text, terminal_tools, views);
                                });
  ctx.agent_path = "assistant";
  // The assistant's calls are not the user's: tools' permissions apply.
  ctx.permissions = PermissionPolicy{true, {options.allow.begin(), options.allow.end()}};
  auto t0 = std::chrono::steady_clock::now();
  auto live = std::make_shared<LiveLoops>(); // its and its sub-agents', for `handles`
  ctx.live_loops = live;
  auto loop = spawn_turn_loop(sys, ctx);
  auto control = start_control_endpoint(sys, live,
                                        ControlHolder{"query", config->workspace, "conversation " + *id},
                                        config->runtime.abort_grace_secs + 20);
  std::string error;
  bool interrupted = false;
  {
    // SIGTERM or SIGHUP ends the turn at once, as in `run`: no request is made with
    // the results of the tools the signal ended.
    StopOnSignal stop([loop] { caf::anon_send(loop, stop_atom::value); });
    InterruptWatch watch(loop, ctx.prompts != nullptr);
    caf::scoped_actor self{sys};
    self->request(loop, caf::infinite, run_atom::value, *prompt)
      .receive(
        [&](TurnResult& t) {
          interrupted = t.outcome == turn_outcome::interrupted;
          // Interrupted twice is no failure: the transcript says what it did.
          if (!interrupted || t.code != error_code::interrupted)
            error = std::move(t.error);
        },
        [&](caf::error& e) { error = error_text(e); });
  }
  if (options.json)
    log->run_end(1, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count(),
                 live_handle_group_count());
  if (!error.empty())
    return command_failed(error);
  // A turn the user ended (Ctrl-C, the menu's stop) exits as an interrupted command
  // does, for a script to tell; its answer so far is stored all the same.
  return interrupted ? 128 + SIGINT : 0;
}

int list_conversations(const Config& config, bool json) {
  FileConversationStore store(state_path(config, "conversations"), config.workspace);
  auto list = store.list();
  if (!list)
    return command_failed(list.error());
  if (json) { // one array, as `handles ls --json` prints (the prompt as the line shows it)
    auto rows = Json::array();
    for (auto& c : *list)
      rows.push(Json::object()
                  .set("id", c.id)
                  .set("created", c.created)
                  .set("events", static_cast<int64_t>(c.events))
                  .set("first_prompt", c.first_prompt)
                  .set("active", c.active));
    std::printf("%s\n", rows.dump().c_str());
    return 0;
  }
  if (list->empty()) {
    std::printf("no conversations yet: `jp-actors query \"...\"` starts one\n");
    return 0;
  }
  for (auto& c : *list)
    std::printf("%s %s  %-24s %5zu events  %s\n", c.active ? "*" : " ", c.id.c_str(),
                shown_on(STDOUT_FILENO, c.created).c_str(), c.events,
                shown_on(STDOUT_FILENO, one_line(c.first_prompt, 60)).c_str());
  return 0;
}

int show_conversation(const Config& config, const std::string& id, bool json) {
  FileConversationStore store(state_path(config, "conversations"), config.workspace);
  auto loaded = store.read_events(id); // a transcript: images as their files' names, not their data
  if (!loaded)
    return command_failed(loaded.error());
  for (auto& w : loaded->warnings)
    std::fprintf(stderr, "jp-actors: warning: %s\n", shown_on(STDERR_FILENO, w).c_str());
  for (auto& e : loaded->events) {
    if (json) {
      std::printf("%s\n", e.dump().c_str());
      continue;
    }
    auto event = conversation_event_from(e);
    if (!event)
      continue; // of a kind this version does not know: only --json shows it
    // A sub-agent's events are shown under its path.
    std::string who;
    if (auto* agent = e.find("agent"); agent && agent->is_string())
      who = "[" + agent->as_string() + "] ";
    // On a terminal, what a model or a tool wrote cannot drive it.
    auto show = [](std::string line) {
      auto text = shown_on(STDOUT_FILENO, std::move(line));
      std::fwrite(text.data(), 1, text.size(), stdout);
    };
    if (auto* start = std::get_if<TurnStartEvent>(&*event))
      show(fmt::format("\n{}> {}\n", who, start->prompt));
    else if (auto* reply = std::get_if<UserReplyEvent>(&*event))
      show(fmt::format("{}> (interrupting) {}\n", who, reply->text));
    else if (auto* response = std::get_if<ChatResponseEvent>(&*event); response && !response->text.empty())
      show(fmt::format("{}{}\n", who, response->text));
    else if (auto* request = std::get_if<ToolCallRequestEvent>(&*event))
      show(fmt::format("{}→ {} {}\n", who, request->call.name, one_line(request->call.arguments, 200)));
    else if (auto* result = std::get_if<ToolCallResponseEvent>(&*event)) {
      // As the live transcript shows it: its lines kept (they were run together).
      // (An older record's result has no tool name: none is shown.)
      auto label = result->name + (result->ok ? "" : result->name.empty() ? "(failed)" : " (failed)");
      show(fmt::format("{}← {}{}\n", who, label.empty() ? "" : label + ": ", transcript_result(result->content)));
    } else if (auto* note = std::get_if<SystemNotificationEvent>(&*event))
      show(fmt::format("{}[{}] {}\n", who, note->notification.level, note->notification.message));
    else if (auto* end = std::get_if<TurnEndEvent>(&*event); end && !end->error.empty())
      show(fmt::format("{}(turn ended: {})\n", who, end->error));
  }
  return 0;
}

} // namespace jp
