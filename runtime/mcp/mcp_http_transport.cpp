#include "runtime/mcp/mcp_http_transport.hpp"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <fmt/format.h>
#include <future>
#include <list>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include "messages/terminal_safe.hpp"
#include "runtime/mcp/mcp_event_stream.hpp"
#include "runtime/mcp/worker_threads.hpp"
#include "runtime/mcp/mcp_url.hpp"
#include "runtime/process/io_thread.hpp"
#include "runtime/provider/http_stream.hpp"
#include "runtime/provider/sse.hpp"
#include "runtime/text_nocase.hpp"

namespace jp {

namespace {

constexpr auto kDeleteWait = std::chrono::seconds(5); // the session's end, at most
constexpr int kMaxHops = 5; // redirects (307, 308) followed on one origin before giving up

/// What a refusal says: a JSON-RPC error's message, else the body's start.
std::string refusal_text(const std::string& body) {
  if (auto j = Json::parse(body); j && j->is_object())
    if (auto* e = j->find("error"); e && e->is_object())
      if (auto* m = e->find("message"); m && m->is_string())
        return m->as_string();
  return body.empty() ? "(no body)" : cut_text(body, 300);
}

/// Whether `text` may be a JSON-RPC message (an object, or a batch's array): its
/// first character past blanks. The client parses it; this only names what is not.
bool looks_like_json(std::string_view text) {
  auto at = text.find_first_not_of(" \t\r\n");
  return at != std::string_view::npos && (text[at] == '{' || text[at] == '[');
}

// A GET stream that lasted this long worked, though it brought nothing (a quiet
// server's stream that a proxy cuts after a while).
constexpr auto kStreamWorked = std::chrono::seconds(10);

} // namespace

struct McpHttpTransport::Impl : std::enable_shared_from_this<McpHttpTransport::Impl> {
  IoThread* io = nullptr;
  McpServerConfig server;
  Deliver deliver;
  Failed failed;
  SessionLost lost;
  std::atomic<bool> closing{false};
  std::atomic<uint64_t> session_gen{0}; // a new session (new_session) ends the last one's GET stream
  std::condition_variable wake;         // the GET stream's wait to reopen, cut short by both
  std::atomic<bool> gave_up{false};     // its giving up is said once
  std::mutex mtx; // guards what follows
  std::string url; // server.url, or where it redirected a POST to (307/308, same origin)
  std::string session_id;
  std::string version;
  std::shared_future<void> last_note; // the last notification's POST: what comes after waits for it
  std::map<int64_t, std::shared_ptr<std::atomic<bool>>> out; // requests' POSTs out, each its stop flag
  WorkerThreads threads; // the POSTs' and the GET stream's

  void deliver_later(std::string text, int64_t request) {
    // What the server says of its own (request 0) not once its session is over: a
    // request of the old one means nothing in a new one. An answer is still one.
    io->post([self = shared_from_this(), text = std::move(text), request, gen = session_gen.load()] {
      if (!self->closing && (request != 0 || self->session_gen == gen))
        self->deliver(text, request);
    });
  }

  void fail_later(int64_t id, std::string why, bool transient) {
    io->post([self = shared_from_this(), id, why = std::move(why), transient] {
      if (!self->closing)
        self->failed(id, why, transient);
    });
  }

  /// `sent_session`: the session id it goes with ("" none).
  HttpPost request_to(std::string method, std::string body, std::string* sent_session = nullptr) {
    HttpPost p;
    p.method = std::move(method);
    p.body = std::move(body);
    if (p.method != "GET") // a GET says what it accepts itself (open_event_stream)
      p.headers = {"Content-Type: application/json", "Accept: application/json, text/event-stream"};
    {
      std::lock_guard lock(mtx);
      p.url = url;
      if (!session_id.empty())
        p.headers.push_back("Mcp-Session-Id: " + session_id);
      if (sent_session)
        *sent_session = session_id;
      if (!version.empty())
        p.headers.push_back("MCP-Protocol-Version: " + version);
    }
    for (auto& [name, value] : server.headers)
      p.headers.push_back(name + ": " + value);
    return p;
  }

