#include "runtime/mcp/mcp_url.hpp"

#include <algorithm>

namespace jp {

std::string url_origin(const std::string& url) {
  auto scheme_end = url.find("://");
  if (scheme_end == std::string::npos)
    return "";
  return url.substr(0, url.find_first_of("/?#", scheme_end + 3));
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
    auto path = base.substr(0, base.find_first_of("?#", origin.size()));
    auto slash = path.rfind('/');
    target = (slash == std::string::npos || slash < origin.size() ? origin + "/" : path.substr(0, slash + 1)) + ref;
  }
  return url_origin(target) == origin ? target : "";
}

} // namespace jp
