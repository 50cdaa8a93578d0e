#include "runtime/process/tool_environment.hpp"

#include <algorithm>

#include "runtime/text_nocase.hpp"

namespace jp {

namespace {

// Words that end (or are) a secret's name, in lower case. A list as data: extend it here.
constexpr std::string_view secret_suffixes[] = {
  "api_key", "apikey", "access_key", "secret_key", "private_key", "secret", "secrets",
  "token", "tokens", "password", "passwd", "passphrase", "credentials", "auth",
};

std::string_view name_of(std::string_view kv) {
  return kv.substr(0, std::min(kv.find('='), kv.size()));
}

bool named_in(std::string_view name, const std::vector<std::string>& names) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

} // namespace

bool secret_looking_name(std::string_view name) {
  // Compared in place: every name the environment has is looked at, at every spawn.
  for (auto suffix : secret_suffixes) {
    if (name.size() < suffix.size() || !equals_nocase(name.substr(name.size() - suffix.size()), suffix))
      continue;
    // The word itself or ..._TOKEN (..._SECRET_... inside a longer name: below)
    if (name.size() == suffix.size() || name[name.size() - suffix.size() - 1] == '_')
      return true;
  }
  // AWS_SECRET_ACCESS_KEY, SECRET_SAUCE
  return contains_nocase(name, "_secret_") || (name.size() >= 7 && equals_nocase(name.substr(0, 7), "secret_"));
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
