#include "config/assistant_model.hpp"

namespace jp {

std::string_view model_name(std::string_view model) {
  auto slash = model.rfind('/');
  return slash == std::string_view::npos ? model : model.substr(slash + 1);
}

bool openai_reasoning_model(std::string_view model) {
  static constexpr std::string_view reasoning_families[] = {"o1", "o3", "o4", "gpt-5"};
  auto name = model_name(model);
  for (auto family : reasoning_families)
    if (name.starts_with(family) &&
        (name.size() == family.size() || std::string_view("-._").find(name[family.size()]) != std::string_view::npos))
      return true;
  return false;
}

double idle_timeout_for(const AssistantConfig& a) {
  if (a.request.idle_timeout_secs >= 0)
    return a.request.idle_timeout_secs;
  return a.provider == "openai" && openai_reasoning_model(a.model) ? kModelIdleTimeoutSecs : 60;
}

} // namespace jp
