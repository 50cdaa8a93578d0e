// Where an MCP server may send us: a URL it hands back (a redirect's Location, the
// legacy transport's endpoint) is made absolute against the URL it came from and
// followed only on that URL's own scheme, host and port -- another host would be
// handed our headers, a token among them.
#pragma once

#include <string>

namespace jp {

/// `url`'s host in lower case, past a userinfo and before a port (an IPv6 literal in
/// its brackets); "" when it has none (no "://", or nothing there).
std::string url_host(const std::string& url);

/// `url`'s scheme and authority ("http://127.0.0.1:8000"), written one way to be
/// compared: scheme and host in lower case, the scheme's default port (http 80,
/// https 443) left out, a userinfo as written; "" when it has none.
std::string url_origin(const std::string& url);

/// `ref` (absolute, or relative: "/messages?sessionId=1", "messages", "//host/x")
/// made absolute against `base`, when it stays on `base`'s origin; "" otherwise, and
/// for a reference with spaces, control characters or backslashes (which some
/// readers take for slashes).
std::string same_origin_target(const std::string& base, const std::string& ref);

} // namespace jp
