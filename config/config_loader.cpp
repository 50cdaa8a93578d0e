// TOML -> Config. Each source (file or --cfg) is one "layer" applied on top of the
// Config built so far: a key present in the layer replaces the value, tables merge
// key by key, arrays are replaced whole. Applying layer by layer (instead of merging
// all TOML first) lets every error name the file the bad key came from.
#include "config/config_loader.hpp"

#include "config/workspace_sets.hpp"

#include <openssl/evp.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <set>
#include <sstream>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <toml++/toml.h>

#include "config/code_variable.hpp"
#include "config/bounded_read.hpp"
#include "config/placeholder.hpp"
#include "config/prompt_pattern.hpp"
#include "config/shell_template.hpp"
#include "config/toml_depth.hpp"
#include "config/toml_json.hpp"
#include "config/workspace_limits.hpp"
#include "messages/duration.hpp"
#include "messages/json_codec.hpp"
#include "messages/launch_spec.hpp"
#include "runtime/node/node_address.hpp"
#include "runtime/mcp/mcp_url.hpp"
#include "runtime/text_nocase.hpp"

namespace jp {

namespace fs = std::filesystem;

namespace {

// The largest value each numeric key takes: far beyond any sensible setting, well
// below where a conversion (seconds -> ms or ns, bytes -> memory) would overflow.
constexpr double kMaxBackoffSecs = 3600;
constexpr double kMaxIdleTimeoutSecs = 86400;
constexpr double kMaxAbortGraceSecs = 3600;
constexpr double kMaxAwaitTimeoutSecs = 7 * 86400;
constexpr int64_t kMaxResponseBytes = int64_t{4} << 30;
constexpr int64_t kMaxOutputCapBytes = int64_t{16} << 20;
constexpr int64_t kMaxResponseCapBytes = int64_t{64} << 20;
constexpr int64_t kMaxSpillBytes = int64_t{1} << 40;
constexpr size_t kCommandPartMax = 256; // runtime.daemons: one argument of a command line


// Names already checked by choice_of.
action_kind action_named(std::string_view name) {
  return action_from(name).value_or(action_kind::abort);
}

run_mode run_mode_named(std::string_view name) {
  return name == "ask" ? run_mode::ask : name == "skip" ? run_mode::skip : run_mode::unattended;
}

std::string join(const std::vector<std::string_view>& xs) {
  std::string out;
  for (auto x : xs) {
    if (!out.empty())
      out += ", ";
    out += x;
  }
  return out;
}

std::string join_key(std::string_view prefix, std::string_view key) {
  return prefix.empty() ? std::string(key) : fmt::format("{}.{}", prefix, key);
}

// Letters, digits, '_' and '-': what every provider accepts as a tool name, and what
// keeps "conversation.tools.NAME.key" unambiguous in messages.
bool is_identifier(std::string_view s) {
  if (s.empty() || s.size() > 64)
    return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-'))
      return false;
  return true;
}

// "what we got", for "expected X, got Y" messages.
std::string describe(const toml::node& n) {
  std::ostringstream out;
  switch (n.type()) {
    case toml::node_type::string:
      return json_quote(n.as_string()->get());
    case toml::node_type::integer:
      out << "integer " << n.as_integer()->get();
      return out.str();
    case toml::node_type::floating_point:
      out << "float " << n.as_floating_point()->get();
      return out.str();
    case toml::node_type::boolean:
      return n.as_boolean()->get() ? "boolean true" : "boolean false";
    case toml::node_type::array:
      return "an array";
    case toml::node_type::table:
      return "a table";
    case toml::node_type::date:
      return "a date";
    case toml::node_type::time:
      return "a time";
    case toml::node_type::date_time:
      return "a date-time";
    default:
      return "nothing";
  }
}

bool json_has_type(const Json& v, std::string_view type) {
  if (type == "string") return v.is_string();
  if (type == "integer") return v.is_int();
  if (type == "number") return v.is_number();
  if (type == "boolean") return v.is_bool();
  if (type == "array") return v.is_array();
  if (type == "object") return v.is_object();
  return false;
}

const std::vector<std::string_view> parameter_types = {"string", "integer", "number",
                                                       "boolean", "array", "object"};

} // namespace

Status check_tool_parameters(const ToolConfig& tool, std::string_view prefix) {
  auto in = [](const std::string& type) {
    return std::find(parameter_types.begin(), parameter_types.end(), type) != parameter_types.end();
  };
  std::set<std::string> seen;
  for (auto& p : tool.parameters) {
    auto pkey = fmt::format("{}.parameters.{}", prefix, p.name);
    if (!is_identifier(p.name))
      return Status::fail(fmt::format("{}: a parameter name may contain only letters, digits, '_' and '-' "
                                      "(1 to 64)", pkey));
    if (!seen.insert(p.name).second)
      return Status::fail(fmt::format("{}: declared twice", pkey));
    if (!in(p.type))
      return Status::fail(fmt::format("{}.type: expected one of {}, got \"{}\"", pkey, join(parameter_types),
                                      cut_text(p.type, 40)));
    if (!p.items_type.empty() && !in(p.items_type))
      return Status::fail(fmt::format("{}.items.type: expected one of {}, got \"{}\"", pkey,
                                      join(parameter_types), cut_text(p.items_type, 40)));
    if (tool.stateful && (p.name == "action" || p.name == "id" || p.name == "input" || p.name == "wait_ms" ||
                          p.name == "screen" || p.name == "rows" || p.name == "cols"))
      return Status::fail(fmt::format("{}: the names action, id, input, wait_ms, screen, rows and cols are "
                                      "reserved for the stateful protocol (spawn.stateful = true)",
                                      pkey));
    if (!p.enum_values.empty() && p.type != "string")
      return Status::fail(fmt::format("{}.enum: only for parameters of type string, got type {}", pkey, p.type));
    // A value listed twice is a typo of another (providers refuse a schema whose enum repeats).
    for (auto it = p.enum_values.begin(); it != p.enum_values.end(); ++it)
      if (std::find(p.enum_values.begin(), it, *it) != it)
        return Status::fail(fmt::format("{}.enum: {} is listed twice; list each value once", pkey,
                                        json_quote_cut(*it, 40)));
    if (!p.items_type.empty() && p.type != "array")
      return Status::fail(fmt::format("{}.items: only for parameters of type array, got type {}", pkey, p.type));
    if (!p.default_value.is_null() && !json_has_type(p.default_value, p.type))
      return Status::fail(fmt::format("{}.default: expected a value of type {}, got {}", pkey, p.type,
                                      p.default_value.described()));
    if (!p.default_value.is_null() && p.default_value.is_array() && !p.items_type.empty())
      for (auto& item : p.default_value.as_array())
        if (!json_has_type(item, p.items_type))
          return Status::fail(fmt::format("{}.default: expected items of type {}, got {}", pkey, p.items_type,
                                          item.described()));
    // The default is what the tool gets when the call leaves the parameter out: one
    // the call itself could give, and a call may leave it out.
    if (!p.default_value.is_null() && p.required)
      return Status::fail(fmt::format("{}.default: a required parameter's default is never used (every call "
                                      "gives it); remove required = true, or the default",
                                      pkey));
    if (p.default_value.is_string() && !p.enum_values.empty() &&
        std::find(p.enum_values.begin(), p.enum_values.end(), p.default_value.as_string()) == p.enum_values.end())
      return Status::fail(fmt::format("{}.default: {} is not one of its enum ({})", pkey,
                                      p.default_value.described(),
                                      cut_text(fmt::format("{}", fmt::join(p.enum_values, ", ")), 200)));
    if (!p.default_value.is_null() && std::find(tool.one_of_required.begin(), tool.one_of_required.end(),
                                                p.name) != tool.one_of_required.end())
      return Status::fail(fmt::format("{}.default: a parameter of one_of_required has none (the call must give "
                                      "one of them)",
                                      pkey));
  }
  for (auto& name : tool.one_of_required)
    if (!seen.count(name))
      return Status::fail(fmt::format("{}.one_of_required: expected names of declared parameters, got \"{}\"",
                                      prefix, name));
  return Status::success();
}

namespace {

/// How many single-character edits (insert, delete, replace) turn `a` into `b`.
size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j)
    row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

/// Every {{...}} of a local tool's command, cwd and env names what a call can give:
/// a declared parameter or a question's answer. Else it would expand to nothing at
/// every call (`rm -rf build/{{tool.arguments.subdir}}` with `sub` declared).
/// Checked on the whole config: a later layer may declare what an earlier one names.
Status check_placeholders(const ToolConfig& tool, std::string_view prefix) {
  std::vector<std::pair<std::string, const std::string*>> templates{{"command.program", &tool.program}};
  for (size_t i = 0; i < tool.args.size(); ++i)
    templates.emplace_back(fmt::format("command.args[{}]", i), &tool.args[i]);
  templates.emplace_back("cwd", &tool.cwd);
  for (auto& [name, value] : tool.env)
    templates.emplace_back(fmt::format("env.{}", name), &value);
  std::vector<std::string> declared;
  for (auto& p : tool.parameters)
    declared.push_back(p.name);
  for (auto& [key, text] : templates) {
    if (auto near = mistyped_placeholder(*text, declared); !near.empty()) {
      // {{dir}} with `dir` declared: its placeholder is named.
      auto bare = std::string(trim_blanks(near));
      if (std::find(declared.begin(), declared.end(), bare) != declared.end())
        return Status::fail(fmt::format("{}.{}: `{{{{{}}}}}` is not a placeholder and would be passed as it is; "
                                        "parameter {}'s is {{{{tool.arguments.{}}}}}",
                                        prefix, key, bare, bare, bare));
      return Status::fail(fmt::format("{}.{}: `{{{{{}}}}}` is not a placeholder and would be passed as it is "
                                      "(a placeholder is {{{{tool.arguments.NAME}}}} or {{{{tool.answers.ID}}}}; "
                                      "any other `{{{{` is literal text)",
                                      prefix, key, cut_text(std::string(near), 64)));
    }
    auto found = find_placeholders(*text);
    if (!found)
      return Status::fail(fmt::format("{}.{}: unterminated `{{{{` (a placeholder is {{{{tool.arguments.NAME}}}} "
                                      "or {{{{tool.answers.ID}}}})",
                                      prefix, key));
    for (auto& p : *found) {
      auto expr = p.expression;
      constexpr std::string_view arguments = "tool.arguments.", answers = "tool.answers.";
      if (expr.starts_with(answers) && expr.size() > answers.size())
        continue;
      if (!expr.starts_with(arguments) || expr.size() == arguments.size())
        return Status::fail(fmt::format("{}.{}: `{{{{{}}}}}` is not a placeholder (expected "
                                        "{{{{tool.arguments.NAME}}}} or {{{{tool.answers.ID}}}})",
                                        prefix, key, cut_text(std::string(expr), 64)));
      auto name = expr.substr(arguments.size());
      name = name.substr(0, name.find('.'));
      if (std::find(declared.begin(), declared.end(), name) == declared.end())
        return Status::fail(fmt::format("{}.{}: `{{{{{}}}}}` names no declared parameter ({}); declare it "
                                        "under {}.parameters",
                                        prefix, key, cut_text(std::string(expr), 64),
                                        declared.empty() ? std::string("none is declared")
                                                         : fmt::format("declared: {}", fmt::join(declared, ", ")),
                                        prefix));
      // A field of what has none (`{{tool.arguments.dir.name}}` with `dir` a string)
      // expanded to nothing at every call: `rm -rf build/{{...}}` ran `rm -rf build/`.
      auto param = std::find_if(tool.parameters.begin(), tool.parameters.end(),
                                [&](const ParameterConfig& q) { return q.name == name; });
      if (expr.size() > arguments.size() + name.size() && param->type != "object")
        return Status::fail(fmt::format("{}.{}: `{{{{{}}}}}` names a field of parameter {}, a {}, which has no "
                                        "fields (it would be empty at every call); write {{{{tool.arguments.{}}}}}, "
                                        "or declare the parameter an object",
                                        prefix, key, cut_text(std::string(expr), 64), name, param->type, name));
    }
  }
  // However the command line is quoted, a call's argument in LD_PRELOAD, PYTHONPATH
  // or GIT_SSH_COMMAND picks the code the tool runs: unless its parameter takes only
  // numbers, booleans or values the config lists (an enum), which the call is held to.
  auto chosen_freely = [&](const Placeholder& p) {
    constexpr std::string_view arguments = "tool.arguments.";
    if (!p.expression.starts_with(arguments))
      return true; // an answer: any text
    auto name = p.expression.substr(arguments.size());
    name = name.substr(0, name.find('.'));
    for (auto& param : tool.parameters)
      if (param.name == name)
        return !(param.type == "integer" || param.type == "number" || param.type == "boolean" ||
                 !param.enum_values.empty());
    return true;
  };
  for (auto& [name, value] : tool.env)
    if (auto reader = code_variable_reader(name); !reader.empty())
      if (auto found = find_placeholders(value); found && std::any_of(found->begin(), found->end(), chosen_freely))
        return Status::fail(fmt::format("{}.env.{}: a placeholder here lets a call choose code run by {} ({} is "
                                        "read as code, options or where code is found); write its value in the "
                                        "config, give the argument on the command line, or declare the parameter "
                                        "an enum of the values allowed",
                                        prefix, name, reader, name));
  return Status::success();
}

/// One source being applied to a Config. Every error starts with the origin.
// Counts in `{m,n}` and back references `\N` are kept small: a prompt pattern needs
// no more, and std::regex, which took them before, overflowed on counts past 2^63
// (undefined behaviour found by the config fuzz target).
constexpr size_t kMaxRegexCount = 1000;

/// The first count in `pattern` (after `{`, `,` inside braces, or any `\`) above
/// kMaxRegexCount, as written; "" when there is none.
std::string oversized_regex_count(std::string_view pattern) {
  bool in_braces = false;
  for (size_t i = 0; i < pattern.size(); ++i) {
    char c = pattern[i];
    bool counts = c == '\\' || c == '{' || (in_braces && c == ',');
    if (c == '{')
      in_braces = true;
    else if (c == '}')
      in_braces = false;
    if (!counts)
      continue;
    size_t end = i + 1;
    while (end < pattern.size() && std::isdigit(static_cast<unsigned char>(pattern[end])))
      ++end;
    auto digits = pattern.substr(i + 1, end - i - 1);
    if (digits.size() > 4 || (!digits.empty() && std::stoul(std::string(digits)) > kMaxRegexCount))
      return std::string(digits.substr(0, 24));
    // Every backslash is checked, even an escaped one: escapes such as `\cX` take
    // more than one character, so pairing them up could misread a back reference.
  }
  return "";
}

class Layer {
public:
  /// `defined_later`: tools the layers after this one define (a workspace's layer:
  /// your --config and --cfg's).
  Layer(Config& config, std::string_view origin, bool from_workspace = false,
        const std::set<std::string>* defined_later = nullptr)
      : c_(config), origin_(origin), from_workspace_(from_workspace), defined_later_(defined_later) {
    // The built-ins are those of the config this layer goes on (the loader's defaults).
    for (auto& [name, tool] : c_.tools)
      if (tool.source == "builtin") {
        builtins_.insert(name);
        builtin_defaults_.emplace(name, tool);
      }
  }

