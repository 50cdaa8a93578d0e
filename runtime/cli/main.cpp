// jp-actors: the command line. Orchestration only: the work is done by the actors.
#include <algorithm>
#include <CLI/CLI.hpp>
#include <caf/all.hpp>
#include <chrono>
#include <charconv>
#include <csignal>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <sys/stat.h>
#include <exception>
#include <system_error>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <fmt/format.h>
#include <iostream>
#include <openssl/crypto.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include "actors/live_loops.hpp"
#include "actors/turn_loop.hpp"
#include "actors/registry_actor.hpp"
#include "actors/turn_actor.hpp"
#include "config/config_loader.hpp"
#include "messages/atoms.hpp"
#include "messages/call_result.hpp"
#include "messages/terminal_safe.hpp"
#include "actors/mcp_tools.hpp"
#include "runtime/cli/command_failure.hpp"
#include "runtime/cli/control_endpoint.hpp"
#include "runtime/cli/handles_command.hpp"
#include "runtime/cli/node_command.hpp"
#include "runtime/cli/mcp_command.hpp"
#include "runtime/cli/nodes_command.hpp"
#include "runtime/cli/query_command.hpp"
#include "runtime/cli/signal_shutdown.hpp"
#include "runtime/cli/workspace_config_note.hpp"
#include "runtime/store/named_file.hpp"
#include "actors/scripted_subagents.hpp"
#include "actors/shared_registry.hpp"
#include "runtime/cli/terminal_hooks.hpp"
#include "runtime/provider/scripted_provider.hpp"
#include "runtime/cli/tty_prompt.hpp"
#include "runtime/version.hpp"
#include "runtime/store/event_log.hpp"
#include "runtime/store/experiment_report.hpp"
#include "runtime/mcp/mcp_start_stop.hpp"
#include "runtime/process/group_record.hpp"
#include "runtime/actor_config.hpp"
#include "runtime/process/io_thread.hpp"
#include "runtime/process/process.hpp"
#include "runtime/process/tool_mark.hpp"
#include "runtime/store/script.hpp"
#include "runtime/store/state_location.hpp"
#include "tools/builtin_tools.hpp"
#include "config/workspace_sets.hpp"
#include "tools/schema.hpp"
#include "tools/describe_tools.hpp"

using namespace jp;

