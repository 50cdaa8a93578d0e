#include "runtime/provider/http_stream.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <curl/curl.h>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace jp {

namespace {

constexpr std::size_t kErrorBodyMax = 64 * 1024;

using clock = std::chrono::steady_clock;

struct Exchange {
  const HttpLimits& limits;
  const std::function<body_next(std::string_view)>& on_body;
  const std::function<bool()>& cancelled;
  const std::function<void(const HttpResult&)>& on_head;
  HttpResult result;
  bool head_seen = false;
  clock::time_point last_data = clock::now();
  bool stopped_by_us = false;
  bool retry_after_ms = false; // retry-after-ms came: it is the finer, and wins
  std::optional<clock::time_point> done_at; // the reader said body_next::done
};

// How long the body's end may take after the reader has all it wants.
constexpr auto kEndGrace = std::chrono::milliseconds(200);

std::size_t on_header(char* data, std::size_t size, std::size_t n, void* user) {
  auto& x = *static_cast<Exchange*>(user);
  std::string_view line(data, size * n);
  x.last_data = clock::now();
  if (line.starts_with("HTTP/")) { // a new response (after a 100 Continue, too)
    auto sp = line.find(' ');
    x.result.status = sp == std::string_view::npos ? 0 : std::atol(std::string(line.substr(sp + 1, 3)).c_str());
    x.result.retry_after.clear();
    x.retry_after_ms = false;
    x.result.content_type.clear();
    x.result.headers.clear();
  } else if (auto colon = line.find(':'); colon != std::string_view::npos) {
    std::string name(line.substr(0, colon));
    for (auto& c : name)
      c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    auto value = line.substr(colon + 1);
    while (!value.empty() && (value.front() == ' ' || value.front() == '\t'))
      value.remove_prefix(1);
    while (!value.empty() && (value.back() == '\n' || value.back() == '\r' || value.back() == ' '))
      value.remove_suffix(1);
    // OpenAI's and Azure's retry-after-ms, as their SDKs read it: before Retry-After.
    if (name == "retry-after-ms" && !value.empty() && value.find_first_not_of("0123456789.") == value.npos) {
      x.result.retry_after = std::to_string(std::atof(std::string(value).c_str()) / 1000);
      x.retry_after_ms = true;
    } else if (name == "retry-after" && !x.retry_after_ms) {
      x.result.retry_after = std::string(value);
    }
    else if (name == "content-type")
      x.result.content_type = std::string(value);
    if (x.result.headers.size() < 100)
      x.result.headers.emplace_back(std::move(name), std::string(value));
  }
  return size * n;
}

std::size_t on_data(char* data, std::size_t size, std::size_t n, void* user) {
  auto& x = *static_cast<Exchange*>(user);
  std::size_t len = size * n;
  x.last_data = clock::now();
  x.result.body_bytes += len;
  if (x.result.status < 200 || x.result.status > 299) {
    auto room = kErrorBodyMax - std::min(kErrorBodyMax, x.result.error_body.size());
    x.result.error_body.append(data, std::min(room, len));
    if (len < room)
      return len;
    // An error's body is kept to its start: the rest is not waited for (a body that
    // never ends would hold the request).
    x.stopped_by_us = true;
    return 0;
  }
  if (!x.head_seen) {
    x.head_seen = true;
    if (x.on_head)
      x.on_head(x.result);
  }
  if (x.result.body_bytes > x.limits.max_body_bytes) {
    x.result.failure = http_failure::too_large;
    x.stopped_by_us = true;
    return 0; // anything but len aborts the transfer
  }
  if (x.done_at)
    return len; // past what the reader wanted: only the body's end is waited for
  switch (x.on_body(std::string_view(data, len))) {
  case body_next::more: break;
  case body_next::done: x.done_at = clock::now(); break;
  case body_next::stop:
    x.result.failure = http_failure::cancelled;
    x.stopped_by_us = true;
    return 0;
  }
  return len;
}

int on_progress(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  auto& x = *static_cast<Exchange*>(user);
  if ((x.cancelled && x.cancelled()) || (x.done_at && clock::now() - *x.done_at > kEndGrace)) {
    x.result.failure = http_failure::cancelled;
    x.stopped_by_us = true;
    return 1;
  }
  if (clock::now() - x.last_data > x.limits.idle_timeout) {
    x.result.failure = http_failure::idle;
    x.stopped_by_us = true;
    return 1;
  }
  return 0;
}

void global_init() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

/// A request's libcurl handles: its easy handle, run by a multi handle of its own,
/// which keeps the connections (a request is waited on in slices, kPollSliceMs).
struct CurlPair {
  CURL* easy = nullptr;
  CURLM* multi = nullptr;
};

/// Idle handles by origin, so the next request to a server goes over the
/// connection (and TLS session) the last one left open instead of a new TCP and
/// TLS handshake: one or two round trips and a certificate check saved per round of
/// a tool loop. The multi handle keeps the connections; sharing one connection cache
/// between threads is unsupported, so a pair is used by one request at a time and
/// put back after it. Never destroyed: the OS closes what is left at exit, after
/// OpenSSL may have been torn down.
class HandlePool {
public:
  static HandlePool& instance() {
    static auto* pool = new HandlePool;
    return *pool;
  }

