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

double idle_timeout_for(std::string_view provider, std::string_view model, double configured) {
  if (configured >= 0)
    return configured;
  // Anthropic's too: a tool call's input streams one whole value at a time, and a
  // long one (a file's body) can leave the stream silent for minutes; retrying it
  // pays for the whole response again to meet the same silence.
  bool slow = provider == "anthropic" || (provider == "openai" && openai_reasoning_model(model));
  return slow ? 300 : 60;
}

double idle_timeout_for(const AssistantConfig& a) {
  return idle_timeout_for(a.provider, a.model, a.request.idle_timeout_secs);
}

} // namespace jp
