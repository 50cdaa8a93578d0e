#include "runtime/mcp/mcp_http_server.hpp"

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <algorithm>
#include <deque>
#include <fmt/format.h>
#include <future>
#include <map>
#include <optional>
#include <vector>

#include "config/placeholder.hpp" // trim_blanks
#include "messages/json.hpp"
#include "runtime/mcp/mcp_protocol.hpp"
#include "runtime/node/loopback_peer_check.hpp"
#include "runtime/node/node_address.hpp"
#include "runtime/node/node_refusal_log.hpp"
#include "runtime/node/node_token.hpp"
#include "runtime/process/io_thread.hpp"
#include "runtime/process/private_file.hpp"
#include "runtime/provider/http_stream.hpp"
#include "runtime/text_nocase.hpp"

namespace jp {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

namespace {

constexpr size_t kBodyMax = mcp::message_max; // a larger one is refused (413)
constexpr size_t kHeaderMax = 16u << 10;  // (431)
constexpr auto kHeaderTimeout = std::chrono::seconds(10); // a request's header not read by then: closed
constexpr auto kReadTimeout = std::chrono::seconds(30);   // its body (read once the header is let in), likewise
constexpr size_t kMaxConnections = 256;
// Connections that have not shown the token yet: past this many the oldest is
// closed, so that nobody without the token holds every slot by sending nothing (a
// client with it shows it in its first header, at once).
constexpr size_t kMaxUnproven = 32;
constexpr size_t kMaxSessions = 64;

std::string_view reason_of(int status) {
  switch (status) {
  case 200: return "OK";
  case 202: return "Accepted";
  case 400: return "Bad Request";
  case 401: return "Unauthorized";
  case 403: return "Forbidden";
  case 404: return "Not Found";
  case 405: return "Method Not Allowed";
  case 406: return "Not Acceptable";
  case 413: return "Content Too Large";
  case 415: return "Unsupported Media Type";
  case 431: return "Request Header Fields Too Large";
  default: return "Service Unavailable";
  }
}

/// The host of "host", "host:port" or "[v6]:port"; "" when anything but a port
/// follows it ("127.0.0.1:8808@evil" names no host of ours).
std::string host_of(std::string_view authority) {
  std::string_view host, rest;
  if (authority.starts_with("[")) {
    auto close = authority.find(']');
    if (close == std::string_view::npos)
      return {};
    host = authority.substr(1, close - 1);
    rest = authority.substr(close + 1);
  } else {
    auto colon = authority.find(':');
    host = authority.substr(0, colon);
    rest = colon == std::string_view::npos ? std::string_view() : authority.substr(colon);
  }
  auto port = rest.substr(rest.empty() ? 0 : 1);
  if (!rest.empty() && (rest[0] != ':' || port.empty() || port.size() > 5 ||
                        port.find_first_not_of("0123456789") != std::string_view::npos))
    return {};
  return std::string(host);
}

} // namespace

struct McpHttpConnection;

/// A session: its port, and the event streams open for its requests.
struct McpHttpSession {
  McpSessionPort port;
  std::string version; // agreed at initialize
  bool ending = false;
  std::chrono::steady_clock::time_point active = std::chrono::steady_clock::now(); // its last request or message
  // Open event streams by request id (JSON text): held here, as no read or write of
  // theirs is pending while they wait for the session's next message. A batch's
  // requests share one.
  std::map<std::string, std::shared_ptr<McpHttpConnection>> streams;
  std::map<std::string, std::string> progress;                     // progress token (JSON text) -> request id
  std::vector<std::string> order;                                  // request ids, oldest first
};

struct McpHttpServer::State : std::enable_shared_from_this<McpHttpServer::State> {
  State(IoThread& io) : io(&io), acceptor(io.context()), sweeper(io.context()) {}
  IoThread* io;
  tcp::acceptor acceptor;
  asio::steady_timer sweeper; // ends idle sessions
  std::chrono::milliseconds idle{0};
  std::string token;
  McpSessionOpener open;
  uint16_t port = 0;
  // -- on the io thread only --
  std::map<std::string, std::shared_ptr<McpHttpSession>> sessions; // by Mcp-Session-Id
  size_t connections = 0;
  std::deque<std::weak_ptr<McpHttpConnection>> unproven; // accepted, no token shown yet
  int refused_others = 0; // connections of other users closed at their accept
  bool closed = false;

