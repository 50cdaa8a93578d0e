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
#include <string>
#include <string_view>

#include "../../messages/json.hpp"

namespace jp {

class McpRequests {
public:
  explicit McpRequests(std::function<void(const std::string&)> write) : write_(std::move(write)) {}

  /// Sends request `method` and blocks until the client answers it: the whole
  /// response message, or nullopt once the session ended.
  std::optional<Json> ask(std::string_view method, Json params);
  /// A response from the client (a message with an id and no method); false when it
  /// answers no request of ours.
  bool answered(const Json& message);
  /// The session ended: every ask still waiting gets nullopt, and so does any later one.
  void close();

private:
  std::function<void(const std::string&)> write_;
  std::mutex mtx_;
  std::map<int64_t, std::promise<std::optional<Json>>> waiting_;
  int64_t next_ = 0;
  bool closed_ = false;
};

} // namespace jp