  Status apply(const toml::table& root) {
    return read_fields(root, "", {
      {"assistant", table([this](auto& t, auto&) { return assistant(t); })},
      {"runtime", table([this](auto& t, auto&) { return runtime(t); })},
      {"agents", table([this](auto& t, auto&) { return agents(t); })},
      {"style", table([this](auto& t, auto&) { return style(t); })},
      {"conversation", table([this](auto& t, auto&) { return conversation(t); })},
      {"nodes", users_only("which machines run your tools", table([this](auto& t, auto&) { return nodes(t); }))},
      {"node", users_only("what a node of yours serves", table([this](auto& t, auto&) { return node(t); }))},
      {"mcp", users_only("which programs start with jp-actors", table([this](auto& t, auto&) { return mcp(t); }))},
    });
  }

private:
  // -- errors and value readers --------------------------------------------------------

  Error fail(std::string_view key, std::string_view what) const {
    return Error{fmt::format("{}: {}: {}", origin_, key, what)};
  }
  Error mismatch(std::string_view key, std::string_view expected, const toml::node& n) const {
    return fail(key, fmt::format("expected {}, got {}", expected, describe(n)));
  }

  // -- a table's keys: each named once, with what reads it ----------------------------

  /// Reads one key's value; gets the value and the key's full name.
  using Reader = std::function<Status(const toml::node&, const std::string&)>;
  struct Field {
    std::string_view name;
    Reader read;
  };

  /// A table of these fields: a key that is none of them is refused (naming the
  /// allowed ones, in this order) before any is read; then each key is read.
  Status read_fields(const toml::table& t, std::string_view prefix, const std::vector<Field>& fields) const {
    for (auto&& [k, v] : t) {
      bool known = false;
      for (auto& f : fields)
        known = known || k == f.name;
      if (known)
        continue;
      std::vector<std::string_view> names;
      for (auto& f : fields)
        names.push_back(f.name);
      return fail(join_key(prefix, k.str()), fmt::format("unknown key (allowed: {})", join(names)));
    }
    for (auto&& [k, v] : t) {
      auto key = join_key(prefix, k.str());
      for (auto& f : fields)
        if (k == f.name) {
          if (auto s = f.read(v, key); !s)
            return s;
          break;
        }
    }
    return Status::success();
  }