  /// One POST and what comes back, on a thread of its own.
  void exchange(std::string body, std::shared_future<void> before, std::shared_ptr<std::promise<void>> mine,
                int64_t request, bool initialize, std::shared_ptr<std::atomic<bool>> abandoned) {
    if (before.valid())
      before.wait();
    std::string sent_session;
    auto post = request_to("POST", std::move(body), &sent_session);
    HttpLimits limits;
    limits.connect_timeout = std::chrono::milliseconds(static_cast<int64_t>(server.start_timeout_secs * 1000));
    // A request's answer may be a long quiet stream: its own timer bounds the wait. A
    // notification's is a 202 at once, and what comes after it waits for it.
    limits.idle_timeout =
      request ? std::chrono::milliseconds(std::chrono::hours(24 * 7))
              : std::chrono::milliseconds(
                  static_cast<int64_t>(std::min(server.start_timeout_secs, server.timeout_secs) * 1000));
    // An answer (a JSON body, an event) is bounded as on the other transports; a
    // stream's sum is not (a long call's progress and logs may pass any bound).
    limits.max_body_bytes = SIZE_MAX;
    bool stream = false;
    bool too_large = false; // a JSON body past kMaxEventBytes
    std::string whole;
    std::string content_type;
    std::string odd; // what came that is no JSON-RPC message (cut), for the failure
    SseParser events(kMaxEventBytes);
    auto on_head = [&](const HttpResult& head) {
      content_type = head.content_type;
      stream = contains_nocase(head.content_type, "text/event-stream");
      if (auto sid = head.header("mcp-session-id"); initialize && !sid.empty()) {
        std::lock_guard lock(mtx);
        session_id = sid;
      }
    };
    auto on_body = [&](std::string_view bytes) {
      if (!stream) {
        too_large = whole.size() + bytes.size() > kMaxEventBytes;
        if (too_large)
          return body_next::stop;
        whole.append(bytes);
        return body_next::more;
      }
      events.feed(bytes, [&](const SseEvent& e) {
        if (e.data.empty())
          return;
        if (!looks_like_json(e.data))
          odd = cut_text(e.data, 120);
        deliver_later(e.data, request);
      });
      return events.overflowed() ? body_next::stop : body_next::more;
    };
    auto stop = [this, &abandoned] { return closing || (abandoned && *abandoned); };
    auto r = http_post_stream(post, limits, on_body, stop, on_head);
    // A server mounted at `/mcp/` answers `/mcp` with a redirect (Starlette's 307):
    // followed on the same origin, a few times at most, and kept for what follows.
    int hops = 0;
    for (; (r.status == 307 || r.status == 308) && hops < kMaxHops && !stop(); ++hops) {
      auto target = same_origin_target(post.url, std::string(r.header("location")));
      if (target.empty())
        break;
      post.url = target;
      {
        std::lock_guard lock(mtx);
        url = target;
      }
      r = http_post_stream(post, limits, on_body, stop, on_head);
    }
    if (mine)
      mine->set_value();
    if (request) {
      std::lock_guard lock(mtx);
      out.erase(request);
    }
    if (abandoned && *abandoned)
      return; // its caller has its answer already
    bool ok = r.failure == http_failure::none && r.status >= 200 && r.status <= 299;
    if (ok && !stream && !whole.empty()) {
      if (!looks_like_json(whole))
        odd = cut_text(whole, 120);
      deliver_later(std::move(whole), request);
    }
    if (!request || closing)
      return; // a notification's refusal has nobody to tell
    auto where = fmt::format("MCP server `{}` ({})", server.name, server.url);
    if (too_large || events.overflowed()) // the same again would be as large
      return fail_later(request, fmt::format("{} sent {} of more than {} MiB", where,
                                             too_large ? "an answer" : "an event", kMaxEventBytes >> 20),
                        false);
    switch (r.failure) {
    case http_failure::none:
      if (ok && !odd.empty()) // a page of a proxy or a login, or a server's stray print
        return fail_later(request,
                          fmt::format("{} answered HTTP {} with {} that is no JSON-RPC message (MCP's answer is "
                                      "application/json or an event stream of JSON-RPC messages): {}",
                                      where, r.status,
                                      stream ? std::string("an event stream holding data")
                                             : fmt::format("a body (Content-Type `{}`)",
                                                           content_type.empty() ? "none" : cut_text(content_type, 60)),
                                      json_quote(odd)),
                          false);
      if (ok)
        return fail_later(request, fmt::format("{} ended its answer without the response", where), true);
      if (r.status == 404 && !initialize && !sent_session.empty()) {
        auto why = fmt::format("{} no longer knows the session jp-actors had with it (HTTP 404: {})", where,
                               refusal_text(r.error_body));
        if (!lost)
          return fail_later(request, why, false);
        return io->post([self = shared_from_this(), request, sent_session, why] {
          if (!self->closing)
            self->lost(request, sent_session, why);
        });
      }
      if (r.status == 401) {
        // OAuth (MCP's authorization) is not done here: say what will do.
        std::string_view metadata = r.header("www-authenticate");
        auto at = metadata.find("resource_metadata=\"");
        metadata = at == std::string_view::npos ? std::string_view() : metadata.substr(at + 19);
        metadata = metadata.substr(0, metadata.find('"'));
        // With an Authorization header configured, it was sent and refused.
        bool sent = std::any_of(server.headers.begin(), server.headers.end(),
                                [](auto& h) { return equals_nocase(h.first, "authorization"); });
        return fail_later(request, fmt::format("{} {} (HTTP 401: {}){}; jp-actors does not do "
                                               "MCP's OAuth: give a token in its headers (e.g. Authorization = "
                                               "\"Bearer ${{MY_TOKEN}}\", from your environment), or reach it "
                                               "through a local proxy that does (e.g. command = [\"npx\", "
                                               "\"mcp-remote\", \"{}\"])",
                                               where,
                                               sent ? "refused the Authorization header of its config (a token "
                                                      "wrong or expired?)"
                                                    : "wants authorization",
                                               refusal_text(r.error_body),
                                               metadata.empty() ? std::string()
                                                                : fmt::format(" by OAuth ({})", cut_text(metadata, 200)),
                                               server.url),
                          false);
      }
      if ((r.status == 307 || r.status == 308) && hops == kMaxHops)
        return fail_later(request, fmt::format("{} redirected the request {} times over (HTTP {}, last to `{}`): a "
                                               "loop, or a chain jp-actors does not follow; set the server's url to "
                                               "where it ends",
                                               where, kMaxHops + 1, r.status, cut_text(r.header("location"), 200)),
                          false);
      if (r.status >= 300 && r.status <= 399)
        return fail_later(request, fmt::format("{} redirected the request (HTTP {}) to `{}`, which jp-actors "
                                               "follows only to the same scheme, host and port with 307 or 308: "
                                               "set the server's url to where it points",
                                               where, r.status, cut_text(r.header("location"), 200)),
                          false);
      // A server of the legacy transport takes no POST at its stream's url.
      return fail_later(request, fmt::format("{} refused the request: HTTP {}: {}{}", where, r.status,
                                             refusal_text(r.error_body),
                                             initialize && (r.status == 404 || r.status == 405)
                                               ? "; if it speaks the legacy HTTP+SSE transport (MCP 2024-11-05, "
                                                 "an `/sse` url), give transport = \"sse\""
                                               : ""),
                        r.status >= 500 || r.status == 429);
    case http_failure::connect:
      return fail_later(request, fmt::format("{} cannot be reached: {}", where, r.failure_text), true);
    default:
      return fail_later(request, fmt::format("{}: the connection broke: {}", where, r.failure_text), true);
    }
  }

