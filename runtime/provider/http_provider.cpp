// openai and anthropic over HTTP: the request body and stream decoder of the
// dialect, retries with backoff, and errors that say what to do.
#include "runtime/provider/provider.hpp"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cctype>
#include <functional>
#include <optional>
#include <fmt/format.h>
#include <random>
#include <thread>
#include <type_traits>

#include "messages/json.hpp"
#include "config/assistant_model.hpp"
#include "runtime/provider/anthropic_format.hpp"
#include "runtime/provider/openai_format.hpp"
#include "runtime/provider/sse.hpp"
#include "runtime/text_nocase.hpp"

namespace jp {

namespace {

std::string trim_slash(std::string s) {
  while (!s.empty() && s.back() == '/')
    s.pop_back();
  return s;
}

struct OpenAiEndpoint {
  std::string url;
  bool azure_deployment = false; // an Azure OpenAI deployment URL: the key goes in `api-key`
};

/// The value of `name` in a URL query ("a=1&b=2"), if it is there.
std::optional<std::string_view> query_value(std::string_view query, std::string_view name) {
  while (!query.empty()) {
    auto amp = query.find('&');
    auto pair = query.substr(0, amp);
    auto eq = pair.find('=');
    if (pair.substr(0, eq) == name)
      return eq == std::string_view::npos ? std::string_view() : pair.substr(eq + 1);
    query.remove_prefix(amp == std::string_view::npos ? query.size() : amp + 1);
  }
  return std::nullopt;
}

/// What an api-version may be: a date and maybe a suffix ("2024-10-21",
/// "2025-04-01-preview"), or a word ("preview", "latest"): letters, digits, '.', '-'
/// and '_', nothing a query or URL would read otherwise.
bool valid_api_version(std::string_view v) {
  return !v.empty() && v.size() <= 64 && std::all_of(v.begin(), v.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == '_';
  });
}

/// The Chat Completions URL of an openai `base_url` ("" = api.openai.com's): the base,
/// /chat/completions, then the base's query and the api-version. A base that already
/// ends in /chat/completions (Azure's portal shows the whole endpoint) is taken as
/// the endpoint. An Azure OpenAI deployment URL (.../openai/deployments/NAME) must
/// name its deployment and have an api-version, which goes in the URL's query.
Result<OpenAiEndpoint> openai_endpoint(const std::string& base_url, const std::string& api_version) {
  constexpr std::string_view azure_form = "https://RESOURCE.openai.azure.com/openai/deployments/DEPLOYMENT";
  std::string_view whole = base_url;
  auto q = whole.find('?');
  std::string base = trim_slash(std::string(whole.substr(0, q)));
  std::string query(q == std::string_view::npos ? std::string_view() : whole.substr(q + 1));
  if (base.ends_with("/chat/completions"))
    base = trim_slash(base.substr(0, base.size() - std::string_view("/chat/completions").size()));
  OpenAiEndpoint out;
  constexpr std::string_view deployments = "/openai/deployments/";
  // (base + "/": .../openai/deployments/ alone is one, naming no deployment.)
  if (auto at = (base + "/").find(deployments); at != std::string::npos) {
    out.azure_deployment = true;
    auto name = at + deployments.size() < base.size() ? std::string_view(base).substr(at + deployments.size())
                                                      : std::string_view();
    if (name.empty() || name.find('/') != std::string_view::npos)
      return Error{fmt::format("assistant.base_url (\"{}\") is not an Azure OpenAI deployment URL: expected {} "
                               "(the deployment's name, and nothing after it but /chat/completions)",
                               base_url, azure_form)};
  }
  if (!api_version.empty() && !valid_api_version(api_version))
    return Error{fmt::format("assistant.api_version (\"{}\") is not an API version: expected one such as "
                             "\"2024-10-21\" or \"2025-04-01-preview\" (letters, digits, '.', '-', '_')",
                             api_version)};
  auto in_url = query_value(query, "api-version");
  if (in_url && !api_version.empty() && *in_url != api_version)
    return Error{fmt::format("the api-version is given twice, differently: {} in assistant.base_url and \"{}\" "
                             "in assistant.api_version; keep one",
                             *in_url, api_version)};
  if (!api_version.empty() && !in_url)
    query += (query.empty() ? "" : "&") + ("api-version=" + api_version);
  if (out.azure_deployment && !query_value(query, "api-version"))
    return Error{fmt::format("assistant.base_url (\"{}\") is an Azure OpenAI deployment URL, which needs an API "
                             "version: set assistant.api_version, e.g. \"2024-10-21\" (the latest GA version of "
                             "these URLs); or use the v1 endpoint, base_url = "
                             "\"https://RESOURCE.openai.azure.com/openai/v1\", with model = the deployment's name",
                             base_url)};
  out.url = (base.empty() ? std::string("https://api.openai.com/v1") : base) + "/chat/completions" +
            (query.empty() ? "" : "?" + query);
  return out;
}

/// The provider's own words from an error body ({"error":{"message":..}} in both
/// dialects), else the body itself, shortened. OpenRouter says "Provider returned
/// error" and puts what the model's own service said in error.metadata.raw: both.
std::string error_message(const std::string& body) {
  if (auto j = Json::parse(body); j && j->is_object()) {
    if (auto* err = j->find("error")) {
      if (auto* msg = err->find("message"); msg && msg->is_string()) {
        auto* metadata = err->find("metadata");
        auto* raw = metadata && metadata->is_object() ? metadata->find("raw") : nullptr;
        if (raw && raw->is_string() && !raw->as_string().empty())
          return msg->as_string() + ": " + raw->as_string();
        return msg->as_string();
      }
      if (err->is_string())
        return err->as_string();
    }
    if (auto* msg = j->find("message"); msg && msg->is_string())
      return msg->as_string();
  }
  auto text = sanitize_utf8(body.substr(0, 300));
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r'))
    text.pop_back();
  return text.empty() ? "(no message)" : text;
}

/// Whether a refusal's body names stream_options as what it refuses: in its message,
/// its param, a pydantic error's loc (Mistral: "loc":["body","stream_options",...]) or
/// a key of its own ({"errors":{"stream_options":...}}) -- not in an echo of the
/// request, which pydantic servers put in `input` and FastAPI's handlers in `body`,
/// and vLLM in its message's text as `input_value=...` (up to `input_type=`).
bool refuses_stream_options(const std::string& body) {
  auto says_it = [](std::string_view text) { // outside the echoes
    constexpr auto none = std::string_view::npos;
    for (;;) {
      auto echo = text.find("input_value=");
      if (text.substr(0, echo).find("stream_options") != none)
        return true;
      auto after = echo == none ? none : text.find("input_type=", echo);
      if (after == none)
        return false;
      text.remove_prefix(after);
    }
  };
  auto j = Json::parse(body);
  if (!j)
    return says_it(body);
  std::function<bool(const Json&, int)> names = [&](const Json& v, int depth) {
    if (depth > 8)
      return false;
    if (v.is_string())
      return says_it(v.as_string());
    if (v.is_array())
      return std::any_of(v.as_array().begin(), v.as_array().end(), [&](const Json& x) { return names(x, depth + 1); });
    if (v.is_object())
      return std::any_of(v.as_object().begin(), v.as_object().end(), [&](const auto& kv) {
        if (kv.first == "input" || kv.first == "body")
          return false;
        return kv.first.find("stream_options") != std::string::npos || names(kv.second, depth + 1);
      });
    return false;
  };
  return names(*j, 0);
}

/// The `error` object of an error body ({"error":{"message":...,"type":...}}, OpenAI's
/// and Anthropic's shape), read once for the checks below; null when it has none.
Json error_object(const std::string& body) {
  auto j = Json::parse(body);
  auto* err = j && j->is_object() ? j->find("error") : nullptr;
  return err && err->is_object() ? *err : Json();
}

/// The string `key` of an error object, "" when it has none.
std::string error_field(const Json& error, std::string_view key) {
  auto* v = error.is_object() ? error.find(key) : nullptr;
  return v && v->is_string() ? v->as_string() : std::string();
}

/// A refusal of `max_tokens` that asks for `max_completion_tokens` (OpenAI's and Azure's
/// reasoning models: {"error":{"message":"Unsupported parameter: 'max_tokens' is not
/// supported with this model. Use 'max_completion_tokens' instead.","param":
/// "max_tokens","code":"unsupported_parameter"}}). Not a value too large ("'max_tokens'
/// or 'max_completion_tokens' is too large", vLLM's), nor a request echoed back.
bool asks_completion_tokens(const Json& error) {
  return error_field(error, "message").find("Use 'max_completion_tokens'") != std::string::npos ||
         (error_field(error, "param") == "max_tokens" && error_field(error, "code") == "unsupported_parameter");
}

/// A 429 that waiting does not cure: OpenAI's for an account whose quota, credit or
/// spending limit is used up ({"error":{"type":"insufficient_quota",...}}, or a code
/// naming its billing).
bool quota_exhausted(const Json& error) {
  for (auto key : {"type", "code"}) {
    auto value = error_field(error, key);
    for (std::string_view said : {"insufficient_quota", "billing_hard_limit_reached", "billing_not_active"})
      if (value == said)
        return true;
  }
  return false;
}

class HttpProvider final : public Provider {
public:
  HttpProvider(HttpProviderConfig config, std::string url, std::vector<std::string> headers, std::string key)
    : config_(std::move(config)), url_(std::move(url)), headers_(std::move(headers)), key_(std::move(key)),
      sends_key_(!key_.empty()) {}