  Reader text(std::string& out) const {
    return [this, &out](auto& v, auto& key) { return assign(string_of(v, key), out); };
  }
  Reader texts(std::vector<std::string>& out) const {
    return [this, &out](auto& v, auto& key) { return assign(strings_of(v, key), out); };
  }
  /// An http:// or https:// address with a host (`what`: what it is, e.g. "the
  /// provider's API"), or "" (none: the provider's own): refused as it is read,
  /// rather than at the first request, which would retry it as a network that is down.
  Reader http_address(std::string& out, std::string_view what, std::string_view example) const {
    return [this, &out, what, example](auto& v, auto& key) -> Status {
      auto s = string_of(v, key);
      if (!s)
        return Error{s.error()};
      std::string_view url = *s;
      bool http = equals_nocase(url.substr(0, 8), "https://") || equals_nocase(url.substr(0, 7), "http://");
      bool blank = std::any_of(url.begin(), url.end(), [](unsigned char c) { return c <= ' ' || c == 0x7f; });
      if (!url.empty() && (!http || url_host(*s).empty() || blank))
        return fail(key, fmt::format("must be an http:// or https:// address with a host and no spaces, {} (e.g. "
                                     "\"{}\"); got {}",
                                     what, example, describe(v)));
      out = std::move(*s);
      return Status::success();
    };
  }
  /// Arguments looked for in command lines (runtime.daemons, kept_daemons.hpp): none
  /// empty.
  Reader daemon_names(std::vector<std::string>& out) const {
    return [this, &out](auto& v, auto& key) -> Status {
      auto parts = strings_of(v, key);
      if (!parts)
        return Error{parts.error()};
      for (size_t i = 0; i < parts->size(); ++i)
        if ((*parts)[i].empty() || (*parts)[i].size() > kCommandPartMax)
          return fail(fmt::format("{}[{}]", key, i),
                      fmt::format("must be a program or an argument of 1 to {} bytes, as its command line has "
                                  "it (an argument matches when it is the name, or ends in '/' and the name), "
                                  "such as \"org.gradle.launcher.daemon.bootstrap.GradleDaemon\"",
                                  kCommandPartMax));
      out = std::move(*parts);
      return Status::success();
    };
  }
  Reader flag(bool& out) const {
    return [this, &out](auto& v, auto& key) { return assign(bool_of(v, key), out); };
  }
  template <class I>
  Reader integer(I& out, int64_t lo, int64_t hi) const {
    return [this, &out, lo, hi](auto& v, auto& key) { return assign(int_in(v, key, lo, hi), out); };
  }
  Reader count(uint64_t& out, int64_t lo, int64_t hi) const {
    return [this, &out, lo, hi](auto& v, auto& key) { return assign(count_in(v, key, lo, hi), out); };
  }
  Reader seconds(double& out, double max) const {
    return [this, &out, max](auto& v, auto& key) { return assign(seconds_in(v, key, max), out); };
  }
  /// A variable's name, or names: a glob or an entry with '=' names none, and
  /// whoever wrote `GITHUB_*` believed the token was passed.
  Status variable_name_check(std::string_view name, const std::string& key) const {
    auto control = [](char ch) { return static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f; };
    if (name.empty() || name.find_first_of("= *?[") != std::string_view::npos ||
        std::any_of(name.begin(), name.end(), control))
      return fail(key, fmt::format("{} is not a variable's name: it may not be empty or hold '=', a space, a "
                                   "control character or a pattern (*, ?, [): name each variable",
                                   json_quote(std::string(name))));
    return Status::success();
  }
  Reader variable_name(std::string& out) const {
    return [this, &out](auto& v, auto& key) -> Status {
      auto s = string_of(v, key);
      if (s && !s->empty())
        if (auto ok = variable_name_check(*s, key); !ok)
          return ok;
      return assign(std::move(s), out);
    };
  }
  Reader variable_names(std::vector<std::string>& out) const {
    return [this, &out](auto& v, auto& key) -> Status {
      auto s = strings_of(v, key);
      if (s)
        for (size_t i = 0; i < s->size(); ++i)
          if (auto ok = variable_name_check((*s)[i], fmt::format("{}[{}]", key, i)); !ok)
            return ok;
      return assign(std::move(s), out);
    };
  }
  /// A time limit that less than `min` would make end every request before a model
  /// begins to answer (0: at once; a workspace's config may lower it).
  Reader limit_seconds(double& out, double min, double max) const {
    return [this, &out, min, max](auto& v, auto& key) -> Status {
      auto d = seconds_in(v, key, max);
      if (!d || *d < min)
        return mismatch(key, fmt::format("a number of seconds from {} to {}{}", min, max,
                                         d ? " (less would end every request before a model begins to answer)" : ""),
                        v);
      return assign(std::move(d), out);
    };
  }
  Reader choice(std::string& out, std::vector<std::string_view> choices) const {
    return [this, &out, choices](auto& v, auto& key) { return assign(choice_of(v, key, choices), out); };
  }
  /// An API version for a URL's query (Azure OpenAI's api-version): "2024-10-21",
  /// "2025-04-01-preview", "preview"; nothing the query would read otherwise.
  Reader api_version(std::string& out) const {
    return [this, &out](auto& v, auto& key) -> Status {
      auto s = string_of(v, key);
      if (!s)
        return Error{s.error()};
      bool valid = !s->empty() && s->size() <= 64 && std::all_of(s->begin(), s->end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == '_';
      });
      if (!valid)
        return fail(key, fmt::format("expected an API version such as \"2024-10-21\" or \"2025-04-01-preview\" "
                                     "(letters, digits, '.', '-', '_'), got {}",
                                     json_quote_cut(*s)));
      out = std::move(*s);
      return Status::success();
    };
  }
  /// A value that must be a table, read by f(table, key).
  template <class F>
  Reader table(F f) {
    return [this, f](auto& v, auto& key) {
      return this->with_table(v, key, [&](const toml::table& t) -> Status { return f(t, key); });
    };
  }
  /// A key only the user's own config may set (users_own), read by `read`.
  Reader users_only(std::string_view why, Reader read) const {
    return [this, why, read](auto& v, auto& key) {
      auto s = users_own(key, why);
      return s ? read(v, key) : s;
    };
  }

  template <class F>
  Status with_table(const toml::node& n, std::string_view key, F&& f) {
    if (auto* t = n.as_table())
      return f(*t);
    return mismatch(key, "a table", n);
  }

  Result<std::string> string_of(const toml::node& n, std::string_view key) const {
    // A NUL would cut the text where it is used (a program, an argument, a variable,
    // a path): what ran or was written would not be what the config says.
    if (auto* s = n.as_string(); s && s->get().find('\0') != std::string::npos)
      return fail(key, "holds a NUL byte (\\u0000), which no program, argument, variable or path can carry; "
                       "remove it");
    if (auto* s = n.as_string())
      return std::string(s->get());
    return mismatch(key, "a string", n);
  }
  /// A value that goes into a command as given (a default, a fixed answer): no NUL
  /// in any text of it, which would cut the argument it becomes.
  Status no_nul(const toml::node& n, std::string_view key) const {
    if (auto* s = n.as_string(); s && s->get().find('\0') != std::string::npos)
      return fail(key, "holds a NUL byte (\\u0000), which no argument can carry; remove it");
    if (auto* a = n.as_array())
      for (size_t i = 0; i < a->size(); ++i)
        if (auto s = no_nul((*a)[i], fmt::format("{}[{}]", key, i)); !s)
          return s;
    if (auto* t = n.as_table())
      for (auto&& [k, v] : *t)
        if (auto s = no_nul(v, join_key(key, k.str())); !s)
          return s;
    return Status::success();
  }
  Result<bool> bool_of(const toml::node& n, std::string_view key) const {
    if (auto* b = n.as_boolean())
      return b->get();
    return mismatch(key, "a boolean", n);
  }
  // Every number has a range: a huge value (1e300 seconds, a terabyte cap) would
  // overflow where it is used or mean "unbounded" by accident.
  Result<double> seconds_in(const toml::node& n, std::string_view key, double max) const {
    double d = -1;
    if (auto* i = n.as_integer())
      d = static_cast<double>(i->get());
    else if (auto* f = n.as_floating_point())
      d = f->get();
    if (is_duration(d) && d <= max)
      return d;
    return mismatch(key, fmt::format("a finite number of seconds from 0 to {}", max), n);
  }
  Result<uint64_t> count_in(const toml::node& n, std::string_view key, int64_t lo, int64_t hi) const {
    if (auto* i = n.as_integer(); i && i->get() >= lo && i->get() <= hi)
      return static_cast<uint64_t>(i->get());
    return mismatch(key, fmt::format("an integer from {} to {}", lo, hi), n);
  }
  Result<int> int_in(const toml::node& n, std::string_view key, int64_t lo, int64_t hi) const {
    if (auto* i = n.as_integer(); i && i->get() >= lo && i->get() <= hi)
      return static_cast<int>(i->get());
    return mismatch(key, fmt::format("an integer from {} to {}", lo, hi), n);
  }
  Result<std::string> regex_of(const toml::node& n, std::string_view key) const {
    auto s = string_of(n, key);
    if (!s)
      return s;
    if (auto big = oversized_regex_count(*s); !big.empty())
      return fail(key, fmt::format("the count `{}` is too large for a prompt pattern (repetitions and back "
                                   "references go up to {})",
                                   big, kMaxRegexCount));
    if (auto compiled = PromptPattern::compile(*s); !compiled)
      return fail(key, compiled.error());
    return s;
  }
  Result<std::vector<std::string>> strings_of(const toml::node& n, std::string_view key) const {
    auto* a = n.as_array();
    if (!a)
      return mismatch(key, "an array of strings", n);
    std::vector<std::string> out;
    for (size_t i = 0; i < a->size(); ++i) {
      auto s = string_of((*a)[i], fmt::format("{}[{}]", key, i));
      if (!s)
        return Error{s.error()};
      out.push_back(std::move(*s));
    }
    return out;
  }
  Result<std::string> choice_of(const toml::node& n, std::string_view key,
                                const std::vector<std::string_view>& choices) const {
    if (auto* s = n.as_string())
      for (auto c : choices)
        if (s->get() == c)
          return std::string(c);
    return mismatch(key, fmt::format("one of {}", join(choices)), n);
  }

  // Assigns a reader's value to `out`, or returns its error.
  template <class T, class U>
  static Status assign(Result<T> r, U& out) {
    if (!r)
      return Error{r.error()};
    out = std::move(*r);
    return Status::success();
  }

  // -- tables --------------------------------------------------------------------------

  Status assistant(const toml::table& t) {
    auto& a = c_.assistant;
    return read_fields(t, "assistant", {
      // Who answers as the assistant, and so which key is sent where: a repository's
      // own script as your model, or your Anthropic key sent to your OpenAI base_url.
      {"provider", users_only("which provider gets your key, or who plays your model",
                              choice(a.provider, {"scripted", "openai", "anthropic"}))},
      {"model", text(a.model)},
      // Where your key goes, and which variable is sent as the key: a repository
      // naming either could have your key (or any secret) sent to its own server.
      {"base_url", users_only("where your provider key is sent",
                              http_address(a.base_url, "the provider's API", "https://api.openai.com/v1"))},
      {"api_key_env", users_only("which of your variables is sent as the provider key", variable_name(a.api_key_env))},
      {"api_version", api_version(a.api_version)},
      {"system_prompt", text(a.system_prompt)},
      {"inquiry_model", text(a.inquiry_model)},
      {"script", users_only("which script plays your model", text(a.script))},
      {"max_tokens", integer(a.max_tokens, 0, 10000000)},
      {"images", flag(a.images)},
      {"request", table([this, &a](auto& rt, auto& key) { return request(a.request, rt, key); })},
    });
  }

