#include "runtime/process/secret_value.hpp"

#include <algorithm>
#include <cctype>
#include <string>
#include <vector>

#include "runtime/process/tool_environment.hpp"
#include "runtime/text_nocase.hpp"

namespace jp {

namespace {

// Words that end a parameter's name (after '_', '-', '.' or ' ', or alone) and make
// it a secret, besides what makes a variable's name one (secret_looking_name):
// Azure's SAS `sig`, an ODBC `Pwd`, an Authorization passed as a query parameter.
constexpr std::string_view secret_parameter_words[] = {"sig", "signature", "pwd", "pass", "authorization"};
// Endings that make a parameter's name a secret even run into a word (AccountKey,
// SharedAccessKey, accessToken, clientSecret; a query is no environment, where
// KEYBOARD or MONKEY must pass).
constexpr std::string_view secret_parameter_endings[] = {"key", "token", "secret", "password", "signature"};
// A webhook URL of these services is itself the credential: whoever has it may post.
constexpr std::string_view webhook_urls[] = {"hooks.slack.com/", "discord.com/api/webhooks/",
                                             "discordapp.com/api/webhooks/", "webhook.office.com/",
                                             "outlook.office.com/webhook"};

// Tokens whose form says what they are, whatever variable holds them (NOTES=ghp_...):
// the prefix where a word starts, then at least `length` of the token's characters
// (letters and digits; `dashes`: '_' and '-' too). A prefix inside a path or a name
// ("/opt/xoxb-bridge", "feature/sk-1234-login", a pod "sk-payments-7d9f") is none:
// '/', '.', '_' and '-' before it, or a token of no digit, too short or too plain.
struct TokenForm {
  std::string_view prefix;
  size_t length;
  bool dashes;
};
constexpr TokenForm token_forms[] = {
  {"ghp_", 36, false},  {"gho_", 36, false},  {"ghu_", 36, false},    {"ghs_", 36, false},
  {"ghr_", 36, false},  {"github_pat_", 40, true}, {"glpat-", 20, true}, // GitHub, GitLab
  {"xoxb-", 40, true},  {"xoxp-", 40, true},  {"xoxa-", 40, true},    {"xoxr-", 40, true},
  {"xoxs-", 40, true},  {"xapp-", 40, true},                             // Slack
  {"sk_live_", 24, false}, {"rk_live_", 24, false},                      // Stripe
  {"sk-", 40, true},                                                      // OpenAI, Anthropic
  {"AKIA", 16, false},  {"ASIA", 16, false},                             // AWS access key ids
  {"hf_", 30, false},   {"npm_", 36, false},  {"pypi-", 50, true},
  {"AIza", 35, true},                                                     // Google API keys
};

bool token_char(char c, bool dashes) {
  return std::isalnum(static_cast<unsigned char>(c)) || (dashes && (c == '_' || c == '-'));
}

/// A JSON Web Token where a word starts: three base64url parts joined by '.', the
/// first two JSON objects ("eyJ" is `{"` encoded), the last its signature. Whoever
/// holds one is its subject until it expires (an ID token, a CI job's, a session's).
bool json_web_token(std::string_view value) {
  for (size_t at = value.find("eyJ"); at != std::string_view::npos; at = value.find("eyJ", at + 1)) {
    if (at > 0 && (token_char(value[at - 1], true) || value[at - 1] == '/' || value[at - 1] == '.'))
      continue;
    // Its base64url parts, as far as they go (at most the five of an encrypted one).
    std::vector<std::string_view> parts;
    for (size_t i = at; parts.size() < 5;) {
      size_t start = i;
      while (i < value.size() && token_char(value[i], true))
        ++i;
      parts.push_back(value.substr(start, i - start));
      if (i == value.size() || value[i] != '.')
        break;
      ++i;
    }
    auto full = [&](size_t k) { return parts[k].size() >= 8; };
    // Signed (JWS): header, claims (a JSON object too), signature. Encrypted (JWE,
    // a session cookie's): header, key (empty for a direct key), IV, text, tag.
    bool signed_token = parts.size() == 3 && full(0) && full(1) && parts[1].starts_with("eyJ") && full(2);
    bool encrypted = parts.size() == 5 && full(0) && full(2) && full(3) && full(4);
    if (signed_token || encrypted)
      return true;
  }
  return false;
}

/// A token of a known form in `value`, or a PEM private key.
bool known_token(std::string_view value) {
  if (value.find("PRIVATE KEY-----") != std::string_view::npos || json_web_token(value))
    return true;
  for (auto& form : token_forms)
    for (size_t at = value.find(form.prefix); at != std::string_view::npos; at = value.find(form.prefix, at + 1)) {
      if (at > 0 && (token_char(value[at - 1], true) || value[at - 1] == '/' || value[at - 1] == '.'))
        continue; // inside a word, a path or a name
      size_t n = 0;
      bool digit = false;
      for (size_t i = at + form.prefix.size(); i < value.size() && token_char(value[i], form.dashes); ++i, ++n)
        digit |= std::isdigit(static_cast<unsigned char>(value[i])) != 0;
      if (n >= form.length && digit)
        return true;
    }
  return false;
}

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/// scheme://user:password@host or scheme://token@host: credentials in a URL
/// (DATABASE_URL, a remote with a token).
bool url_credentials(std::string_view value) {
  auto scheme = value.find("://");
  if (scheme == std::string_view::npos)
    return false;
  auto rest = value.substr(scheme + 3);
  auto at = rest.find('@');
  return at != std::string_view::npos && at > 0 && rest.substr(0, at).find_first_of("/?#") == std::string_view::npos;
}

/// Whether `raw`, the NAME of a NAME=VALUE in a query or a connection string, names
/// a secret. Only a name as such parameters have (letters, digits, '_', '-', '.',
/// inner spaces as in "User Password", not starting with '-': "--jobserver-auth="
/// in MAKEFLAGS is an option).
bool secret_parameter_name(std::string_view raw) {
  while (!raw.empty() && (is_space(raw.front()) || raw.front() == '\'' || raw.front() == '"'))
    raw.remove_prefix(1);
  while (!raw.empty() && is_space(raw.back()))
    raw.remove_suffix(1);
  if (raw.starts_with("-D")) // a JVM's -Dname=value (JAVA_TOOL_OPTIONS)
    raw.remove_prefix(2);
  if (raw.empty() || raw.front() == '-')
    return false;
  std::string name; // lower case, words joined by '_'
  for (char c : raw) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.' || c == ' '))
      return false;
    name += std::isalnum(static_cast<unsigned char>(c)) ? static_cast<char>(std::tolower(c)) : '_';
  }
  if (secret_looking_name(name))
    return true;
  auto last = std::string_view(name).substr(name.rfind('_') == std::string::npos ? 0 : name.rfind('_') + 1);
  auto is = [&](std::string_view w) { return last == w; };
  auto ends = [&](std::string_view w) { return last.ends_with(w); };
  return std::any_of(std::begin(secret_parameter_words), std::end(secret_parameter_words), is) ||
         std::any_of(std::begin(secret_parameter_endings), std::end(secret_parameter_endings), ends);
}

/// A NAME=VALUE among the parts of `value` (split at ';', '&', '?', '#' and
/// whitespace: a connection string's, a URL query's or fragment's, a command
/// line's) whose NAME names a secret.
bool secret_parameter(std::string_view value) {
  constexpr std::string_view separators = ";&?# \t\n\r";
  for (size_t start = 0; start < value.size();) {
    auto end = std::min(value.find_first_of(separators, start), value.size());
    auto part = value.substr(start, end - start);
    if (auto eq = part.find('='); eq != std::string_view::npos && secret_parameter_name(part.substr(0, eq)))
      return true;
    start = end + 1;
  }
  return false;
}

/// Where `lower` is in `s` from `from` on, letters compared without case; npos if not.
size_t find_nocase(std::string_view s, std::string_view lower, size_t from) {
  auto at = std::search(s.begin() + static_cast<std::ptrdiff_t>(std::min(from, s.size())), s.end(), lower.begin(),
                        lower.end(), same_nocase);
  return at == s.end() ? std::string_view::npos : static_cast<size_t>(at - s.begin());
}

/// An Authorization (or Proxy-Authorization) header, "Authorization: Basic ...", or a
/// bearer token, "Bearer eyJ...": what a program is handed to send (git's
/// http.extraheader, a curl -H).
bool authorization(std::string_view value) {
  for (size_t at = find_nocase(value, "authorization", 0); at != std::string_view::npos;
       at = find_nocase(value, "authorization", at + 1)) {
    auto after = value.find_first_not_of(" \t", at + 13);
    if (after != std::string_view::npos && value[after] == ':')
      return true;
  }
  for (size_t at = find_nocase(value, "bearer", 0); at != std::string_view::npos;
       at = find_nocase(value, "bearer", at + 1)) {
    bool word = at == 0 || !std::isalnum(static_cast<unsigned char>(value[at - 1]));
    auto token = value.find_first_not_of(" \t", at + 6);
    if (word && token != std::string_view::npos && token > at + 6)
      return true;
  }
  // "Basic dXNlcjpwYXNz": user:password in base64; not "Basic Settings" nor "BASIC
  // PROGRAMMING" (a word: one case, or one capital).
  for (size_t at = find_nocase(value, "basic", 0); at != std::string_view::npos;
       at = find_nocase(value, "basic", at + 1)) {
    bool word = at == 0 || !std::isalnum(static_cast<unsigned char>(value[at - 1]));
    auto from = value.find_first_not_of(" \t", at + 5);
    if (!word || from == std::string_view::npos || from == at + 5)
      continue;
    auto token = value.substr(from);
    token = token.substr(0, token.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/="));
    auto count = [&](auto pred) { return std::count_if(token.begin(), token.end(), [&](char c) { return pred(static_cast<unsigned char>(c)); }); };
    bool base64 = count(::isdigit) > 0 || token.find_first_of("+/=") != std::string_view::npos ||
                  (count(::isupper) >= 2 && count(::islower) >= 2);
    if (token.size() >= 8 && base64)
      return true;
  }
  return false;
}

/// A .netrc's entry, "machine HOST login USER password PASS".
bool netrc(std::string_view value) {
  auto word_at = [&](size_t at, size_t n) {
    return (at == 0 || std::isspace(static_cast<unsigned char>(value[at - 1]))) && at + n < value.size() &&
           std::isspace(static_cast<unsigned char>(value[at + n]));
  };
  bool machine = false;
  for (auto at = find_nocase(value, "machine", 0); at != std::string_view::npos && !machine;
       at = find_nocase(value, "machine", at + 1))
    machine = word_at(at, 7);
  if (!machine)
    return false;
  for (auto at = find_nocase(value, "password", 0); at != std::string_view::npos;
       at = find_nocase(value, "password", at + 1))
    if (word_at(at, 8))
      return true;
  return false;
}

/// A header whose name names a secret, "PRIVATE-TOKEN: glpat-...", "X-Api-Key: ..."
/// (git's http.extraheader, a curl -H): a name as a variable's is judged, before ": ".
bool secret_header(std::string_view value) {
  for (size_t at = value.find(": "); at != std::string_view::npos; at = value.find(": ", at + 1)) {
    size_t start = at;
    while (start > 0 && (std::isalnum(static_cast<unsigned char>(value[start - 1])) || value[start - 1] == '-' ||
                         value[start - 1] == '_'))
      --start;
    std::string name;
    for (char c : value.substr(start, at - start))
      name += c == '-' ? '_' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (!name.empty() && secret_looking_name(name))
      return true;
  }
  return false;
}

bool webhook_url(std::string_view value) {
  return std::any_of(std::begin(webhook_urls), std::end(webhook_urls),
                     [&](std::string_view url) { return contains_nocase(value, url); });
}

} // namespace

bool secret_looking_value(std::string_view value) {
  return url_credentials(value) || secret_parameter(value) || authorization(value) || secret_header(value) ||
         webhook_url(value) || known_token(value) || netrc(value);
}

} // namespace jp