  Status stream(const ChatRequest& request, const StreamHooks& hooks) override {
    error_code kind;
    return stream_classified(request, hooks, kind);
  }

  Status stream_classified(const ChatRequest& request, const StreamHooks& hooks, error_code& kind) override {
    kind = error_code::none;
    bool anthropic = config_.provider == "anthropic";
    bool asks_usage = !anthropic && !usage_refused_; // this request's stream_options
    // The token limit's newer name, where the server takes only that one.
    bool completion_tokens = is_openai_service(url_) || max_tokens_refused_;
    auto openai_body = [&] { return openai_request_body(request, asks_usage, completion_tokens); };
    HttpPost post{url_, headers_, anthropic ? anthropic_request_body(request) : openai_body()};
    std::mt19937_64 rng(std::random_device{}());
    // Failures since an attempt last got further than every one before (each starts
    // the response anew): a stream cut again and again at the same place gives up
    // after max_retries, one that gets further each time goes on.
    int failures = 0;
    size_t furthest = 0;        // the most events any attempt decoded
    std::string retry_after;    // the last answer's Retry-After (this call's own)
    for (;;) {
      std::string why;
      error_code code = error_code::none; // the kind of `why`
      // What a refusal may be of: the body names max_tokens (not its newer name).
      bool sent_max_tokens = !anthropic && request.max_tokens > 0 &&
                             max_tokens_parameter(request.model, completion_tokens) == "max_tokens";
      auto attempt = anthropic ? once<AnthropicStream>(post, request, hooks, failures, furthest, retry_after, why,
                                                       code, false, false)
                               : once<OpenAiStream>(post, request, hooks, failures, furthest, retry_after, why,
                                                    code, asks_usage, sent_max_tokens);
      why = without_key(std::move(why));
      kind = code; // until a later attempt succeeds
      if (attempt == outcome::done)
        return Status::success();
      if (attempt == outcome::without_usage) {
        // Asked again at once without it, and never again of this server: the
        // report then counts what the server says of itself, or nothing.
        usage_refused_ = true;
        asks_usage = false;
        post.body = openai_body();
        continue;
      }
      if (attempt == outcome::with_completion_tokens) {
        // A reasoning model under a name not known here (an Azure deployment's):
        // asked again at once with max_completion_tokens, and so from now on.
        max_tokens_refused_ = true;
        completion_tokens = true;
        post.body = openai_body();
        continue;
      }
      if (attempt == outcome::fail)
        return Error{why};
      if (++failures > config_.retry.max_retries)
        return Error{fmt::format("gave up after {} retries: {}", config_.retry.max_retries, why)};
      // A server asking for a longer pause than we would ever wait: say so now.
      if (auto asked = retry_after_secs(retry_after, std::chrono::system_clock::now());
          asked > config_.retry.max_backoff_secs)
        return Error{fmt::format("{}; the provider asks to retry after {} s, more than "
                                 "assistant.request.max_backoff_secs ({} s): try again later, or raise it",
                                 why, asked, config_.retry.max_backoff_secs)};
      auto delay = retry_delay(config_.retry, failures, retry_after, rng);
      if (hooks.on_retry)
        hooks.on_retry(fmt::format("{}; retrying in {:.1f} s (retry {} of {})", why,
                                   static_cast<double>(delay.count()) / 1000, failures,
                                   config_.retry.max_retries));
      if (!sleep_unless_cancelled(delay, hooks)) {
        kind = error_code::interrupted;
        return Error{"cancelled"};
      }
    }
  }

private:
  /// `text` (what the provider said) with the API key left out: a proxy or a
  /// compatible server may quote it in its error ("invalid key: sk-..."), which would
  /// put it on the terminal and in the workspace's conversation log. (A key too short
  /// to be a secret, "x" or "EMPTY" for a local server, would only garble the text.)
  std::string without_key(std::string text) const {
    constexpr size_t shortest_secret = 8;
    if (key_.size() < shortest_secret)
      return text;
    // Its first 16 bytes are enough: a text cut short (an error page's first bytes)
    // may hold only part of it. (Fewer would match every key's public prefix,
    // "sk-proj-", in a text that only describes keys.)
    constexpr std::string_view shown = "[the API key]";
    auto start = std::string_view(key_).substr(0, 16);
    for (auto at = text.find(start); at != std::string::npos; at = text.find(start, at + shown.size())) {
      size_t n = start.size();
      while (n < key_.size() && at + n < text.size() && text[at + n] == key_[n])
        ++n;
      text.replace(at, n, shown);
    }
    return text;
  }