  Status request(RequestConfig& r, const toml::table& t, const std::string& prefix) {
    return read_fields(t, prefix, {
      {"max_retries", integer(r.max_retries, 0, 100)},
      {"base_backoff_ms", integer(r.base_backoff_ms, 0, 600000)},
      {"max_backoff_secs", seconds(r.max_backoff_secs, kMaxBackoffSecs)},
      {"idle_timeout_secs", limit_seconds(r.idle_timeout_secs, 1, kMaxIdleTimeoutSecs)},
      {"max_response_bytes", count(r.max_response_bytes, 1024, kMaxResponseBytes)},
    });
  }

  Status runtime(const toml::table& t) {
    auto& r = c_.runtime;
    return read_fields(t, "runtime", {
      {"output_cap_bytes", count(r.output_cap_bytes, 64, kMaxOutputCapBytes)},
      {"response_cap_bytes", count(r.response_cap_bytes, 1024, kMaxResponseCapBytes)},
      {"spill_max_bytes", count(r.spill_max_bytes, 4096, kMaxSpillBytes)},
      {"spill_budget_bytes", count(r.spill_budget_bytes, 4096, kMaxSpillBytes)},
      {"abort_grace_secs", seconds(r.abort_grace_secs, kMaxAbortGraceSecs)},
      {"state_dir", users_only("where jp-actors writes", text(r.state_dir))},
      // Both tune this machine's cores, which a repository knows nothing of (and
      // polling spins one): not a limit it could lower (workspace_limits.cpp).
      {"worker_threads", users_only("how this machine's cores are used", count(r.worker_threads, 1, 64))},
      {"io_poll_us", users_only("how this machine's cores are used", integer(r.io_poll_us, 0, 10000))},
      {"pass_env", users_only("which of your secrets its tools see", variable_names(r.pass_env))},
      {"daemons", users_only("what of its tools outlives them", daemon_names(r.daemons))},
      {"tool_limits", table([this](auto& lt, auto& key) { return tool_limits(c_.runtime.tool_limits, lt, key); })},
    });
  }

  /// [runtime.tool_limits] and a tool's [limits]: the kernel's limits on its
  /// processes (messages/tool_limits.hpp). A workspace may only lower them
  /// (workspace_limits.cpp).
  Status tool_limits(ToolLimits& l, const toml::table& t, std::string_view key) {
    std::vector<Field> fields;
    for (auto& k : kToolLimitKeys)
      fields.push_back({k.key, count(l.*k.field, k.min, k.max)});
    return read_fields(t, key, fields);
  }

  Status agents(const toml::table& t) {
    auto& a = c_.agents;
    return read_fields(t, "agents", {
      {"max_depth", count(a.max_depth, 1, 16)},
      {"max_concurrent", count(a.max_concurrent, 1, 10000)},
      {"max_live", count(a.max_live, 1, 10000)},
      {"max_rounds", count(a.max_rounds, 1, 100000)},
    });
  }

  Status style(const toml::table& t) {
    return read_fields(t, "style", {
      {"reasoning", choice(c_.style.reasoning, {"show", "hide"})},
    });
  }

  /// [nodes]: one table per node, by name.
  Status nodes(const toml::table& t) {
    for (auto&& [name, v] : t) {
      auto key = join_key("nodes", name.str());
      if (!is_identifier(name.str()))
        return fail(key, "a node name may contain only letters, digits, '_' and '-' (at most 64)");
      auto& entry = c_.nodes.try_emplace(std::string(name.str())).first->second;
      entry.name = name.str();
      auto s = with_table(v, key, [&](auto& nt) {
        return read_fields(nt, key, {
          {"address", text(entry.address)},
          {"tls", table([this, &entry](auto& tt, auto& k) { return tls(entry.tls, tt, k); })},
        });
      });
      if (!s)
        return s;
      // Read as it will be when a tool of the node is called: a mistake is told now.
      if (!entry.address.empty()) {
        auto at = parse_node_address(entry.address, join_key(key, "address"));
        if (!at)
          return Error{fmt::format("{}: {}", origin_, at.error())};
        if (at->port == 0)
          return fail(join_key(key, "address"), "port 0 names no node: give the port the node listens on (`jp-actors "
                                                "node` prints it: \"listening on HOST:PORT\")");
      }
    }
    return Status::success();
  }

  /// [mcp]: its servers ([mcp.servers.NAME]), one table each.
  Status mcp(const toml::table& t) {
    return read_fields(t, "mcp", {{"servers", table([this](auto& st, auto&) { return mcp_servers(st); })}});
  }

  Status mcp_servers(const toml::table& t) {
    for (auto&& [name, v] : t) {
      auto key = join_key("mcp.servers", name.str());
      // NAME__tool must be a valid tool name for every provider.
      if (!is_identifier(name.str()) || name.str().find("__") != std::string_view::npos || name.str().size() > 30)
        return fail(key, "a server name may contain only letters, digits, '_' (not two in a row) and '-', at "
                         "most 30 (its tools are named NAME__tool)");
      auto& server = c_.mcp_servers.try_emplace(std::string(name.str())).first->second;
      server.name = name.str();
      bool transport_given = false;
      auto s = with_table(v, key, [&](auto& st) {
        return read_fields(st, key, {
          {"command", texts(server.command)},
          {"url", http_address(server.url, "the server's MCP endpoint", "http://127.0.0.1:8808/mcp")},
          {"transport", [this, &server, &transport_given](auto& v, auto& k) {
             transport_given = true;
             return assign(choice_of(v, k, {"http", "sse"}), server.transport);
           }},
          {"env", table([this, &server](auto& et, auto& k) { return env_map(server.env, et, k); })},
          {"cwd", text(server.cwd)},
          {"headers", table([this, &server](auto& ht, auto& k) { return header_map(server.headers, ht, k); })},
          {"start_timeout_secs", seconds(server.start_timeout_secs, 3600)},
          {"timeout_secs", seconds(server.timeout_secs, 86400)},
          {"run", [this, &server](auto& v, auto& k) {
             std::string m;
             auto s = assign(choice_of(v, k, {"ask", "unattended", "skip"}), m);
             server.run = run_mode_named(m);
             return s;
           }},
          {"stateful", flag(server.stateful)},
          {"tools", table([this, &server](auto& tt, auto& k) { return mcp_tools(server, tt, k); })},
          {"limits", table([this, &server](auto& lt, auto& k) { return tool_limits(server.limits, lt, k); })},
        });
      });
      if (!s)
        return s;
      if (!server.url.empty()) {
        if (!server.command.empty())
          return fail(key, "give either command (a server over stdio) or url (Streamable HTTP), not both");
        if (!server.env.empty())
          return fail(key + ".env", "is a started server's environment; a url server takes headers instead");
        if (!server.cwd.empty())
          return fail(key + ".cwd", "is where a started server's process runs; a url server runs elsewhere");
        if (server.limits.any())
          return fail(key + ".limits", "bind a server's process that jp-actors starts (command); a url server "
                                       "runs elsewhere, under its own");
      } else {
        if (server.command.empty() || server.command[0].empty())
          return fail(key + ".command", "required (or url): the server's program and its arguments, e.g. "
                                        "[\"my-server\", \"--stdio\"]");
        if (!server.headers.empty())
          return fail(key + ".headers", "are sent to a url server; a command's server takes env instead");
        if (transport_given)
          return fail(key + ".transport", "is how a url server is spoken to (\"http\": Streamable HTTP, "
                                          "\"sse\": the legacy HTTP+SSE); a command's server speaks over stdio");
      }
      if (server.timeout_secs <= 0)
        return fail(key + ".timeout_secs", "must be more than 0");
      if (server.start_timeout_secs <= 0)
        return fail(key + ".start_timeout_secs", "must be more than 0");
    }
    return Status::success();
  }

  /// [mcp.servers.NAME.tools.TOOL]: per tool of the server, by its own name.
  Status mcp_tools(McpServerConfig& server, const toml::table& t, const std::string& prefix) {
    for (auto&& [tool, v] : t) {
      auto key = join_key(prefix, tool.str());
      bool stateful = server.stateful, enabled = true;
      auto s = with_table(v, key, [&](auto& tt) {
        return read_fields(tt, key, {{"stateful", flag(stateful)}, {"enabled", flag(enabled)}});
      });
      if (!s)
        return s;
      server.tool_stateful[std::string(tool.str())] = stateful;
      if (!enabled)
        server.tools_off.insert(std::string(tool.str()));
    }
    return Status::success();
  }

  /// A table of strings (a server's headers).
  Status string_map(std::map<std::string, std::string>& out, const toml::table& t, const std::string& prefix) {
    for (auto&& [k, v] : t)
      if (auto s = assign(string_of(v, join_key(prefix, k.str())), out[std::string(k.str())]); !s)
        return s;
    return Status::success();
  }

  /// HTTP headers: a name is a token, a value one line (a line break in it would
  /// send a header of its own: `v\r\nX-Injected: 1`).
  Status header_map(std::map<std::string, std::string>& out, const toml::table& t, const std::string& prefix) {
    static constexpr std::string_view token_marks = "!#$%&'*+-.^_`|~";
    for (auto&& [k, v] : t) {
      auto name = k.str();
      auto token = [](char ch) {
        return std::isalnum(static_cast<unsigned char>(ch)) || token_marks.find(ch) != std::string_view::npos;
      };
      if (name.empty() || !std::all_of(name.begin(), name.end(), token))
        return fail(join_key(prefix, name), "not a header's name: it is letters, digits and !#$%&'*+-.^_`|~ only "
                                            "(no space or colon)");
      if (auto* text = v.as_string(); text && text->get().find_first_of("\r\n") != std::string::npos)
        return fail(join_key(prefix, name), "holds a line break, which would end the header and send what follows "
                                            "as another; give it one line");
    }
    return string_map(out, t, prefix);
  }

