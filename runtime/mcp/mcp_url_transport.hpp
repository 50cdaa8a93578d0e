// What McpClient asks of a url server's transport: Streamable HTTP
// (mcp_http_transport), or the legacy HTTP+SSE transport of 2024-11-05
// (mcp_sse_transport), as [mcp.servers.NAME] transport says. Messages go out from
// any thread; the server's come back on the io thread.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "../../messages/json.hpp"

namespace jp {

class McpUrlTransport {
public:
  /// A message from the server, and the id of our request whose answer carried it
  /// (0: none, or not known). On the io thread.
  using Deliver = std::function<void(const std::string& message, int64_t request)>;
  /// Request `id` got no answer: why, and whether trying later may work. On the io
  /// thread, after everything its POST delivered (a no-op when its answer came).
  using Failed = std::function<void(int64_t id, const std::string& why, bool transient)>;
  /// Request `id`, sent in session `session`, was not run because the server no
  /// longer knows that session (Streamable HTTP: HTTP 404; legacy: the stream that
  /// was the session ended). `why` says so. On the io thread. Without it, such a
  /// request fails (Failed).
  using SessionLost = std::function<void(int64_t id, const std::string& session, const std::string& why)>;

  virtual ~McpUrlTransport() = default;

  /// Sends one message. Any thread.
  virtual void send(const Json& message) = 0;
  /// Request `id` is given up (cancelled, or no answer in time): nothing more comes
  /// of it. Any thread.
  virtual void abandon(int64_t id) = 0;
  /// The protocol version agreed at initialize.
  virtual void set_version(const std::string& version) = 0;
  /// The session messages go with now ("" before there is one).
  virtual std::string session() const = 0;
  /// Forgets the session: what is sent next (initialize) starts a new one.
  virtual void new_session() = 0;
  /// Ends the session and everything still out; joins the transport's threads.
  /// Nothing is delivered after it.
  virtual void close() = 0;
};

} // namespace jp