  template <class Decoder>
  static Decoder make_decoder(const std::string& model) {
    if constexpr (std::is_constructible_v<Decoder, std::string>)
      return Decoder(model);
    else
      return Decoder();
  }

  // without_usage: the server refused stream_options (HTTP 400 or 422 naming it);
  // with_completion_tokens: it refused max_tokens, asking for max_completion_tokens.
  enum class outcome { done, retry, fail, without_usage, with_completion_tokens };

  template <class Decoder>
  outcome once(const HttpPost& post, const ChatRequest& request, const StreamHooks& hooks, int& failures,
               size_t& furthest, std::string& retry_after, std::string& why, error_code& code, bool asked_usage,
               bool sent_max_tokens) {
    SseParser sse;
    Decoder decoder = make_decoder<Decoder>(request.model);
    Status decoded; // the stream so far made sense
    size_t events = 0;
    size_t sse_events = 0; // events of the stream, whether or not they made a chat event
    std::string head;      // the body's start, shown when it is no event stream
    auto on_body = [&](std::string_view chunk) {
      if (head.size() < 4096)
        head.append(chunk.substr(0, 4096 - head.size()));
      sse.feed(chunk, [&](const SseEvent& e) {
        ++sse_events;
        if (decoded)
          decoded = decoder.on_event(e, [&](ChatEvent ev) {
            if (++events > furthest) { // further than any attempt: the count starts again
              furthest = events;
              failures = 0;
            }
            hooks.emit(std::move(ev));
          });
      });
      if (sse.overflowed())
        decoded = Error{fmt::format("the provider sent an event larger than {} MiB; stopped reading",
                                    SseParser::default_max_event_bytes >> 20)};
      if (!decoded)
        return body_next::stop;
      return decoder.ended() ? body_next::done : body_next::more;
    };
    auto limits = config_.limits;
    limits.idle_timeout = std::chrono::milliseconds(
      static_cast<int64_t>(idle_timeout_for(config_.provider, request.model, config_.idle_timeout_secs) * 1000));
    auto r = http_post_stream(post, limits, on_body, hooks.cancelled);
    retry_after = r.retry_after;
    if (!decoded) {
      why = decoded.error;
      code = error_code::provider_stream;
      // An overload reported inside the stream is the 529 it would have been before it.
      return decoder.error_transient() ? outcome::retry : outcome::fail;
    }
    // The whole response came: a connection that broke, went quiet or was let go
    // after its end takes nothing from it.
    bool user_cancelled = hooks.cancelled && hooks.cancelled();
    if (!user_cancelled && r.status >= 200 && r.status <= 299 && decoder.finished())
      return outcome::done;
    switch (r.failure) {
      case http_failure::cancelled:
        why = "cancelled";
        code = error_code::interrupted;
        return outcome::fail;
      case http_failure::connect:
        code = error_code::provider_network;
        // Refused: the host says nothing listens there, which no wait soon changes
        // (a server not started, a wrong port): said at once. No answer at all (a
        // network down, a name not resolved, a connect timed out) may pass: retried,
        // as the providers' SDKs retry it.
        if (r.refused) {
          why = fmt::format("cannot connect to {}: {}; is the server running? (assistant.base_url)", url_,
                            r.failure_text);
          return outcome::fail;
        }
        why = fmt::format("cannot connect to {}: {}; is the network up, and assistant.base_url right?", url_,
                          r.failure_text);
        return outcome::retry;
      case http_failure::too_large:
        why = fmt::format("the response from {} passed the size cap of {} bytes "
                          "(assistant.request.max_response_bytes)",
                          url_, config_.limits.max_body_bytes);
        code = error_code::provider_stream;
        return outcome::fail;
      case http_failure::idle:
        why = fmt::format("{} sent nothing for {} s (assistant.request.idle_timeout_secs)", url_,
                          limits.idle_timeout.count() / 1000.0);
        code = error_code::provider_network;
        return outcome::retry;
      case http_failure::transport:
        why = fmt::format("connection to {} failed: {}", url_, r.failure_text);
        code = error_code::provider_network;
        return outcome::retry;
      case http_failure::none:
        break;
    }
    if (r.status >= 200 && r.status <= 299) {
      if (decoder.finished())
        return outcome::done;
      // A server that ignores "stream": true (or a proxy's page) answers with a body
      // that no retry turns into events: say what it said.
      // (Not a stream whose type a proxy changed: one that held an event, or began as
      // one, is retried as cut.)
      auto type = r.content_type;
      std::transform(type.begin(), type.end(), type.begin(), [](unsigned char c) { return std::tolower(c); });
      auto start = head.substr(std::min(head.find_first_not_of(" \t\r\n"), head.size()));
      bool looks_sse = start.starts_with("data:") || start.starts_with("event:") || start.starts_with(":") ||
                       start.starts_with("id:") || start.starts_with("retry:");
      if (sse_events == 0 && !head.empty() && !looks_sse && type.find("text/event-stream") == std::string::npos) {
        why = fmt::format("{} answered HTTP {} with {} rather than an event stream: {}; assistant.base_url must "
                          "be a chat API that streams (OpenAI's chat/completions or Anthropic's messages)",
                          url_, r.status, r.content_type.empty() ? std::string("no Content-Type") : r.content_type,
                          error_message(head));
        code = error_code::provider_stream;
        return outcome::fail;
      }
      why = fmt::format("the stream from {} ended before the response was complete", url_);
      code = error_code::provider_stream;
      return outcome::retry;
    }
    auto message = error_message(r.error_body);
    code = r.status == 401 || r.status == 403 ? error_code::provider_auth : error_code::provider_http;
    auto error = error_object(r.error_body);
    if (r.status == 429 && quota_exhausted(error)) {
      why = fmt::format("the provider says the account's quota is used up (HTTP 429 from {}): {}; waiting "
                        "will not help: check the plan and billing of the key{}",
                        url_, message, config_.api_key_env.empty() ? "" : " in $" + config_.api_key_env);
      return outcome::fail;
    }
    // A part of the request the server refuses: asked again at once without it, or
    // by the name it asks for (before any retry of the same body, whatever the
    // provider says of retrying).
    if ((r.status == 400 || r.status == 422) && asked_usage && refuses_stream_options(r.error_body)) {
      why = fmt::format("the provider rejected the request (HTTP {} from {}): {}", r.status, url_, message);
      return outcome::without_usage;
    }
    // OpenAI's (and Azure's) reasoning models: "Unsupported parameter: 'max_tokens' is not
    // supported with this model. Use 'max_completion_tokens' instead."
    if (r.status == 400 && sent_max_tokens && asks_completion_tokens(error)) {
      why = fmt::format("the provider rejected the request (HTTP {} from {}): {}", r.status, url_, message);
      return outcome::with_completion_tokens;
    }
    // The provider's own word, where it says one (OpenAI's and Anthropic's SDKs
    // read it before the status): "true" retries any status (but a used-up quota),
    // "false" none.
    auto should_retry = r.header("x-should-retry");
    if (should_retry == "true" || (should_retry != "false" && retryable_status(r.status))) {
      why = fmt::format("HTTP {} from {}: {}", r.status, url_, message);
      return outcome::retry;
    }
    if (retryable_status(r.status)) {
      why = fmt::format("HTTP {} from {}: {}; the provider says not to retry it (x-should-retry: false)", r.status,
                        url_, message);
      return outcome::fail;
    }
    if ((r.status == 401 || r.status == 403) && !sends_key_)
      why = fmt::format("the provider wants an API key (HTTP {}): {}; export {} with it", r.status, message,
                        config_.api_key_env.empty() ? std::string("the key") : "$" + config_.api_key_env);
    else if (r.status == 401 || r.status == 403)
      why = fmt::format("the provider refused the API key{} (HTTP {}): {}",
                        config_.api_key_env.empty() ? "" : " in $" + config_.api_key_env, r.status, message);
    else if (r.status == 404 && url_.find("/openai/deployments/") != std::string::npos)
      // Azure names the model by the deployment in the URL, and 404s an api-version it lacks.
      why = fmt::format("HTTP 404 from {}: {}; check the deployment's name in assistant.base_url and "
                        "assistant.api_version",
                        url_, message);
    else if (r.status == 404)
      why = fmt::format("HTTP 404 from {}: {}; check assistant.model (`{}`) and assistant.base_url", url_,
                        message, request.model);
    else { // llm_inquiry.cpp reads a 400's message after "): " (a refused response_format)
      why = fmt::format("the provider rejected the request (HTTP {} from {}): {}", r.status, url_, message);
      // The conversation outgrew the model's context: asking again cannot help.
      for (std::string_view full : {"prompt is too long", "context length", "context_length_exceeded",
                                    "context window", "maximum context", "too many tokens", "input is too long"})
        if (contains_nocase(message, full)) {
          why += "; the conversation is longer than the model takes: start a new conversation (`jp-actors query "
                 "--new`) and say there what matters of this one";
          break;
        }
    }
    return outcome::fail;
  }

