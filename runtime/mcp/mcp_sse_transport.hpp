// The client side of MCP's legacy HTTP+SSE transport (2024-11-05; what Claude Code
// calls "type": "sse"), under McpClient: a GET to the server's url opens an event
// stream whose first event, `endpoint`, names where to POST each message -- used
// only on the url's own scheme, host and port (mcp_url), else the server is refused.
// A POST is answered 202 with no body; every answer, notification and request of
// the server's comes as a `message` event on the stream, delivered on the io thread
// with request 0 (nothing says which request a message is about).
// The stream is the session: opened by the first message sent (initialize), ended
// by new_session() and close(). When the server ends it, the requests out fail
// (their answers cannot come), and a request sent after that is reported lost
// (SessionLost), so McpClient starts a new session on a new stream and sends it
// there. POSTs go one at a time, in order, on one thread.
#pragma once

#include <memory>

#include "../../config/config.hpp"
#include "mcp_url_transport.hpp"

namespace jp {

class IoThread;

class McpSseTransport : public McpUrlTransport {
public:
  McpSseTransport(IoThread& io, const McpServerConfig& server, Deliver deliver, Failed failed,
                  SessionLost lost = {});
  ~McpSseTransport() override; // close()

  void send(const Json& message) override;
  /// Its answer, should it come, is delivered still (McpClient lets it go).
  void abandon(int64_t id) override;
  /// 2024-11-05 has no version header: nothing to do.
  void set_version(const std::string& version) override;
  /// Where messages are POSTed now (the endpoint names the session); "" before the
  /// server named it.
  std::string session() const override;
  /// Ends the stream (the session); the requests still out fail. What is sent next
  /// opens another.
  void new_session() override;
  /// Ends the stream and the POST out; joins their threads.
  void close() override;

  struct Impl;

private:
  std::shared_ptr<Impl> impl_;
};

} // namespace jp
