// An LLM provider as the agent loop sees it: one request in, one streamed response
// out, retried as [assistant.request] says. `scripted`, `openai` and `anthropic`
// implement it; the loop knows nothing of HTTP.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "../../messages/chat.hpp"
#include "../../messages/error_code.hpp"
#include "../../messages/result.hpp"
#include "http_stream.hpp"
#include "retry_policy.hpp"

namespace jp {

struct StreamHooks {
  std::function<void(ChatEvent)> emit;
  /// A retry is about to start: what came of this response so far is void (the
  /// caller drops it and resets its rendering). `why` is for the user.
  std::function<void(const std::string& why)> on_retry;
  std::function<bool()> cancelled; // polled; true stops the stream (an error)
};

class Provider {
public:
  virtual ~Provider() = default;
  /// Streams one response through hooks.emit, ending with a `done` event. Blocking:
  /// call it off the actor threads. An error names what went wrong and what to do.
  virtual Status stream(const ChatRequest& request, const StreamHooks& hooks) = 0;
  /// As stream(), and what kind of failure its error is (provider_auth, _network,
  /// _http or _stream; interrupted when cancelled), for callers that tell them
  /// apart. A provider that does not say: its stream failed.
  virtual Status stream_classified(const ChatRequest& request, const StreamHooks& hooks, error_code& kind) {
    auto status = stream(request, hooks);
    kind = status ? error_code::none : error_code::provider_stream;
    return status;
  }
  /// false: stream() returns at once (a script, a test's fake), so the loop may call
  /// it on its own thread.
  virtual bool blocking() const { return true; }
};

/// What an HTTP provider needs ([assistant] and [assistant.request]).
struct HttpProviderConfig {
  std::string provider;     // openai | anthropic
  std::string base_url;     // "" = the provider's own
  std::string api_key_env;  // the variable holding the key ("" = none needed)
  std::string api_version;  // openai: the query's api-version ("" = none; Azure's deployments need one)
  RetryPolicy retry;
  HttpLimits limits;        // but its idle_timeout, which is idle_timeout_secs's:
  double idle_timeout_secs = -1; // [assistant.request]'s (< 0: by each request's model)
};

/// An openai (Chat Completions) or anthropic (Messages) provider over libcurl. Fails
/// when the key's variable is unset where a key is needed (naming the variable), and
/// for a base_url or api_version it cannot make a request URL of (naming the key).
/// An openai base_url may carry a query (kept after the endpoint's path) and may end
/// in /chat/completions (the endpoint itself). An Azure OpenAI deployment URL
/// (path .../openai/deployments/NAME) needs an api-version and gets the key in
/// `api-key`; every other openai server gets `Authorization: Bearer`.
Result<std::unique_ptr<Provider>> make_http_provider(const HttpProviderConfig& config);

/// Whether the key a request needs is there: its variable set, or a base_url of
/// another server (which may want none); else why, naming the variable.
Status api_key_given(const HttpProviderConfig& config);

} // namespace jp