  /// An environment table (a tool's or a server's): its names are variables' names.
  Status env_map(std::map<std::string, std::string>& out, const toml::table& t, const std::string& prefix) {
    for (auto&& [k, v] : t)
      if (auto ok = variable_name_check(k.str(), join_key(prefix, k.str())); !ok)
        return ok;
    return string_map(out, t, prefix);
  }

  Status node(const toml::table& t) {
    auto& n = c_.node;
    return read_fields(t, "node", {
      {"listen", [this, &n](const toml::node& v, const std::string& key) -> Status {
         // Read now as `jp-actors node` reads it: a mistake is told at load, as nodes' addresses are.
         if (auto s = text(n.listen)(v, key); !s)
           return s;
         if (auto at = parse_listen_address(n.listen, key); !at)
           return Error{fmt::format("{}: {}", origin_, at.error())};
         return Status::success();
       }},
      {"tls", table([this, &n](auto& tt, auto& k) { return tls(n.tls, tt, k); })},
      {"heartbeat_secs", seconds(n.heartbeat_secs, 60)},
      {"timeout_secs", seconds(n.timeout_secs, 600)},
    });
  }

  Status tls(TlsConfig& tls, const toml::table& t, const std::string& prefix) {
    return read_fields(t, prefix, {
      {"certificate", text(tls.certificate)},
      {"key", text(tls.key)},
      {"ca", text(tls.ca)},
    });
  }

  Status conversation(const toml::table& t) {
    return read_fields(t, "conversation", {{"tools", table([this](auto& tt, auto&) { return tools(tt); })}});
  }

  /// [conversation.tools]: one table per tool, by name.
  Status tools(const toml::table& t) {
    for (auto&& [name, v] : t) {
      auto key = join_key("conversation.tools", name.str());
      if (!is_identifier(name.str()))
        return fail(key, "a tool name may contain only letters, digits, '_' and '-' "
                         "(at most 64)");
      auto [at, added] = c_.tools.try_emplace(std::string(name.str()));
      // A reference, not a structured binding, is what a lambda may capture (clang 14).
      auto& entry = at->second;
      // Your config passes this tool secrets: a repository changing what it runs,
      // its environment or when it asks would have them reach its own program.
      if (from_workspace_ && !entry.pass_env.empty())
        return fail(key, fmt::format("may not be changed by the workspace's config: your own config "
                                     "passes this tool secrets (pass_env: {}); define a tool of another "
                                     "name instead",
                                     fmt::join(entry.pass_env, ", ")));
      auto* table = v.as_table(); // not one: with_table below names the mismatch
      auto sets = [table](const char* k) { return table && table->contains(k); };
      // A tool a repository shaped gets none of your secrets, whichever layer says so.
      if (!from_workspace_ && entry.from_workspace && sets("pass_env"))
        return fail(join_key(key, "pass_env"),
                    "the workspace's config defined or changed this tool, so it gets none of your "
                    "secrets; pass them to a tool of your own config instead");
      // Nor does a command of yours (--config, --cfg) take on the rest of the settings
      // of the repository's tool of that name (its run, args, env...).
      if (!from_workspace_ && entry.from_workspace && sets("command"))
        return fail(join_key(key, "command"),
                    fmt::format("the workspace's config defines a tool `{}` too, and yours would run with the "
                                "rest of its settings (run, args, env, ...); give yours another name",
                                name.str()));
      // Yours or built in: a repository may describe it and make it ask more, not
      // change what it runs or let it run without asking. Yours too when your
      // --config or --cfg, applied after the workspace's layer, defines it: not a
      // tool of the repository's own, missing its command.
      // (A tool both define is a clash, refused at yours: give it another name.)
      bool defines = sets("node") || sets("source") || (table && (*table)["command"]["program"]);
      bool yours_later = from_workspace_ && added && !defines && defined_later_ &&
                         defined_later_->count(std::string(name.str()));
      bool yours = from_workspace_ && !entry.from_workspace && (!added || yours_later);
      std::optional<ToolConfig> before; // what not_looser compares with
      if (yours)
        before = entry;
      entry.from_workspace = entry.from_workspace || (from_workspace_ && !yours);
      entry.shaped_by_workspace = entry.shaped_by_workspace || from_workspace_;
      entry.name = name.str();
      // What a placeholder error names: the source that last set what holds them.
      if (sets("command") || sets("cwd") || sets("env"))
        entry.origin = origin_;
      auto s = with_table(v, key, [&](auto& tt) { return tool(entry, tt, key); });
      // After it is read: a key no tool has is named as unknown, not as one the
      // workspace may not set. (A refusal fails the whole load: what it set is unused.)
      if (s && yours)
        s = only_tightened_keys(v, key);
      if (s && !yours_later) // its command comes with the layer that defines it
        s = check_tool(entry, key);
      if (s && yours)
        s = not_looser(*before, entry, key);
      if (!s)
        return s;
    }
    return Status::success();
  }

  /// What the workspace's config may set on a tool your config or jp-actors defines.
  Status only_tightened_keys(const toml::node& v, const std::string& key) const {
    static const std::set<std::string, std::less<>> allowed = {"summary", "description", "run", "spawn",
                                                               "wait_ms", "settle_ms", "rows", "cols",
                                                               "limits"};
    auto* t = v.as_table();
    if (!t)
      return Status::success(); // with_table names the mismatch
    auto refuse = [&](std::string_view k) {
      return fail(join_key(key, k), "may not be set by the workspace's config on a tool your own config or "
                                    "jp-actors defines (it may set only summary, description, run, "
                                    "spawn.permissions, wait_ms, settle_ms, rows, cols and limits; it may make "
                                    "calls ask more and only lower wait_ms, settle_ms and limits); define a "
                                    "tool of another name instead");
    };
    for (auto&& [k, _] : *t)
      if (!allowed.count(k.str()))
        return refuse(k.str());
    if (auto* spawn = t->get_as<toml::table>("spawn"))
      for (auto&& [k, _] : *spawn)
        if (k.str() != "permissions")
          return refuse(fmt::format("spawn.{}", k.str()));
    return Status::success();
  }

  /// The workspace's layer left no call of your (or a built-in) tool less guarded.
  Status not_looser(const ToolConfig& before, const ToolConfig& after, const std::string& key) const {
    auto strictness = [](run_mode m) { return m == run_mode::skip ? 2 : m == run_mode::ask ? 1 : 0; };
    const std::optional<action_kind> calls[] = {std::nullopt, action_kind::spawn, action_kind::fetch,
                                                action_kind::apply, action_kind::abort};
    for (auto call : calls)
      if (strictness(permission_mode(after, call)) < strictness(permission_mode(before, call)))
        return fail(key, fmt::format("the workspace's config may not let {} of this tool (your own config's "
                                     "or built in) run with less asking than before ({} instead of {}); "
                                     "set that in your own config",
                                     call ? fmt::format("`{}`", to_string(*call)) : std::string("a one-shot call"),
                                     to_string(permission_mode(after, call)),
                                     to_string(permission_mode(before, call))));
    return Status::success();
  }

  Status tool(ToolConfig& tool, const toml::table& t, const std::string& prefix) {
    return read_fields(t, prefix, {
      {"source", choice(tool.source, {"local", "builtin"})},
      {"summary", text(tool.summary)},
      {"description", text(tool.description)},
      {"command", table([this, &tool](auto& ct, auto& key) { return command(tool, ct, key); })},
      {"run", [this, &tool](auto& v, auto& key) {
         std::string m;
         auto s = assign(choice_of(v, key, {"ask", "unattended", "skip"}), m);
         tool.run = run_mode_named(m);
         return s;
       }},
      {"io", [this, &tool](auto& v, auto& key) {
         std::string m;
         auto s = assign(choice_of(v, key, {"pipe", "pty", "control"}), m);
         tool.io = m == "pty" ? io_mode::pty : m == "control" ? io_mode::control : io_mode::pipe;
         return s;
       }},
      {"cwd", text(tool.cwd)},
      {"cwd_outside_workspace", flag(tool.cwd_outside_workspace)},
      {"env", table([this, &tool](auto& et, auto& key) { return env_map(tool.env, et, key); })},
      {"parameters", table([this, &tool](auto& pt, auto& key) { return parameters(tool, pt, key); })},
      {"one_of_required", [this, &tool](auto& v, auto& key) -> Status {
         if (auto s = texts(tool.one_of_required)(v, key); !s)
           return s;
         // [] read as no key: a call could give none of them.
         if (tool.one_of_required.empty())
           return fail(key, "an empty list names no parameter; list the parameters a call gives at least one "
                            "of, or leave one_of_required out");
         return Status::success();
       }},
      {"spawn", table([this, &tool](auto& st, auto& key) { return spawn(tool, st, key); })},
      {"questions", table([this, &tool](auto& qt, auto& key) { return questions(tool, qt, key); })},
      {"rows", integer(tool.rows, 2, 500)},
      {"cols", integer(tool.cols, 10, 500)},
      {"prompt_pattern", [this, &tool](auto& v, auto& key) { return assign(regex_of(v, key), tool.prompt_pattern); }},
      {"wait_ms", integer(tool.wait_ms, 0, kMaxWaitMs)},
      {"settle_ms", integer(tool.settle_ms, 0, 10000)},
      {"background_after_secs", seconds(tool.background_after_secs, 86400)},
      {"limits", table([this, &tool](auto& lt, auto& key) { return tool_limits(tool.limits, lt, key); })},
      {"pass_env", users_only("which of your secrets its tools see", variable_names(tool.pass_env))},
      {"node", users_only("which machines run your tools", text(tool.node))},
    });
  }