  CurlPair take(const std::string& origin) {
    {
      std::lock_guard lock(mtx_);
      for (auto it = idle_.rbegin(); it != idle_.rend(); ++it)
        if (it->first == origin) {
          auto pair = it->second;
          idle_.erase(std::next(it).base());
          return pair;
        }
    }
    CurlPair pair{curl_easy_init(), curl_multi_init()};
    if (!pair.easy || !pair.multi) {
      cleanup(pair);
      return {};
    }
    return pair;
  }

  /// `pair`'s options reset (nothing of the request's is pointed to any longer), its
  /// connections kept; the oldest idle pair goes past kMaxIdle.
  void put_back(const std::string& origin, CurlPair pair) {
    curl_easy_reset(pair.easy);
    CurlPair evicted;
    {
      std::lock_guard lock(mtx_);
      idle_.emplace_back(origin, pair);
      if (idle_.size() > kMaxIdle) {
        evicted = idle_.front().second;
        idle_.erase(idle_.begin());
      }
    }
    cleanup(evicted);
  }

private:
  static void cleanup(CurlPair pair) {
    if (pair.easy)
      curl_easy_cleanup(pair.easy);
    if (pair.multi)
      curl_multi_cleanup(pair.multi);
  }

  static constexpr std::size_t kMaxIdle = 16;
  std::mutex mtx_;
  std::vector<std::pair<std::string, CurlPair>> idle_; // oldest first
};

/// How long a request waits for its socket before its own checks run again (a
/// cancel, its idle timeout): libcurl's progress callback runs about once a second
/// on an idle connection, so a Ctrl-C during a model's silence waited up to that.
constexpr int kPollSliceMs = 100;

/// curl_easy_perform, in slices: the request's checks (on_progress) run after each.
/// A failure of the multi handle itself is said in `error`.
CURLcode perform(CurlPair pair, Exchange& x, char* error) {
  auto failed = [&](CURLMcode mc) {
    std::snprintf(error, CURL_ERROR_SIZE, "libcurl: %s", curl_multi_strerror(mc));
    return CURLE_FAILED_INIT;
  };
  if (auto mc = curl_multi_add_handle(pair.multi, pair.easy); mc != CURLM_OK)
    return failed(mc);
  CURLcode rc = CURLE_OK;
  for (int running = 1;;) {
    if (auto mc = curl_multi_perform(pair.multi, &running); mc != CURLM_OK) {
      rc = failed(mc);
      break;
    }
    if (!running) {
      int left = 0;
      while (CURLMsg* m = curl_multi_info_read(pair.multi, &left))
        if (m->msg == CURLMSG_DONE && m->easy_handle == pair.easy)
          rc = m->data.result;
      break;
    }
    if (on_progress(&x, 0, 0, 0, 0) != 0) {
      rc = CURLE_ABORTED_BY_CALLBACK;
      break;
    }
    if (auto mc = curl_multi_poll(pair.multi, nullptr, 0, kPollSliceMs, nullptr); mc != CURLM_OK) {
      rc = failed(mc); // not polled again at once, at full speed
      break;
    }
  }
  curl_multi_remove_handle(pair.multi, pair.easy);
  return rc;
}

/// scheme://host:port of `url` (what a kept connection is good for).
std::string origin_of(const std::string& url) {
  auto scheme = url.find("://");
  auto end = scheme == std::string::npos ? std::string::npos : url.find_first_of("/?#", scheme + 3);
  return url.substr(0, end);
}

} // namespace

