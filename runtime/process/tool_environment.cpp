#include "runtime/process/tool_environment.hpp"

#include <algorithm>

namespace jp {

namespace {

// Words that end (or are) a secret's name. A list as data: extend it here.
constexpr std::string_view secret_suffixes[] = {
  "API_KEY", "APIKEY", "ACCESS_KEY", "SECRET_KEY", "PRIVATE_KEY", "SECRET", "SECRETS",
  "TOKEN", "TOKENS", "PASSWORD", "PASSWD", "PASSPHRASE", "CREDENTIALS", "AUTH",
};

/// ASCII's upper case (names are ASCII; std::toupper would ask the locale).
char upper(char c) {
  return c >= 'a' && c <= 'z' ? static_cast<char>(c - 'a' + 'A') : c;
}

/// Whether `s` is `word` (upper case) whatever the case of its letters. Compared in
/// place, from the end (a suffix that is not there differs at once): every name the
/// environment has is looked at, at every spawn.
bool same_word(std::string_view s, std::string_view word) {
  if (s.size() != word.size())
    return false;
  for (size_t i = s.size(); i-- > 0;)
    if (upper(s[i]) != word[i])
      return false;
  return true;
}

bool contains_word(std::string_view s, std::string_view word) {
  for (size_t at = 0; at + word.size() <= s.size(); ++at)
    if (upper(s[at]) == word[0] && same_word(s.substr(at, word.size()), word))
      return true;
  return false;
}

std::string_view name_of(std::string_view kv) {
  return kv.substr(0, std::min(kv.find('='), kv.size()));
}

bool named_in(std::string_view name, const std::vector<std::string>& names) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

} // namespace

bool secret_looking_name(std::string_view name) {
  for (auto suffix : secret_suffixes) {
    if (name.size() < suffix.size() || !same_word(name.substr(name.size() - suffix.size()), suffix))
      continue;
    // The word itself or ..._TOKEN (..._SECRET_... inside a longer name: below)
    if (name.size() == suffix.size() || name[name.size() - suffix.size() - 1] == '_')
      return true;
  }
  // AWS_SECRET_ACCESS_KEY, SECRET_SAUCE
  return contains_word(name, "_SECRET_") || (name.size() >= 7 && same_word(name.substr(0, 7), "SECRET_"));
}

std::vector<std::string> tool_environment(char** parent, const std::vector<std::string>& extra,
                                          const std::vector<std::string>& pass,
                                          const std::vector<std::string>& drop) {
  std::vector<std::string> env;
  size_t count = 0;
  for (char** e = parent; e && *e; ++e)
    ++count;
  env.reserve(count + extra.size());
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
