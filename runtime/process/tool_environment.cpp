#include "runtime/process/tool_environment.hpp"

#include <algorithm>
#include <unistd.h>

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
  // Compared in place: every name the environment has is looked at (once per
  // environment a thread spawns with: spawn_environment keeps the result).
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

namespace {

/// `extra` ("KEY=VALUE") added to `env`, or overriding the same name there.
void add_extra(std::vector<std::string>& env, const std::vector<std::string>& extra) {
  for (const auto& kv : extra) {
    auto name = name_of(kv);
    auto same = std::find_if(env.begin(), env.end(), [&](const std::string& e) { return name_of(e) == name; });
    if (same != env.end())
      *same = kv;
    else
      env.push_back(kv);
  }
}

/// The last spawn's environment on this thread: what `environ` held, with which
/// pass and drop, and what was made of it.
struct KeptEnvironment {
  std::vector<std::string> seen;
  std::vector<std::string> pass, drop;
  std::shared_ptr<const std::vector<std::string>> filtered;

  bool still(char** parent, const std::vector<std::string>& p, const std::vector<std::string>& d) const {
    if (!filtered || p != pass || d != drop)
      return false;
    size_t i = 0;
    for (char** e = parent; e && *e; ++e, ++i)
      if (i == seen.size() || seen[i] != *e)
        return false;
    return i == seen.size();
  }
};

} // namespace

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
  add_extra(env, extra);
  return env;
}

std::shared_ptr<const std::vector<std::string>> spawn_environment(const std::vector<std::string>& extra,
                                                                  const std::vector<std::string>& pass,
                                                                  const std::vector<std::string>& drop) {
  thread_local KeptEnvironment kept;
  if (!kept.still(environ, pass, drop)) {
    kept.seen.clear();
    for (char** e = environ; e && *e; ++e)
      kept.seen.emplace_back(*e);
    kept.pass = pass;
    kept.drop = drop;
    kept.filtered = std::make_shared<const std::vector<std::string>>(tool_environment(environ, {}, pass, drop));
  }
  if (extra.empty())
    return kept.filtered;
  auto env = *kept.filtered;
  add_extra(env, extra);
  return std::make_shared<const std::vector<std::string>>(std::move(env));
}

} // namespace jp
