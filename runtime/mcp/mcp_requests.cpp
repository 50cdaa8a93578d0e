#include "runtime/mcp/mcp_requests.hpp"

#include "runtime/mcp/mcp_protocol.hpp"

namespace jp {

std::optional<Json> McpRequests::ask(std::string_view method, Json params) {
  std::future<std::optional<Json>> answer;
  int64_t id;
  {
    std::lock_guard lock(mtx_);
    if (closed_)
      return std::nullopt;
    id = ++next_;
    answer = waiting_[id].get_future();
  }
  write_(mcp::request(id, method, std::move(params)).dump());
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
  it->second.set_value(message);
  waiting_.erase(it);
  return true;
}

void McpRequests::close() {
  std::lock_guard lock(mtx_);
  closed_ = true;
  for (auto& [id, p] : waiting_)
    p.set_value(std::nullopt);
  waiting_.clear();
}

} // namespace jp
