#include "runtime/mcp/mcp_client.hpp"
#include "messages/terminal_safe.hpp"
#include "runtime/mcp/mcp_start_stop.hpp"
#include "tools/secret_variables.hpp"

#include <cstdio>
#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <deque>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <future>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <utility>

#include "runtime/mcp/mcp_call_result.hpp"
#include "runtime/mcp/mcp_http_transport.hpp"
#include "runtime/mcp/mcp_sse_transport.hpp"
#include "runtime/mcp/mcp_protocol.hpp"
#include "runtime/process/io_thread.hpp"
#include "runtime/process/process.hpp"

namespace jp {

namespace {

constexpr size_t kStderrTail = 2048;   // what an error quotes of the server's stderr
constexpr size_t kLineMax = 64u << 20; // a longer line is the server's fault
constexpr size_t kMaxTools = 1000;     // tools/list pages are asked for until this many
constexpr size_t kMaxToolPages = 100;  // or until this many pages (a server paging without end)
constexpr int64_t kTaskTtlMs = 24 * 3600 * 1000; // how long a task's result is asked to be kept
// At the end, how long a stdio server whose stdin we closed has to exit on its own
// before it gets TERM (and KILL 500 ms later).
constexpr auto kOwnExit = std::chrono::milliseconds(1000);
// A stdio server whose stdout ended and that has not exited this much later closed
// it while running: it can answer nothing more, so it is stopped (and started again
// at the next call).
constexpr auto kExitAfterStdout = std::chrono::seconds(2);
// A stdio server that exited is started again at its next call, up to this many
// times a minute: one that keeps crashing is given up on.
constexpr size_t kMaxRestarts = 3;
constexpr auto kRestartWindow = std::chrono::minutes(1);

} // namespace

struct McpClient::State : std::enable_shared_from_this<McpClient::State> {
  IoThread* io = nullptr;
  McpServerConfig server;
  mutable std::mutex tools_mutex; // guards `tools`, which any thread reads
  std::shared_ptr<const std::vector<McpTool>> tools = std::make_shared<const std::vector<McpTool>>();
  std::function<void()> tools_changed; // told when `tools` changes after the start (guarded as it is)
  std::shared_ptr<McpUrlTransport> http; // a url server's; else it is a process over stdio
  // -- on the io thread only --
  std::shared_ptr<Process> process; // set there, first of all (start)
  bool exited = false;               // the process has (on_exit)
  std::string cwd;                   // where its process starts, and starts again
  std::vector<std::string> env_drop; // kept from its environment (the provider's key)
  bool closing = false;              // the client is ending: not started again
  // The process exited and a call came: a new one is starting (initialize,
  // tools/list), and the requests made meanwhile wait for it, in order.
  bool restarting = false;
  bool started = false; // its first start succeeded: an exit before is the start's failure
  int generation = 0;   // its processes so far: one given up on says no more (start_process)
  bool stdout_closed = false; // it was stopped for closing its stdout while it ran
  std::vector<int64_t> awaiting_restart;
  std::deque<std::chrono::steady_clock::time_point> exits; // within the last minute
  std::shared_ptr<std::promise<void>> exit_waiter; // the client's end, waiting for the exit
  std::string line;       // stdout not yet a whole line
  size_t unacked = 0;     // output taken before `process` was set
  std::string stderr_tail;
  std::string gone;       // why the server can no longer be used ("" = it can)
  std::string not_jsonrpc; // the last line it sent that was no JSON-RPC message (cut)
  std::string unmatched;   // the last answer whose id is none of our requests' (cut)
  struct Pending {
    std::function<void(const Json&)> answer; // result, or {"error": ...}
    std::function<void(std::string)> progress;
    std::shared_ptr<boost::asio::steady_timer> timer;
    std::string method;
    Json params;            // kept to send it again in a new session (HTTP)
    bool task_call = false; // a tools/call asked to be made a task
    bool resent = false;    // sent again in a new session: a second 404 fails it
  };
  // By request id. Answers may hold the state: they are all let go of when the
  // server exits (fail_all), which the client's end brings about.
  std::map<int64_t, Pending> pending;
  bool tasks_offered = false; // the server's capabilities.tasks.requests.tools.call
  /// A call the server made a task: polled until it ends.
  struct TaskCall {
    std::string task_id;
    std::function<void(const Json&)> answer; // as a tools/call's answer
    std::function<void(std::string)> progress;
    std::string status_message; // the last one passed on
    std::chrono::milliseconds poll{500};
    std::shared_ptr<boost::asio::steady_timer> timer;
    bool cancelling = false; // tasks/cancel is out: it ends the call
  };
  std::map<int64_t, TaskCall> tasks; // by the call's number
  std::set<int64_t> cancelled_calls;  // cancelled before their answer came (a task may still)
  std::atomic<int64_t> next_id{1};
  // HTTP: the server forgot our session (404), and a new one is being started. What
  // is asked meanwhile waits for it, with the requests the 404 answered.
  bool renewing = false;
  std::vector<int64_t> awaiting_session;
  // tools/list is out (at the start, or after a list_changed): the answers to other
  // requests that come meanwhile, and their POSTs' failures, are held, in order, until
  // the list is in (listed), so a call that changed the tools answers with them in
  // place. Not the server's own requests (a ping it waits on while it lists) or its
  // notifications. List changes that come while listing make one listing after it.
  bool listing = false;
  bool relist = false;      // a list_changed came while listing
  bool said_listing_cut = false;
  bool tools_asked = false; // the start's listing began: list changes are followed from then
  std::deque<std::function<void()>> held;

  /// The legacy HTTP+SSE transport is 2024-11-05's: that version is asked for over it.
  Json initialize_params() const {
    bool legacy = http && server.transport == "sse";
    return Json::object()
      .set("protocolVersion", std::string(legacy ? mcp::versions[std::size(mcp::versions) - 1] : mcp::versions[0]))
      .set("capabilities", Json::object())
      .set("clientInfo", Json::object().set("name", "jp-actors").set("version", "0.2.0"));
  }

