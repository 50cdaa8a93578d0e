// Requests the MCP server sends its client (elicitation/create): each waits, on the
// thread that asked, for the client's response. Thread-safe; the server's actor hands
// the responses in, and the session's end releases whoever still waits.
#pragma once

#include <cstdint>
#include <functional>
#include <future>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "../../messages/json.hpp"

namespace jp {

class McpRequests {
public:
  /// `write` sends a message, with the request it is related to (its owner).
  explicit McpRequests(std::function<void(const std::string& message, const std::string& related)> write)
    : write_(std::move(write)) {}

  /// Sends request `method` and blocks until the client answers it: the whole
  /// response message, or nullopt once the session ended or `owner` (the request id
  /// of the call it asks for) withdrew it.
  std::optional<Json> ask(std::string_view method, Json params, std::string owner = "");
  /// `owner`'s requests still unanswered are withdrawn: the client is told
  /// (notifications/cancelled naming each, with `reason`), their asks get nullopt,
  /// and so do its later ones (a cancel can come before the ask it ends).
  void withdraw(const std::string& owner, const std::string& reason);
  /// `owner`'s call is over: its id may name another call from now on.
  void forget(const std::string& owner);
  /// A response from the client (a message with an id and no method); false when it
  /// answers no request of ours.
  bool answered(const Json& message);
  /// The session ended: every ask still waiting gets nullopt, and so does any later one.
  void close();
  /// The client sent notifications/initialized: the requests asked before are sent
  /// now, in order. (MCP: the server SHOULD NOT send requests but pings and logging
  /// before it; a client may send its tools/call right after initialize's answer.)
  void initialized();
  /// How many asks wait for their answers (sent, or held until initialized).
  size_t waiting() const;

private:
  std::function<void(const std::string&, const std::string&)> write_;
  mutable std::mutex mtx_;
  struct Waiting {
    std::promise<std::optional<Json>> answer;
    std::string owner;
    std::string held; // the request, not sent yet: the client is not initialized
  };
  std::map<int64_t, Waiting> waiting_;
  std::set<std::string> withdrawn_; // owners whose asks get nullopt
  int64_t next_ = 0;
  bool closed_ = false;
  bool initialized_ = false;
};

} // namespace jp
