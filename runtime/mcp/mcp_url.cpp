#include "runtime/mcp/mcp_url.hpp"

#include <algorithm>
#include <cctype>

namespace jp {

namespace {

std::string lowered(std::string s) {
  for (auto& c : s)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

/// Where `url`'s authority ends (at its path, query or fragment, or its end); npos
/// when it has no "://".
std::string::size_type authority_end(const std::string& url) {
  auto scheme_end = url.find("://");
  if (scheme_end == std::string::npos)
    return std::string::npos;
  return std::min(url.size(), url.find_first_of("/?#", scheme_end + 3));
}

struct AuthorityParts {
  std::string userinfo; // with its '@' ("" for none)
  std::string host;
  std::string port; // "" for none
};

AuthorityParts authority_parts(const std::string& authority) {
  auto at = authority.rfind('@');
  auto userinfo = at == std::string::npos ? std::string() : authority.substr(0, at + 1);
  auto host_port = authority.substr(userinfo.size());
  // An IPv6 literal's colons are inside its brackets: the port's comes after them.
  auto colon = host_port.find(':', host_port.starts_with("[") ? host_port.find(']') : 0);
  return {userinfo, host_port.substr(0, colon), colon == std::string::npos ? std::string() : host_port.substr(colon + 1)};
}

} // namespace

std::string url_host(const std::string& url) {
  auto end = authority_end(url);
  if (end == std::string::npos)
    return "";
  auto start = url.find("://") + 3;
  return lowered(authority_parts(url.substr(start, end - start)).host);
}

std::string url_origin(const std::string& url) {
  auto end = authority_end(url);
  if (end == std::string::npos)
    return "";
  // Origins are compared as text: each is written one way, so that `HTTP://Host:80`
  // is `http://host` (scheme and host know no case; a default port is no other
  // port). A userinfo stays as written: with one the base has not, it is another
  // origin (`http://h@evil` is host evil).
  auto scheme_end = url.find("://");
  auto scheme = lowered(url.substr(0, scheme_end));
  auto [userinfo, host, port] = authority_parts(url.substr(scheme_end + 3, end - scheme_end - 3));
  host = lowered(host);
  if ((scheme == "http" && port == "80") || (scheme == "https" && port == "443"))
    port.clear();
  return scheme + "://" + userinfo + host + (port.empty() ? "" : ":" + port);
}

std::string same_origin_target(const std::string& base, const std::string& ref) {
  auto origin = url_origin(base);
  bool odd = std::any_of(ref.begin(), ref.end(), [](char c) {
    return static_cast<unsigned char>(c) <= ' ' || c == '\\' || c == 0x7f;
  });
  if (origin.empty() || ref.empty() || odd)
    return "";
  std::string target;
  if (ref.find("://") != std::string::npos && ref.find("://") < ref.find_first_of("/?#"))
    target = ref;
  else if (ref.starts_with("//")) // another authority, our scheme
    target = origin.substr(0, origin.find("://") + 1) + ref;
  else if (ref.starts_with("/"))
    target = origin + ref;
  else { // beside the base's last path segment
    auto path = base.substr(authority_end(base));
    path = path.substr(0, path.find_first_of("?#"));
    target = origin + (path.empty() ? "/" : path.substr(0, path.rfind('/') + 1)) + ref;
  }
  return url_origin(target) == origin ? target : "";
}

} // namespace jp