  static bool sleep_unless_cancelled(std::chrono::milliseconds delay, const StreamHooks& hooks) {
    auto until = std::chrono::steady_clock::now() + delay;
    while (std::chrono::steady_clock::now() < until) {
      if (hooks.cancelled && hooks.cancelled())
        return false;
      std::this_thread::sleep_for(std::min<std::chrono::milliseconds>(
        std::chrono::milliseconds(50),
        std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now()) +
          std::chrono::milliseconds(1)));
    }
    return true;
  }

  HttpProviderConfig config_;
  std::string url_;
  std::vector<std::string> headers_;
  std::string key_; // only to leave it out of what the provider says
  bool sends_key_ = false;
  // Nothing of one call's is kept here: sub-agents stream through one provider at once.
  // What is learnt of the server is: it refused stream_options once, or max_tokens
  // (asking for max_completion_tokens).
  std::atomic<bool> usage_refused_{false};
  std::atomic<bool> max_tokens_refused_{false};
};

} // namespace

Status api_key_given(const HttpProviderConfig& config) {
  bool anthropic = config.provider == "anthropic";
  bool official = trim_slash(config.base_url).empty();
  const char* key = config.api_key_env.empty() ? nullptr : std::getenv(config.api_key_env.c_str());
  if ((key && *key) || !official)
    return Status::success();
  return Error{fmt::format("{} is not set: export it with your {} API key, or set "
                           "assistant.api_key_env to the variable that holds it",
                           config.api_key_env.empty() ? std::string(anthropic ? "ANTHROPIC_API_KEY" : "OPENAI_API_KEY")
                                                      : config.api_key_env,
                           anthropic ? "Anthropic" : "OpenAI")};
}