  void accept();
  /// Sends `text` of session `sid` where it belongs: a response ends its request's
  /// stream; a message `related` to a request (or progress for it) goes on that
  /// request's stream while open, else on the newest.
  void route(const std::string& sid, const std::string& text, const std::string& related);
  /// Ends the session `sid` (DELETE, or idle); `done` once it has (io thread).
  void end_session(const std::string& sid, std::function<void()> done);
  /// Ends the sessions idle past `idle`, and looks again later.
  void sweep();
  /// Whether a new session may open (else why not): fewer than kMaxSessions are open,
  /// or one of them (the one used least recently with no call in flight) is ended to
  /// make room. Clients that never DELETE (a restarted one starts anew) so do not fill
  /// the server.
  Status room_for_a_session();
  /// Request `key` is done: its stream (if still held) leaves the session.
  std::shared_ptr<McpHttpConnection> take_stream(McpHttpSession& s, const std::string& key);
  /// Request `key`'s stream ends without its answer (the client cancelled it: none
  /// comes), so it no longer holds its session from ending when idle.
  void end_stream(McpHttpSession& s, const std::string& key);
  /// Whether `conn`'s stream still owes a response (a batch's has several).
  bool owes(McpHttpSession& s, const McpHttpConnection& conn) {
    return std::any_of(s.streams.begin(), s.streams.end(), [&](auto& c) { return c.second.get() == &conn; });
  }
  /// Where a message that belongs to no request goes: the newest open stream.
  std::shared_ptr<McpHttpConnection> newest_stream(McpHttpSession& s);
  std::function<void(const std::string&, const std::string&)> writer(const std::string& sid) {
    return [weak = weak_from_this(), sid](const std::string& text, const std::string& related) {
      if (auto st = weak.lock())
        st->io->post([weak, sid, text, related] {
          if (auto s = weak.lock())
            s->route(sid, text, related);
        });
    };
  }
};

using ServerState = McpHttpServer::State;

/// One client connection: reads a request, answers it (at once, or as an event
/// stream that the session's messages fill), then reads the next.
struct McpHttpConnection : std::enable_shared_from_this<McpHttpConnection> {
  McpHttpConnection(tcp::socket s, std::shared_ptr<ServerState> st) : stream(std::move(s)), server(st) {
    ++st->connections;
  }
  ~McpHttpConnection() {
    if (auto st = server.lock())
      --st->connections;
  }

  beast::tcp_stream stream;
  beast::flat_buffer buffer;
  std::optional<http::request_parser<http::string_body>> parser;
  std::weak_ptr<ServerState> server;
  std::deque<std::string> out; // bytes to write, in order
  bool writing = false;
  bool keep_alive = true;
  bool chunked = true;    // the client reads HTTP/1.1's chunks (an HTTP/1.0 one does not)
  bool streaming = false; // an event stream is open: reading waits for its end
  bool watching = false;  // a read is out while the stream is, to notice the client leave
  bool proven = false;    // it showed the token (let in once)
  bool closed = false;

  /// The header first: a request is let in (loopback names, the token) before its
  /// body is read, so a client without the token holds no body's memory.
  void read_request() {
    if (closed)
      return;
    parser.emplace();
    parser->body_limit(kBodyMax);
    parser->header_limit(kHeaderMax);
    stream.expires_after(kHeaderTimeout);
    http::async_read_header(stream, buffer, *parser,
                            [self = shared_from_this()](beast::error_code ec, size_t) { self->on_header(ec); });
  }

  void on_header(beast::error_code ec) {
    if (ec == http::error::header_limit) {
      keep_alive = false;
      return respond(431, fmt::format("the headers may have at most {} KiB", kHeaderMax >> 10));
    }
    if (ec == http::error::body_limit) { // its Content-Length says so already
      keep_alive = false;
      return respond(413, fmt::format("a message may have at most {} MiB", kBodyMax >> 20));
    }
    // What is not HTTP (a garbage request line) is told so; a client that left or went
    // quiet is not (nobody would read it).
    if (ec.category() == http::make_error_code(http::error::bad_method).category() &&
        ec != http::error::end_of_stream && ec != http::error::partial_message) {
      keep_alive = false;
      return respond(400, fmt::format("not an HTTP/1.1 request ({}): MCP's Streamable HTTP is POST /mcp", ec.message()));
    }
    if (ec)
      return close(); // the client left or went quiet
    if (!let_in(parser->get()))
      return;
    if (parser->is_done())
      return on_read({});
    // curl asks so before a body over 1 KiB, and waits a second for the answer.
    if (equals_nocase(parser->get()[http::field::expect], "100-continue")) {
      static constexpr std::string_view go_on = "HTTP/1.1 100 Continue\r\n\r\n";
      return asio::async_write(stream, asio::buffer(go_on.data(), go_on.size()),
                               [self = shared_from_this()](beast::error_code ec, size_t) {
                                 if (self->closed)
                                   return;
                                 if (ec)
                                   return self->close();
                                 self->read_body();
                               });
    }
    read_body();
  }

  void read_body() {
    stream.expires_after(kReadTimeout);
    http::async_read(stream, buffer, *parser,
                     [self = shared_from_this()](beast::error_code ec, size_t) { self->on_read(ec); });
  }

