#include "runtime/process/tool_environment.hpp"

#include <algorithm>
#include <cctype>

namespace jp {

namespace {

// Words that end (or are) a secret's name. A list as data: extend it here.
constexpr std::string_view secret_suffixes[] = {
  "API_KEY", "APIKEY", "ACCESS_KEY", "SECRET_KEY", "PRIVATE_KEY", "SECRET", "SECRETS",
  "TOKEN", "TOKENS", "PASSWORD", "PASSWD", "PASSPHRASE", "CREDENTIALS", "AUTH",
};

std::string upper(std::string_view s) {
  std::string out(s);
  for (auto& c : out)
    c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

std::string_view name_of(std::string_view kv) {
  return kv.substr(0, std::min(kv.find('='), kv.size()));
}

bool named_in(std::string_view name, const std::vector<std::string>& names) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

} // namespace

bool secret_looking_name(std::string_view name) {
  auto n = upper(name);
  std::string_view v(n);
  for (auto suffix : secret_suffixes) {
    if (v == suffix)
      return true;
    // ..._TOKEN, and ..._SECRET_... inside a longer name (AWS_SECRET_ACCESS_KEY)
    if (v.size() > suffix.size() && v.ends_with(suffix) && v[v.size() - suffix.size() - 1] == '_')
      return true;
  }
  return v.find("_SECRET_") != std::string_view::npos || v.starts_with("SECRET_");
}

std::vector<std::string> tool_environment(char** parent, const std::vector<std::string>& extra,
                                          const std::vector<std::string>& pass,
                                          const std::vector<std::string>& drop) {
  std::vector<std::string> env;
  for (char** e = parent; e && *e; ++e) {
    auto name = name_of(*e);
    bool passed = named_in(name, pass);
    if (!passed && (named_in(name, drop) || secret_looking_name(name)))
      continue;
    env.emplace_back(*e);
  }
  for (const auto& kv : extra) {
    auto name = name_of(kv);
    auto same = std::find_if(env.begin(), env.end(), [&](const std::string& e) { return name_of(e) == name; });
    if (same != env.end())
      *same = kv;
    else
      env.push_back(kv);
  }
  return env;
}

} // namespace jp