Result<std::unique_ptr<Provider>> make_http_provider(const HttpProviderConfig& config) {
  bool anthropic = config.provider == "anthropic";
  if (!anthropic && config.provider != "openai")
    return Error{fmt::format("unknown provider \"{}\" (expected openai or anthropic)", config.provider)};
  if (anthropic && !config.api_version.empty())
    return Error{fmt::format("assistant.api_version (\"{}\") is for provider openai (Azure OpenAI's api-version); "
                             "Anthropic's version goes in its own header: remove it",
                             config.api_version)};
  std::string url;
  bool azure_deployment = false;
  if (anthropic) {
    // The host, its /v1, or the whole endpoint (.../v1/messages, as pasted).
    auto base = trim_slash(config.base_url);
    url = base.ends_with("/messages") ? base
          : (base.empty() ? "https://api.anthropic.com" : base) + (base.ends_with("/v1") ? "/messages" : "/v1/messages");
  } else {
    auto endpoint = openai_endpoint(config.base_url, config.api_version);
    if (!endpoint)
      return Error{endpoint.error()};
    url = std::move(endpoint->url);
    azure_deployment = endpoint->azure_deployment;
  }
  if (auto given = api_key_given(config); !given)
    return Error{given.error};
  const char* key = config.api_key_env.empty() ? nullptr : std::getenv(config.api_key_env.c_str());
  std::vector<std::string> headers{"Content-Type: application/json", "Accept: text/event-stream"};
  // The key goes in a header only (never in the URL, which errors name).
  if (key && *key)
    headers.push_back(anthropic          ? fmt::format("x-api-key: {}", key)
                      : azure_deployment ? fmt::format("api-key: {}", key)
                                         : fmt::format("Authorization: Bearer {}", key));
  if (anthropic)
    headers.push_back("anthropic-version: 2023-06-01");
  return std::unique_ptr<Provider>(new HttpProvider(config, std::move(url), std::move(headers), key ? key : ""));
}

} // namespace jp
