#include "runtime/provider/request_tools.hpp"

#include <utility>

namespace jp {

std::optional<Json> request_tools(const std::string& tools_json) {
  if (tools_json.empty())
    return std::nullopt;
  auto parsed = Json::parse(tools_json);
  if (!parsed)
    return Json(tools_json);
  if (parsed->is_array() && parsed->as_array().empty())
    return std::nullopt;
  return std::move(*parsed);
}

} // namespace jp