namespace {

// An option given "" (a script's unset variable): refused, not taken as not given.
constexpr const char* kEmptyValue = "needs a value; it was given an empty one";

// SIGINT/SIGTERM/SIGHUP: no child outlives us; each gets TERM and the grace first (SIGQUIT: KILL at once).
void install_signal_handlers(const Config& config) {
  install_signal_shutdown(config.runtime.abort_grace_secs);
  install_crash_cleanup();
}

using actor_config = RuntimeActorConfig;

// An exception unwinding through caf::actor_system would wait for actors that wait
// for children: kill the groups first. Declare it after the actor system.
struct kill_on_unwind {
  ~kill_on_unwind() {
    if (std::uncaught_exceptions() > 0)
      kill_all_process_groups();
  }
};

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

/// The TurnContext of a CLI command: questions and permissions go to the terminal
/// when there is one.
TurnContext turn_context(std::shared_ptr<const Config> config, IoThread& io, PermissionPolicy permissions) {
  bool tty = isatty(STDIN_FILENO) != 0;
  auto ask = [](const std::string& tool, const Question& q) { return tty_ask(tool, q); };
  auto permit = [config](const std::string& tool, const Json& args, const std::string&) {
    return tty_ask_permission(tool, args, -1, workspace_tool_note(*config, tool));
  };
  return TurnContext{std::move(config), &io, tty ? AskUser(ask) : AskUser{}, std::move(permissions),
                     tty ? AskPermission(permit) : AskPermission{}};
}

/// How one run of a script's agents ended: why it failed ("" = it did not), and
/// whether the user interrupted it (then no further repeat runs).
struct RunOutcome {
  std::string error;
  bool interrupted = false;
};

/// One run of a script's agents (all at once).
RunOutcome run_agents(caf::actor_system& sys, std::shared_ptr<const Config> config, IoThread& io,
                       const McpTools& mcp, const Script& script, const std::string& script_path,
                       const std::shared_ptr<EventLog>& log, bool json, const PermissionPolicy& permissions) {
  auto t0 = std::chrono::steady_clock::now();
  caf::scoped_actor self{sys};
  // Scripted calls are the user's own: permissions apply only with --ask, and a
  // tool's question is put to the user only when there is a terminal.
  // Each agent is an assistant of its own: the scripted provider plays its steps
  // through the agent loop, as a real provider would answer.
  // A step's text is part of what happened: the transcript's "step N: TEXT", or a
  // `response` event (as query --json has), never lost to --json.
  auto text = json ? EventLogObserver::text_mode::response_event : EventLogObserver::text_mode::step_line;
  auto subagents = std::make_shared<ScriptedSubAgents>(
    std::make_shared<const Script>(script),
    [log, text, terminal_tools = terminal_tools_of(*config)](const std::string& path) {
      return std::make_shared<EventLogObserver>(log, path, text, terminal_tools);
    });
  // One directory per run: a repeat's agents see only their own run's.
  auto shared = script.shared_registry ? std::make_shared<RegistryDirectory>() : nullptr;
  auto live = std::make_shared<LiveLoops>(); // theirs and their sub-agents', for `handles`
  std::vector<caf::actor> agents;
  for (auto& agent : script.agents) {
    TurnLoopContext ctx;
    ctx.config = config;
    ctx.io = &io;
    ctx.executors = mcp.executors;
    ctx.tools_now = mcp.now;
    ctx.provider = make_scripted_provider(agent);
    ctx.inquiry = make_scripted_inquiry(agent);
    if (isatty(STDIN_FILENO))
      ctx.prompts = std::make_shared<TtyPromptBackend>(log, config);
    ctx.observer = std::make_shared<EventLogObserver>(log, agent.name, text, terminal_tools_of(*config));
    ctx.permissions = permissions;
    ctx.subagents = subagents;
    ctx.agent_path = agent.name;
    ctx.shared_registry = shared;
    ctx.live_loops = live;
    agents.push_back(spawn_turn_loop(sys, std::move(ctx)));
  }
  auto control = start_control_endpoint(sys, live,
                                        ControlHolder{"run", config->workspace, "script " + script_path},
                                        config->runtime.abort_grace_secs + 20);
  // A signal ends the turns at once, interrupted: a script attempts none of its
  // later steps (jp-actors refuses them anyway), and the log says where it stopped.
  StopOnSignal stop([&agents] {
    for (auto& a : agents)
      caf::anon_send(a, stop_atom::value);
  });
  std::vector<decltype(self->request(agents[0], caf::infinite, run_atom::value, std::string()))> replies;
  for (auto& a : agents)
    replies.push_back(self->request(a, caf::infinite, run_atom::value, script.name));
  RunOutcome outcome;
  for (auto& r : replies)
    // Only a failure's sentence ends the run with an error: an interrupted turn exits
    // as a completed one does (the user asked it to stop).
    r.receive(
      [&](TurnResult& t) {
        outcome.interrupted |= t.outcome == turn_outcome::interrupted;
        // Interrupted twice is no failure either: the transcript says what it did.
        if (!t.error.empty() && !(t.outcome == turn_outcome::interrupted && t.code == error_code::interrupted))
          outcome.error = std::move(t.error);
      },
      [&](caf::error& err) { outcome.error = error_text(err); });
  // A sub-agent's missing answer failed its own turn (its parent saw that), and the
  // script with it, as an agent's does.
  if (outcome.error.empty() && !outcome.interrupted)
    outcome.error = subagents->script_error();
  log->run_end(agents.size(), ms_since(t0), live_handle_group_count());
  return outcome;
}

/// The experiment report of the runs so far: a table ending the transcript, and the
/// JSON file --report names.
int report_runs(const ReportBuilder& builder, bool json, const std::string& report_path) {
  auto runs = builder.reports();
  if (runs.empty())
    return 0;
  if (!json)
    std::printf("\nreport:\n%s", shown_on(STDOUT_FILENO, runs_report_table(runs)).c_str());
  if (report_path.empty())
    return 0;
  auto body = runs_report_json(runs);
  std::ofstream out(report_path, std::ios::trunc);
  if (!(out << body.dump() << "\n") || !out.flush())
    return command_failed(fmt::format("cannot write the report to {}: {}", report_path, std::strerror(errno)));
  return 0;
}

/// Why `path` cannot be written ("" it can): an existing file you may write, or a new
/// one in a directory you may write to.
std::string unwritable(const std::string& path) {
  std::error_code ec;
  auto at = std::filesystem::absolute(path, ec);
  if (std::filesystem::exists(at, ec)) {
    if (std::filesystem::is_directory(at, ec))
      return fmt::format("{} is a directory", path);
    return ::access(at.c_str(), W_OK) == 0 ? "" : fmt::format("you may not write {}", path);
  }
  auto dir = at.parent_path();
  if (!std::filesystem::is_directory(dir, ec) || ::access(dir.c_str(), W_OK) != 0)
    return fmt::format("{} is not a directory you may write to", dir.string());
  return "";
}

int run_script(std::shared_ptr<const Config> config, const std::string& path, bool json,
               const PermissionPolicy& permissions, const std::string& report_path) {
  auto script = load_script(path);
  if (!script)
    return command_failed(script.error());
  // Where the report goes is checked before anything runs (a run with a model costs).
  if (!report_path.empty()) {
    if (auto why = unwritable(report_path); !why.empty())
      return command_failed(fmt::format("cannot write the report to {}: {}; nothing was run", report_path, why));
    std::error_code ec;
    if (std::filesystem::equivalent(report_path, path, ec))
      return command_failed(fmt::format("--report {} is the script itself, which the report would replace: name another "
                                        "file; nothing was run",
                                        report_path));
  }
  // Before any MCP server starts (their tools, SERVER__tool, are left to run time).
  if (auto known = check_script_tools(*script, *config, path); !known)
    return command_failed(known.error + "; nothing was run");
  IoThread io{io_poll(config->runtime)};
  install_signal_handlers(*config);
  auto mcp = start_mcp_tools(config, io);
  config = mcp.config;
  actor_config cfg{config->runtime.worker_threads, uses_nodes(*config) ? &config->node : nullptr,
                       client_tls(*config)};
  caf::actor_system sys{cfg};
  kill_on_unwind guard;
  auto log = std::make_shared<EventLog>(stdout, json, isatty(STDOUT_FILENO) != 0);
  // The report is built from the events as they are written: the same as
  // `jp-actors report` rebuilds from the --json log.
  auto builder = std::make_shared<ReportBuilder>();
  log->set_sink([builder](const Json& e) { builder->add(e); });
  RunOutcome outcome;
  int runs = 0;
  while (runs < script->repeat && outcome.error.empty() && !outcome.interrupted) {
    if (!json && script->repeat > 1)
      std::printf("%srun %d of %d\n", runs ? "\n" : "", runs + 1, script->repeat);
    outcome = run_agents(sys, config, io, mcp, *script, path, log, json, permissions);
    ++runs;
  }
  if (shutdown_signal() == SIGQUIT)
    await_signal_shutdown(); // no report: Ctrl-\ writes nothing
  int rc = report_runs(*builder, json, report_path);
  // A repeat stops at a failed run: the report is of the runs made, and says so.
  auto skipped = script->repeat - runs;
  if (!outcome.error.empty())
    return command_failed(skipped == 0 ? outcome.error
                                       : fmt::format("{} (run {} of {}: the {} {} after it {} not started; the report is of {})",
                                                     outcome.error, runs, script->repeat, skipped,
                                                     skipped == 1 ? "run" : "runs", skipped == 1 ? "was" : "were",
                                                     runs == 1 ? "that run" : fmt::format("those {} runs", runs)));
  return rc;
}

/// `jp-actors report FILE`: the report of a --json log or a stored conversation.
int report_file(const std::string& path, bool json) {
  auto fd = open_named_file(path, "the events file itself (the output of `run --json` or `query --json`, or a "
                                  "conversation's events.jsonl)");
  if (!fd)
    return command_failed(fd.error());
  // A line longer than any event (an image's is 11 MiB at most) is no log's.
  constexpr size_t kMaxLine = 64 << 20;
  ReportBuilder builder;
  size_t n = 0;
  // Lines that are no event (a line a crash cut short, a bad sector's), dropped with a
  // warning as the conversation store drops them; a file of nothing else is no log.
  // Each says why; `last`: the file's last line (no newline: it was being written).
  struct Dropped {
    std::string where, why; // "PATH:N", "not JSON (...)"
    bool last = false, unterminated = false, not_json = false;
  };
  std::vector<Dropped> dropped;
  auto refuse = [&](const std::string& why) {
    return command_failed(fmt::format("{}: expected the output of `run --json` or `query --json`, or a "
                                      "conversation's events.jsonl",
                                      why));
  };
  // One line; `cut`: the last, without its newline.
  auto take = [&](std::string_view line, bool cut) {
    ++n;
    if (line.find_first_not_of(" \t\r") == std::string_view::npos)
      return;
    if (!dropped.empty())
      dropped.back().last = false; // a line came after it
    auto e = Json::parse(line);
    if (e && e->is_object() && e->find("event")) {
      builder.add(*e);
      return;
    }
    dropped.push_back({fmt::format("{}:{}", path, n),
                       e ? std::string("not an event (a JSON object with \"event\")")
                         : fmt::format("not JSON ({})", e.error()),
                       true, cut, !e});
  };
  std::string pending;
  char buf[65536];
  for (;;) {
    auto got = ::read(fd->get(), buf, sizeof buf);
    if (got < 0 && errno == EINTR)
      continue;
    if (got < 0)
      return command_failed(fmt::format("{}: cannot read: {}", path, std::strerror(errno)));
    if (got == 0)
      break;
    pending.append(buf, static_cast<size_t>(got));
    size_t from = 0;
    for (size_t nl; (nl = pending.find('\n', from)) != std::string::npos; from = nl + 1)
      take(std::string_view(pending).substr(from, nl - from), false);
    pending.erase(0, from);
    if (pending.size() > kMaxLine)
      return command_failed(fmt::format("{}:{}: a line longer than {} MiB: not an events file (the output of `run --json` "
                                        "or `query --json`, or a conversation's events.jsonl)",
                                        path, n + 1, kMaxLine >> 20));
  }
  if (!pending.empty())
    take(pending, true);
  if (!dropped.empty()) {
    if (builder.reports().empty()) // nothing but such lines: no log at all
      return refuse(dropped.front().where + ": " + dropped.front().why);
    auto say = [&](const Dropped& d) {
      if (d.unterminated)
        std::fprintf(stderr, "jp-actors: warning: %s: dropped the last line: it has no newline, so it was cut short "
                             "while it was written\n",
                     d.where.c_str());
      else
        std::fprintf(stderr, "jp-actors: warning: %s: %s: %s\n", d.where.c_str(), d.why.c_str(),
                     !d.last       ? "dropped; the report leaves it out"
                     : d.not_json ? "dropped the last line (likely cut short by a crash)"
                                  : "dropped the last line");
    };
    // A file of little else says so in a few lines; its last is always said.
    constexpr size_t kSaid = 9;
    if (dropped.size() <= kSaid + 1) {
      for (auto& d : dropped)
        say(d);
    } else {
      for (size_t i = 0; i < kSaid; ++i)
        say(dropped[i]);
      std::fprintf(stderr, "jp-actors: warning: %s: %zu more lines that are no event were dropped\n", path.c_str(),
                   dropped.size() - kSaid - 1);
      say(dropped.back());
    }
  }
  auto runs = builder.reports();
  if (runs.empty())
    return command_failed(fmt::format("{} holds no events", path));
  if (!builder.counted_any())
    return command_failed(fmt::format("{} holds no event a report counts (a turn, a model round, a tool call): expected the "
                                      "output of `run --json` or `query --json`, or a conversation's events.jsonl",
                                      path));
  if (json)
    std::printf("%s\n", runs_report_json(runs).dump().c_str());
  else // its names are a log's: a repository's own events.jsonl may hold escapes
    std::printf("%s", shown_on(STDOUT_FILENO, runs_report_table(runs)).c_str());
  return 0;
}

int call_tool(std::shared_ptr<const Config> config, const std::string& tool, const std::string& args,
              const PermissionPolicy& permissions) {
  // A turn's call without a tool drives a handle by its id (the embedding API's):
  // none lives before this call, and an empty name is no tool.
  if (tool.empty())
    return command_failed(unknown_tool(*config, tool));
  // A call without action runs to its end here: gone on as a handle after
  // background_after_secs, nothing could fetch it, and it would end with the command.
  auto own = std::make_shared<Config>(*config);
  for (auto& [name, t] : own->tools)
    t.background_after_secs = 0;
  config = own;
  IoThread io{io_poll(config->runtime)};
  install_signal_handlers(*config);
  auto mcp = start_mcp_tools(config, io);
  config = mcp.config;
  actor_config cfg{config->runtime.worker_threads, uses_nodes(*config) ? &config->node : nullptr,
                       client_tls(*config)};
  caf::actor_system sys{cfg};
  kill_on_unwind guard;
  caf::scoped_actor self{sys};
  auto context = turn_context(config, io, permissions);
  context.executors = mcp.executors;
  auto turn = spawn_turn(sys, std::move(context));
  // A signal's shutdown ends the tool; the call then says it was interrupted, and the
  // shutdown waits for that (await_signal_shutdown) before it ends the process. The
  // turn aborts its handles first: a tool that is no process here (an MCP server's
  // call, a node's) has its run cancelled where it runs, as an abort does, rather
  // than waiting out the grace while it runs on there.
  StopOnSignal said_first([turn] { caf::anon_send(turn, abort_all_atom::value); });
  CallResult result{false, "no reply"};
  self->request(turn, caf::infinite, call_atom::value, tool, args)
    .receive([&](CallResult& r) { result = std::move(r); },
             [&](caf::error& err) { result = CallResult{false, error_text(err)}; });
  // One process, one turn: whatever the call left running ends with it.
  self->request(turn, caf::infinite, turn_end_atom::value)
    .receive(
      [](std::vector<HandleSummary>& ended, std::string&) {
        // A spawn answered "running", and the handle is gone once this returns:
        // said, so nobody fetches it next and finds nothing. A one-shot call's own
        // run ("#1") is no handle anyone was told of: its failure says it all.
        for (auto& h : ended)
          if (h.outcome != turn_end_outcome::none && !h.id.starts_with('#'))
            std::fprintf(stderr,
                         "jp-actors: note: handle `%s` (%s) was %s as the call ended: a handle lives only as "
                         "long as the command that started it (`run` a script, or `query`, to drive it on)\n",
                         shown_on(STDERR_FILENO, h.id).c_str(), shown_on(STDERR_FILENO, h.tool).c_str(),
                         waited(h.outcome) ? "awaited" : "aborted");
      },
             [](caf::error& err) {
               // The turn is killed next, and its handles with it: say why, and go on.
               std::fprintf(stderr, "jp-actors: ending the call's handles failed: %s\n",
                            error_text(err).c_str());
             });
  self->send_exit(turn, caf::exit_reason::user_shutdown);
  // On a terminal, what the tool printed cannot drive it; a pipe gets it as it came.
  // (A failure's first line goes to stderr through command_failed(), which sees to its own.)
  result.content = shown_on(STDOUT_FILENO, std::move(result.content));
  if (!result.ok) {
    // The first line goes to stderr; the rest (its trace, whether it is transient,
    // the tool's output) to stdout, each once.
    auto nl = result.content.find('\n');
    auto rest = nl == std::string::npos ? nl : result.content.find_first_not_of('\n', nl);
    if (rest != std::string::npos) {
      std::fwrite(result.content.data() + rest, 1, result.content.size() - rest, stdout);
      std::fputc('\n', stdout);
    }
    if (int sig = shutdown_signal())
      return command_failed(fmt::format("{} was interrupted ({}): {}", tool, sig == SIGINT ? "Ctrl-C" : strsignal(sig),
                                        result.content.substr(0, nl)));
    return command_failed(fmt::format("{} failed: {}", tool, result.content.substr(0, nl)));
  }
  std::fwrite(result.content.data(), 1, result.content.size(), stdout);
  if (!result.content.empty() && result.content.back() != '\n')
    std::fputc('\n', stdout);
  return 0;
}

int list_tools(std::shared_ptr<const Config> base, bool schema, const std::string& dialect_name) {
  auto d = parse_dialect(dialect_name);
  if (!d)
    return command_failed(d.error());
  // MCP servers are asked for their tools (and stopped again): a signal stops them
  // too, as it does a call's tools.
  IoThread io{io_poll(base->runtime)};
  install_signal_handlers(*base);
  // The shutdown then waits for what this says of the servers it stopped (until
  // await_signal_shutdown): it ended the process once their groups were reaped,
  // mostly before the line that named them was written. A server still starting is
  // told its start was stopped, before its TERM: that, not the TERM, is why it is
  // not listed.
  McpStartStop starts;
  StopOnSignal said_first([&starts] { starts.stop(); });
  auto mcp = start_mcp_tools(std::move(base), io, {}, &starts);
  auto& config = *mcp.config;
  if (schema) {
    std::printf("%s\n", tool_declarations(config, *d).dump().c_str());
    return 0;
  }
  // Columns as wide as the longest name (an MCP server's are server__tool), up to a
  // bound past which one long name would push every summary off the screen.
  int width = 16;
  for (auto& [name, t] : config.tools)
    width = std::max(width, static_cast<int>(std::min<size_t>(name.size(), 40)));
  // A summary is a repository's or an MCP server's text: on a terminal it cannot drive it.
  for (auto& [name, t] : config.tools) {
    std::string kind = t.stateful ? "stateful" : "one-shot";
    auto source = t.node.empty() ? t.source : "node." + t.node; // runs on that node, as its config has it
    // Listed (a config names it) but not offered: said, or it reads as offered.
    auto summary = !tool_offered(t) ? "(not offered: run = \"skip\") " + t.summary : t.summary;
    std::printf("%-*s %-9s %-8s %s\n", width, name.c_str(), kind.c_str(), source.c_str(),
                shown_on(STDOUT_FILENO, summary).c_str());
  }
  for (auto& why : mcp.unavailable)
    std::printf("(unavailable) %s\n", shown_on(STDOUT_FILENO, why).c_str());
  return 0;
}

/// A thread (or process) the system would not start (EAGAIN): said with the limit
/// that is likely reached, as a person would fix it.
std::string short_of_tasks(const std::system_error& e) {
  rlimit limit{};
  ::getrlimit(RLIMIT_NPROC, &limit);
  std::string what = e.what();
  if (what == e.code().message())
    what = "cannot start a thread: " + what;
  return fmt::format("{}; this user's processes and threads may be at their limit ({}, or a container's pids.max), "
                     "or its memory (ulimit -v): end some, or raise it",
                     what,
                     limit.rlim_cur == RLIM_INFINITY ? std::string("ulimit -u: unlimited")
                                                     : fmt::format("ulimit -u: {}", limit.rlim_cur));
}

/// At exit, after every other handler (registered first): output that could not all
/// be written to a file (a full disk, or past ulimit -f: SIGXFSZ is ignored, and the
/// write fails) is said, and the exit status says so; it was cut off silently. A
/// pipe's reader that left (`| head`) is no failure of ours.
void check_output_written() {
  int failed = std::fflush(stdout) == 0 ? 0 : errno;
  if (!failed && !std::ferror(stdout))
    return;
  struct stat st{};
  if (::fstat(STDOUT_FILENO, &st) != 0 || S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode))
    return;
  std::fprintf(stderr, "jp-actors: its output could not all be written%s%s\n", failed ? ": " : "",
               failed ? std::strerror(failed) : " (a full disk, or a file size limit?)");
  std::_Exit(1);
}