  Status command(ToolConfig& tool, const toml::table& t, const std::string& prefix) {
    return read_fields(t, prefix, {
      {"program", text(tool.program)},
      {"args", texts(tool.args)},
      {"shell", flag(tool.shell)},
    });
  }


  Status parameters(ToolConfig& tool, const toml::table& t, const std::string& prefix) {
    for (auto&& [name, v] : t) {
      auto key = join_key(prefix, name.str());
      if (!is_identifier(name.str()))
        return fail(key, "a parameter name may contain only letters, digits, '_' and '-'");
      auto wanted = name.str();
      auto it = std::find_if(tool.parameters.begin(), tool.parameters.end(),
                             [&](auto& p) { return p.name == wanted; });
      if (it == tool.parameters.end()) {
        tool.parameters.push_back(ParameterConfig{});
        it = std::prev(tool.parameters.end());
        it->name = name.str();
      }
      if (auto s = with_table(v, key, [&](auto& pt) { return parameter(*it, pt, key); }); !s)
        return s;
    }
    return Status::success();
  }

  Status parameter(ParameterConfig& p, const toml::table& t, const std::string& prefix) {
    return read_fields(t, prefix, {
      {"type", choice(p.type, parameter_types)},
      {"description", text(p.description)},
      {"required", flag(p.required)},
      {"enum", [this, &p](auto& v, auto& key) -> Status {
         if (auto s = texts(p.enum_values)(v, key); !s)
           return s;
         // [] would allow nothing, and read as no enum it allowed anything.
         if (p.enum_values.empty())
           return fail(key, "an empty list allows no value; list the values allowed, or leave enum out");
         return Status::success();
       }},
      {"items", table([this, &p](auto& it, auto& key) {
         return read_fields(it, key, {{"type", choice(p.items_type, parameter_types)}});
       })},
      {"default", [this, &p](auto& v, auto& key) {
         if (auto s = no_nul(v, key); !s)
           return s;
         p.default_value = toml_to_json(v);
         return Status::success();
       }},
    });
  }

  Status spawn(ToolConfig& tool, const toml::table& t, const std::string& prefix) {
    return read_fields(t, prefix, {
      {"stateful", flag(tool.stateful)},
      {"actions", [this, &tool](auto& v, auto& key) { return actions(tool, v, key); }},
      {"notifications",
       table([this, &tool](auto& nt, auto& key) { return notifications(tool.notifications, nt, key); })},
      {"lifecycle", table([this, &tool](auto& lt, auto& key) { return lifecycle(tool.lifecycle, lt, key); })},
      {"permissions", table([this, &tool](auto& pt, auto& key) { return permissions(tool, pt, key); })},
    });
  }

  Status permissions(ToolConfig& tool, const toml::table& t, const std::string& prefix) {
    auto mode = [this, &tool](action_kind a) -> Reader {
      return [this, &tool, a](auto& v, auto& key) {
        std::string m;
        auto s = assign(choice_of(v, key, {"ask", "unattended", "skip"}), m);
        if (s)
          tool.action_permissions[a] = run_mode_named(m);
        return s;
      };
    };
    return read_fields(t, prefix, {
      {"spawn", mode(action_kind::spawn)},
      {"fetch", mode(action_kind::fetch)},
      {"apply", mode(action_kind::apply)},
      {"abort", mode(action_kind::abort)},
    });
  }

  Status actions(ToolConfig& tool, const toml::node& n, const std::string& key) {
    auto* a = n.as_array();
    if (!a)
      return mismatch(key, "an array of actions (spawn, fetch, apply, abort)", n);
    std::vector<action_kind> out;
    for (size_t i = 0; i < a->size(); ++i) {
      std::string name;
      auto ekey = fmt::format("{}[{}]", key, i);
      if (auto s = assign(choice_of((*a)[i], ekey, {"spawn", "fetch", "apply", "abort"}), name); !s)
        return s;
      auto kind = action_named(name);
      if (std::find(out.begin(), out.end(), kind) == out.end())
        out.push_back(kind);
    }
    // [] named none, and was taken as all four (an empty list is the default's "all").
    if (std::find(out.begin(), out.end(), action_kind::spawn) == out.end())
      return fail(key, "expected the actions to include \"spawn\" (nothing else can "
                       "create a handle); leave the key out for all four");
    tool.actions = std::move(out);
    return Status::success();
  }

  Status notifications(NotificationConfig& n, const toml::table& t, const std::string& prefix) {
    return read_fields(t, prefix, {
      {"on_success", flag(n.on_success)},
      {"on_failure", flag(n.on_failure)},
      {"on_waiting", flag(n.on_waiting)},
      {"on_content", flag(n.on_content)},
    });
  }

  Status lifecycle(ChildSpec& l, const toml::table& t, const std::string& prefix) {
    return read_fields(t, prefix, {
      {"on_turn_end", [this, &l](auto& v, auto& key) {
         std::string p;
         auto s = assign(choice_of(v, key, {"inquire", "await", "abort"}), p);
         if (s)
           l.on_turn_end = *turn_end_policy_from(p);
         return s;
       }},
      {"await_timeout_secs", seconds(l.await_timeout_secs, kMaxAwaitTimeoutSecs)},
    });
  }

  Status questions(ToolConfig& tool, const toml::table& t, const std::string& prefix) {
    for (auto&& [id_key, v] : t) {
      auto key = join_key(prefix, id_key.str());
      auto id = std::string(id_key.str()); // capturable (clang 14)
      auto s = with_table(v, key, [&](const toml::table& qt) -> Status {
        // A fixed answer is the answer: the target would never be asked.
        if (qt.contains("answer") && qt.contains("target"))
          return fail(join_key(key, "target"), "a question with a fixed `answer` is asked of nobody; remove "
                                               "`answer` to have the target asked, or `target`");
        return read_fields(qt, key, {
          {"answer", [this, &tool, &id](auto& answer, auto& akey) {
             if (auto s = no_nul(answer, akey); !s)
               return s;
             tool.answers[id] = toml_to_json(answer);
             return Status::success();
           }},
          {"target", [this, &tool, &id](auto& target, auto& tkey) {
             std::string t2;
             auto s2 = assign(choice_of(target, tkey, {"user", "assistant"}), t2);
             if (s2)
               tool.question_targets[id] = t2;
             return s2;
           }},
        });
      });
      if (!s)
        return s;
    }
    return Status::success();
  }

  // -- whole-tool consistency, after the layer's keys are applied ---------------------

  Status check_tool(const ToolConfig& tool, const std::string& prefix) const {
    if (tool.source == "builtin" && builtins_.count(tool.name) == 0)
      return fail(prefix + ".source",
                  fmt::format("expected \"local\" (\"{}\" is not a built-in tool; the "
                              "built-ins are {}), got \"builtin\"",
                              tool.name, fmt::join(builtins_, ", ")));
    // A built-in's description and parameters stay with its name: a command under it
    // would be offered as the built-in and dropped the arguments the model gave it.
    if (tool.source == "local" && !tool.program.empty() && builtins_.count(tool.name))
      return fail(prefix + ".source",
                  fmt::format("\"local\" with a command under `{}`, a built-in tool's name: the tool would keep "
                              "the built-in's description and parameters, which your command does not take; give "
                              "your tool another name",
                              tool.name));
    if (tool.source == "local" && tool.program.empty() && tool.node.empty()) {
      // [conversation.tools.shel] run = "ask": a built-in's name mistyped.
      std::string near;
      for (auto& b : builtins_)
        if (near.empty() && edit_distance(b, tool.name) <= 2 && b.size() > 2)
          near = fmt::format("; did you mean the built-in `{}`?", b);
      return fail(prefix + ".command.program",
                  fmt::format("missing: a local tool needs command = {{ program = \"...\" }} (or node = \"NAME\": "
                              "it runs on that node){}",
                              near));
    }
    if (tool.source == "builtin" && (!tool.program.empty() || !tool.args.empty() || tool.shell))
      return fail(prefix + ".command", "a built-in tool runs no command; remove it or set "
                                       "source = \"local\" under another name");
    // Built-ins take these from the call (the shell's `cwd` and `env`), never from a config.
    if (tool.source == "builtin" && !tool.cwd.empty())
      return fail(prefix + ".cwd", "a built-in tool takes no cwd from the config (the shell's calls give "
                                   "their own `cwd`); remove it");
    if (tool.source == "builtin" && !tool.env.empty())
      return fail(prefix + ".env", "a built-in tool takes no env from the config (the shell's calls give "
                                   "their own `env`); remove it");
    if (auto before = builtin_defaults_.find(tool.name); tool.source == "builtin" && before != builtin_defaults_.end()) {
      // What tells how a process is run and looked at, on a built-in that runs none.
      auto& d = before->second;
      const std::pair<const char*, bool> process_keys[] = {
        {"io", tool.io != d.io},           {"rows", tool.rows != d.rows},
        {"cols", tool.cols != d.cols},     {"prompt_pattern", tool.prompt_pattern != d.prompt_pattern},
        {"wait_ms", tool.wait_ms != d.wait_ms}, {"settle_ms", tool.settle_ms != d.settle_ms}};
      if (tool.name != "shell")
        for (auto& [k, changed] : process_keys)
          if (changed)
            return fail(prefix + "." + k, fmt::format("`{}` starts no process: {} is for the tools that run one "
                                                      "(the shell and local tools); remove it",
                                                      tool.name, k));
    }
    // What a handle has: on a tool of one-shot calls it did nothing, and said nothing.
    if (tool.source == "local" && !tool.stateful && tool.node.empty()) {
      static const ToolConfig defaults;
      const std::pair<const char*, bool> handle_keys[] = {
        {"actions", !tool.actions.empty()},
        {"notifications", tool.notifications != defaults.notifications},
        {"lifecycle", tool.lifecycle != defaults.lifecycle},
        {"permissions", !tool.action_permissions.empty()}};
      for (auto& [k, set] : handle_keys)
        if (set)
          return fail(prefix + ".spawn." + k,
                      fmt::format("is for a tool that runs as a handle, and `{}` runs one-shot calls: set "
                                  "spawn.stateful = true, or remove it",
                                  tool.name));
    }
    // Limits bind the processes started here: a node's tool runs by the node's own
    // config, and a built-in other than the shell starts none.
    if (tool.limits.any() && !tool.node.empty())
      return fail(prefix + ".limits", "a tool that runs on a node gets the limits of the node's own config "
                                      "(its runtime.tool_limits, its tool's limits); set them there");
    if (tool.limits.any() && tool.source == "builtin" && tool.name != "shell")
      return fail(prefix + ".limits", fmt::format("`{}` starts no process; limits are for the tools that run a "
                                                  "program (the shell and local tools)",
                                                  tool.name));
    // Refused here rather than at the first call: a placeholder bash would not expand.
    if (tool.shell)
      if (auto scan = scan_shell_template(tool.program, tool.args); !scan)
        return Error{fmt::format("{}: {}.{}", origin_, prefix, scan.error())};
    if (auto s = check_tool_parameters(tool, prefix); !s)
      return Error{fmt::format("{}: {}", origin_, s.error)};
    // A terminal's wait for input is told by probing once its output settled; at
    // the first output it is still writing, so a wait would last to its deadline.
    if (tool.settle_ms == 0 && tool.io == io_mode::pty)
      return fail(prefix + ".settle_ms", "0 (a wait ends at the first new output) is for tools with io = \"pipe\" "
                                         "or \"control\"; a terminal's waits need its output to settle: 1 or more");
    // What goes on as a handle must be one the model can fetch and abort, here.
    if (tool.background_after_secs > 0 && !can_go_on_as_handle(tool))
      return fail(prefix + ".background_after_secs",
                  "is for a tool that runs here with io = \"pipe\", spawn.stateful = true and the fetch and abort "
                  "actions (what goes on as a handle must be one the assistant can fetch and abort); remove it "
                  "or set it to 0");
    // A terminal is typed into and looked at: only a handle can be (a one-shot call
    // of it failed at every call, saying so).
    if (tool.io == io_mode::pty && !tool.stateful && tool.source == "local" && tool.node.empty())
      return fail(prefix + ".io", "\"pty\" (a terminal, typed into and looked at) is for a tool that runs as a "
                                  "handle: set spawn.stateful = true, or io = \"pipe\" for one-shot calls");
    return Status::success();
  }