  /// What is wrong with `reply` to a request of the start ("" nothing: it has a result).
  std::string refusal(const Json& reply) const {
    if (auto* e = reply.find("error")) {
      auto* m = e->find("message");
      auto text = m && m->is_string() ? m->as_string() : e->dump();
      return e->find("local") ? text : fmt::format("MCP server `{}`: {}", server.name, text);
    }
    if (!reply.find("result") || !reply.find("result")->is_object())
      return fmt::format("MCP server `{}` answered without a result: {}", server.name, cut_text(reply.dump(), 200));
    return "";
  }

  /// initialize's result taken in: the version agreed, what the server offers. Why
  /// the server cannot be used ("" it can): a version jp-actors does not speak (MCP:
  /// the client then disconnects).
  std::string agree(const Json& result) {
    auto* v = result.find("protocolVersion");
    auto version = v && v->is_string() ? v->as_string() : std::string();
    if (std::find(std::begin(mcp::versions), std::end(mcp::versions), version) == std::end(mcp::versions))
      return fmt::format("MCP server `{}` answered initialize with protocol version {}, which jp-actors does not "
                         "speak (it speaks {}); use a version of the server that speaks one of these",
                         server.name, v && v->is_string() ? version : v ? v->dump() : "(none)", fmt::join(mcp::versions, ", "));
    if (http)
      http->set_version(version);
    auto* caps = result.find("capabilities");
    auto* tasks = caps && caps->is_object() ? caps->find("tasks") : nullptr;
    auto* requests = tasks && tasks->is_object() ? tasks->find("requests") : nullptr;
    auto* tools = requests && requests->is_object() ? requests->find("tools") : nullptr;
    // Tasks are MCP 2025-11-25's; a server that offers them while agreeing to an older
    // version (ours is 2025-06-18) is taken at its word: a tool it runs only as a task
    // could not be called otherwise, and a server that keeps to its version offers none.
    tasks_offered = tools && tools->is_object() && tools->find("call");
    return "";
  }

  /// Request `id`, sent in `session`, got HTTP 404: the server forgot that session and
  /// did not run it (MCP: the client starts a new session). It is sent again, once, in
  /// a new session -- one for all the requests the 404 hit.
  void on_session_lost(int64_t id, const std::string& session, const std::string& why) {
    auto it = pending.find(id);
    if (it == pending.end())
      return; // given up meanwhile
    if (it->second.resent)
      return on_failed(id,
                       fmt::format("{}, nor the new session jp-actors started for this request: the server "
                                   "forgets its sessions at once; look into the server",
                                   why),
                       false);
    it->second.resent = true;
    awaiting_session.push_back(id);
    if (renewing)
      return; // sent when the new session is there
    if (http->session() != session)
      return resend_awaiting(); // a new session was started since it went out
    renewing = true;
    http->new_session(); // initialize goes without the dead session's id
    request("initialize", initialize_params(), [weak = weak_from_this(), why](const Json& reply) {
      auto s = weak.lock();
      if (!s)
        return;
      s->renewing = false;
      auto failed = s->refusal(reply);
      if (failed.empty())
        failed = s->agree(*reply.find("result"));
      if (!failed.empty()) {
        auto* e = reply.find("error");
        bool transient = e && e->find("transient");
        auto ids = std::exchange(s->awaiting_session, {});
        for (auto waiting : ids)
          s->on_failed(waiting, fmt::format("{}, and a new session could not be started: {}", why, failed),
                       transient);
        return;
      }
      s->send(mcp::notification("notifications/initialized", Json::object()));
      s->resend_awaiting();
    });
  }

  /// Sends the requests that waited for a new session (those still out) in it.
  void resend_awaiting() {
    auto ids = std::exchange(awaiting_session, {});
    for (auto id : ids)
      if (auto it = pending.find(id); it != pending.end())
        send(mcp::request(id, it->second.method, it->second.params));
  }

  std::string stderr_said() const {
    if (http)
      return "";
    return stderr_tail.empty() ? "it wrote nothing to stderr"
                               : fmt::format("its stderr ended with: {}", last_lines(stderr_tail));
  }
  static std::string last_lines(const std::string& s) {
    auto t = s;
    while (!t.empty() && (t.back() == '\n' || t.back() == '\r'))
      t.pop_back();
    return t;
  }

  void send(const Json& message) {
    if (http && renewing) {
      // Only the new session's initialize goes now: a notification or answer of the
      // forgotten session means nothing in the new one, and requests wait (request).
      auto* method = message.find("method");
      if (!method || !method->is_string() || method->as_string() != "initialize")
        return;
    }
    if (http)
      http->send(message);
    else if (process) // not yet only for what a server says before it was asked anything
      process->write_stdin(message.dump() + "\n");
  }

  /// Request `id`'s answer is no longer waited for: over HTTP its POST stops (its
  /// connection and thread are let go). Not a call that may yet bring a task, which
  /// is cancelled when it comes.
  void abandon(int64_t id, const Pending& p) {
    if (http && !p.task_call)
      http->abandon(id);
  }

  /// A reply saying `why` on this side (the server gone, no answer in time, a
  /// cancel): `local`, so it is shown as it is; `transient` when trying later may work.
  static Json local_error(const std::string& why, bool transient = false) {
    auto e = Json::object().set("message", why).set("local", true);
    if (transient)
      e.set("transient", true);
    return Json::object().set("error", std::move(e));
  }

  /// Request `id`, no longer out (its timer stopped); none when it is not out.
  std::optional<Pending> take(int64_t id) {
    auto it = pending.find(id);
    if (it == pending.end())
      return std::nullopt;
    auto p = std::move(it->second);
    pending.erase(it);
    if (p.timer)
      p.timer->cancel();
    return p;
  }

