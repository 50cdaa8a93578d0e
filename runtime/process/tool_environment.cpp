#include "runtime/process/tool_environment.hpp"

#include <algorithm>
#include <cctype>
#include <iterator>
#include <unistd.h>

#include "runtime/text_nocase.hpp"

namespace jp {

namespace {

// Words that end (or are) a secret's name, in lower case. A list as data: extend it here.
constexpr std::string_view secret_suffixes[] = {
  "api_key", "apikey", "access_key", "secret_key", "private_key", "secret", "secrets",
  "token", "tokens", "password", "passwd", "passphrase", "credentials", "credential", "creds", "auth",
  "key", "pat", "dsn", "cookie", "cookies", "auth_config", "oauth",
};
// Words that end a secret's name even with no '_' before them (PGPASSWORD,
// NGROK_AUTHTOKEN, TS_AUTHKEY, npm_config__authToken, SSHPASS, MINIO_SECRETKEY).
constexpr std::string_view secret_endings[] = {"password", "passwd",    "apikey",     "authtoken",
                                               "authkey",  "sshpass",   "secretkey",  "accesskey",
                                               "privatekey", "accesstoken", "connection_string",
                                               // OAuth's and an app's secret run into a word (not any
                                               // "...secret": mysecret is a name, not a secret's)
                                               "clientsecret", "appsecret", "apisecret"};
// Words that end a secret's name only after a '_' (MYSQL_PWD, SMTP_PASS; PWD itself
// is the working directory).
constexpr std::string_view secret_suffixes_after_underscore[] = {"pwd", "pass", "pw"};
// How a secret's value may be written, after its name (SIGNING_KEY_B64, TLS_KEY_PEM):
// the name before counts.
constexpr std::string_view encodings[] = {"b64", "base64", "hex", "pem"};
// Words that make a secret's name wherever they stand between '_'s, digits after them
// aside (GITHUB_TOKEN_RO, GITHUB_TOKEN2, CI_JOB_JWT, SLACK_WEBHOOK_URL, GH_PAT_RO), and
// word pairs alike (OPENAI_API_KEY_2). Not "key"
// or "auth" alone: PATH_KEYS and SSH_AUTH_SOCK are no secrets. SSH_AUTH_SOCK is
// passed on purpose: a tool's git and ssh use your agent, which signs for them and
// never hands out a key (README.md, "Security model", says how to withhold it).
constexpr std::string_view secret_words[] = {"token",      "tokens",      "secret", "secrets", "password",
                                             "passwd",     "passphrase",  "credential", "credentials", "creds", "apikey",
                                             "jwt",        "webhook",     "pat",    "dsn",     "cookie",
                                             "cookies",    "authorization"};
// Password managers' session keys, which unlock the whole vault: Bitwarden's, and
// 1Password's OP_SESSION_<account> (not every SESSION: DBUS_SESSION_BUS_ADDRESS).
constexpr std::string_view secret_names[] = {"bw_session"};
constexpr std::string_view secret_prefixes[] = {"op_session_"};
constexpr std::pair<std::string_view, std::string_view> secret_word_pairs[] = {
  {"api", "key"},     {"access", "key"},     {"secret", "key"},     {"private", "key"},     {"signing", "key"},
  {"encryption", "key"}, {"master", "key"},  {"api", "keys"},       {"access", "keys"},     {"secret", "keys"},
  {"private", "keys"}, {"signing", "keys"}, {"encryption", "keys"}};

/// Whether a '_'-separated word of `name` (or two in a row) names a secret.
bool has_secret_word(std::string_view name) {
  std::string_view last;
  for (size_t start = 0; start <= name.size();) {
    auto end = std::min(name.find('_', start), name.size());
    auto word = name.substr(start, end - start);
    while (!word.empty() && std::isdigit(static_cast<unsigned char>(word.back())))
      word.remove_suffix(1); // GITHUB_TOKEN2, DB_PASSWORD1
    for (auto w : secret_words)
      if (equals_nocase(word, w))
        return true;
    for (auto [a, b] : secret_word_pairs)
      if (equals_nocase(last, a) && equals_nocase(word, b))
        return true;
    last = word;
    start = end + 1;
  }
  return false;
}

std::string_view name_of(std::string_view kv) {
  return kv.substr(0, std::min(kv.find('='), kv.size()));
}

bool named_in(std::string_view name, const std::vector<std::string>& names) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

} // namespace

bool secret_looking_name(std::string_view full) {
  // Compared in place: every name the environment has is looked at (once per
  // environment a thread spawns with: spawn_environment keeps the result).
  // Digits at the end aside (DB_PASS1, STRIPE_KEY_2): the name before them counts.
  auto name = full;
  for (auto encoding : encodings) // before the digits: B64
    if (name.size() > encoding.size() + 1 && name[name.size() - encoding.size() - 1] == '_' &&
        equals_nocase(name.substr(name.size() - encoding.size()), encoding)) {
      name.remove_suffix(encoding.size() + 1);
      full = name;
      break;
    }
  while (!name.empty() && std::isdigit(static_cast<unsigned char>(name.back())))
    name.remove_suffix(1);
  if (name.size() < full.size() && !name.empty() && name.back() == '_')
    name.remove_suffix(1);
  if (name.empty())
    return false;
  for (auto exact : secret_names)
    if (equals_nocase(full, exact))
      return true;
  for (auto prefix : secret_prefixes)
    if (full.size() > prefix.size() && equals_nocase(full.substr(0, prefix.size()), prefix))
      return true;
  auto ends_with = [&](std::string_view suffix) {
    return name.size() >= suffix.size() && equals_nocase(name.substr(name.size() - suffix.size()), suffix);
  };
  auto after_underscore = [&](std::string_view suffix) {
    return name.size() > suffix.size() && name[name.size() - suffix.size() - 1] == '_';
  };

  for (auto suffix : secret_suffixes)
    // The word itself or ..._TOKEN (..._SECRET_... inside a longer name: below)
    if (ends_with(suffix) && (name.size() == suffix.size() || after_underscore(suffix)))
      return true;
  for (auto suffix : secret_endings)
    if (ends_with(suffix))
      return true;
  for (auto suffix : secret_suffixes_after_underscore)
    if (ends_with(suffix) && after_underscore(suffix))
      return true;
  // AWS_SECRET_ACCESS_KEY, SECRET_SAUCE, GITHUB_TOKEN_RO
  return has_secret_word(full);
}

namespace {

/// Whether a tool gets the parent's variable `kv` ("NAME=VALUE").
bool given(std::string_view kv, const std::vector<std::string>& pass, const std::vector<std::string>& drop) {
  auto name = name_of(kv);
  if (named_in(name, pass))
    return true;
  auto value = kv.substr(std::min(kv.size(), name.size() + 1));
  return !(named_in(name, drop) || secret_looking_name(name) || secret_looking_value(value));
}

/// git's config from the environment (GIT_CONFIG_COUNT, GIT_CONFIG_KEY_n,
/// GIT_CONFIG_VALUE_n) is one: a KEY_n is a config key's name, not a secret by its
/// variable's name, and git refuses to run when a pair is cut. Passed whole, or left
/// out whole when any of it would be by its value (an http.extraheader's token, a
/// url.<https://x-access-token:...@host/>.insteadOf key) or by `drop`.
bool git_config_part(std::string_view name) {
  return name == "GIT_CONFIG_COUNT" || name.starts_with("GIT_CONFIG_KEY_") || name.starts_with("GIT_CONFIG_VALUE_");
}

/// given() for each of `env`'s entries, git's config judged as one.
template <class Entries>
std::vector<bool> given_each(const Entries& env, const std::vector<std::string>& pass,
                             const std::vector<std::string>& drop) {
  std::vector<bool> out;
  bool git_config = true;
  for (const auto& e : env) {
    std::string_view kv = e;
    auto name = name_of(kv);
    bool git = git_config_part(name);
    out.push_back(git || given(kv, pass, drop));
    if (git && !named_in(name, pass)) {
      auto value = kv.substr(std::min(kv.size(), name.size() + 1));
      bool secret = named_in(name, drop) || secret_looking_value(value) ||
                    (!name.starts_with("GIT_CONFIG_KEY_") && secret_looking_name(name));
      if (secret)
        git_config = false;
    }
  }
  if (!git_config) {
    size_t i = 0;
    for (const auto& e : env) {
      if (git_config_part(name_of(std::string_view(e))))
        out[i] = false;
      ++i;
    }
  }
  return out;
}

/// `extra` ("KEY=VALUE") laid over `env`: each overrides the entry of its name in
/// place, or is added at the end.
template <class Entry, class Make>
void add_extra(std::vector<Entry>& env, const std::vector<std::string>& extra, Make make) {
  for (const auto& kv : extra) {
    auto name = name_of(kv);
    auto same = std::find_if(env.begin(), env.end(), [&](const Entry& e) { return name_of(e) == name; });
    if (same != env.end())
      *same = make(kv);
    else
      env.push_back(make(kv));
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

/// `kv` as a tool gets it: PATH's value with absolute entries only.
std::string_view kept_entry(std::string_view kv, std::string& made) {
  if (!kv.starts_with("PATH="))
    return kv;
  made = "PATH=" + absolute_search_path(kv.substr(5));
  return made;
}

} // namespace

std::string absolute_search_path(std::string_view path) {
  std::string kept;
  for (size_t at = 0; at <= path.size();) {
    auto end = std::min(path.find(':', at), path.size());
    auto dir = path.substr(at, end - at);
    if (dir.starts_with('/'))
      kept.append(kept.empty() ? "" : ":").append(dir);
    at = end + 1;
  }
  return kept.empty() ? "/bin:/usr/bin" : kept;
}

std::vector<std::string> tool_environment(char** parent, const std::vector<std::string>& extra,
                                          const std::vector<std::string>& pass,
                                          const std::vector<std::string>& drop) {
  std::vector<std::string_view> all;
  for (char** e = parent; e && *e; ++e)
    all.emplace_back(*e);
  auto keep = given_each(all, pass, drop);
  std::vector<std::string> env;
  std::string made;
  for (size_t i = 0; i < all.size(); ++i)
    if (keep[i])
      env.emplace_back(kept_entry(all[i], made));
  add_extra(env, extra, [&made](const std::string& kv) { return std::string(kept_entry(kv, made)); });
  return env;
}

std::vector<char*> SpawnEnvironment::c_strings() const {
  auto c = [](const std::string& kv) { return const_cast<char*>(kv.c_str()); };
  std::vector<char*> out;
  out.reserve((base ? base->size() : 0) + extra.size() + 1);
  if (base)
    std::transform(base->begin(), base->end(), std::back_inserter(out), c);
  add_extra(out, extra, c);
  out.push_back(nullptr);
  return out;
}

std::vector<std::string> SpawnEnvironment::strings() const {
  auto c = c_strings();
  return {c.begin(), c.end() - 1};
}

SpawnEnvironment spawn_environment(std::vector<std::string> extra, const std::vector<std::string>& pass,
                                   const std::vector<std::string>& drop) {
  thread_local KeptEnvironment kept;
  if (!kept.still(environ, pass, drop)) {
    kept.seen.clear();
    for (char** e = environ; e && *e; ++e)
      kept.seen.emplace_back(*e);
    kept.pass = pass;
    kept.drop = drop;
    std::vector<std::string> filtered; // from the copy just compared against, not a second read
    auto keep = given_each(kept.seen, pass, drop);
    std::string made;
    for (size_t i = 0; i < kept.seen.size(); ++i)
      if (keep[i])
        filtered.emplace_back(kept_entry(kept.seen[i], made));
    kept.filtered = std::make_shared<const std::vector<std::string>>(std::move(filtered));
  }
  // A PATH given for the call (a shell call's `env`, a tool's config) keeps its
  // absolute entries alone too: `bin:/usr/bin` ran the repository's bin/ls.
  std::string made;
  for (auto& kv : extra)
    if (auto kept = kept_entry(kv, made); kept.data() != kv.data())
      kv = std::string(kept);
  return SpawnEnvironment{kept.filtered, std::move(extra)};
}

} // namespace jp
