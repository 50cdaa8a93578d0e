// The client side of MCP's Streamable HTTP transport (2025-06-18), under McpClient:
// each message is POSTed to the server's url (libcurl, a thread per POST, so a long
// call's event stream does not hold the others up). What comes back -- one JSON
// answer, or an event stream of messages that ends with the answer -- is handed on
// message by message, on the io thread, with the id of the request it came for.
// The session id the server gives with its answer to `initialize` goes with every
// later message, with the protocol version agreed; close() ends the session (DELETE).
// A 404 to a message of a session means the server forgot it: McpClient is told, and
// starts a new one (new_session, initialize) and sends the request again.
// Notifications keep their order with what is sent after them.
// Once the session is initialized (notifications/initialized sent), a GET opens the
// server's own event stream: what it says outside of any answer (a list change, a
// log message, a request) comes there, delivered with request 0. A server without
// one answers 405, which is taken as it is; a stream that ends is opened again
// (ReopenBackoff, up to every 30 s); a refusal of another kind (4xx but 408, 409 and
// 429) is given up, said once on stderr.
// It ends with the session (new_session, close).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "../../config/config.hpp"
#include "../../messages/json.hpp"
#include "mcp_url_transport.hpp"

namespace jp {

class IoThread;

class McpHttpTransport : public McpUrlTransport {
public:
  McpHttpTransport(IoThread& io, const McpServerConfig& server, Deliver deliver, Failed failed,
                   SessionLost lost = {});
  ~McpHttpTransport() override; // close()

  /// Sends one message (a POST of its own). Any thread.
  void send(const Json& message) override;
  /// Request `id` is given up: its POST stops, and nothing more comes of it.
  void abandon(int64_t id) override;
  /// Sent as MCP-Protocol-Version from now on.
  void set_version(const std::string& version) override;
  /// The Mcp-Session-Id messages go with now ("" before initialize's answer).
  std::string session() const override;
  /// Forgets the session id and version, and ends the GET stream: what is sent next
  /// (initialize) starts a new session.
  void new_session() override;
  /// Ends the session (DELETE, briefly waited for), every POST still out and the GET
  /// stream; joins their threads. Nothing is delivered after it.
  void close() override;

  struct Impl;

private:
  std::shared_ptr<Impl> impl_;
};

} // namespace jp