  /// Request `id` failed on the way (HTTP): answered with `why`.
  void on_failed(int64_t id, const std::string& why, bool transient) {
    if (held_back(id, [why, transient](Pending& p) { p.answer(local_error(why, transient)); }))
      return;
    if (auto p = take(id))
      p->answer(local_error(why, transient));
  }

  /// Ends every request out with `why` (the server is gone, and is not started again
  /// while this client lives: not transient).
  void fail_all(const std::string& why) {
    gone = why;
    end_all(why, false);
  }

  /// Ends every request and task out with `why` (`transient`: a call later may work).
  void end_all(const std::string& why, bool transient) {
    awaiting_session.clear();
    awaiting_restart.clear();
    relist = false; // a listing's end must not start the server again
    line.clear();
    auto out = std::move(pending);
    pending.clear();
    for (auto& [id, p] : out) {
      if (p.timer)
        p.timer->cancel();
      p.answer(local_error(why, transient));
    }
    auto out_tasks = std::move(tasks);
    tasks.clear();
    for (auto& [n, t] : out_tasks) {
      if (t.timer)
        t.timer->cancel();
      t.answer(local_error(why, transient));
    }
  }

  /// initialize, notifications/initialized, then tools/list: `done` gets "" once the
  /// server can be called, else why not (at the start, and when started again).
  void handshake(std::function<void(std::string)> done) {
    request("initialize", initialize_params(), [weak = weak_from_this(), done](const Json& reply) {
      auto s = weak.lock();
      if (!s)
        return;
      if (auto why = s->refusal(reply); !why.empty())
        return done(why);
      if (auto why = s->agree(*reply.find("result")); !why.empty())
        return done(why); // the client's end closes the server
      s->send(mcp::notification("notifications/initialized", Json::object()));
      s->list_tools([done](const std::string& why) { done(why); });
    });
  }

  /// A stdio server's stdout ended: usually it is exiting; one that still runs a while
  /// later closed it, and is stopped, as it can answer nothing more.
  void on_stdout_end(int of) {
    auto timer = std::make_shared<boost::asio::steady_timer>(io->context(), kExitAfterStdout);
    timer->async_wait([weak = weak_from_this(), timer, of](const boost::system::error_code& ec) {
      auto s = weak.lock();
      if (ec || !s || s->generation != of || s->exited || s->closing || !s->process)
        return;
      s->stdout_closed = true;
      s->process->terminate(std::chrono::milliseconds(500), [] {});
    });
  }

  /// A stdio server's process exited (`how`): what is out fails; it is started again
  /// at the next call, unless the client is ending or it exited this often lately.
  void on_exit(const std::string& how) {
    exited = true;
    if (auto w = std::exchange(exit_waiter, nullptr))
      w->set_value();
    auto why = std::exchange(stdout_closed, false)
                 ? fmt::format("MCP server `{}` closed its stdout while it ran, so it could answer nothing more, "
                               "and was stopped ({}); {}",
                               server.name, how, stderr_said())
                 : fmt::format("MCP server `{}` exited ({}); {}", server.name, how, stderr_said());
    bool too_often = count_exit();
    if (closing || !started) // ending, or its start failed (McpClient::start says so)
      return fail_all(why);
    if (too_often)
      return fail_all(fmt::format("{}. It exited {} times within a minute, so it is not started again until "
                                  "jp-actors starts again: its tools fail until then",
                                  why, exits.size()));
    end_all(why + ". It is started again at its next call", true);
  }

  /// Counts an exit (or a start again refused); whether it was one too many this minute.
  bool count_exit() {
    auto now = std::chrono::steady_clock::now();
    exits.push_back(now);
    while (now - exits.front() > kRestartWindow)
      exits.pop_front();
    return exits.size() > kMaxRestarts;
  }

  /// Starts a stdio server's process again, for the requests waiting for it.
  void restart();

  /// A task made for a call cancelled before the server's answer came is cancelled too.
  void cancel_late_task(const Json& reply) {
    auto* result = reply.find("result");
    auto* task = result && result->is_object() ? result->find("task") : nullptr;
    auto* id = task && task->is_object() ? task->find("taskId") : nullptr;
    if (id && id->is_string())
      request("tasks/cancel", Json::object().set("taskId", *id), [](const Json&) {});
  }

  /// Call `n` became task `task` (a CreateTaskResult's): its status is polled from now.
  void follow_task(int64_t n, const Json& task, std::function<void(const Json&)> answer,
                   std::function<void(std::string)> progress) {
    auto* id = task.find("taskId");
    if (!id || !id->is_string())
      return answer(local_error(fmt::format("MCP server `{}` made a task without a taskId", server.name)));
    TaskCall t{id->as_string(), std::move(answer), std::move(progress)};
    if (auto* poll = task.find("pollInterval"); poll && poll->is_number() && poll->as_number() >= 10)
      t.poll = std::chrono::milliseconds(std::min<int64_t>(static_cast<int64_t>(poll->as_number()), 5000));
    auto& added = tasks[n] = std::move(t);
    on_task_status(n, task);
    if (tasks.count(n))
      poll_later(n, added);
  }

  void poll_later(int64_t n, TaskCall& t) {
    t.timer = std::make_shared<boost::asio::steady_timer>(io->context());
    t.timer->expires_after(t.poll);
    t.timer->async_wait([weak = weak_from_this(), n](const boost::system::error_code& ec) {
      if (auto s = weak.lock(); s && !ec)
        s->poll_task(n);
    });
  }

  /// tasks/get, then the next poll or the result.
  void poll_task(int64_t n) {
    auto it = tasks.find(n);
    if (it == tasks.end())
      return;
    request("tasks/get", Json::object().set("taskId", it->second.task_id), [weak = weak_from_this(), n](const Json& reply) {
      auto s = weak.lock();
      if (!s || !s->tasks.count(n) || s->tasks.at(n).cancelling)
        return; // cancelled meanwhile
      auto* result = reply.find("result");
      if (!result || !result->is_object())
        return s->end_task(n, reply); // its error is the call's
      s->on_task_status(n, *result);
      if (auto it = s->tasks.find(n); it != s->tasks.end() && !it->second.cancelling)
        s->poll_later(n, it->second);
    });
  }

