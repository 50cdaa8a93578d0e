#include "runtime/mcp/mcp_sse_transport.hpp"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <fmt/format.h>
#include <list>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "runtime/mcp/mcp_event_stream.hpp"
#include "runtime/mcp/mcp_url.hpp"
#include "runtime/mcp/worker_threads.hpp"
#include "runtime/process/io_thread.hpp"
#include "runtime/provider/http_stream.hpp"

namespace jp {

namespace {

std::chrono::milliseconds millis(double secs) {
  return std::chrono::milliseconds(static_cast<int64_t>(secs * 1000));
}

/// The id of the request `text` answers; 0 when it answers none.
int64_t answered(const std::string& text) {
  auto msg = Json::parse(text);
  if (!msg || !msg->is_object() || msg->find("method"))
    return 0;
  auto* id = msg->find("id");
  return id && id->is_int() ? id->as_int() : 0;
}

std::string trimmed(std::string s) {
  auto first = s.find_first_not_of(" \t\r\n");
  auto last = s.find_last_not_of(" \t\r\n");
  return first == std::string::npos ? "" : s.substr(first, last - first + 1);
}

} // namespace

struct McpSseTransport::Impl : std::enable_shared_from_this<McpSseTransport::Impl> {
  IoThread* io = nullptr;
  McpServerConfig server;
  Deliver deliver;
  Failed failed;
  SessionLost lost;
  std::atomic<bool> closing{false};
  std::atomic<uint64_t> gen{0}; // the session: its stream ends when this moves on
  mutable std::mutex mtx;       // guards what follows
  std::condition_variable ready; // the sender's wake: something to POST, or the end
  struct Outgoing {
    std::string body;
    int64_t request = 0; // its id; 0: a notification or response
    uint64_t gen = 0;    // the session it was sent in
    bool initialize = false;
  };
  std::deque<Outgoing> queue; // not POSTed yet, in order
  // -- the stream of session `gen` --
  bool opened = false;     // its GET was started
  std::string endpoint;    // where to POST ("" until the server named it)
  std::string ended;       // why it can no longer be used ("" it can)
  bool ended_transient = true;
  std::set<int64_t> out;   // requests POSTed in it whose answer has not come
  WorkerThreads streams; // every session's, joined once done or at close
  std::thread sender;

  std::string where() const { return fmt::format("MCP server `{}` ({})", server.name, server.url); }

  void deliver_later(std::string text) {
    io->post([self = shared_from_this(), text = std::move(text)] {
      if (!self->closing)
        self->deliver(text, 0);
    });
  }

  void fail_later(int64_t id, std::string why, bool transient) {
    io->post([self = shared_from_this(), id, why = std::move(why), transient] {
      if (!self->closing)
        self->failed(id, why, transient);
    });
  }

  void lost_later(int64_t id, std::string session, std::string why) {
    if (!lost)
      return fail_later(id, std::move(why), true);
    io->post([self = shared_from_this(), id, session = std::move(session), why = std::move(why)] {
      if (!self->closing)
        self->lost(id, session, why);
    });
  }

  /// The requests out fail with `why` (their answers cannot come): mtx held.
  void fail_out(const std::string& why) {
    for (auto id : std::exchange(out, {}))
      fail_later(id, why, true);
  }

  HttpPost to(const std::string& url) const {
    HttpPost p;
    p.url = url;
    for (auto& [name, value] : server.headers)
      p.headers.push_back(name + ": " + value);
    return p;
  }

  /// The endpoint event's URI taken (the first one): where to POST, when it is on the
  /// url's origin. False: the stream is to end, the server refused.
  bool take_endpoint(uint64_t g, const std::string& data) {
    auto target = same_origin_target(server.url, trimmed(data));
    std::lock_guard lock(mtx);
    if (gen != g || !endpoint.empty() || !ended.empty())
      return true;
    if (target.empty()) {
      ended = fmt::format("{} named `{}` as where to send its messages, which is not on its own scheme, host "
                          "and port: jp-actors sends nothing there (the headers, a token among them, would go "
                          "with it)",
                          where(), cut_text(trimmed(data), 200));
      ended_transient = false;
      ready.notify_all();
      return false;
    }
    endpoint = target;
    ready.notify_all();
    return true;
  }