  Config& c_;
  std::string_view origin_;
  // The workspace is someone's repository: it does not choose where jp-actors writes
  // or which of the user's secrets reach its tools.
  bool from_workspace_ = false;
  const std::set<std::string>* defined_later_ = nullptr;
  std::set<std::string, std::less<>> builtins_; // names of the built-in tools
  std::map<std::string, ToolConfig> builtin_defaults_; // ... as this layer found them

  Status users_own(std::string_view key, std::string_view why) const {
    if (!from_workspace_)
      return Status::success();
    return fail(key, fmt::format("may be set only in your own config ($XDG_CONFIG_HOME/jp-actors/config.toml, "
                                 "--config or --cfg), not by the workspace's: a repository does not choose {}",
                                 why));
  }
};

Result<toml::table> parse_toml(std::string_view text, std::string_view origin) {
  if (auto deep = check_toml_depth(text, origin); !deep)
    return Error{deep.error};
  try {
    return toml::parse(text, origin);
  } catch (const toml::parse_error& e) {
    auto& at = e.source().begin;
    return Error{fmt::format("{}:{}:{}: TOML syntax error: {}", origin, at.line, at.column,
                             e.description())};
  }
}

// Far beyond any config a person writes; a larger one (or an endless device) is
// refused rather than read into memory.
constexpr size_t kMaxConfigBytes = 4 << 20;

/// A config file's text. A workspace's (`from_workspace`: someone's repository) must
/// be a regular file and not a link: a link could hand jp-actors a FIFO that blocks
/// it or a device that never ends, or pass off a file outside the workspace as its
/// config. Your own files may be anything readable (`--config <(...)` is a pipe).
Result<std::string> read_file(const fs::path& path, bool from_workspace) {
  // O_NONBLOCK: opening a FIFO waits for a writer otherwise.
  int flags = O_RDONLY | O_CLOEXEC | O_NONBLOCK | (from_workspace ? O_NOFOLLOW : 0);
  int fd = -1;
  if (from_workspace) {
    // The directory it is in (`.jp`) is the workspace's too: a link there is refused
    // as well, so that no part of the path is chosen by a link.
    auto dir_path = path.parent_path();
    int dir = ::open(dir_path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dir < 0 && (errno == ELOOP || errno == ENOTDIR))
      return Error{fmt::format("{}: is a symbolic link or not a directory; the workspace's config "
                               "directory must be a real one (links there are not followed)",
                               dir_path.string())};
    if (dir >= 0) {
      fd = ::openat(dir, path.filename().c_str(), flags);
      int saved = errno;
      ::close(dir);
      errno = saved;
    }
  } else {
    fd = ::open(path.c_str(), flags);
  }
  if (fd < 0) {
    if (errno == ELOOP && from_workspace)
      return Error{fmt::format("{}: is a symbolic link; a workspace's config must be a regular file "
                               "(links there are not followed)", path.string())};
    return Error{fmt::format("{}: cannot read: {}", path.string(), std::strerror(errno))};
  }
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st{};
  if (::fstat(fd, &st) != 0)
    return Error{fmt::format("{}: cannot read: {}", path.string(), std::strerror(errno))};
  if (S_ISDIR(st.st_mode))
    return Error{fmt::format("{}: is a directory, expected a TOML file", path.string())};
  if (from_workspace && !S_ISREG(st.st_mode))
    return Error{fmt::format("{}: is not a regular file; a workspace's config must be one", path.string())};
  // A device (/dev/zero) would be read up to the size limit: no config file. /dev/null
  // is an empty one, as it always was.
  bool null_device = S_ISCHR(st.st_mode) && st.st_rdev == makedev(1, 3);
  if (S_ISBLK(st.st_mode) || S_ISSOCK(st.st_mode) || (S_ISCHR(st.st_mode) && !::isatty(fd) && !null_device))
    return Error{fmt::format("{}: is not a regular file (a device, a socket); give a TOML file", path.string())};
  if (!S_ISREG(st.st_mode)) // a pipe or a terminal: read as it comes
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  auto read = read_bounded(fd, kMaxConfigBytes);
  if (read.error)
    return Error{fmt::format("{}: cannot read: {}", path.string(), std::strerror(read.error))};
  if (read.too_large)
    return Error{fmt::format("{}: larger than {} MiB; a config file is expected to be far smaller", path.string(),
                             kMaxConfigBytes >> 20)};
  return std::move(read.bytes);
}

// One layer of TOML text on top of `c`; `c` is untouched when the layer is refused.
// One layer of parsed TOML on top of `c`; `c` is untouched when the layer is refused.
Status apply_table(Config& c, const toml::table& root, std::string_view origin, bool from_workspace,
                   const std::set<std::string>* defined_later = nullptr) {
  Config next = c;
  Layer layer(next, origin, from_workspace, defined_later);
  if (auto s = layer.apply(root); !s)
    return s;
  c = std::move(next);
  return Status::success();
}

Status apply_text(Config& c, std::string_view text, std::string_view origin, bool from_workspace,
                  const std::set<std::string>* defined_later = nullptr) {
  auto root = parse_toml(text, origin);
  if (!root)
    return Error{root.error()};
  return apply_table(c, *root, origin, from_workspace, defined_later);
}

Status apply_file(Config& c, const fs::path& path, bool from_workspace = false) {
  auto text = read_file(path, from_workspace);
  if (!text)
    return Error{text.error()};
  return apply_text(c, *text, path.string(), from_workspace);
}

// --cfg a.b.c=VALUE: VALUE as a TOML value if it is one (1, true, ["x"], {k="v"}),
// else the raw text as a string, so `--cfg assistant.model=gpt-4o` needs no quotes
// (nor a date: `--cfg assistant.api_version=2024-10-21`).
Status apply_override(Config& c, std::string_view spec) {
  auto origin = fmt::format("--cfg {}", spec);
  auto eq = spec.find('=');
  if (eq == std::string_view::npos)
    return Error{fmt::format("{}: expected key=value", origin)};
  // `key = value`, as a config file has it, means the same.
  auto key = trim_blanks(spec.substr(0, eq));
  auto text = trim_blanks(spec.substr(eq + 1));

  std::vector<std::string> path;
  for (size_t start = 0;;) {
    auto dot = key.find('.', start);
    auto part = key.substr(start, dot == std::string_view::npos ? key.npos : dot - start);
    if (part.empty())
      return Error{fmt::format("{}: expected a dotted key like assistant.model, got \"{}\"",
                               origin, key)};
    path.emplace_back(part);
    if (dot == std::string_view::npos)
      break;
    start = dot + 1;
  }

  if (auto deep = check_toml_depth(spec, origin); !deep)
    return Error{deep.error};
  toml::table root;
  toml::table* leaf_parent = &root;
  for (size_t i = 0; i + 1 < path.size(); ++i)
    leaf_parent = leaf_parent->emplace<toml::table>(path[i]).first->second.as_table();

  bool parsed = false;
  bool scalar = false; // a number or a boolean, which a key taking text takes as its text
  try {
    auto doc = toml::parse(fmt::format("v = {}", text));
    // No key takes a date or a time: 2024-10-21 (an api_version) is its text.
    if (doc.size() == 1 && doc.contains("v") && !doc.get("v")->is_date() && !doc.get("v")->is_time() &&
        !doc.get("v")->is_date_time()) {
      auto* v = doc.get("v");
      scalar = v->is_integer() || v->is_floating_point() || v->is_boolean();
      leaf_parent->insert_or_assign(path.back(), std::move(*v));
      parsed = true;
    }
  } catch (const toml::parse_error&) {
  }
  if (!parsed)
    leaf_parent->insert_or_assign(path.back(), std::string(text));

  if (!scalar) {
    Layer layer(c, origin);
    return layer.apply(root);
  }
  // `--model 123` (or `--cfg assistant.model=1.5`): a model's name may be all digits.
  // Each try on a copy: where the text does not do either, the number's error is told.
  auto tried = [&] {
    Config trial = c;
    auto s = Layer(trial, origin).apply(root);
    if (s)
      c = std::move(trial);
    return s;
  };
  auto as_value = tried();
  if (as_value)
    return as_value;
  leaf_parent->insert_or_assign(path.back(), std::string(text));
  return tried() ? Status::success() : as_value;
}