  /// A task's status: its message is progress; at its end, its result is fetched.
  void on_task_status(int64_t n, const Json& task) {
    auto& t = tasks.at(n);
    auto* status = task.find("status");
    auto state = status && status->is_string() ? status->as_string() : std::string();
    if (auto* m = task.find("statusMessage"); m && m->is_string() && m->as_string() != t.status_message) {
      t.status_message = m->as_string();
      if (t.progress && !t.status_message.empty())
        t.progress(t.status_message + "\n");
    }
    if (state == "cancelled")
      return end_task(n, local_error(fmt::format("MCP server `{}` cancelled the task", server.name)));
    if (state != "completed" && state != "failed")
      return;
    if (t.timer)
      t.timer->cancel();
    t.timer = nullptr;
    request("tasks/result", Json::object().set("taskId", t.task_id), [weak = weak_from_this(), n](const Json& reply) {
      if (auto s = weak.lock())
        s->end_task(n, reply);
    });
  }

  void end_task(int64_t n, const Json& reply) {
    auto it = tasks.find(n);
    if (it == tasks.end())
      return;
    auto t = std::move(it->second);
    tasks.erase(it);
    if (t.timer)
      t.timer->cancel();
    t.answer(reply);
  }

  /// A message from the server; `related`: the request whose answer carried it (HTTP).
  void on_line(const std::string& text, int64_t related = 0) {
    auto msg = Json::parse(text);
    // A batch (protocol 2025-03-26, which a client must take): each of its messages.
    if (msg && msg->is_array() && !msg->as_array().empty() &&
        std::all_of(msg->as_array().begin(), msg->as_array().end(), [](const Json& m) { return m.is_object(); })) {
      for (auto& m : msg->as_array())
        on_message(m, related);
      return;
    }
    if (!msg || !msg->is_object()) {
      // Not JSON-RPC: a server's stray print (or a broken answer) is no answer to
      // anything, but a request it leaves unanswered says so.
      not_jsonrpc = cut_text(text, 120);
      return;
    }
    on_message(*msg, related);
  }

  /// One JSON-RPC message of the server's (an object).
  void on_message(const Json& message, int64_t related) {
    auto* msg = &message;
    auto* id = msg->find("id");
    auto* method = msg->find("method");
    bool answer = !method && id && id->is_int();
    if (answer && held_back(id->as_int(), [msg = *msg](Pending& p) { p.answer(msg); }))
      return;
    if (method && method->is_string()) {
      if (id) // a request of the server's own: only ping is answered with a result
        send(method->as_string() == "ping" ? mcp::response(*id, Json::object())
                                           : mcp::error_response(*id, mcp::method_not_found,
                                                                 "jp-actors' MCP client does not serve " +
                                                                   method->as_string()));
      else if (method->as_string() == "notifications/progress")
        on_progress(msg->find("params"));
      else if (method->as_string() == "notifications/message")
        on_log(msg->find("params"), related);
      else if (method->as_string() == "notifications/tools/list_changed")
        list_changed();
      return;
    }
    if (!id)
      return;
    if (!id->is_int()) { // ours are integers: "3" answers nothing (a request left unanswered says so)
      unmatched = cut_text(msg->dump(), 120);
      return;
    }
    if (auto p = take(id->as_int()))
      p->answer(*msg);
    else if (cancelled_calls.erase(id->as_int())) // cancelled before this answer came
      cancel_late_task(*msg);
  }

  /// Whether the answer to request `id` (or its failure) waits for the tools being
  /// listed: then the request is taken off those out (its timer stopped: the wait is
  /// ours, not the server's) and `deliver` gets it once they are. Not what the list
  /// itself waits on: its tools/list, and a new session's initialize (HTTP).
  bool held_back(int64_t id, std::function<void(Pending&)> deliver) {
    if (!listing)
      return false;
    auto it = pending.find(id);
    if (it == pending.end() || it->second.method == "tools/list" || it->second.method == "initialize")
      return false;
    auto p = std::make_shared<Pending>(std::move(*take(id)));
    held.push_back([p, deliver = std::move(deliver)] { deliver(*p); });
    return true;
  }

  /// What a listing after a list change does when it fails: the last list stays (the
  /// tools the model is offered still work as they did), and the user is told why.
  std::function<void(const std::string&)> relisted() {
    return [name = server.name, weak = weak_from_this()](const std::string& why) {
      // Cut short by jp-actors' own end (it closed the server): nothing to tell.
      auto s = weak.lock();
      if (!why.empty() && s && !s->closing)
        std::fprintf(stderr, "jp-actors: note: MCP server `%s` changed its tools, but they could not be listed "
                     "again (%s); the tools it offered before are offered still\n",
                     name.c_str(), shown_on(STDERR_FILENO, why).c_str());
    };
  }

  /// notifications/tools/list_changed: the tools listed again, once for all that come
  /// while they are being listed. Not before the start lists them anyway.
  void list_changed() {
    if (listing)
      relist = true;
    else if (tools_asked)
      list_tools(relisted());
  }

  /// The server's tools asked for (tools/list, page by page, within reason: a server
  /// that never stops paging -- empty pages, cursors that go round -- is cut off) and
  /// made tools(), unless they are the same; `done` gets why they could not be ("":
  /// they could). Answers that come meanwhile are held (held_back). On the io thread,
  /// never while listing (list_changed).
  void list_tools(std::function<void(const std::string&)> done) {
    listing = true;
    tools_asked = true;
    list_page(std::make_shared<std::vector<McpTool>>(), Json(), 0, std::move(done));
  }

