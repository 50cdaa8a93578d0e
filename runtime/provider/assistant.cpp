#include "runtime/provider/assistant.hpp"

#include <filesystem>
#include <fmt/format.h>

#include "runtime/provider/llm_inquiry.hpp"
#include "runtime/provider/scripted_provider.hpp"
#include "runtime/mcp/mcp_url.hpp"
#include "runtime/store/script.hpp"

namespace jp {

dialect tool_dialect_for(const AssistantConfig& a) {
  if (a.provider == "anthropic")
    return dialect::anthropic;
  return url_host(a.base_url) == "generativelanguage.googleapis.com" ? dialect::gemini : dialect::openai;
}

Result<Assistant> make_assistant(const Config& config, error_code* kind) {
  auto& a = config.assistant;
  if (kind)
    *kind = error_code::bad_arguments;
  Assistant out;
  if (a.provider == "scripted") {
    if (a.script.empty())
      return Error{"no assistant to ask: assistant.provider is \"scripted\" (the default), which needs "
                   "assistant.script = \"path/to/script.toml\" (its first agent answers); for a model, give "
                   "--provider openai | anthropic and --model NAME (or assistant.provider and assistant.model)"};
    // Relative to the workspace, as every path of the config.
    auto path = std::filesystem::path(a.script).is_relative()
                  ? (std::filesystem::path(config.workspace) / a.script).string()
                  : a.script;
    auto script = load_script(path);
    if (!script)
      return Error{script.error()};
    if (script->agents.empty())
      return Error{fmt::format("{}: the script has no [[agents]]", a.script)};
    out.provider = make_scripted_provider(script->agents.front());
    out.inquiry = make_scripted_inquiry(script->agents.front());
    out.script = std::make_shared<const Script>(std::move(*script));
    return out;
  }
  if (a.model.empty())
    return Error{fmt::format("no model for provider \"{}\": pass --model NAME or set assistant.model", a.provider)};
  HttpProviderConfig h;
  h.provider = a.provider;
  h.base_url = a.base_url;
  h.api_version = a.api_version;
  h.api_key_env = !a.api_key_env.empty() ? a.api_key_env
                  : a.provider == "anthropic" ? "ANTHROPIC_API_KEY"
                                              : "OPENAI_API_KEY";
  h.retry = RetryPolicy{static_cast<int>(a.request.max_retries), a.request.base_backoff_ms,
                        a.request.max_backoff_secs};
  h.idle_timeout_secs = a.request.idle_timeout_secs;
  h.limits.max_body_bytes = a.request.max_response_bytes;
  auto provider = make_http_provider(h);
  if (!provider) {
    // The key's variable unset is the provider's refusal to come, not a config error
    // (what else is wrong with the config is said before it).
    if (auto given = api_key_given(h); kind && !given && given.error == provider.error())
      *kind = error_code::provider_auth;
    return Error{provider.error()};
  }
  out.provider = std::shared_ptr<Provider>(std::move(*provider));
  out.inquiry = make_llm_inquiry(out.provider, a.inquiry_model.empty() ? a.model : a.inquiry_model);
  out.tool_dialect = tool_dialect_for(a);
  return out;
}

} // namespace jp