  void on_read(beast::error_code ec) {
    if (ec == http::error::body_limit) {
      keep_alive = false;
      return respond(413, fmt::format("a message may have at most {} MiB", kBodyMax >> 20));
    }
    if (ec)
      return close();
    stream.expires_never();
    auto req = parser->release();
    keep_alive = req.keep_alive();
    // HTTP/1.0 knows no chunks: its event stream is the bytes until the close.
    chunked = req.version() >= 11;
    if (!chunked)
      keep_alive = false;
    handle(req);
  }

  /// While a stream is open no request is read: a read notices the client leave (its
  /// stream then no longer holds the session from ending when idle). What comes is
  /// the next request's (pipelined), kept for it while the watch goes on, up to a
  /// request's header: a client that sends more waits for the stream's end.
  void watch_client() {
    auto room = kHeaderMax > buffer.size() ? kHeaderMax - buffer.size() : 0;
    if (room == 0)
      return;
    watching = true;
    stream.socket().async_read_some(buffer.prepare(std::min<size_t>(room, 4096)),
                                    [self = shared_from_this()](beast::error_code ec, size_t n) {
      self->watching = false;
      if (self->closed)
        return;
      if (!ec && n > 0) {
        self->buffer.commit(n);
        if (self->streaming)
          return self->watch_client();
      } else if (ec != asio::error::operation_aborted) {
        return self->close(); // gone (or half-closed: nobody reads a stream after that)
      }
      if (!self->streaming && !self->writing)
        self->next_request();
    });
  }

  /// The answer is out: the next request, or the end.
  void next_request() {
    if (watching) { // its end comes back here
      beast::error_code ignored;
      stream.socket().cancel(ignored);
      return;
    }
    if (keep_alive)
      read_request();
    else
      close();
  }

  void write(std::string bytes) {
    if (closed)
      return;
    out.push_back(std::move(bytes));
    if (!writing)
      write_next();
  }

  void write_next() {
    if (out.empty()) {
      writing = false;
      if (!streaming)
        next_request();
      return;
    }
    writing = true;
    // A deque keeps its front in place while more is pushed at the back.
    asio::async_write(stream, asio::buffer(out.front()), [self = shared_from_this()](beast::error_code ec, size_t) {
      if (self->closed)
        return;
      self->out.pop_front();
      if (ec)
        return self->close();
      self->write_next();
    });
  }

  void close() {
    if (closed)
      return;
    closed = true;
    out.clear();
    beast::error_code ignored;
    stream.socket().shutdown(tcp::socket::shutdown_both, ignored);
    stream.socket().close(ignored);
  }

  void respond(int status, std::string body, std::vector<std::string> headers = {},
               std::string_view content_type = "text/plain; charset=utf-8") {
    auto r = fmt::format("HTTP/1.1 {} {}\r\n", status, reason_of(status));
    for (auto& h : headers)
      r += h + "\r\n";
    if (!body.empty())
      r += fmt::format("Content-Type: {}\r\n", content_type);
    r += fmt::format("Content-Length: {}\r\n", body.size());
    if (!keep_alive)
      r += "Connection: close\r\n";
    r += "\r\n";
    r += body;
    write(std::move(r));
  }

  /// A JSON-RPC error in a non-2xx answer (what a client reads from the body).
  void respond_rpc_error(int status, const Json& id, int code, std::string message) {
    respond(status, mcp::error_response(id, code, std::move(message)).dump(), {}, "application/json");
  }

  void start_stream(std::vector<std::string> headers) {
    streaming = true;
    std::string r = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n";
    if (chunked)
      r += "Transfer-Encoding: chunked\r\n";
    for (auto& h : headers)
      r += h + "\r\n";
    if (!keep_alive)
      r += "Connection: close\r\n";
    write(r + "\r\n");
    watch_client();
  }

  void event(const std::string& json) {
    auto e = "event: message\ndata: " + json + "\n\n"; // JSON text holds no raw newline
    write(chunked ? fmt::format("{:x}\r\n{}\r\n", e.size(), e) : std::move(e));
  }

  void end_stream() {
    streaming = false;
    write(chunked ? "0\r\n\r\n" : ""); // unchunked, the close that follows ends it
  }