  void list_page(std::shared_ptr<std::vector<McpTool>> found, Json cursor, size_t page,
                 std::function<void(const std::string&)> done) {
    Json params = Json::object();
    if (!cursor.is_null())
      params.set("cursor", cursor);
    auto on_page = [weak = weak_from_this(), found, cursor, page, done](const Json& reply) {
      auto s = weak.lock();
      if (!s)
        return;
      if (auto why = s->refusal(reply); !why.empty())
        return s->listed(why, done);
      auto& result = *reply.find("result");
      auto* tools = result.find("tools");
      if (!tools || !tools->is_array())
        return s->listed(fmt::format("MCP server `{}` answered tools/list without a `tools` array, which MCP "
                                     "requires: {}",
                                     s->server.name, cut_text(result.dump(), 200)),
                         done);
      for (size_t i = 0; i < tools->as_array().size(); ++i) {
        auto& t = tools->as_array()[i];
        auto* name = t.is_object() ? t.find("name") : nullptr;
        if (!name || !name->is_string()) {
          found->push_back({"", "", Json::object(), false,
                            fmt::format("entry {} of its tools/list has no `name` string, which MCP requires: {}",
                                        i + 1, cut_text(t.dump(), 200))});
          continue;
        }
        auto* schema = t.find("inputSchema");
        if (!schema || !schema->is_object()) {
          found->push_back({name->as_string(), "", Json::object(), false,
                            fmt::format("tool `{}` has no `inputSchema` object, which MCP requires (one that "
                                        "takes no arguments: {{\"type\":\"object\"}})",
                                        cut_text(name->as_string(), 60))});
          continue;
        }
        auto* desc = t.find("description");
        auto* execution = t.find("execution");
        auto* support = execution && execution->is_object() ? execution->find("taskSupport") : nullptr;
        bool as_task = s->tasks_offered && support && support->is_string() &&
                       (support->as_string() == "optional" || support->as_string() == "required");
        found->push_back({name->as_string(), desc && desc->is_string() ? desc->as_string() : "", *schema, as_task});
      }
      auto* next = result.find("nextCursor");
      if (next && next->is_string() && !next->as_string().empty()) {
        bool again = !cursor.is_null() && *next == cursor;
        if (found->size() < kMaxTools && page + 1 < kMaxToolPages && !again)
          return s->list_page(found, *next, page + 1, done);
        s->listing_cut(again ? &cursor : nullptr, page + 1, found->size());
      }
      std::function<void()> changed;
      {
        std::lock_guard lock(s->tools_mutex);
        if (*found != *s->tools) {
          s->tools = std::move(found);
          changed = s->tools_changed;
        }
      }
      s->listed("", done);
      if (changed)
        changed();
    };
    request("tools/list", std::move(params), std::move(on_page));
  }

  /// tools/list still named a next page after `pages` pages (`repeated`: the cursor
  /// it was asked with, named again): the user is told, once, that the `tools` found
  /// are all offered.
  void listing_cut(const Json* repeated, size_t pages, size_t tools) {
    if (std::exchange(said_listing_cut, true))
      return;
    auto why = repeated ? fmt::format("it named the page it was asked for ({}) as the next",
                                      cut_text(repeated->dump(), 60))
                     : fmt::format("it still names a next page after {} pages and {} tools, past the {} pages or "
                                   "{} tools asked for at most",
                                   pages, tools, kMaxToolPages, kMaxTools);
    std::fprintf(stderr, "jp-actors: note: MCP server `%s`'s tools/list was not followed to its end: %s; the %zu "
                 "tools listed so far are offered\n",
                 server.name.c_str(), shown_on(STDERR_FILENO, why).c_str(), tools);
  }

  /// The tools are listed (or could not be, `why`): the answers held are delivered,
  /// in order, and the tools listed again if they changed meanwhile (after, so that a
  /// server announcing changes without end cannot hold answers up for good).
  void listed(const std::string& why, const std::function<void(const std::string&)>& done) {
    listing = false;
    done(why);
    auto ready = std::exchange(held, {});
    for (auto& deliver : ready)
      deliver();
    if (std::exchange(relist, false) && !listing)
      list_tools(relisted());
  }

  void on_progress(const Json* params) {
    if (!params || !params->is_object())
      return;
    auto* token = params->find("progressToken");
    if (!token || !token->is_int())
      return;
    std::function<void(std::string)>* to = nullptr;
    if (auto it = pending.find(token->as_int()); it != pending.end()) {
      arm(it->first, it->second); // the server works on it: its timeout starts again
      to = &it->second.progress;
    } else if (auto t = tasks.find(token->as_int()); t != tasks.end()) {
      to = &t->second.progress; // a task's token stays its call's
    }
    if (!to || !*to)
      return;
    std::string text;
    if (auto* m = params->find("message"); m && m->is_string())
      text = m->as_string();
    else if (auto* p = params->find("progress"); p && p->is_number()) {
      auto* total = params->find("total");
      text = total && total->is_number() ? fmt::format("progress {} of {}", p->as_number(), total->as_number())
                                         : fmt::format("progress {}", p->as_number());
    }
    if (!text.empty())
      (*to)(text + "\n");
  }

  /// A log message (notifications/message) is shown with the call it came for (HTTP:
  /// on that call's stream), else with every call in flight: over stdio nothing says
  /// which call it is about.
  void on_log(const Json* params, int64_t related) {
    if (!params || !params->is_object())
      return;
    auto* level = params->find("level");
    auto* logger = params->find("logger");
    auto* data = params->find("data");
    auto text = fmt::format("[{}{}] {}", level && level->is_string() ? level->as_string() : "log",
                            logger && logger->is_string() ? " " + logger->as_string() : "",
                            !data ? "" : data->is_string() ? data->as_string() : data->dump());
    for (auto& [id, p] : pending)
      if (p.progress && (!related || id == related))
        p.progress(text + "\n");
    for (auto& [n, t] : tasks)
      if (t.progress && (!related || n == related))
        t.progress(text + "\n");
  }

