#include "runtime/provider/provider_extra.hpp"

namespace jp {

std::optional<Json> provider_extra_for(const std::string& extra, std::string_view model) {
  if (extra.empty())
    return std::nullopt;
  auto fields = Json::parse(extra);
  if (!fields || !fields->is_object())
    return std::nullopt;
  if (auto* from = fields->find(kExtraModel); from && (!from->is_string() || from->as_string() != model))
    return std::nullopt;
  Json out = Json::object();
  for (auto& [key, value] : fields->as_object())
    if (key != kExtraModel)
      out.set(key, value);
  return out;
}

} // namespace jp