  /// Session `g`'s stream, on a thread of its own: the endpoint taken, messages
  /// delivered, until it ends or the session does.
  void stream(uint64_t g) {
    bool refused = false;
    auto over = [&] { return refused || closing || gen != g; };
    HttpLimits limits;
    limits.connect_timeout = millis(server.start_timeout_secs);
    limits.idle_timeout = std::chrono::hours(24 * 7); // the server may have nothing to say for long
    auto end = open_event_stream(to(server.url), limits, [&](const SseEvent& e) {
      if (e.event == "endpoint") {
        refused = !take_endpoint(g, e.data);
        return;
      }
      if (e.data.empty() || (!e.event.empty() && e.event != "message"))
        return;
      if (auto id = answered(e.data)) {
        std::lock_guard lock(mtx);
        out.erase(id);
      }
      deliver_later(e.data);
    }, over);
    std::lock_guard lock(mtx);
    if (closing || gen != g || refused)
      return;
    if (endpoint.empty()) {
      bool got = end.http.failure == http_failure::none && !end.not_stream && end.http.status / 100 == 2;
      ended = got ? fmt::format("{} ended its event stream without naming where to send messages (no `endpoint` "
                                "event): it may not speak the legacy HTTP+SSE transport (transport = \"sse\"); "
                                "for Streamable HTTP give transport = \"http\"",
                                where())
                  : fmt::format("{} did not open its event stream (GET): {}{}", where(), describe_end(end),
                                // A Streamable HTTP server refuses a GET without its
                                // session: 405, or 400 (the SDKs), or 404.
                                end.http.status == 405 || end.http.status == 404 || end.http.status == 400 ||
                                    end.not_stream
                                  ? "; a server of Streamable HTTP takes transport = \"http\""
                                  : "");
      ended_transient = end.http.failure != http_failure::none || end.http.status >= 500;
    } else {
      ended = fmt::format("{} ended its event stream, which was the session ({})", where(), describe_end(end));
    }
    fail_out(ended + ": the answer cannot come");
    ready.notify_all();
  }

  /// Whether the sender can take the queue's first message (mtx held).
  bool can_take() const {
    if (queue.empty())
      return false;
    return queue.front().gen != gen || !endpoint.empty() || !ended.empty();
  }

  /// POSTs what is sent, one at a time, in order, until close. On a thread of its own.
  void send_all() {
    std::unique_lock lock(mtx);
    for (;;) {
      ready.wait(lock, [this] { return closing || can_take(); });
      if (closing)
        return;
      auto next = std::move(queue.front());
      queue.pop_front();
      if (next.gen != gen || !ended.empty()) {
        // Its session is over: a request was not run, and is sent again in a new one
        // (McpClient, told it is lost); one the session never took fails with why.
        if (!next.request)
          continue;
        // The session's initialize fails with why; any other request is lost, and the
        // client starts a new session (and stream) for it once -- a server down when
        // the last one was started is reached again once it is back.
        if (next.gen == gen && endpoint.empty() && next.initialize)
          fail_later(next.request, ended, ended_transient);
        else
          lost_later(next.request, next.gen == gen ? endpoint : "",
                     next.gen == gen ? ended : fmt::format("{}: its session ended before the request went", where()));
        continue;
      }
      auto url = endpoint;
      if (next.request)
        out.insert(next.request); // before the POST: its answer may come before the 202
      lock.unlock();
      auto r = post(url, next.body);
      lock.lock();
      bool ok = r.failure == http_failure::none && r.status / 100 == 2;
      if (ok || !next.request || closing || !out.erase(next.request))
        continue; // a refused notification has nobody to tell
      // The server forgot the session (the Python SDK says so); not for initialize,
      // which begins one: a 404 there is an endpoint that is none, and a new session
      // would meet it again.
      if (r.status == 404 && !next.initialize)
        lost_later(next.request, url,
                   fmt::format("{} no longer knows the session jp-actors had with it (HTTP 404: {})", where(),
                               r.error_body.empty() ? "(no body)" : cut_text(r.error_body, 300)));
      else
        fail_later(next.request,
                   r.failure == http_failure::none
                     ? fmt::format("{} refused the request: HTTP {}: {}", where(), r.status,
                                   r.error_body.empty() ? "(no body)" : cut_text(r.error_body, 300))
                     : fmt::format("{}: the request did not reach it: {}", where(), r.failure_text),
                   r.failure != http_failure::none || r.status >= 500 || r.status == 429);
    }
  }