  void on_output(stream_kind kind, std::string_view bytes) {
    // Output can come before the process is here (see start): acknowledged then.
    unacked += bytes.size();
    if (process) {
      process->ack(unacked);
      unacked = 0;
    }
    if (kind == stream_kind::err) {
      stderr_tail.append(bytes);
      if (stderr_tail.size() > kStderrTail)
        stderr_tail.erase(0, stderr_tail.size() - kStderrTail);
      return;
    }
    if (!gone.empty())
      return; // what a server says after it was given up on answers nothing
    size_t scan = line.size(); // earlier bytes hold no newline
    line.append(bytes);
    size_t start = 0;
    for (auto nl = line.find('\n', scan); nl != std::string::npos; nl = line.find('\n', start)) {
      on_line(line.substr(start, nl - start));
      start = nl + 1;
    }
    line.erase(0, start);
    if (line.size() > kLineMax) {
      fail_all(fmt::format("MCP server `{}` sent a line of more than {} MiB", server.name, kLineMax >> 20));
      if (process)
        process->terminate(std::chrono::milliseconds(0), [] {});
    }
  }

  /// Sends request `method` and calls `answer` with the reply (on the io thread), or
  /// with an error after the server's timeout. `id` 0: a new one.
  void request(std::string method, Json params, std::function<void(const Json&)> answer,
               std::function<void(std::string)> progress = {}, int64_t id = 0) {
    if (!id)
      id = next_id++;
    if (!gone.empty())
      return answer(local_error(gone));
    if (!http && closing && exited)
      return answer(local_error(fmt::format("MCP server `{}` was closed", server.name)));
    auto& p = pending[id] = Pending{std::move(answer), std::move(progress), nullptr, method, params};
    // A stdio server that exited is started again for it; while it starts, only its
    // start's own requests go out, and the others wait (their timeouts run from when
    // they are sent: the start has its own).
    bool starts_it = method == "initialize" || method == "tools/list";
    if (!http && (exited || (restarting && !starts_it))) {
      awaiting_restart.push_back(id);
      if (!restarting)
        restart();
      return;
    }
    arm(id, p);
    if (renewing && method != "initialize") {
      awaiting_session.push_back(id); // sent once the new session is there
      return;
    }
    send(mcp::request(id, method, std::move(params)));
  }

  /// Request `method`'s timeout and the key that sets it: the server's start
  /// (initialize, tools/list) has its own.
  std::pair<double, const char*> timeout_of(const std::string& method) const {
    if (method == "initialize" || method == "tools/list")
      return {server.start_timeout_secs, "start_timeout_secs"};
    return {server.timeout_secs, "timeout_secs"};
  }