  /// The server's own event stream (GET) for session `gen`, opened once `before` (the
  /// notifications/initialized POST) is done, and again each time it ends, until the
  /// session does, the server has none (405), or it failed too often. On a thread
  /// of its own.
  void listen(uint64_t gen, std::shared_future<void> before) {
    before.wait();
    auto over = [this, gen] { return closing || session_gen != gen; };
    HttpLimits limits;
    limits.connect_timeout = std::chrono::milliseconds(static_cast<int64_t>(server.start_timeout_secs * 1000));
    limits.idle_timeout = std::chrono::hours(24 * 7); // a server may have nothing to say for long
    ReopenBackoff backoff;
    while (!over()) {
      auto opened = std::chrono::steady_clock::now();
      auto end = open_event_stream(
        request_to("GET", ""), limits,
        [this](const SseEvent& e) {
          if (!e.data.empty() && (e.event.empty() || e.event == "message"))
            deliver_later(e.data, 0);
        },
        over);
      if (end.stopped || over())
        return;
      // 405: the server offers no such stream (MCP lets it). 404: it forgot the
      // session, which the next request finds out, starting a new one, and a stream.
      if (!end.not_stream && (end.http.status == 405 || end.http.status == 404))
        return;
      // Another refusal (4xx), or no event stream: asking again changes nothing. Not
      // a timeout, a stream of the session still open on its side (409: the SDKs
      // allow one), or too many requests: those pass.
      auto status = end.http.status;
      if (end.not_stream || (status / 100 == 4 && status != 408 && status != 409 && status != 429))
        return note_given_up(fmt::format("it refused the stream ({})", describe_end(end)));
      // Worked: it stayed open a while (one that says a thing and ends is asked again
      // later and later, as one that fails).
      bool worked = std::chrono::steady_clock::now() - opened >= kStreamWorked;
      std::unique_lock lock(mtx);
      wake.wait_for(lock, backoff.after(worked), over);
    }
  }