  /// One message POSTed to `url`; what the answer's body says is not read (the
  /// answer comes on the stream).
  HttpResult post(const std::string& url, const std::string& body) {
    auto p = to(url);
    p.body = body;
    p.headers.push_back("Content-Type: application/json");
    HttpLimits limits;
    limits.connect_timeout = millis(server.start_timeout_secs);
    // A server may run a request before its 202: the request's own timer bounds that.
    limits.idle_timeout = std::chrono::hours(24 * 7);
    return http_post_stream(p, limits, [](std::string_view) { return body_next::more; },
                            [this] { return closing.load(); });
  }
};

McpSseTransport::McpSseTransport(IoThread& io, const McpServerConfig& server, Deliver deliver, Failed failed,
                                 SessionLost lost)
    : impl_(std::make_shared<Impl>()) {
  impl_->io = &io;
  impl_->server = server;
  impl_->deliver = std::move(deliver);
  impl_->failed = std::move(failed);
  impl_->lost = std::move(lost);
  impl_->sender = std::thread([self = impl_] { self->send_all(); });
}

McpSseTransport::~McpSseTransport() {
  close();
}

void McpSseTransport::send(const Json& message) {
  auto* method = message.find("method");
  auto* id = message.find("id");
  int64_t request = method && id && id->is_int() ? id->as_int() : 0;
  auto& x = *impl_;
  std::lock_guard lock(x.mtx);
  if (x.closing)
    return;
  if (!x.opened) { // the session's stream, which names where this goes
    x.opened = true;
    x.streams.start([self = impl_, g = x.gen.load()] {
      self->stream(g);
      std::lock_guard lock(self->mtx);
      self->streams.done();
    });
  }
  bool initialize = method && method->is_string() && method->as_string() == "initialize";
  x.queue.push_back({message.dump(), request, x.gen, initialize});
  x.ready.notify_all();
}

void McpSseTransport::abandon(int64_t id) {
  std::lock_guard lock(impl_->mtx);
  impl_->out.erase(id);
}

void McpSseTransport::set_version(const std::string&) {}

std::string McpSseTransport::session() const {
  std::lock_guard lock(impl_->mtx);
  return impl_->endpoint;
}

void McpSseTransport::new_session() {
  auto& x = *impl_;
  std::lock_guard lock(x.mtx);
  x.fail_out(fmt::format("{}: its session was ended (a new one started) before the answer came", x.where()));
  ++x.gen; // its stream stops within a second
  x.opened = false;
  x.endpoint.clear();
  x.ended.clear();
  x.ended_transient = true;
  x.ready.notify_all();
}

void McpSseTransport::close() {
  auto& x = *impl_;
  std::list<std::thread> streams;
  {
    std::lock_guard lock(x.mtx);
    if (x.closing)
      return;
    x.closing = true; // the stream and the POST out stop within a second
    x.ready.notify_all();
    streams = x.streams.take_all();
  }
  for (auto& t : streams)
    t.join();
  if (x.sender.joinable())
    x.sender.join();
}

} // namespace jp
