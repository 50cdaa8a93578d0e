// openai and anthropic over HTTP: the request body and stream decoder of the
// dialect, retries with backoff, and errors that say what to do.
#include "runtime/provider/provider.hpp"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <functional>
#include <fmt/format.h>
#include <random>
#include <thread>
#include <type_traits>

#include "messages/json.hpp"
#include "runtime/provider/anthropic_format.hpp"
#include "runtime/provider/openai_format.hpp"
#include "runtime/provider/sse.hpp"

namespace jp {

namespace {

std::string trim_slash(std::string s) {
  while (!s.empty() && s.back() == '/')
    s.pop_back();
  return s;
}

/// The provider's own words from an error body ({"error":{"message":..}} in both
/// dialects), else the body itself, shortened.
std::string error_message(const std::string& body) {
  if (auto j = Json::parse(body); j && j->is_object()) {
    if (auto* err = j->find("error")) {
      if (auto* msg = err->find("message"); msg && msg->is_string())
        return msg->as_string();
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

/// A 429 that waiting does not cure: OpenAI's for an account whose quota or credit
/// is used up ({"error":{"type":"insufficient_quota",...}}).
bool quota_exhausted(const std::string& body) {
  auto j = Json::parse(body);
  auto* err = j && j->is_object() ? j->find("error") : nullptr;
  if (!err || !err->is_object())
    return false;
  for (auto key : {"type", "code"})
    if (auto* v = err->find(key); v && v->is_string() && v->as_string() == "insufficient_quota")
      return true;
  return false;
}

class HttpProvider final : public Provider {
public:
  HttpProvider(HttpProviderConfig config, std::string url, std::vector<std::string> headers, bool sends_key)
    : config_(std::move(config)), url_(std::move(url)), headers_(std::move(headers)), sends_key_(sends_key) {}

  Status stream(const ChatRequest& request, const StreamHooks& hooks) override {
    error_code kind;
    return stream_classified(request, hooks, kind);
  }

  Status stream_classified(const ChatRequest& request, const StreamHooks& hooks, error_code& kind) override {
    kind = error_code::none;
    bool anthropic = config_.provider == "anthropic";
    bool asks_usage = !anthropic && !usage_refused_; // this request's stream_options
    HttpPost post{url_, headers_,
                  anthropic ? anthropic_request_body(request) : openai_request_body(request, asks_usage)};
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
      auto attempt = anthropic
                       ? once<AnthropicStream>(post, request, hooks, failures, furthest, retry_after, why, code, false)
                       : once<OpenAiStream>(post, request, hooks, failures, furthest, retry_after, why, code,
                                            asks_usage);
      kind = code; // until a later attempt succeeds
      if (attempt == outcome::done)
        return Status::ok();
      if (attempt == outcome::without_usage) {
        // Asked again at once without it, and never again of this server: the
        // report then counts what the server says of itself, or nothing.
        usage_refused_ = true;
        asks_usage = false;
        post.body = openai_request_body(request, false);
        continue;
      }
      if (attempt == outcome::fail)
        return Error{why};
      if (++failures > config_.retry.max_retries)
        return Error{fmt::format("gave up after {} retries: {}", config_.retry.max_retries, why)};
      // A server asking for a longer pause than we would ever wait: say so now.
      if (auto asked = retry_after_secs(retry_after, std::chrono::system_clock::now());
          asked > config_.retry.max_backoff_secs)
        return Error{fmt::format("{}; the provider asks to retry after {:.0f} s, more than "
                                 "assistant.request.max_backoff_secs ({:.0f} s): try again later",
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
  template <class Decoder>
  static Decoder make_decoder(const std::string& model) {
    if constexpr (std::is_constructible_v<Decoder, std::string>)
      return Decoder(model);
    else
      return Decoder();
  }

  // without_usage: the server refused stream_options (HTTP 400 or 422 naming it).
  enum class outcome { done, retry, fail, without_usage };

  template <class Decoder>
  outcome once(const HttpPost& post, const ChatRequest& request, const StreamHooks& hooks, int& failures,
               size_t& furthest, std::string& retry_after, std::string& why, error_code& code, bool asked_usage) {
    SseParser sse;
    Decoder decoder = make_decoder<Decoder>(request.model);
    Status decoded; // the stream so far made sense
    size_t events = 0;
    auto on_body = [&](std::string_view chunk) {
      sse.feed(chunk, [&](const SseEvent& e) {
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
    auto r = http_post_stream(post, config_.limits, on_body, hooks.cancelled);
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
        why = fmt::format("cannot connect to {}: {}; is the server running? (assistant.base_url)",
                          url_, r.failure_text);
        code = error_code::provider_network;
        return outcome::fail;
      case http_failure::too_large:
        why = fmt::format("the response from {} passed the size cap of {} bytes "
                          "(assistant.request.max_response_bytes)",
                          url_, config_.limits.max_body_bytes);
        code = error_code::provider_stream;
        return outcome::fail;
      case http_failure::idle:
        why = fmt::format("{} sent nothing for {} s (stream idle timeout)", url_,
                          config_.limits.idle_timeout.count() / 1000.0);
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
      why = fmt::format("the stream from {} ended before the response was complete", url_);
      code = error_code::provider_stream;
      return outcome::retry;
    }
    auto message = error_message(r.error_body);
    code = r.status == 401 || r.status == 403 ? error_code::provider_auth : error_code::provider_http;
    if (r.status == 429 && quota_exhausted(r.error_body)) {
      why = fmt::format("the provider says the account's quota is used up (HTTP 429 from {}): {}; waiting "
                        "will not help: check the plan and billing of the key{}",
                        url_, message, config_.api_key_env.empty() ? "" : " in $" + config_.api_key_env);
      return outcome::fail;
    }
    if (retryable_status(r.status)) {
      why = fmt::format("HTTP {} from {}: {}", r.status, url_, message);
      return outcome::retry;
    }
    if ((r.status == 400 || r.status == 422) && asked_usage && refuses_stream_options(r.error_body)) {
      why = fmt::format("the provider rejected the request (HTTP {} from {}): {}", r.status, url_, message);
      return outcome::without_usage;
    }
    if ((r.status == 401 || r.status == 403) && !sends_key_)
      why = fmt::format("the provider wants an API key (HTTP {}): {}; export {} with it", r.status, message,
                        config_.api_key_env.empty() ? std::string("the key") : "$" + config_.api_key_env);
    else if (r.status == 401 || r.status == 403)
      why = fmt::format("the provider refused the API key{} (HTTP {}): {}",
                        config_.api_key_env.empty() ? "" : " in $" + config_.api_key_env, r.status, message);
    else if (r.status == 404)
      why = fmt::format("HTTP 404 from {}: {}; check assistant.model (`{}`) and assistant.base_url", url_,
                        message, request.model);
    else // llm_inquiry.cpp reads a 400's message after "): " (a refused response_format)
      why = fmt::format("the provider rejected the request (HTTP {} from {}): {}", r.status, url_, message);
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
  bool sends_key_ = false;
  // Nothing of one call's is kept here: sub-agents stream through one provider at once.
  // What is learnt of the server is: it refused stream_options once.
  std::atomic<bool> usage_refused_{false};
};

} // namespace

Result<std::unique_ptr<Provider>> make_http_provider(const HttpProviderConfig& config) {
  bool anthropic = config.provider == "anthropic";
  if (!anthropic && config.provider != "openai")
    return Error{fmt::format("unknown provider \"{}\" (expected openai or anthropic)", config.provider)};
  auto base = trim_slash(config.base_url);
  bool official = base.empty();
  std::string url = anthropic ? (official ? "https://api.anthropic.com" : base) +
                                  (base.ends_with("/v1") ? "/messages" : "/v1/messages")
                              : (official ? "https://api.openai.com/v1" : base) + "/chat/completions";
  const char* key = config.api_key_env.empty() ? nullptr : std::getenv(config.api_key_env.c_str());
  if ((!key || !*key) && official)
    return Error{fmt::format("{} is not set: export it with your {} API key, or set "
                             "assistant.api_key_env to the variable that holds it",
                             config.api_key_env.empty() ? std::string(anthropic ? "ANTHROPIC_API_KEY" : "OPENAI_API_KEY")
                                                        : config.api_key_env,
                             anthropic ? "Anthropic" : "OpenAI")};
  std::vector<std::string> headers{"Content-Type: application/json", "Accept: text/event-stream"};
  if (key && *key)
    headers.push_back(anthropic ? fmt::format("x-api-key: {}", key) : fmt::format("Authorization: Bearer {}", key));
  if (anthropic)
    headers.push_back("anthropic-version: 2023-06-01");
  bool sends_key = key && *key;
  return std::unique_ptr<Provider>(new HttpProvider(config, std::move(url), std::move(headers), sends_key));
}

} // namespace jp
