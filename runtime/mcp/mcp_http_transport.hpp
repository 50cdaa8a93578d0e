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
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "../../config/config.hpp"
#include "../../messages/json.hpp"

namespace jp {

class IoThread;

class McpHttpTransport {
public:
  /// A message from the server, and the id of our request whose answer carried it
  /// (0: none). On the io thread.
  using Deliver = std::function<void(const std::string& message, int64_t request)>;
  /// Request `id` got no answer: why, and whether trying later may work. On the io
  /// thread, after everything its POST delivered (a no-op when its answer came).
  using Failed = std::function<void(int64_t id, const std::string& why, bool transient)>;
  /// Request `id`, sent in session `session`, was answered HTTP 404: the server no
  /// longer knows that session, so it did not run the request. `why` says so. On the
  /// io thread. Without it, such a request fails (Failed).
  using SessionLost = std::function<void(int64_t id, const std::string& session, const std::string& why)>;

  McpHttpTransport(IoThread& io, const McpServerConfig& server, Deliver deliver, Failed failed,
                   SessionLost lost = {});
  ~McpHttpTransport(); // close()

  /// Sends one message. Any thread.
  void send(const Json& message);
  /// Request `id` is given up (cancelled, or no answer in time): its POST stops, and
  /// nothing more comes of it. Any thread.
  void abandon(int64_t id);
  /// The protocol version agreed at initialize (sent as MCP-Protocol-Version).
  void set_version(const std::string& version);
  /// The session id messages go with now ("" before initialize's answer).
  std::string session() const;
  /// Forgets the session id and version: what is sent next (initialize) starts a new
  /// session.
  void new_session();
  /// Ends the session (DELETE, briefly waited for) and every POST still out; joins
  /// their threads. Nothing is delivered after it.
  void close();

  struct Impl;

private:
  std::shared_ptr<Impl> impl_;
};

} // namespace jp
