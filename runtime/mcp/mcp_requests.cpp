#include "runtime/mcp/mcp_requests.hpp"

#include "runtime/mcp/mcp_protocol.hpp"

#include <utility>

namespace jp {

std::optional<Json> McpRequests::ask(std::string_view method, Json params, std::string owner) {
  std::future<std::optional<Json>> answer;
  int64_t id;
  {
    std::lock_guard lock(mtx_);
    if (closed_ || (!owner.empty() && withdrawn_.count(owner)))
      return std::nullopt;
    id = ++next_;
    auto& w = waiting_[id];
    w.owner = std::move(owner);
    answer = w.answer.get_future();
    // Written under the lock: a withdraw's notifications/cancelled must not reach
    // the client before the request it cancels (the writer only queues the line).
    auto request = mcp::request(id, method, std::move(params)).dump();
    if (initialized_)
      write_(request, w.owner);
    else
      w.held = std::move(request);
  }
  return answer.get();
}

bool McpRequests::answered(const Json& message) {
  auto* id = message.find("id");
  if (!id || !id->is_int())
    return false;
  std::lock_guard lock(mtx_);
  auto it = waiting_.find(id->as_int());
  if (it == waiting_.end())
    return false;
  it->second.answer.set_value(message);
  waiting_.erase(it);
  return true;
}

void McpRequests::withdraw(const std::string& owner, const std::string& reason) {
  std::lock_guard lock(mtx_);
  if (owner.empty())
    return;
  withdrawn_.insert(owner);
  for (auto it = waiting_.begin(); it != waiting_.end();) {
    if (it->second.owner != owner) {
      ++it;
      continue;
    }
    // MCP: either side may cancel a request it sent that is still in progress (one
    // held was never sent: nothing to tell).
    if (it->second.held.empty())
      write_(mcp::notification("notifications/cancelled", Json::object().set("requestId", it->first).set("reason", reason))
             .dump(),
           owner);
    it->second.answer.set_value(std::nullopt);
    it = waiting_.erase(it);
  }
}

void McpRequests::forget(const std::string& owner) {
  std::lock_guard lock(mtx_);
  withdrawn_.erase(owner);
}

void McpRequests::initialized() {
  std::lock_guard lock(mtx_);
  initialized_ = true;
  for (auto& [id, w] : waiting_) // in the order asked (ids grow)
    if (!w.held.empty())
      write_(std::exchange(w.held, {}), w.owner);
}

size_t McpRequests::waiting() const {
  std::lock_guard lock(mtx_);
  return waiting_.size();
}

void McpRequests::close() {
  std::lock_guard lock(mtx_);
  closed_ = true;
  for (auto& [id, w] : waiting_)
    w.answer.set_value(std::nullopt);
  waiting_.clear();
}

} // namespace jp
