// `jp-actors mcp --listen`: MCP's Streamable HTTP transport (2025-06-18), served on
// loopback only, at one endpoint, /mcp. No CAF here: the server parses and answers
// HTTP on the io thread and hands each session's messages to whoever opened it.
//
// - Every request must carry `Authorization: Bearer <token>` (the user's MCP token,
//   a 0600 file in the state directory), a loopback Host, and no Origin but a
//   loopback one (DNS rebinding). Anything else is refused before it is read.
// - POST of `initialize` opens a session (`Mcp-Session-Id` in the answer); every
//   later POST names it (400 without, 404 when unknown or ended).
// - A POSTed request is answered as an event stream: the messages that belong to it
//   (its progress, questions asked while it runs) and then its response; a
//   notification or response is answered 202.
// - DELETE ends the session: its calls in flight are answered, then its handles get
//   their turn-end policies. GET is 405: there is no stream outside a request.
// - A session idle longer than its limit (no request, no stream open, nothing sent)
//   ends the same way: a client that went without a DELETE leaves nothing running.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "../../messages/result.hpp"

namespace jp {

class IoThread;

/// One MCP session as the HTTP server sees it: where its client's messages go, and
/// how it ends (`done` when its calls are answered and its handles dealt with).
struct McpSessionPort {
  std::function<void(const std::string&)> deliver;
  std::function<void(std::function<void()> done)> end;
};

/// Opens a session whose messages to the client go to `write` (any thread), each
/// with the id (JSON text) of the client's request it is related to ("" for none):
/// it goes on that request's event stream while it is open.
using McpSessionOpener =
  std::function<McpSessionPort(std::function<void(const std::string& message, const std::string& related)> write)>;

class McpHttpServer {
public:
  /// Listens on `host`:`port` (a loopback address; port 0 = any free one). A
  /// session idle for `idle` ends (0: never).
  static Result<std::unique_ptr<McpHttpServer>> listen(IoThread& io, const std::string& host, uint16_t port,
                                                       std::string token, McpSessionOpener open,
                                                       std::chrono::milliseconds idle = std::chrono::minutes(30));
  ~McpHttpServer(); // stops listening; open sessions end
  McpHttpServer(const McpHttpServer&) = delete;
  McpHttpServer& operator=(const McpHttpServer&) = delete;

  uint16_t port() const;

  struct State;

private:
  McpHttpServer() = default;
  std::shared_ptr<State> state_;
};

} // namespace jp