/// A repeatable option that takes one value each time: a vector option would
/// otherwise eat the positionals after it (`--allow asky asky '{}'` lost the tool
/// name), and its help would say `TEXT ...` (as if one could list several).
void repeatable(CLI::Option* option, const std::string& value_name) {
  option->allow_extra_args(false)
    ->expected(1)
    ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
    ->type_name(value_name);
}

/// Whether `word` is one of `app`'s commands.
bool names_command(CLI::App& app, const std::string& word) {
  for (auto* sub : app.get_subcommands({}))
    if (sub->get_name() == word)
      return true;
  return false;
}

/// Opens /dev/null on each of fds 0, 1 and 2 that was closed (`<&- 2>&-`): else the
/// next file opened there (the signal pipe, the record of live groups) took a warning
/// written to stderr as a signal, or into the record.
void open_closed_standard_fds() {
  for (int fd = 0; fd <= 2; ++fd)
    if (::fcntl(fd, F_GETFD) < 0 && errno == EBADF) {
      int null = ::open("/dev/null", O_RDWR); // the lowest free fd: this one
      if (null >= 0 && null != fd) {
        ::dup2(null, fd);
        ::close(null);
      }
    }
}

} // namespace

int main(int argc, char** argv) {
  open_closed_standard_fds(); // before anything opens a file
  // No OpenSSL clean-up at exit: a thread of CAF's (a provider stream's, a node
  // connection's) may still be ending after main returns, and its own per-thread
  // clean-up then freed what the exit-time clean-up had freed already (a double
  // free ASan saw after ctrl-c during a stream). The process is ending anyway.
  OPENSSL_init_crypto(OPENSSL_INIT_NO_ATEXIT, nullptr);
  std::atexit(check_output_written);
  // Tools run as this user: without this, one could read the provider key from
  // /proc/<our pid>/environ or our memory, past the environment tools are given.
  ::prctl(PR_SET_DUMPABLE, 0);
  CLI::App app{"jp-actors: run LLM tools as actors -- spawn, fetch, apply, abort and await them.\n"
               "Configuration: built-in defaults, $XDG_CONFIG_HOME/jp-actors/config.toml,\n"
               "<workspace>/.jp/config.toml, --config FILE, --cfg key=value (later wins)."};
  app.require_subcommand(1);
  app.set_version_flag("--version", version());
  app.fallthrough(); // global options may also follow the subcommand
  ConfigSources sources;
  repeatable(app.add_option("--config", sources.config_files, "Extra TOML config file (repeatable)"), "FILE");
  repeatable(app.add_option("--cfg", sources.overrides,
                            "Config override key=value, e.g. runtime.abort_grace_secs=5 (repeatable)"),
             "KEY=VALUE");
  app.add_option("--workspace", sources.workspace, "Workspace directory (default: current directory)")->type_name("DIR");

  auto* run = app.add_subcommand("run", "Run a scripted experiment (agents, steps, tool calls)");
  std::string script_path;
  bool json = false;
  run->add_option("SCRIPT", script_path, "Script file (TOML), e.g. examples/quickstart.toml")->required()->type_name("FILE");
  run->add_flag("--json", json, "Write one JSON event per line instead of a transcript");
  std::string report_path;
  run->add_option("--report", report_path,
                  "Also write the experiment report (per agent: time, model, tools, calls, handles, tokens, "
                  "errors) to FILE as JSON; a transcript ends with it as a table")
    ->type_name("FILE");

  auto* report = app.add_subcommand("report", "The experiment report of a `run --json` or `query --json` log, or "
                                              "of a conversation's events.jsonl");
  std::string events_path;
  bool report_as_json = false;
  report->add_option("EVENTS", events_path, "The events, one JSON object per line")->required()->type_name("FILE");
  report->add_flag("--json", report_as_json, "Print the report as JSON instead of a table");

  auto* call = app.add_subcommand("call", "Call one tool by hand and print what the assistant would see (a handle "
                                          "it spawns ends with it)");
  std::string tool, args = "{}";
  call->add_option("TOOL", tool, "Tool name (see `jp-actors tools`)")->required()->type_name("NAME");
  call->add_option("JSON_ARGS", args, "Arguments as a JSON object (default {})")->type_name("JSON");

  auto* query = app.add_subcommand("query", "Ask the assistant (assistant.provider) in the active conversation when "
                                            "it is yours (else a new one); its tool calls run here");
  QueryOptions query_options;
  std::string model, provider;
  query->add_option("PROMPT", query_options.prompt, "What to ask")->required();
  auto* fresh = query->add_flag("--new", query_options.new_conversation,
                                 "Start a new conversation (it becomes the active one)");
  query->add_option("--continue", query_options.continue_id,
                    "Continue conversation ID (see `conversations ls`): it becomes the active one. Without it, "
                    "the active conversation is continued only when you started or continued it here")
    ->option_text("ID")
    ->excludes(fresh);
  query->add_option("--model", model, "Model (sets assistant.model)");
  query->add_option("--provider", provider, "scripted, openai or anthropic (sets assistant.provider)");
  query->add_flag("--json", query_options.json, "Write one JSON event per line (as run --json) instead of a transcript");
  repeatable(query->add_option("--allow", query_options.allow, "Let TOOL run without asking (repeatable)"), "TOOL");
  repeatable(query->add_option("--attach", query_options.attach,
                    "Add PATH to the prompt with its path: a file's text, or a directory's listing (repeatable; "
                    "256 KiB in all, 1000 entries a listing; UTF-8 text only, a binary file is refused; a path into the current directory "
                    "or the workspace is not followed out of it, nor out of a repository in it, through a link)"),
             "PATH");

  auto* conversations = app.add_subcommand("conversations", "List or show the conversations of this workspace");
  conversations->require_subcommand(1);
  auto* conversations_ls = conversations->add_subcommand("ls", "One line per conversation; * marks the active one");
  bool conversations_json = false;
  conversations_ls->add_flag("--json", conversations_json,
                             "Print one JSON array: each conversation's id, created, events, first_prompt and active");
  auto* show = conversations->add_subcommand("show", "A conversation as a transcript (or its events with --json)");
  std::string conversation_id;
  bool show_json = false;
  show->add_option("ID", conversation_id, "Conversation id (see `conversations ls`)")->required()->type_name("ID");
  show->add_flag("--json", show_json, "Print its events, one JSON object per line");

  auto* node = app.add_subcommand(
    "node", "Serve this machine's tools to other jp-actors: a client's tool with node = \"NAME\" (and [nodes.NAME] "
            "address) runs here, as this config defines it, in this workspace (the built-in shell too, "
            "unattended, unless its run is \"skip\" here); a tool whose run is \"ask\" or \"skip\", or that the "
            "workspace's .jp/config.toml defines or changes, is refused unless --allow names it (\"skip\" always). On loopback it may run plain, letting in clients that show the node token "
            "($XDG_STATE_HOME/jp-actors/node-token, else ~/.local/state/jp-actors/node-token, made on first start; clients of the same user read it); "
            "another user's connection is closed as it is accepted. "
            "Anywhere else it needs mutual TLS: [node.tls] certificate, key and ca (PEM), and clients whose "
            "[nodes.NAME.tls] certificate that ca signed; a connection refused at the handshake is reported on "
            "stderr with OpenSSL's reason. Each client turn gets one session here; when the client goes (or is "
            "lost), its handles get their turn-end policy (abort unless the tool says otherwise). Settings: "
            "[node] listen, heartbeat_secs (1), timeout_secs (5: a silent peer is lost after it), tls. Runs "
            "until a signal, then ends its tools (TERM, grace, KILL).");
  std::vector<std::string> node_allow;
  repeatable(node->add_option("--allow", node_allow, "Let clients run TOOL though its run is \"ask\", or though the "
                                                     "workspace's .jp/config.toml defines or changes it (repeatable)"),
             "TOOL");
  std::string listen;
  node->add_option("--listen", listen, "HOST:PORT to listen on, or PORT on 127.0.0.1 (default: [node] listen, "
                                       "127.0.0.1:0 = any free port); prints the address it listens on")
    ->type_name("HOST:PORT");
  auto* mcp = app.add_subcommand(
    "mcp", "Serve this workspace's tools to an MCP client over stdio (JSON-RPC 2.0, one message per line), or "
           "over Streamable HTTP on loopback with --listen (MCP "
           "2025-06-18, 2025-03-26 or 2024-11-05; over HTTP 2025-06-18 or 2025-03-26): tools/list offers the configured tools in the flat schema "
           "dialect (not agent and foreach, nor a tool whose run is \"skip\" unless its spawn is let through), plus await when one of them is "
           "stateful, and tools/call runs them here, stateful ones as handles that live for the "
           "session. A tool whose run is \"ask\", and any tool the workspace's .jp/config.toml defines or changes, is asked "
           "about through the client when it offers elicitation (in a session of 2025-06-18), else refused unless --allow names it. When stdin ends, the calls in flight are "
           "answered (an await within the longest spawn.lifecycle.await_timeout_secs of the tools called, 300 s by "
           "default), then each handle still running gets its turn-end policy (abort by default) and jp-actors "
           "exits; SIGTERM ends everything at once");
  std::vector<std::string> mcp_allow;
  repeatable(mcp->add_option("--allow", mcp_allow, "Let TOOL run without asking (repeatable)"), "TOOL");
  std::string mcp_listen;
  mcp->add_option("--listen", mcp_listen,
                  "Serve MCP's Streamable HTTP at http://HOST:PORT/mcp instead of stdio (HOST:PORT, or PORT on "
                  "127.0.0.1; PORT 0 = any free port; loopback only). Prints the address, and where the token "
                  "is that clients must send as `Authorization: Bearer <token>` (made on the first start, 0600). "
                  "Each client's session has its own handles; a client's DELETE ends its session: its calls in "
                  "flight are cancelled, then each handle gets its turn-end policy. Runs until a signal")
    ->type_name("HOST:PORT");
  double mcp_idle_secs = 0;
  mcp->add_option("--session-idle-secs", mcp_idle_secs,
                  "With --listen: a session idle this long (no request, no call a connected client waits on, "
                  "nothing sent) ends as a DELETE would, its handles with it; 0 = never, the default (some clients "
                  "never open a new session when theirs ends). With 64 sessions open, a new one ends the one used "
                  "least recently that has no call in flight. From 0.001 to 604800 (a week)")
    ->default_str("0")
    ->check(CLI::Validator(
      [](std::string& text) -> std::string {
        double secs = 0;
        auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), secs);
        // from_chars reads nan and inf too: no number of seconds. Below a millisecond
        // it would be 0 ms, which is never: that is said with 0.
        return ec == std::errc{} && end == text.data() + text.size() && (secs == 0 || secs >= 0.001) &&
                   secs <= 604800
                 ? std::string()
                 : fmt::format("{} is no number of seconds from 0.001 to 604800 (a week), or 0 (never)", text);
      },
      "")) // its name would show after the type's ("FLOAT:SECS")
    ->type_name("SECS");
  auto* nodes = app.add_subcommand("nodes", "The nodes of your config ([nodes.NAME])");
  nodes->require_subcommand(1);
  auto* nodes_ls = nodes->add_subcommand("ls", "Each configured node, reachable or not, with the handles running "
                                               "on it; exits 1 when one did not answer");
  auto* handles = app.add_subcommand("handles", "The handles that running `query` and `run` processes hold, "
                                                "from another terminal (through their control sockets, in "
                                                "$XDG_RUNTIME_DIR/jp-actors)");
  handles->require_subcommand(1);
  auto* handles_ls = handles->add_subcommand("ls", "Each live handle of this workspace: id, tool, state, elapsed "
                                                   "time, who holds it (pid, command, conversation or script, "
                                                   "agent) and its last output line; exits 1 when a running "
                                                   "jp-actors did not answer (within 5 s)");
  bool handles_all = false;
  bool handles_json = false;
  handles_ls->add_flag("--all", handles_all, "Every workspace's, not only this one's");
  handles_ls->add_flag("--json", handles_json, "One JSON array");
  auto* handles_abort = handles->add_subcommand("abort", "Abort a live handle of this workspace, as the assistant's "
                                                         "abort would (TERM, the grace, KILL); its holder's turn "
                                                         "goes on and hears of it");
  std::string abort_id;
  int64_t abort_pid = 0;
  std::string abort_agent;
  handles_abort->add_option("ID", abort_id, "The handle's id (as `handles ls` shows it)")->required()->type_name("ID");
  handles_abort->add_option("--pid", abort_pid, "The process holding it, when several hold that id")
    ->check(CLI::Validator(
      [](std::string& text) -> std::string {
        if (text.empty())
          return kEmptyValue; // the check of every option's comes after this one
        int64_t pid = 0;
        auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), pid);
        // CLI11 reads 010 as octal: a pid is written without a leading 0.
        return ec == std::errc{} && end == text.data() + text.size() && pid > 0 && text[0] != '0'
                 ? std::string()
                 : fmt::format("{} is no process id (a number from 1 up, as `handles ls` shows it)", text);
      },
      ""))
    ->type_name("PID");
  handles_abort->add_option("--agent", abort_agent, "The agent holding it, as `handles ls` shows it (a "
                                                    "script's main, main/w1; a query's assistant, assistant/w), when "
                                                    "several agents of one process hold that id")
    ->type_name("AGENT");
  auto* tools = app.add_subcommand("tools", "List tools, or print their declarations with --schema; the tools of "
                                            "[mcp.servers.NAME] too (each server is started to be asked), as "
                                            "NAME__tool, and the servers that did not start, with why");
  bool schema = false;
  std::string dialect = "openai";
  // Calls written by the user (a script, `call`) are the user's own: tools' `run =
  // "ask"` applies only with --ask.
  bool ask = false;
  std::vector<std::string> allow;
  for (auto* sub : {run, call}) {
    sub->add_flag("--ask", ask, "Apply the tools' permissions (run = \"ask\" | \"skip\"): ask on the "
                                "terminal, refuse without one");
    repeatable(sub->add_option("--allow", allow, "With --ask: let TOOL run without asking (repeatable)"), "TOOL");
  }
  auto* schema_flag = tools->add_flag("--schema", schema, "Print one JSON array of the tools' declarations as a model is offered them (not a tool whose run is \"skip\", unless its spawn is let through; await only with a stateful tool)");
  tools->add_option("--dialect", dialect, "Schema dialect: openai, anthropic, gemini, mcp or json-schema (oneOf)")
    ->default_str("openai")
    ->needs(schema_flag)
    ->check(CLI::Validator(
      [](std::string& name) {
        auto d = parse_dialect(name);
        return d ? std::string() : d.error(); // a usage error (2), as the others
      },
      ""))
    ->type_name("DIALECT");

  // An option given an empty value ("" from a script's unset variable) was taken as
  // not given: a run writing no report, a server on stdio, the current directory.
  const CLI::Validator not_empty([](std::string& text) { return text.empty() ? std::string(kEmptyValue) : ""; }, "");
  std::function<void(CLI::App*)> refuse_empty = [&](CLI::App* level) {
    for (auto* option : level->get_options([](const CLI::Option* o) { return !o->get_positional(); }))
      if (option->get_type_size() > 0)
        option->check(not_empty);
    for (auto* sub : level->get_subcommands({}))
      refuse_empty(sub);
  };
  refuse_empty(&app);
  // So is a path or an id given empty: it named no file (": cannot read") or no handle.
  for (auto* named : {run->get_option("SCRIPT"), report->get_option("EVENTS"), handles_abort->get_option("ID")})
    named->check(not_empty);

  // A command's --help shows its own options: name the global ones there too.
  std::function<void(CLI::App*)> add_footer = [&](CLI::App* level) {
    for (auto* sub : level->get_subcommands({})) {
      sub->footer("Global options, before or after the command: --config FILE, --cfg key=value, --workspace DIR "
                  "(jp-actors --help)");
      add_footer(sub);
    }
  };
  add_footer(&app);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // A misspelt command comes back as "a subcommand is required": name it, and
    // the commands there are (at the level it was given at).
    if (dynamic_cast<const CLI::RequiredError*>(&e))
      for (auto* level : {&app, app.get_subcommands().empty() ? nullptr : app.get_subcommands().back()}) {
        if (!level || level->get_require_subcommand_min() == 0 || !level->get_subcommands().empty())
          continue;
        auto extra = level->remaining();
        if (extra.empty())
          extra = app.remaining(); // a subcommand's fall through to the top
        if (!extra.empty() && extra.front().starts_with("-"))
          continue;
        std::string names;
        for (auto* s : level->get_subcommands({}))
          names += (names.empty() ? "" : ", ") + s->get_name();
        // A global option given without its value took the command as it (`--config
        // tools`): that is what went wrong, not the command.
        for (auto [option, value_name] : {std::pair{"--config", "FILE"}, {"--cfg", "KEY=VALUE"}, {"--workspace", "DIR"}})
          for (auto& value : level == &app ? app.get_option(option)->results() : std::vector<std::string>{})
            if (names_command(app, value)) {
              std::fprintf(stderr, "jp-actors: %s took `%s` as its %s; give %s its value before the command (jp-actors "
                                   "%s %s %s ...)\n",
                           option, value.c_str(), value_name, option, option, value_name, value.c_str());
              return 2;
            }
        auto what = extra.empty() ? std::string("a command is required")
                                  : fmt::format("unknown command `{}`", extra.front());
        std::fprintf(stderr, "jp-actors: %s%s%s; expected one of: %s (see --help)\n", what.c_str(),
                     level == &app ? "" : " for ", level == &app ? "" : level->get_name().c_str(), names.c_str());
        return 2;
      }
    // An option of a command given before it (`--provider x query`): say where it goes,
    // naming the command typed when it is one of its options. After the command
    // typed, it is not one of its options at all. An unknown option that took the
    // place of an argument (`query "-x is broken"`) is named too, not the argument.
    if (dynamic_cast<const CLI::ExtrasError*>(&e) || dynamic_cast<const CLI::RequiredError*>(&e)) {
      std::vector<CLI::App*> typed; // the command typed: `nodes`, then `ls`
      for (auto* at = &app; !at->get_subcommands().empty();)
        typed.push_back(at = at->get_subcommands().back());
      std::string typed_name;
      for (auto* c : typed)
        typed_name += (typed_name.empty() ? "" : " ") + c->get_name();
      auto at_arg = [&](const std::string& word) { return std::find(argv + 1, argv + argc, word) - argv; };
      auto command_at = typed.empty() ? argc : at_arg(typed.front()->get_name());
      for (auto& extra : app.remaining()) {
        auto name = extra.substr(0, extra.find(extra.starts_with("--") ? '=' : ' '));
        if (!extra.starts_with("-") || extra == "-" || app.get_option_no_throw(name))
          continue;
        if (at_arg(extra) > command_at) {
          // An argument of its that starts with `-` (a prompt: words) goes after `--`.
          bool takes_arguments = extra.find(' ') != std::string::npos &&
                                 !typed.back()->get_options([](const CLI::Option* o) { return o->get_positional(); })
                                    .empty();
          std::fprintf(stderr, "jp-actors: `%s` has no option %s (jp-actors %s --help lists its options)%s\n",
                       typed_name.c_str(), name.c_str(), typed_name.c_str(),
                       takes_arguments ? fmt::format("; an argument that starts with - goes after --: jp-actors {} "
                                                     "-- '{}'",
                                                     typed_name, extra)
                                           .c_str()
                                       : "");
          return 2;
        }
        // Whose option it is, the shallowest command first (`--pid` is `handles abort`'s).
        auto owner = !typed.empty() && typed.back()->get_option_no_throw(name) ? typed_name : std::string();
        std::vector<std::pair<CLI::App*, std::string>> level{{&app, ""}};
        while (owner.empty() && !level.empty()) {
          std::vector<std::pair<CLI::App*, std::string>> next;
          for (auto& [at, path] : level)
            for (auto* sub : at->get_subcommands({})) {
              auto sub_path = path.empty() ? sub->get_name() : path + " " + sub->get_name();
              if (owner.empty() && sub->get_option_no_throw(name))
                owner = sub_path;
              next.emplace_back(sub, sub_path);
            }
          level = std::move(next);
        }
        if (!owner.empty()) {
          std::fprintf(stderr, "jp-actors: %s is an option of `%s`: give it after the command (jp-actors %s %s "
                               "...)\n",
                       name.c_str(), owner.c_str(), owner.c_str(), name.c_str());
          return 2;
        }
        std::fprintf(stderr, "jp-actors: no command has an option %s (jp-actors --help lists the options before "
                             "a command)\n",
                     name.c_str());
        return 2;
      }
    }
    // A usage error exits 2, as the misspelt command above (CLI11's own codes, 106
    // to 115, say nothing to a script); --help and --version still exit 0.
    return app.exit(e) == 0 ? 0 : 2;
  }
  if (!model.empty())
    sources.overrides.push_back("assistant.model=" + model);
  if (!provider.empty())
    sources.overrides.push_back("assistant.provider=" + provider);

  auto loaded = load_config(sources, default_config());
  if (!loaded) {
    // --provider and --model come as overrides: the error names the option given.
    auto why = loaded.error();
    for (auto [flag, key, value] : {std::tuple{"--provider", "assistant.provider", &provider},
                                    std::tuple{"--model", "assistant.model", &model}})
      if (auto as = fmt::format("--cfg {}={}", key, *value); !value->empty() && why.starts_with(as))
        why.replace(0, as.size(), fmt::format("{} {}", flag, *value));
    return command_failed(why);
  }
  if (*run || *call || *query || *conversations) {
    // A read-only workspace still runs: its state goes where it can be written.
    auto where = choose_state_location(*loaded);
    if (!where.note.empty())
      std::fprintf(stderr, "jp-actors: note: %s\n", where.note.c_str());
    if (!where.dir.empty())
      loaded->runtime.state_dir = where.dir;
    query_options.keep_conversation = !where.dir.empty();
  }
  auto config = std::make_shared<const Config>(std::move(*loaded));
  // Options that only mean something with another, or name a tool: said, not ignored.
  if (!allow.empty() && !ask && (*run || *call))
    return command_failed(fmt::format("--allow {} applies with --ask (the tools' permissions); without --ask every tool "
                                      "runs unasked: add --ask, or leave --allow out",
                                      allow.front()));
  if (mcp->count("--session-idle-secs") > 0 && mcp_listen.empty() && *mcp)
    return command_failed("--session-idle-secs applies with --listen (sessions over HTTP); over stdio the session ends "
                          "with stdin");
  // An MCP server's tools (NAME__tool) are known once it started: its name will do.
  auto of_mcp_server = [&](const std::string& name) {
    auto sep = name.find("__");
    return sep != std::string::npos && config->mcp_servers.count(name.substr(0, sep));
  };
  for (auto* names : {&allow, &query_options.allow, &mcp_allow, &node_allow}) {
    // `mcp` names only the tools it serves.
    auto offered = [&](const ToolConfig& t) { return names != &mcp_allow || mcp_serves(t); };
    for (auto& name : *names)
      if (auto t = config->tools.find(name); (t == config->tools.end() || !offered(t->second)) && !of_mcp_server(name)) {
        std::string known;
        for (auto& [n, each] : config->tools)
          if (offered(each))
            known += (known.empty() ? "" : ", ") + n;
        return command_failed(fmt::format("--allow {}: no such tool (the tools: {})", name, known));
      }
  }
  if (uses_nodes(*config))
    if (auto why = check_node_tls(*config); !why.empty())
      return command_failed(why);
  // A jp-actors that was killed (SIGKILL, a crash) could not clean up: do it now.
  // The record is the user's own state, never the workspace's (a repository could
  // plant one there).
  auto live_dir = crash_record_dir();
  if (live_dir)
    if (auto swept = sweep_group_records(*live_dir).summary(); !swept.empty())
      std::fprintf(stderr, "jp-actors: %s\n", swept.c_str());
  // Where a person reads stderr (an MCP client's goes to its log; a node's is the
  // terminal it was started from, or a service's log).
  if (*run || *call || *query || *node)
    note_workspace_config(*config);
  if (*run || *call || *query || *node || *mcp || (*tools && !config->mcp_servers.empty())) {
    // Without the record the run goes on; only a crash's cleanup is lost.
    auto recorded = live_dir ? open_group_record(*live_dir) : Status{Error{live_dir.error()}};
    if (!recorded)
      std::fprintf(stderr, "jp-actors: note: %s: the processes of this run cannot be cleaned up by the next "
                           "start if it crashes\n", recorded.error.c_str());
  }
  // Every child of the CLI is a tool's: what left one and was handed to us is
  // ours to reap, in our own session too (where tools stay without a terminal).
  reap_orphans_in_own_session(true);
  int rc = 0;
  try {
    PermissionPolicy permissions{ask, {allow.begin(), allow.end()}};
    if (*run)
      rc = run_script(config, script_path, json, permissions, report_path);
    else if (*report)
      rc = report_file(events_path, report_as_json);
    else if (*call)
      rc = call_tool(config, tool, args, permissions);
    else if (*node)
      rc = run_node(config, listen, {node_allow.begin(), node_allow.end()});
    else if (*mcp)
      rc = run_mcp(config, PermissionPolicy{true, {mcp_allow.begin(), mcp_allow.end()}}, mcp_listen, mcp_idle_secs);
    else if (*nodes_ls)
      rc = list_nodes(config);
    else if (*handles_ls)
      rc = list_live_handles(*config, handles_all, handles_json);
    else if (*handles_abort)
      rc = abort_live_handle(*config, abort_id, abort_pid, abort_agent);
    else if (*query) {
      install_signal_handlers(*config); // SIGINT: the query's own (first ends the turn, second aborts)
      rc = run_query(config, query_options);
    } else if (*show)
      rc = show_conversation(*config, conversation_id, show_json);
    else if (*conversations)
      rc = list_conversations(*config, conversations_json);
    else
      rc = list_tools(config, schema, dialect);
  } catch (const std::system_error& e) {
    kill_all_process_groups();
    rc = command_failed(e.code() == std::errc::resource_unavailable_try_again ? short_of_tasks(e) : e.what());
  } catch (const std::exception& e) {
    kill_all_process_groups();
    rc = command_failed(e.what());
  }
  await_signal_shutdown(); // a signal's shutdown ends the process with that signal
  kill_escaped_processes(); // what left its tool's group: setsid, double forks, jobs
  close_group_record(); // every group ended with the io thread
  return rc;
}