fs::path user_config_path() {
  // An absolute path only (the XDG spec ignores a relative one): read from the current
  // directory, a repository's file would be taken as your own config and trusted as such.
  if (auto* xdg = std::getenv("XDG_CONFIG_HOME"); xdg && *xdg == '/')
    return fs::path(xdg) / "jp-actors" / "config.toml";
  if (auto* home = std::getenv("HOME"); home && *home == '/')
    return fs::path(home) / ".config" / "jp-actors" / "config.toml";
  return {};
}

} // namespace

/// What only the whole config can tell (every layer applied).
Status check_config(const Config& c) {
  // A peer silent for timeout_secs is lost: heartbeats must come sooner, or every
  // connection with nothing else to say (a handle quietly running) is cut.
  if (auto& n = c.node; n.heartbeat_secs <= 0 || n.heartbeat_secs >= n.timeout_secs)
    return Status::fail(fmt::format("node.heartbeat_secs = {:g} must be above 0 and below node.timeout_secs = {:g}: "
                                    "a peer silent for timeout_secs is lost, so a quiet connection (a remote handle "
                                    "running without output) would be cut; the defaults are 1 and 5",
                                    n.heartbeat_secs, n.timeout_secs));
  for (auto& [name, tool] : c.tools)
    if (tool.source == "local")
      if (auto s = check_placeholders(tool, join_key("conversation.tools", name)); !s)
        return tool.origin.empty() ? s : Status::fail(fmt::format("{}: {}", tool.origin, s.error));
  return Status::success();
}

namespace {

/// A tool on a node nobody configured would be offered to the model and fail at
/// every call: said once every file and override is in (not per text applied: an
/// embedder may add the node in code, or in a later text).
Status check_tool_nodes(const Config& c) {
  for (auto& [name, tool] : c.tools)
    if (!tool.node.empty() && !c.nodes.count(tool.node)) {
      std::vector<std::string> known;
      for (auto& [node, _] : c.nodes)
        known.push_back(node);
      return Status::fail(fmt::format("{}.node = \"{}\": no node of that name is configured (add [nodes.{}] "
                                      "address = \"host:port\"; configured: {})",
                                      join_key("conversation.tools", name), tool.node, tool.node,
                                      known.empty() ? "none" : fmt::format("{}", fmt::join(known, ", "))));
    }
  return Status::success();
}

} // namespace

Result<Config> apply_config_text(Config base, std::string_view toml_text,
                                 std::string_view origin) {
  if (auto s = apply_text(base, toml_text, origin, false); !s)
    return Error{s.error};
  if (auto s = check_config(base); !s)
    return Error{s.error};
  return base;
}

namespace {

/// Which text of a workspace's config the user was told of: a digest the repository
/// cannot make another text of (it writes the text, comments and all).
std::string sha256_hex(std::string_view text) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  if (EVP_Digest(text.data(), text.size(), md, &n, EVP_sha256(), nullptr) != 1)
    return {}; // no digest: never recorded as told
  std::string hex;
  for (unsigned int i = 0; i < n; ++i)
    hex += fmt::format("{:02x}", md[i]);
  return hex;
}

} // namespace

namespace {

/// The tools your --config files (`files`, parsed) and --cfg overrides define (a
/// command, a node or a source): what they cannot read is said when they are applied.
std::set<std::string> tools_defined_by(const ConfigSources& sources, const std::vector<toml::table>& files) {
  std::set<std::string> names;
  for (auto& root : files) {
    auto* tools = root["conversation"]["tools"].as_table();
    if (!tools)
      continue;
    for (auto&& [name, v] : *tools)
      if (auto* t = v.as_table(); t && (t->contains("node") || t->contains("source") ||
                                       (*t)["command"]["program"].is_string()))
        names.insert(std::string(name.str()));
  }
  // conversation.tools.NAME.command.program=..., .command={program=...}, .node=...
  constexpr std::string_view prefix = "conversation.tools.";
  for (std::string_view spec : sources.overrides) {
    auto eq = spec.find('=');
    auto key = trim_blanks(spec.substr(0, eq));
    if (!key.starts_with(prefix) || eq == std::string_view::npos)
      continue;
    auto rest = key.substr(prefix.size());
    auto dot = rest.find('.');
    if (dot == std::string_view::npos)
      continue;
    auto field = rest.substr(dot + 1);
    if (field == "node" || field == "source" || field == "command.program" ||
        (field == "command" && spec.substr(eq).find("program") != std::string_view::npos))
      names.insert(std::string(rest.substr(0, dot)));
  }
  return names;
}

} // namespace

Result<Config> load_config(const ConfigSources& sources, Config defaults) {
  auto c = std::move(defaults);

  std::error_code ec;
  fs::path workspace = sources.workspace.empty() ? fs::current_path(ec)
                                                 : fs::absolute(sources.workspace, ec);
  if (ec || !fs::is_directory(workspace, ec))
    return Error{fmt::format("{}: workspace is not a directory",
                             sources.workspace.empty() ? "." : sources.workspace)};
  // Its real path: a workspace reached through a link is the same one (`handles` finds
  // a run by it), and checks of paths inside it compare real paths with real paths.
  auto real = fs::canonical(workspace, ec);
  c.workspace = (ec ? workspace.lexically_normal() : real).string();
  if (c.workspace.size() > 1 && c.workspace.back() == '/')
    c.workspace.pop_back();

  // Your --config files, each read and parsed once (a pipe, `--config <(...)`, reads
  // once): what tools they define is looked at before the workspace's layer, and they
  // are applied after it, to each config that needs them.
  std::vector<toml::table> files;
  for (auto& file : sources.config_files) {
    if (!fs::exists(file, ec))
      return Error{fmt::format("{}: no such config file", file)};
    auto text = read_file(file, false);
    if (!text)
      return Error{text.error()};
    auto root = parse_toml(*text, file);
    if (!root)
      return Error{root.error()};
    files.push_back(std::move(*root));
  }
  // Optional locations: absent is fine, present but broken is an error.
  std::vector<std::pair<fs::path, bool>> optional; // path, from the workspace
  std::optional<Config> workspace_before, workspace_after; // around the workspace's layer
  if (sources.use_user_config)
    optional.emplace_back(user_config_path(), false);
  optional.emplace_back(fs::path(c.workspace) / ".jp" / "config.toml", true);
  for (auto& [path, from_workspace] : optional) {
    if (path.empty())
      continue;
    if (!fs::exists(path, ec)) {
      // Yours is skipped only when it is not there: one that cannot be looked at, or
      // a link to nothing, would drop what it asks for (run = "ask") without a word.
      if (!from_workspace && ec)
        return Error{fmt::format("{}: cannot be read ({}); fix its directory's permissions, or remove it",
                                 path.string(), ec.message())};
      if (std::error_code lc; !from_workspace && fs::is_symlink(fs::symlink_status(path, lc)))
        return Error{fmt::format("{} is a link to {}, which does not exist: point it at your config, or remove "
                                 "it",
                                 path.string(), fs::read_symlink(path, lc).string())};
      continue;
    }
    if (!from_workspace) {
      if (auto s = apply_file(c, path); !s)
        return Error{s.error};
      continue;
    }
    auto text = read_file(path, true);
    if (!text)
      return Error{text.error()};
    workspace_before = c;
    auto yours = tools_defined_by(sources, files);
    if (auto s = apply_text(c, *text, path.string(), true, &yours); !s)
      return Error{s.error};
    workspace_after = c;
    c.workspace_layer = Config::WorkspaceLayer{sha256_hex(*text), {}};
  }

  // Your layers after the workspace's: --config files, then --cfg.
  auto apply_yours = [&sources, &files](Config& to) -> Status {
    for (size_t i = 0; i < files.size(); ++i)
      if (auto s = apply_table(to, files[i], sources.config_files[i], false); !s)
        return s;
    for (auto& spec : sources.overrides)
      if (auto s = apply_override(to, spec); !s)
        return s;
    return Status::success();
  };
  if (auto s = apply_yours(c); !s)
    return Error{s.error};

  // Someone's repository may lower the limits that bound a run, not raise them: what
  // the workspace's layer changed in the end (your later layers may set a limit
  // higher, as your own config may) is what all layers but it would give, or lower.
  if (workspace_after) {
    Config without = *workspace_before;
    bool yours_apply = apply_yours(without).ok(); // else: the layer alone is compared
    auto origin = optional.back().first.string();
    if (auto s = yours_apply ? workspace_only_lowered(without, c, origin)
                             : workspace_only_lowered(*workspace_before, *workspace_after, origin);
        !s)
      return Error{s.error};
  }

  if (auto s = check_config(c); !s)
    return Error{s.error};
  if (auto s = check_tool_nodes(c); !s)
    return Error{s.error};
  if (c.workspace_layer)
    c.workspace_layer->sets = what_workspace_sets(*workspace_before, *workspace_after, c);
  return c;
}

} // namespace jp
