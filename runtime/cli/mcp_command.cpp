#include "runtime/cli/mcp_command.hpp"

#include <caf/all.hpp>
#include <cstdio>
#include <fmt/format.h>
#include <future>
#include <algorithm>
#include <cerrno>
#include <mutex>
#include <optional>
#include <poll.h>
#include <string>
#include <sys/eventfd.h>
#include <thread>
#include <unistd.h>

#include "actors/mcp_server.hpp"
#include "actors/mcp_tools.hpp"
#include "actors/tools_starting.hpp"
#include "actors/turn_actor.hpp"
#include "messages/error_category.hpp"
#include "messages/terminal_safe.hpp"
#include "runtime/actor_config.hpp"
#include "runtime/cli/command_failure.hpp"
#include "runtime/cli/signal_shutdown.hpp"
#include "runtime/cli/stdout_lines.hpp"
#include "runtime/mcp/mcp_http_server.hpp"
#include "runtime/mcp/mcp_start_stop.hpp"
#include "runtime/text_nocase.hpp"
#include "runtime/mcp/mcp_protocol.hpp"
#include "runtime/node/node_address.hpp"
#include "runtime/node/node_token.hpp"
#include "runtime/process/io_thread.hpp"
#include "tools/builtin_tools.hpp"

namespace jp {

namespace {

int fail(const std::string& reason) {
  return command_failed(reason, "mcp");
}

/// Ends a session: its calls in flight are answered, then what still runs gets its
/// turn-end policy; then the server goes (and its turn with it), and `done` runs.
void end_session(caf::actor_system& sys, mcp_server_actor server, std::function<void()> done) {
  sys.spawn([server, done](caf::event_based_actor* self) {
    auto finish = [self, server, done] {
      caf::anon_send_exit(server, caf::exit_reason::user_shutdown);
      done();
      self->quit();
    };
    self->request(server, caf::infinite, turn_end_atom::value)
      .then([finish](std::vector<HandleSummary>&, std::string&) { finish(); },
            [finish](caf::error& err) {
              std::fprintf(stderr, "jp-actors: mcp: ending a session's handles failed: %s\n", error_text(err).c_str());
              finish();
            });
  });
}

/// Streamable HTTP on loopback until a signal.
int serve_http(caf::actor_system& sys, IoThread& io, const std::string& listen, double idle_secs,
               std::function<mcp_server_actor(McpWriter)> spawn_session) {
  auto addr = parse_listen_address(listen, "--listen");
  if (!addr)
    return fail(addr.error());
  auto token = mcp_token(true);
  if (!token)
    return fail(token.error());
  auto opener = [&sys, spawn_session](McpWriter write) {
    auto server = spawn_session(std::move(write));
    McpSessionPort port;
    port.deliver = [server](const std::string& message) { caf::anon_send(server, message_atom::value, message); };
    port.end = [&sys, server](std::function<void()> done) { end_session(sys, server, std::move(done)); };
    return port;
  };
  auto http = McpHttpServer::listen(io, addr->host, addr->port, *token, opener,
                                    std::chrono::milliseconds(static_cast<int64_t>(idle_secs * 1000)));
  if (!http)
    return fail(http.error());
  addr->port = (*http)->port();
  // localhost is served on 127.0.0.1 alone: its URL says so (a client resolving
  // localhost to ::1 first would find nobody there).
  if (equals_nocase(addr->host, "localhost"))
    addr->host = "127.0.0.1";
  std::printf("jp-actors mcp: serving MCP (Streamable HTTP) at http://%s/mcp; clients send the header "
              "`Authorization: Bearer <token>` with the token in %s\n",
              addr->text().c_str(), mcp_token_path().c_str());
  std::fflush(stdout);
  // Until a signal: its shutdown ends the tools (TERM, grace, KILL), then the process.
  for (;;)
    ::pause();
}

/// stdout, polled for its reader going away (a pipe's, a socket's or a terminal's other
/// end closed; a file's never goes): no events asked, so poll says only its error or
/// hang-up (reader_gone).
constexpr pollfd stdout_watched{STDOUT_FILENO, 0, 0};
bool reader_gone(const pollfd& polled) {
  return polled.revents & (POLLERR | POLLHUP);
}

/// The client's messages: stdin's lines, read from its descriptor (a buffer of our
/// own, so that waiting for more also sees stdout's reader go away).
class InputLines {
public:
  /// Reads the next line into `line`, whole when it has at most `max` bytes; of a
  /// longer one only the first `max` are kept, the rest read past. Its length, or
  /// none at the end of stdin or once stdout's reader has gone (output_gone()).
  std::optional<size_t> next(std::string& line, size_t max) {
    line.clear();
    size_t n = 0;
    for (;;) {
      if (pos_ == buf_.size() && (ended_ || !fill()))
        return n > 0 && !gone_ ? std::optional<size_t>(n) : std::nullopt;
      auto end = buf_.find('\n', pos_);
      auto take = (end == std::string::npos ? buf_.size() : end) - pos_;
      if (n < max)
        line.append(buf_, pos_, std::min(take, max - n));
      n += take;
      pos_ += take;
      if (end != std::string::npos) {
        ++pos_;
        return n;
      }
    }
  }
  /// Whether stdout's reader went away (reader_gone): no answer can reach the client.
  bool output_gone() const { return gone_; }

private:
  bool fill() {
    buf_.clear();
    pos_ = 0;
    pollfd fds[2] = {{STDIN_FILENO, POLLIN, 0}, stdout_watched};
    while (::poll(fds, 2, -1) < 0 && errno == EINTR) {
    }
    bool output_gone = reader_gone(fds[1]);
    // A client that ends closes both: its stdin's end read first is an end, not a
    // reader gone (what it still sent is read on, and then dropped below).
    if (output_gone && !(fds[0].revents & (POLLIN | POLLHUP))) {
      gone_ = true;
      return false;
    }
    buf_.resize(64 * 1024);
    ssize_t got;
    while ((got = ::read(STDIN_FILENO, buf_.data(), buf_.size())) < 0 && errno == EINTR) {
    }
    buf_.resize(got > 0 ? size_t(got) : 0);
    ended_ = got <= 0; // remembered: a terminal's Ctrl-D is read once
    if (output_gone && got > 0) { // requests no answer of could reach
      buf_.clear();
      gone_ = true;
      return false;
    }
    return got > 0;
  }
  std::string buf_;
  size_t pos_ = 0;
  bool gone_ = false;
  bool ended_ = false;
};

/// Calls `gone` once the reader of stdout has gone (reader_gone), until destroyed.
class StdoutReaderWatch {
public:
  explicit StdoutReaderWatch(std::function<void()> gone) : wake_(::eventfd(0, EFD_CLOEXEC)) {
    thread_ = std::thread([this, gone = std::move(gone)] {
      pollfd fds[2] = {stdout_watched, {wake_, POLLIN, 0}};
      while (::poll(fds, 2, -1) < 0 && errno == EINTR) {
      }
      if (reader_gone(fds[0]))
        gone();
    });
  }
  ~StdoutReaderWatch() {
    uint64_t one = 1;
    [[maybe_unused]] auto n = ::write(wake_, &one, sizeof one);
    thread_.join();
    ::close(wake_);
  }
  StdoutReaderWatch(const StdoutReaderWatch&) = delete;
  StdoutReaderWatch& operator=(const StdoutReaderWatch&) = delete;

private:
  int wake_;
  std::thread thread_;
};

/// One session over stdin and stdout, until stdin ends. stdout is the protocol's:
/// one message per line, whole, in the order sent (`out`, which outlives the actors).
int serve_stdio(caf::actor_system& sys, std::function<mcp_server_actor(McpWriter)> spawn_session,
                StdoutLines& out) {
  auto server = spawn_session([&out](const std::string& line, const std::string&) { out.push(line); });
  // Read from the descriptor, not std::cin: its tie to std::cout flushed stdout
  // before each read, and `out`'s thread may be blocked writing to a client slow to
  // read, holding stdout's lock (the requests after it went unread).
  InputLines input;
  // A client that stops reading our answers gets its next requests read once it reads
  // again: what it leaves unread stays bounded (by this, and what one answer may hold).
  constexpr size_t kUnreadLimit = 16u << 20;
  std::string line;
  for (;;) {
    out.wait_room(kUnreadLimit);
    auto length = input.next(line, mcp::message_max);
    if (!length) {
      // A client that closed our stdout reads no answer: the session ends as at the
      // end of its input, its calls cancelled (they ran blind until its stdin ended).
      if (input.output_gone())
        std::fprintf(stderr, "jp-actors: mcp: the client closed our stdout, so no answer can reach it: its "
                             "calls are cancelled and the session ends\n");
      break;
    }
    if (*length > mcp::message_max) // refused unparsed, so its id is unknown
      out.push(mcp::error_response(Json(), mcp::invalid_request,
                                   fmt::format("a message may have at most {} MiB; one of {} bytes was not read",
                                               mcp::message_max >> 20, *length))
                 .dump());
    else if (line.find_first_not_of(" \t\r") != std::string::npos)
      caf::anon_send(server, message_atom::value, line);
  }
  // The session is over: what still runs gets its turn-end policy, once the calls in
  // flight are answered. A client that closed our stdout too reads no answer: its
  // calls are cancelled then, as it could have.
  int rc = 0;
  StdoutReaderWatch watch([server] { caf::anon_send(server, cancel_atom::value); });
  caf::scoped_actor self{sys};
  self->request(server, caf::infinite, turn_end_atom::value)
    .receive([](std::vector<HandleSummary>&, std::string&) {},
             [&rc](caf::error& err) {
               std::fprintf(stderr, "jp-actors: mcp: ending the session's handles failed: %s\n",
                            error_text(err).c_str());
               rc = 1;
             });
  caf::anon_send_exit(server, caf::exit_reason::user_shutdown); // and its turn with it
  return rc;
}

} // namespace

namespace {

/// The sessions this server has (their actors, which may have ended), told when the
/// MCP servers behind it change their tools: a client that listed them hears at once,
/// not at its next call's answer. Closed before the actor system ends (the io thread,
/// which tells it, outlives it).
class LiveSessions {
public:
  void add(const mcp_server_actor& session) {
    std::lock_guard lock(mtx_);
    std::erase_if(sessions_, [](const caf::actor_addr& a) { return !caf::actor_cast<caf::actor>(a); });
    sessions_.push_back(session.address());
  }
  void tell_changed() {
    std::lock_guard lock(mtx_);
    if (closed_)
      return;
    for (auto& a : sessions_)
      if (auto session = caf::actor_cast<mcp_server_actor>(a))
        caf::anon_send(session, update_atom::value);
  }
  void close() {
    std::lock_guard lock(mtx_);
    closed_ = true;
    sessions_.clear();
  }

private:
  std::mutex mtx_;
  bool closed_ = false;
  std::vector<caf::actor_addr> sessions_;
};

} // namespace

bool mcp_serves(const ToolConfig& tool) {
  return tool.source != "builtin" || (tool.name != agent_tool_name && tool.name != foreach_tool_name);
}

int run_mcp(std::shared_ptr<const Config> config, PermissionPolicy permissions, const std::string& listen,
            double idle_secs) {
  IoThread io{io_poll(config->runtime)};
  // Not the tools that start sub-agents (and describe_tools would name them).
  // An editor starts this in any repository it opens, and nobody reads the note on
  // what the workspace's .jp/config.toml sets (stderr goes to the client's log): the
  // tools it defines or changes ask through the client, whatever it says, unless
  // --allow names them.
  auto serve = [permissions](const Config& offered) {
    auto served = std::make_shared<Config>(offered);
    std::erase_if(served->tools, [](auto& t) { return !mcp_serves(t.second); });
    workspace_tools_ask(*served, permissions.allowed);
    return std::shared_ptr<const Config>(std::move(served));
  };
  auto served = serve(*config);
  // The MCP servers whose tools are served on too start while the client is
  // answered: its initialize does not wait for them (npx and uvx may fetch a server
  // first, past the client's own timeout); its tools/list and calls do (mcp_server).
  // Their tools as they list them now are served as the config's are (made once for
  // each change).
  ToolsNow served_now;
  std::shared_ptr<ToolsStarting> starting;
  auto started = std::make_shared<McpTools>(); // written by the start, read once it is ready
  if (!config->mcp_servers.empty()) {
    starting = std::make_shared<ToolsStarting>();
    struct Made {
      std::mutex mtx;
      std::shared_ptr<const ToolSet> from, made;
    };
    auto made = std::make_shared<Made>();
    made->made = std::make_shared<const ToolSet>(ToolSet{served, {}, {}}); // until they started
    served_now = [starting, started, made, serve]() -> std::shared_ptr<const ToolSet> {
      auto set = starting->ready() && started->now ? started->now() : nullptr;
      std::lock_guard lock(made->mtx);
      if (set && set != made->from) {
        made->made = std::make_shared<const ToolSet>(ToolSet{serve(*set->config), set->executors, set->withdrawn});
        made->from = std::move(set);
      }
      return made->made;
    };
  }
  auto with_servers = config;
  config = served;
  install_signal_shutdown(config->runtime.abort_grace_secs);
  install_crash_cleanup();
  RuntimeActorConfig cfg{config->runtime.worker_threads, uses_nodes(*config) ? &config->node : nullptr,
                         client_tls(*config)};
  // Before the system: what its actors still say as it ends is written after it.
  std::optional<StdoutLines> stdout_lines;
  caf::actor_system sys{cfg};
  // Waited for before the system ends: its end tells the sessions, which hold the
  // messages that wait for it. (It uses `io`, made first.)
  std::future<void> start;
  auto sessions = std::make_shared<LiveSessions>();
  auto start_stop = std::make_shared<McpStartStop>();
  if (starting)
    start = std::async(std::launch::async, [with_servers, &io, started, starting, sessions, start_stop] {
      try {
        *started = start_mcp_tools(with_servers, io, {}, start_stop.get());
        for (auto& client : started->clients)
          client->on_tools_changed([sessions] { sessions->tell_changed(); });
      } catch (const std::exception& e) { // none expected: said, and served without them
        std::fprintf(stderr, "jp-actors: mcp: the MCP servers could not be started: %s\n", e.what());
      } catch (...) {
        std::fprintf(stderr, "jp-actors: mcp: the MCP servers could not be started\n");
      }
      starting->set_ready();
    });
  // Once the client has gone (its input ended, or --listen failed), a server still
  // starting is stopped rather than waited for (up to its start_timeout_secs).
  struct StopStarts {
    std::shared_ptr<McpStartStop> stop;
    ~StopStarts() { stop->stop(); }
  } stop_starts{start_stop};
  // So does a signal, before the servers' TERM: a start it ended is not told as the
  // server's failure ("exited (SIGTERM)"). The shutdown does not wait for this loop.
  StopOnSignal stop_starts_on_signal([start_stop] { start_stop->stop(); }, false);
  // Before the system ends (and the start, which may tell them, is waited for).
  struct CloseSessions {
    std::shared_ptr<LiveSessions> sessions;
    ~CloseSessions() { sessions->close(); }
  } close_sessions{sessions};
  // The calls are a model's: permissions apply, asked through the client if it can.
  // Each session has a turn of its own: its handles are its own.
  auto make_turn = [&sys, &io, config, permissions, served_now](AskPermission ask, const std::string& why_nobody) {
    TurnContext ctx;
    ctx.config = config;
    ctx.io = &io;
    ctx.tools_now = served_now; // the MCP servers' executors too
    ctx.permissions = permissions;
    ctx.permissions.why_nobody = why_nobody;
    ctx.ask_permission = std::move(ask);
    ctx.agent = "mcp";
    return spawn_turn(sys, std::move(ctx));
  };
  auto spawn_session = [&sys, make_turn, config, served_now, starting, sessions](McpWriter write) {
    auto session = spawn_mcp_server(sys, make_turn, config, std::move(write), served_now, starting);
    sessions->add(session);
    return session;
  };
  if (!listen.empty())
    return serve_http(sys, io, listen, idle_secs, spawn_session);
  return serve_stdio(sys, spawn_session, stdout_lines.emplace());
}

} // namespace jp