  /// Says once, on stderr, that the server's own stream is no longer listened to.
  void note_given_up(const std::string& why) {
    if (gave_up.exchange(true))
      return;
    std::fprintf(stderr,
                 "jp-actors: note: MCP server `%s` (%s): its event stream (GET): %s; what the server says "
                 "outside of an answer (a list change, a log message) is not heard in this session\n",
                 server.name.c_str(), server.url.c_str(), shown_on(STDERR_FILENO, why).c_str());
  }

  /// Runs `work` on a thread of its own, joined once done or at close (mtx held).
  void start_thread(std::function<void()> work) {
    threads.start([self = shared_from_this(), work = std::move(work)] {
      work();
      std::lock_guard lock(self->mtx);
      self->threads.done();
    });
  }
};

McpHttpTransport::McpHttpTransport(IoThread& io, const McpServerConfig& server, Deliver deliver, Failed failed,
                                   SessionLost lost)
    : impl_(std::make_shared<Impl>()) {
  impl_->io = &io;
  impl_->server = server;
  impl_->url = server.url;
  impl_->deliver = std::move(deliver);
  impl_->failed = std::move(failed);
  impl_->lost = std::move(lost);
}

McpHttpTransport::~McpHttpTransport() {
  close();
}

void McpHttpTransport::send(const Json& message) {
  auto* method = message.find("method");
  auto* id = message.find("id");
  bool request = method && id;
  int64_t request_id = request && id->is_int() ? id->as_int() : 0;
  bool initialize = request && method->is_string() && method->as_string() == "initialize";
  auto& x = *impl_;
  std::lock_guard lock(x.mtx);
  if (x.closing)
    return;
  auto before = x.last_note;
  std::shared_ptr<std::promise<void>> mine;
  if (!request) { // what comes after a notification or response waits for it
    mine = std::make_shared<std::promise<void>>();
    x.last_note = mine->get_future().share();
  }
  std::shared_ptr<std::atomic<bool>> abandoned;
  if (request_id != 0)
    x.out[request_id] = abandoned = std::make_shared<std::atomic<bool>>(false);
  x.start_thread([self = impl_.get(), body = message.dump(), before, mine, request_id, initialize,
                  abandoned]() mutable {
    self->exchange(std::move(body), std::move(before), std::move(mine), request_id, initialize, std::move(abandoned));
  });
  // The session is initialized once this is out: the server's own stream opens then.
  if (!request && method && method->is_string() && method->as_string() == "notifications/initialized")
    x.start_thread([self = impl_.get(), gen = x.session_gen.load(), done = x.last_note] {
      self->listen(gen, done);
    });
}

void McpHttpTransport::abandon(int64_t id) {
  std::lock_guard lock(impl_->mtx);
  if (auto it = impl_->out.find(id); it != impl_->out.end())
    *it->second = true;
}

void McpHttpTransport::set_version(const std::string& version) {
  std::lock_guard lock(impl_->mtx);
  impl_->version = version;
}

std::string McpHttpTransport::session() const {
  std::lock_guard lock(impl_->mtx);
  return impl_->session_id;
}

void McpHttpTransport::new_session() {
  std::lock_guard lock(impl_->mtx);
  impl_->session_id.clear();
  impl_->version.clear();
  ++impl_->session_gen; // its GET stream ends
  impl_->wake.notify_all();
}

void McpHttpTransport::close() {
  auto& x = *impl_;
  std::list<std::thread> all;
  {
    std::lock_guard lock(x.mtx);
    if (x.closing)
      return;
    x.closing = true; // each POST out, and the GET stream, stops within a second
    x.wake.notify_all();
    all = x.threads.take_all();
  }
  for (auto& t : all)
    t.join();
  {
    std::lock_guard lock(x.mtx); // new_session may clear it on the io thread meanwhile
    if (x.session_id.empty())
      return;
  }
  HttpLimits limits;
  limits.connect_timeout = kDeleteWait;
  limits.idle_timeout = kDeleteWait;
  // Best effort: a server that is gone has ended the session already.
  http_post_stream(x.request_to("DELETE", ""), limits, [](std::string_view) { return body_next::more; }, [] { return false; });
}

} // namespace jp