HttpResult http_post_stream(const HttpPost& post, const HttpLimits& limits,
                            const std::function<body_next(std::string_view)>& on_body,
                            const std::function<bool()>& cancelled,
                            const std::function<void(const HttpResult&)>& on_head) {
  global_init();
  Exchange x{limits, on_body, cancelled, on_head, {}};
  auto origin = origin_of(post.url);
  auto pair = HandlePool::instance().take(origin);
  CURL* curl = pair.easy;
  if (!curl) {
    x.result.failure = http_failure::transport;
    x.result.failure_text = "cannot initialise libcurl";
    return x.result;
  }
  curl_slist* headers = nullptr;
  for (auto& h : post.headers)
    headers = curl_slist_append(headers, h.c_str());
  char error[CURL_ERROR_SIZE] = {};
  curl_easy_setopt(curl, CURLOPT_URL, post.url.c_str());
  if (post.method == "POST") {
    curl_easy_setopt(curl, CURLOPT_POST, 1L);
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, post.body.data());
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(post.body.size()));
  } else {
    curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, post.method.c_str());
  }
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L); // threads: no SIGALRM for timeouts
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(limits.connect_timeout.count()));
  curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, on_header);
  curl_easy_setopt(curl, CURLOPT_HEADERDATA, &x);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_data);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &x);
  curl_easy_setopt(curl, CURLOPT_NOPROGRESS, 0L);
  curl_easy_setopt(curl, CURLOPT_XFERINFOFUNCTION, on_progress);
  curl_easy_setopt(curl, CURLOPT_XFERINFODATA, &x);
  curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, error);
  curl_easy_setopt(curl, CURLOPT_ACCEPT_ENCODING, ""); // whatever curl can decode
  curl_easy_setopt(curl, CURLOPT_TCP_KEEPALIVE, 1L);
  // A connection idle longer is not used again: a NAT or proxy may have dropped it
  // without a word, and the request would wait out idle_timeout on it.
  curl_easy_setopt(curl, CURLOPT_MAXAGE_CONN, 30L);
  auto rc = perform(pair, x, error);
  if (rc != CURLE_OK && !x.stopped_by_us) {
    x.result.failure_text = error[0] ? error : curl_easy_strerror(rc);
    x.result.failure = rc == CURLE_COULDNT_CONNECT || rc == CURLE_COULDNT_RESOLVE_HOST ||
                               rc == CURLE_COULDNT_RESOLVE_PROXY ||
                               (rc == CURLE_OPERATION_TIMEDOUT && x.result.status == 0)
                           ? http_failure::connect
                           : http_failure::transport;
    long os_errno = 0;
    curl_easy_getinfo(curl, CURLINFO_OS_ERRNO, &os_errno);
    x.result.refused = rc == CURLE_COULDNT_CONNECT && os_errno == ECONNREFUSED;
  }
  HandlePool::instance().put_back(origin, pair);
  curl_slist_free_all(headers);
  return x.result;
}

} // namespace jp