  /// (Re)starts request `id`'s timeout: the server's start_timeout_secs or timeout_secs
  /// from now.
  void arm(int64_t id, Pending& p) {
    if (p.timer)
      p.timer->cancel();
    p.timer = std::make_shared<boost::asio::steady_timer>(io->context());
    p.timer->expires_after(std::chrono::duration_cast<std::chrono::steady_clock::duration>(
      std::chrono::duration<double>(timeout_of(p.method).first)));
    p.timer->async_wait([weak = weak_from_this(), id, timer = p.timer.get()](const boost::system::error_code& ec) {
      auto s = weak.lock();
      if (ec || !s)
        return;
      auto it = s->pending.find(id);
      if (it == s->pending.end() || it->second.timer.get() != timer)
        return;
      auto p = std::move(it->second);
      s->pending.erase(it);
      if (p.method != "initialize") // MCP: initialize is never cancelled
        s->send(mcp::notification("notifications/cancelled",
                                  Json::object().set("requestId", id).set("reason", "timed out")));
      s->abandon(id, p);
      auto [secs, key] = s->timeout_of(p.method);
      auto stray = s->not_jsonrpc.empty()
                     ? std::string()
                     : fmt::format("; it sent a line that is no JSON-RPC message, which MCP does not allow (a "
                                   "broken answer, or a print to stdout): {}",
                                   json_quote(s->not_jsonrpc));
      if (!s->unmatched.empty())
        stray += fmt::format("; it sent an answer whose id is none of ours (they are integers, echoed as "
                             "sent): {}",
                             json_quote(s->unmatched));
      p.answer(local_error(fmt::format("MCP server `{}` did not answer {} within {} s, nor report progress "
                                       "([mcp.servers.{}] {}){}",
                                       s->server.name, p.method, secs, s->server.name, key, stray),
                           true));
    });
  }
};

namespace {

/// Starts a stdio server's process; its output goes to the state (on the io thread).
Status start_process(IoThread& io, const std::shared_ptr<McpClient::State>& st, const std::string& cwd) {
  auto& server = st->server;
  SpawnSpec spec;
  spec.argv = server.command;
  spec.cwd = cwd;
  spec.stdin_pipe = true;
  spec.server = true;
  for (auto& [k, v] : server.env)
    spec.env.push_back(k + "=" + v);
  spec.env_drop = st->env_drop;
  spec.limits = server.limits;
  std::weak_ptr<McpClient::State> weak = st;
  // What a process given up on (a start again refused) says or does after is nothing.
  int generation = ++st->generation;
  ProcessEvents events;
  events.on_output = [weak, generation](stream_kind kind, std::string_view bytes) {
    if (auto s = weak.lock(); s && s->generation == generation)
      s->on_output(kind, bytes);
  };
  events.on_exit = [weak, generation](const ExitInfo& info) {
    if (auto s = weak.lock(); s && s->generation == generation)
      s->on_exit(info.describe());
  };
  events.on_output_end = [weak, generation](stream_kind kind) {
    if (auto s = weak.lock(); s && s->generation == generation && kind == stream_kind::out)
      s->on_stdout_end(generation);
  };
  auto process = spawn_process(io, spec, std::move(events));
  if (!process)
    return Error{fmt::format("MCP server `{}` did not start: {}", server.name, process.error())};
  // Set on the io thread, where its callbacks may already run; before any request.
  io.post([st, p = std::move(*process)] {
    st->process = p;
    if (st->unacked) {
      p->ack(st->unacked);
      st->unacked = 0;
    }
    if (st->closing) // the client ended while it was started again
      p->close_stdin();
  });
  return Status::success();
}

} // namespace

void McpClient::State::restart() {
  restarting = true;
  exited = false;
  process = nullptr;
  line.clear();
  stderr_tail.clear();
  not_jsonrpc.clear();
  unmatched.clear();
  unacked = 0;
  if (auto started = start_process(*io, shared_from_this(), cwd); !started) {
    restarting = false;
    exited = true;
    return fail_all(fmt::format("{} (started again after it exited)", started.error));
  }
  // After the process is set (start_process posts that): its start, then what waited.
  io->post([weak = weak_from_this()] {
    auto s = weak.lock();
    if (!s)
      return;
    s->handshake([weak](std::string why) {
      auto s = weak.lock();
      if (!s)
        return;
      s->restarting = false;
      // A start refused (initialize, tools/list) with the process running: ended, so
      // the next call starts it again (or its exits give it up), never one that was
      // not initialized.
      bool too_often = false;
      if (!why.empty() && !s->exited && s->process) {
        s->process->terminate(std::chrono::milliseconds(0), [p = s->process] {}); // held until it is gone
        ++s->generation; // given up on now: the next call starts another
        s->exited = true;
        if (auto w = std::exchange(s->exit_waiter, nullptr))
          w->set_value();
        too_often = s->count_exit();
      }
      auto ids = std::exchange(s->awaiting_restart, {});
      for (auto id : ids) {
        if (why.empty()) {
          if (auto it = s->pending.find(id); it != s->pending.end()) {
            s->arm(id, it->second);
            s->send(mcp::request(id, it->second.method, it->second.params));
          }
        } else if (auto p = s->take(id)) {
          p->answer(local_error(fmt::format("MCP server `{}` exited and could not be started again: {}",
                                            s->server.name, why),
                                true));
        }
      }
      if (too_often)
        s->fail_all(fmt::format("MCP server `{}` could not be started again: {}; it failed {} times within a "
                                "minute, so it is not started again until jp-actors starts again",
                                s->server.name, why, s->exits.size()));
    });
  });
}

namespace {

/// The transport `server.transport` names, its messages going to the state.
std::shared_ptr<McpUrlTransport> url_transport(IoThread& io, const McpServerConfig& server,
                                               std::weak_ptr<McpClient::State> weak) {
  McpUrlTransport::Deliver deliver = [weak](const std::string& text, int64_t request) {
    if (auto s = weak.lock())
      s->on_line(text, request);
  };
  McpUrlTransport::Failed failed = [weak](int64_t id, const std::string& why, bool transient) {
    if (auto s = weak.lock())
      s->on_failed(id, why, transient);
  };
  McpUrlTransport::SessionLost lost = [weak](int64_t id, const std::string& session, const std::string& why) {
    if (auto s = weak.lock())
      s->on_session_lost(id, session, why);
  };
  if (server.transport == "sse")
    return std::make_shared<McpSseTransport>(io, server, std::move(deliver), std::move(failed), std::move(lost));
  return std::make_shared<McpHttpTransport>(io, server, std::move(deliver), std::move(failed), std::move(lost));
}

/// A url server's header value with each `${NAME}` replaced by jp-actors' own
/// environment variable NAME (a token kept out of the config file); an error naming
/// the header and the variable when it is not set.
Result<std::string> header_value(const McpServerConfig& server, const std::string& header, const std::string& value) {
  std::string out;
  size_t at = 0;
  for (auto& [open, end, name] : header_variables(value)) {
    const char* set = name.empty() ? nullptr : std::getenv(name.c_str());
    if (!set)
      return Error{fmt::format("MCP server `{}`: headers.{} names ${{{}}}, which is not set in jp-actors' "
                               "environment: export it, or write the value itself",
                               server.name, header, cut_text(name, 60))};
    if (std::string_view(set).find_first_of("\r\n") != std::string_view::npos)
      return Error{fmt::format("MCP server `{}`: headers.{} names ${{{}}}, which holds a line break: a header "
                               "value is one line",
                               server.name, header, cut_text(name, 60))};
    out += value.substr(at, open - at);
    out += set;
    at = end;
  }
  return out + value.substr(at);
}

} // namespace

Result<std::shared_ptr<McpClient>> McpClient::start(IoThread& io, const McpServerConfig& config,
                                                    const std::string& cwd, const std::vector<std::string>& env_drop,
                                                    McpStartStop* stop) {
  auto stopped_why = [&config] { return fmt::format("MCP server `{}`: its start was stopped, as jp-actors is ending", config.name); };
  if (stop && stop->stopped()) {
    stop->mark_ended(config.name);
    return Error{stopped_why()};
  }
  auto server = config;
  for (auto& [name, value] : server.headers) {
    auto expanded = header_value(server, name, value);
    if (!expanded)
      return Error{expanded.error()};
    value = std::move(*expanded);
  }
  auto st = std::make_shared<State>();
  st->io = &io;
  st->server = server;
  st->cwd = cwd;
  st->env_drop = env_drop;
  // Callbacks hold the state weakly: it goes with the client, and the server with it.
  std::weak_ptr<State> weak = st;
  if (!server.url.empty())
    st->http = url_transport(io, server, weak);
  else if (auto started = start_process(io, st, cwd); !started)
    return Error{started.error};
  auto client = std::shared_ptr<McpClient>(new McpClient());
  client->state_ = st;

  // initialize, notifications/initialized, then tools/list (list_tools); all on the
  // io thread, this thread waiting for the outcome.
  struct Outcome {
    std::string why; // "" = started
    bool stopped = false; // ended by the stop, not of itself
  };
  auto outcome = std::make_shared<std::promise<Outcome>>();
  auto started = outcome->get_future();
  // On the io thread, where the server's stderr is kept: a failure quotes it. The
  // first outcome stands.
  auto finish = std::make_shared<std::function<void(std::string, bool)>>(
    [outcome, st, done = false](std::string why, bool stopped) mutable {
      if (done)
        return;
      done = true;
      if (auto said = st->stderr_said(); !why.empty() && !said.empty() && why.find("stderr") == std::string::npos)
        why += "; " + said;
      outcome->set_value({std::move(why), stopped});
    });
  io.post([st, finish] {
    st->handshake([st, finish](std::string why) {
      st->started = why.empty();
      (*finish)(std::move(why), false);
    });
  });
  // After the handshake's post: its request is out when this comes. What is out then
  // fails (the handshake with it), and the state, let go of, kills the process. The
  // outcome is the stop's only where no other came first (held weakly: a start that
  // ended keeps nothing here).
  if (stop)
    stop->on_stop([io = &io, weak, once = std::weak_ptr(finish), why = stopped_why()] {
      io->post([weak, once, why] {
        auto s = weak.lock();
        if (!s || s->started)
          return;
        if (auto f = once.lock())
          (*f)(why, true);
        s->fail_all(why);
      });
    });
  auto [why, stopped] = started.get(); // bounded: each request has the server's timeout, and the pages a limit
  if (!why.empty()) {
    if (stopped)
      stop->mark_ended(config.name);
    return Error{why};
  }
  return client;
}

McpClient::~McpClient() {
  if (auto http = state_->http) { // the session is ended, and what is out fails
    http->close();
    state_->io->post([st = state_] {
      st->closing = true; // a re-list it cuts short is no failure to tell (relisted)
      st->fail_all(fmt::format("MCP server `{}` was closed", st->server.name));
    });
    return;
  }
  // MCP's stdio shutdown: the server's stdin is closed, and it has a moment to exit
  // on its own (it still reads what it was sent last: a cancel, for one); then TERM,
  // and KILL after another moment. Its owner (a run's end, a Runtime) waits here.
  auto exited = std::make_shared<std::promise<void>>();
  auto exit_seen = exited->get_future();
  state_->io->post([st = state_, exited] {
    st->closing = true; // not started again
    if (st->restarting) { // its process is being set: its stdin is closed then
      st->exit_waiter = exited;
      return;
    }
    if (!st->process || st->exited)
      return exited->set_value();
    st->exit_waiter = exited;
    st->process->close_stdin();
  });
  exit_seen.wait_for(kOwnExit);
  state_->io->post([st = state_] {
    if (auto p = st->process; p && !st->exited)
      p->terminate(std::chrono::milliseconds(500), [p] {}); // held until its group is gone
  });
}

const std::string& McpClient::name() const {
  return state_->server.name;
}

std::shared_ptr<const std::vector<McpTool>> McpClient::tools() const {
  std::lock_guard lock(state_->tools_mutex);
  return state_->tools;
}

void McpClient::on_tools_changed(std::function<void()> f) {
  std::lock_guard lock(state_->tools_mutex);
  state_->tools_changed = std::move(f);
}

int64_t McpClient::call(const std::string& tool, Json args, std::function<void(std::string)> progress,
                        std::function<void(ToolState)> done) {
  auto st = state_;
  int64_t id = st->next_id++;
  bool as_task = false;
  for (auto& t : *tools()) // as the server lists it now
    if (t.name == tool)
      as_task = t.as_task;
  st->io->post([st, id, tool, as_task, args = std::move(args), progress = std::move(progress),
                done = std::move(done)]() mutable {
    auto params = Json::object()
                    .set("name", tool)
                    .set("arguments", std::move(args))
                    .set("_meta", Json::object().set("progressToken", id));
    std::function<void(const Json&)> answer = [st, tool, done](const Json& reply) {
      if (auto* e = reply.find("error")) {
        auto* m = e->find("message");
        auto text = m && m->is_string() ? m->as_string() : e->dump();
        // The server gone or unreachable: transient (it may be back at the next start).
        return done(ToolState::failure(ToolError{
          e->find("local") ? text : fmt::format("MCP server `{}`: {} failed: {}", st->server.name, tool, text), {},
          e->find("transient") != nullptr}));
      }
      auto* result = reply.find("result");
      done(result && result->is_object()
             ? mcp_call_state(*result)
             : ToolState::failure(ToolError{
                 fmt::format("MCP server `{}` answered {} without a result", st->server.name, tool), {}, false}));
    };
    if (as_task) { // answered by the task, whose end brings the result
      params.set("task", Json::object().set("ttl", kTaskTtlMs));
      answer = [st, id, answer, progress](const Json& reply) {
        auto* result = reply.find("result");
        auto* task = result && result->is_object() ? result->find("task") : nullptr;
        if (task && task->is_object())
          return st->follow_task(id, *task, answer, progress);
        answer(reply); // the server answered at once after all
      };
    }
    st->request("tools/call", std::move(params), std::move(answer), std::move(progress), id);
    if (auto it = st->pending.find(id); it != st->pending.end())
      it->second.task_call = as_task;
  });
  return id;
}

void McpClient::cancel(int64_t n, std::string reason) {
  auto st = state_;
  st->io->post([st, n, reason = std::move(reason)] {
    if (auto t = st->tasks.find(n); t != st->tasks.end()) { // a task: ended once the server heard it
      if (t->second.cancelling)
        return;
      t->second.cancelling = true; // no more polls
      if (t->second.timer)
        t->second.timer->cancel();
      st->request("tasks/cancel", Json::object().set("taskId", t->second.task_id),
                  [st, n, reason](const Json&) { st->end_task(n, State::local_error(reason)); });
      return;
    }
    auto p = st->take(n);
    if (!p)
      return;
    if (p->task_call) // its answer may still bring a task, which is cancelled then
      st->cancelled_calls.insert(n);
    // One waiting for the server's new start was never sent: nothing to tell it.
    bool never_sent = std::erase(st->awaiting_restart, n) > 0;
    if (st->gone.empty() && !never_sent)
      st->send(mcp::notification("notifications/cancelled", Json::object().set("requestId", n).set("reason", reason)));
    st->abandon(n, *p);
    p->answer(State::local_error(reason));
  });
}

} // namespace jp