  /// Whether the request's header lets it in; answers (and then closes) when not.
  bool let_in(const http::request<http::string_body>& req);
  void handle(const http::request<http::string_body>& req);
  void handle_post(ServerState& st, const http::request<http::string_body>& req);
  void handle_delete(ServerState& st, const http::request<http::string_body>& req);
  void handle_batch(ServerState& st, McpHttpSession& session, const JsonArray& messages);
};

bool McpHttpConnection::let_in(const http::request<http::string_body>& req) {
  auto st = server.lock();
  if (!st || st->closed) {
    close();
    return false;
  }
  // Refused before its body is read: the connection closes after the answer.
  keep_alive = false;
  // One of each: with two, the check below and a proxy in front could read different ones.
  for (auto field : {http::field::host, http::field::origin, http::field::authorization})
    if (req.count(field) > 1) {
      respond(400, fmt::format("the request has more than one `{}` header: send it once",
                               std::string_view(http::to_string(field))));
      return false;
    }
  // Nor two sessions or versions, one of which would be taken without a word.
  for (std::string_view name : {"Mcp-Session-Id", "MCP-Protocol-Version"})
    if (req.count(name) > 1) {
      respond(400, fmt::format("the request has more than one `{}` header: send it once", name));
      return false;
    }
  // DNS rebinding: a page of another site that resolves to 127.0.0.1 shows its own
  // name in Host and Origin.
  auto host_header = std::string_view(req[http::field::host]);
  if (!is_loopback(host_of(host_header))) {
    respond(403, fmt::format("Host `{}` is not a loopback name: jp-actors mcp serves this machine only "
                             "(use 127.0.0.1, localhost or [::1], with a port at most)",
                             cut_text(std::string(host_header), 100)));
    return false;
  }
  if (auto origin = std::string_view(req[http::field::origin]); !origin.empty()) {
    auto scheme = origin.find("://");
    auto authority = scheme == std::string_view::npos ? std::string_view() : origin.substr(scheme + 3);
    if (authority.ends_with('/')) // no browser sends one, but it is no part of the host
      authority.remove_suffix(1);
    if (!is_loopback(host_of(authority))) { // no scheme: no authority, no host
      respond(403, fmt::format("Origin `{}` is not on this machine: requests from web pages of other sites "
                               "are refused",
                               cut_text(std::string(origin), 100)));
      return false;
    }
  }
  auto target = std::string_view(req.target());
  if (target != "/mcp" && !target.starts_with("/mcp?")) {
    respond(404, "the MCP endpoint is /mcp");
    return false;
  }
  auto auth = std::string_view(req[http::field::authorization]);
  if (auth.size() < 7 || !contains_nocase(auth.substr(0, 7), "bearer ") ||
      !same_token(std::string(auth.substr(7)), st->token)) {
    respond(401,
            "send `Authorization: Bearer <token>` with the token of the mcp-token file in jp-actors' state "
            "directory ($XDG_STATE_HOME/jp-actors, ~/.local/state/jp-actors); `jp-actors mcp --listen` "
            "prints where it is",
            {"WWW-Authenticate: Bearer"});
    return false;
  }
  keep_alive = true;
  proven = true;
  return true;
}

void McpHttpConnection::handle(const http::request<http::string_body>& req) {
  auto st = server.lock();
  if (!st || st->closed)
    return close();
  if (req.method() == http::verb::post)
    return handle_post(*st, req);
  if (req.method() == http::verb::delete_)
    return handle_delete(*st, req);
  respond(405,
          "POST a JSON-RPC message, or DELETE the session; this server opens no stream outside a request (no GET)",
          {"Allow: POST, DELETE"});
}

void McpHttpConnection::handle_post(ServerState& st, const http::request<http::string_body>& req) {
  // The media type itself, its parameters (charset) aside: application/json-seq or
  // text/plain; x=application/json is not it.
  auto media = std::string_view(req[http::field::content_type]);
  if (!equals_nocase(trim_blanks(media.substr(0, media.find(';'))), "application/json"))
    return respond(415, "POST a JSON-RPC message as Content-Type: application/json");
  auto accept = std::string_view(req[http::field::accept]);
  if (!(contains_nocase(accept, "application/json") || contains_nocase(accept, "*/*")) ||
      !(contains_nocase(accept, "text/event-stream") || contains_nocase(accept, "*/*")))
    return respond(406, "Accept must list application/json and text/event-stream (MCP's Streamable HTTP)");
  auto& text = req.body();
  auto parsed = mcp::parse_message(text);
  if (parsed.code)
    return respond_rpc_error(400, parsed.error_id, parsed.code, std::move(parsed.error));
  auto* msg = &parsed.json;
  if (!msg->is_object() && !msg->is_array())
    return respond_rpc_error(400, Json(), mcp::invalid_request,
                             fmt::format("a message must be a JSON-RPC 2.0 object (or with protocol {} an array "
                                         "of them, a batch), got {}",
                                         mcp::batch_version, msg->type_name()));
  auto* method = msg->find("method");
  auto* id = msg->find("id");
  bool request = method && id;
  // Its stream is found by its id as the session answers it (1e2 as 100).
  std::optional<Json> request_id;
  if (request && !(request_id = mcp::request_id(*id)))
    return respond_rpc_error(400, Json(), mcp::invalid_request, mcp::bad_id_message(*id));
  if (request)
    id = &*request_id;
  if (request && method->is_string() && method->as_string() == "initialize") {
    // A second initialize inside a live session would make another beside it (stdio
    // refuses one too): a new session is an initialize without the header, or with
    // that of a session that ended (a client whose session went idle starts anew so).
    if (auto named = st.sessions.find(std::string(req["Mcp-Session-Id"]));
        named != st.sessions.end() && !named->second->ending)
      return respond_rpc_error(400, *id, mcp::invalid_request,
                               "initialize opens a new session: send it without Mcp-Session-Id (this one is "
                               "initialized already; DELETE it to end it)");
    // Refused before a session is made for it (none is named to the client, none
    // makes room by ending another).
    if (auto wrong = mcp::wrong_jsonrpc(*msg))
      return respond_rpc_error(400, *id, mcp::invalid_request, std::move(*wrong));
    auto version = mcp::requested_version(msg->find("params"));
    if (!version)
      return respond_rpc_error(400, *id, mcp::invalid_params, version.error());
    if (auto room = st.room_for_a_session(); !room)
      return respond_rpc_error(503, *id, mcp::invalid_request, room.error);
    auto sid = random_name_part() + random_name_part();
    auto session = std::make_shared<McpHttpSession>();
    session->version = mcp::negotiate_version(*version, true);
    // The session answers the version the message asks for: one this transport does
    // not carry (2024-11-05's HTTP was HTTP+SSE) is asked as the one offered instead.
    std::string offered;
    if (session->version != *version) {
      msg->find("params")->set("protocolVersion", std::string(session->version));
      msg->set("id", *id); // as its stream is keyed (1e2 as 100)
      offered = msg->dump();
    }
    session->port = st.open(st.writer(sid));
    st.sessions[sid] = session;
    auto key = id->dump();
    session->streams[key] = shared_from_this();
    session->order.push_back(key);
    start_stream({"Mcp-Session-Id: " + sid});
    return session->port.deliver(offered.empty() ? text : offered);
  }
  auto sid = std::string(req["Mcp-Session-Id"]);
  if (sid.empty())
    return respond_rpc_error(400, id ? *id : Json(), mcp::invalid_request,
                             "no Mcp-Session-Id header: initialize first, then send its session id with every "
                             "message");
  auto it = st.sessions.find(sid);
  if (it == st.sessions.end() || it->second->ending)
    return respond_rpc_error(404, id ? *id : Json(), mcp::invalid_request,
                             "no session with this Mcp-Session-Id (it ended, or the server restarted): initialize "
                             "a new one");
  auto& session = *it->second;
  session.active = std::chrono::steady_clock::now();
  if (auto version = std::string_view(req["MCP-Protocol-Version"]); !version.empty()) {
    if (std::find(std::begin(mcp::versions), std::end(mcp::versions), version) == std::end(mcp::versions))
      return respond_rpc_error(400, id ? *id : Json(), mcp::invalid_request,
                               fmt::format("MCP-Protocol-Version `{}` is not one this server speaks ({}, {}, {})",
                                           cut_text(std::string(version), 40), mcp::versions[0], mcp::versions[1],
                                           mcp::versions[2]));
    // Transports, "Protocol Version Header": the version agreed at initialize.
    if (version != session.version)
      return respond_rpc_error(400, id ? *id : Json(), mcp::invalid_request,
                               fmt::format("MCP-Protocol-Version `{}` is not the version this session agreed on at "
                                           "initialize ({})",
                                           cut_text(std::string(version), 40), session.version));
  }
  if (msg->is_array())
    return handle_batch(st, session, msg->as_array());
  // What the session would refuse with no request to answer it on is refused here.
  auto valid_id = id ? mcp::request_id(*id) : std::nullopt;
  if (auto wrong = mcp::wrong_jsonrpc(*msg))
    return respond_rpc_error(400, valid_id.value_or(Json()), mcp::invalid_request, std::move(*wrong));
  if (!method && !msg->find("result") && !msg->find("error"))
    return respond_rpc_error(400, valid_id.value_or(Json()), mcp::invalid_request, std::string(mcp::no_kind));
  if (!request) { // a notification or a response: nothing to answer with
    respond(202, "");
    if (method && method->is_string() && method->as_string() == "notifications/cancelled")
      if (auto* params = msg->find("params"); params && params->is_object())
        if (auto* cancelled = params->find("requestId"))
          if (auto valid = mcp::request_id(*cancelled))
            st.end_stream(session, valid->dump());
    return session.port.deliver(text);
  }
  // Its connection closed or not, a request still in flight holds its id (MCP: an id
  // is not reused in a session): another under it would take its answer, and a
  // DELETE would no longer find it to cancel.
  auto key = id->dump();
  if (session.streams.count(key))
    return respond_rpc_error(400, *id, mcp::invalid_request,
                             fmt::format("request id {} is already used by a request in flight (cancel it with "
                                         "notifications/cancelled, or use another id)",
                                         cut_text(key)));
  session.streams[key] = shared_from_this();
  session.order.push_back(key);
  if (auto* params = msg->find("params"); params && params->is_object())
    if (auto* meta = params->find("_meta"); meta && meta->is_object())
      if (auto* token = meta->find("progressToken"))
        session.progress[token->dump()] = key;
  start_stream({});
  session.port.deliver(text);
}

/// Why batch member `m` is not a valid JSON-RPC message, one the session could answer
/// only with id null ("" when it is valid).
static std::string invalid_member(const Json& m) {
  if (!m.is_object())
    return fmt::format("each message of a batch must be a JSON-RPC 2.0 object, got {}", m.type_name());
  auto* method = m.find("method");
  auto* id = m.find("id");
  if (method && id && !mcp::request_id(*id))
    return mcp::bad_id_message(*id);
  if (method && !method->is_string() && !id)
    return "`method` must be a string";
  return "";
}

/// A batch (protocol 2025-03-26 only): its requests are answered on one event stream,
/// each response an event, and the session reads its messages one by one. An invalid
/// message gets its Invalid Request (id null, JSON-RPC 2.0) here, on the stream: the
/// session's answer with id null would find no stream. A request id already in flight
/// refuses the batch whole: two answers with one id could not be told apart.
void McpHttpConnection::handle_batch(ServerState& st, McpHttpSession& session, const JsonArray& messages) {
  if (session.version != mcp::batch_version)
    return respond_rpc_error(400, Json(), mcp::invalid_request,
                             fmt::format("a batch (an array) belongs to protocol {} only, and this session agreed "
                                         "on {}: POST one message at a time",
                                         mcp::batch_version, session.version));
  if (messages.empty())
    return respond_rpc_error(400, Json(), mcp::invalid_request, "an empty batch: a batch holds one message or more");
  std::vector<std::string> keys;
  std::vector<const Json*> valid;
  std::vector<std::string> refusals;
  for (auto& m : messages) {
    if (auto why = invalid_member(m); !why.empty()) {
      refusals.push_back(mcp::error_response(Json(), mcp::invalid_request, why).dump());
      continue;
    }
    valid.push_back(&m);
    auto* id = m.find("id");
    if (!m.find("method") || !id)
      continue;
    auto request = *mcp::request_id(*id); // invalid_member let it through
    auto key = request.dump();
    if (session.streams.count(key) || std::find(keys.begin(), keys.end(), key) != keys.end())
      return respond_rpc_error(400, request, mcp::invalid_request,
                               fmt::format("request id {} is already used by a request in flight", cut_text(key)));
    keys.push_back(key);
  }
  for (auto& key : keys) {
    session.streams[key] = shared_from_this();
    session.order.push_back(key);
  }
  if (keys.empty() && refusals.empty())
    respond(202, "");
  else
    start_stream({});
  for (auto& r : refusals)
    event(r);
  if (keys.empty() && !refusals.empty())
    end_stream(); // no response comes
  for (auto* m : valid) {
    auto* method = m->find("method");
    auto* params = m->find("params");
    if (!params || !params->is_object())
      continue;
    auto* id = m->find("id");
    if (auto* meta = params->find("_meta"); method && id && meta && meta->is_object())
      if (auto* token = meta->find("progressToken"))
        session.progress[token->dump()] = mcp::request_id(*id)->dump();
    if (!id && method && method->is_string() && method->as_string() == "notifications/cancelled")
      if (auto* cancelled = params->find("requestId"))
        if (auto request = mcp::request_id(*cancelled))
          st.end_stream(session, request->dump());
  }
  for (auto* m : valid)
    session.port.deliver(m->dump());
}

void McpHttpConnection::handle_delete(ServerState& st, const http::request<http::string_body>& req) {
  auto sid = std::string(req["Mcp-Session-Id"]);
  if (sid.empty()) // as for a POST: the required header missing is a bad request, not an unknown session
    return respond(400, "no Mcp-Session-Id header: DELETE ends the session it names");
  auto it = st.sessions.find(sid);
  if (it == st.sessions.end() || it->second->ending)
    return respond(404, "no session with this Mcp-Session-Id (it ended, or the server restarted)");
  // Answered once the session's calls are answered and its handles dealt with.
  st.end_session(it->first, [self = shared_from_this()] { self->respond(200, ""); });
}

void ServerState::end_session(const std::string& sid, std::function<void()> done) {
  auto session = sessions.at(sid);
  session->ending = true;
  // What its client still waits on is cancelled, as the client's own cancel would
  // (a one-shot run ended, an await let go), and its stream ended: the end waits on
  // no call, which may run for hours.
  std::vector<std::string> waited;
  for (auto& [key, conn] : session->streams)
    waited.push_back(key);
  for (auto& key : waited) {
    if (auto id = Json::parse(key))
      session->port.deliver(mcp::notification("notifications/cancelled",
                                              Json::object().set("requestId", *id).set("reason", "the session ended"))
                              .dump());
    end_stream(*session, key);
  }
  session->port.end([weak = weak_from_this(), sid, done = std::move(done)] {
    if (auto st = weak.lock())
      st->io->post([weak, sid, done] {
        if (auto st = weak.lock())
          st->sessions.erase(sid);
        done();
      });
  });
}

/// Whether a call of `s` is in flight (a client waits on its stream).
static bool streaming(const McpHttpSession& s) {
  return std::any_of(s.streams.begin(), s.streams.end(), [](auto& c) { return !c.second->closed; });
}

Status ServerState::room_for_a_session() {
  // Sessions still ending (their handles getting their turn-end policies) count too,
  // up to twice the limit: a client opening sessions in a loop is refused.
  if (sessions.size() >= 2 * kMaxSessions)
    return Status::fail(fmt::format("this server holds {} sessions, of which {} are still ending (their handles "
                                    "getting their turn-end policies): try again once they have ended",
                                    sessions.size(),
                                    std::count_if(sessions.begin(), sessions.end(),
                                                  [](auto& s) { return s.second->ending; })));
  size_t open = 0;
  const std::string* least = nullptr;
  for (auto& [sid, s] : sessions) {
    if (s->ending)
      continue;
    ++open;
    if (!streaming(*s) && (!least || s->active < sessions.at(*least)->active))
      least = &sid;
  }
  if (open < kMaxSessions)
    return Status::success();
  if (!least)
    return Status::fail(fmt::format("this server holds {} sessions already, each with a call in flight: end one "
                                    "(DELETE) first",
                                    kMaxSessions));
  end_session(*least, [] {});
  return Status::success();
}

void ServerState::sweep() {
  if (closed || idle.count() <= 0)
    return;
  auto now = std::chrono::steady_clock::now();
  std::vector<std::string> idle_ones;
  for (auto& [sid, s] : sessions)
    if (!s->ending && !streaming(*s) && now - s->active >= idle)
      idle_ones.push_back(sid);
  for (auto& sid : idle_ones)
    end_session(sid, [] {});
  // Looks twice per limit (between 50 ms and a minute apart): a session ends at
  // most half a limit late.
  auto every = std::clamp<std::chrono::milliseconds>(idle / 2, std::chrono::milliseconds(50), std::chrono::minutes(1));
  sweeper.expires_after(every);
  sweeper.async_wait([weak = weak_from_this()](beast::error_code ec) {
    if (auto st = weak.lock(); st && !ec)
      st->sweep();
  });
}

std::shared_ptr<McpHttpConnection> ServerState::take_stream(McpHttpSession& s, const std::string& key) {
  std::shared_ptr<McpHttpConnection> conn;
  if (auto it = s.streams.find(key); it != s.streams.end()) {
    conn = it->second;
    s.streams.erase(it);
  }
  std::erase(s.order, key);
  std::erase_if(s.progress, [&](auto& p) { return p.second == key; });
  return conn;
}

void ServerState::end_stream(McpHttpSession& s, const std::string& key) {
  if (auto conn = take_stream(s, key); conn && !conn->closed && conn->streaming && !owes(s, *conn))
    conn->end_stream();
}

std::shared_ptr<McpHttpConnection> ServerState::newest_stream(McpHttpSession& s) {
  for (auto key = s.order.rbegin(); key != s.order.rend(); ++key)
    if (auto it = s.streams.find(*key); it != s.streams.end() && !it->second->closed)
      return it->second;
  return nullptr;
}

void ServerState::route(const std::string& sid, const std::string& text, const std::string& related) {
  auto it = sessions.find(sid);
  if (it == sessions.end())
    return;
  auto& s = *it->second;
  // What reaches a connected client keeps the session from ending when idle; what
  // reaches nobody (progress of a call whose client left) does not.
  auto reached = [&s] { s.active = std::chrono::steady_clock::now(); };
  auto msg = Json::parse(text);
  if (!msg || !msg->is_object())
    return;
  auto* method = msg->find("method");
  auto* id = msg->find("id");
  std::string key = related;
  if (!method && id)
    key = id->dump(); // a response: its request's stream, which it ends
  else if (method && method->is_string() && method->as_string() == "notifications/progress")
    if (auto* params = msg->find("params"); params && params->is_object())
      if (auto* token = params->find("progressToken"))
        if (auto p = s.progress.find(token->dump()); p != s.progress.end())
          key = p->second;
  if (!method && id) { // the request is done, whether its client still listens or not
    auto conn = take_stream(s, key);
    if (conn && !conn->closed) {
      reached();
      conn->event(text);
      if (!owes(s, *conn))
        conn->end_stream();
    }
    return;
  }
  std::shared_ptr<McpHttpConnection> conn;
  if (!key.empty())
    if (auto open = s.streams.find(key); open != s.streams.end())
      conn = open->second;
  if (!conn || conn->closed) {
    // Progress and logs of a request are about it alone (the spec: they relate to
    // it): another call's client would take them for its own, or for a token it
    // never gave. Its client gone, they reach nobody.
    bool about_request = !key.empty() && method && method->is_string() && !id &&
                         (method->as_string() == "notifications/progress" ||
                          method->as_string() == "notifications/message");
    if (about_request)
      return;
    conn = newest_stream(s);
  }
  if (conn) {
    reached();
    return conn->event(text);
  }
  // A question with no stream to ask it on is answered "no" on the client's behalf.
  if (method && id)
    s.port.deliver(
      mcp::error_response(*id, -32603, "the client has no request open that the question could be sent on").dump());
}

void ServerState::accept() {
  acceptor.async_accept([self = shared_from_this()](beast::error_code ec, tcp::socket socket) {
    if (self->closed || ec == asio::error::operation_aborted)
      return;
    if (!ec) {
      // Another user of the machine gets no further than its accept: the token keeps
      // it out, but it need not reach our parser (or use up a connection's place).
      // Looked up only where there is a place: a full server asks the kernel nothing
      // (where sock_diag cannot answer, the lookup reads its whole TCP tables).
      std::string others;
      if (self->connections < kMaxConnections)
        others = other_users_connection(socket.native_handle(), "`jp-actors mcp --listen`");
      if (!others.empty())
        tell_refusal(++self->refused_others, others, "{} connections of other users refused so far", "jp-actors mcp");
      if (!others.empty() || self->connections >= kMaxConnections) {
        beast::error_code ignored;
        socket.close(ignored);
      } else {
        auto c = std::make_shared<McpHttpConnection>(std::move(socket), self);
        auto& unproven = self->unproven;
        std::erase_if(unproven, [](auto& w) {
          auto u = w.lock();
          return !u || u->proven || u->closed;
        });
        unproven.push_back(c);
        if (unproven.size() > kMaxUnproven) {
          if (auto oldest = unproven.front().lock())
            oldest->close();
          unproven.pop_front();
        }
        c->read_request();
      }
    }
    self->accept();
  });
}

Result<std::unique_ptr<McpHttpServer>> McpHttpServer::listen(IoThread& io, const std::string& host, uint16_t port,
                                                             std::string token, McpSessionOpener open,
                                                             std::chrono::milliseconds idle) {
  auto where = NodeAddress{host, port}.text(); // as a node says its address: [::1]:8808
  if (!is_loopback(host))
    return Error{fmt::format("cannot serve MCP on {}: only a loopback address is allowed (127.0.0.1, ::1, "
                             "localhost), since off loopback needs mutual TLS, which MCP's HTTP transport here "
                             "does not offer",
                             where)};
  beast::error_code ec;
  auto address = asio::ip::make_address(equals_nocase(host, "localhost") ? "127.0.0.1" : host, ec);
  if (ec)
    return Error{fmt::format("cannot serve MCP on {}: `{}` is not an IP address", where, host)};
  auto st = std::make_shared<State>(io);
  st->token = std::move(token);
  st->open = std::move(open);
  st->idle = idle;
  tcp::endpoint endpoint(address, port);
  st->acceptor.open(endpoint.protocol(), ec);
  if (!ec)
    st->acceptor.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec)
    st->acceptor.bind(endpoint, ec);
  if (!ec)
    st->acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec == asio::error::address_in_use)
    return Error{fmt::format("cannot serve MCP on {}: the address is in use: another program listens there "
                             "(another jp-actors mcp?); stop it, or pick another port (0: any free one)",
                             where)};
  if (ec)
    return Error{fmt::format("cannot serve MCP on {}: {}", where, ec.message())};
  st->port = st->acceptor.local_endpoint().port();
  io.post([st] {
    st->accept();
    st->sweep();
  });
  auto server = std::unique_ptr<McpHttpServer>(new McpHttpServer());
  server->state_ = st;
  return server;
}

McpHttpServer::~McpHttpServer() {
  // On the io thread, where the acceptor and the sessions are used; waited for.
  std::promise<void> done;
  state_->io->post([st = state_, &done] {
    st->closed = true;
    beast::error_code ignored;
    st->acceptor.close(ignored);
    st->sweeper.cancel();
    for (auto& [sid, session] : st->sessions)
      if (!session->ending)
        session->port.end([] {});
    st->sessions.clear();
    done.set_value();
  });
  done.get_future().wait();
}

uint16_t McpHttpServer::port() const {
  return state_->port;
}

} // namespace jp
