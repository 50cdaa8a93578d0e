#include "tools/argv_template.hpp"

#include <fmt/format.h>

namespace jp {

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t'))
    s.remove_suffix(1);
  return s;
}

// "tool.arguments.NAME[.field...]" / "tool.answers.ID[...]" -> the value, or nullptr
// when it is absent. Anything else is an error naming the template.
Result<const Json*> resolve(std::string_view expr, const TemplateContext& ctx,
                            std::string_view tmpl) {
  const Json* node = nullptr;
  std::string_view rest;
  for (auto [prefix, root] : {std::pair{std::string_view("tool.arguments."), &ctx.arguments},
                              std::pair{std::string_view("tool.answers."), &ctx.answers}}) {
    if (expr.starts_with(prefix)) {
      node = root;
      rest = expr.substr(prefix.size());
    }
  }
  if (!node || rest.empty())
    return Error{fmt::format("unknown template variable `{{{{{}}}}}` in `{}` (expected "
                             "{{{{tool.arguments.NAME}}}} or {{{{tool.answers.ID}}}})",
                             expr, tmpl)};
  while (node && !rest.empty()) {
    auto dot = rest.find('.');
    auto key = rest.substr(0, dot);
    if (key.empty())
      return Error{fmt::format("empty name in `{{{{{}}}}}` in `{}`", expr, tmpl)};
    node = node->find(key);
    rest = dot == std::string_view::npos ? std::string_view{} : rest.substr(dot + 1);
  }
  return node;
}

// The expression of an element that is exactly one "{{...}}", if it is one.
std::optional<std::string_view> sole_placeholder(std::string_view element) {
  if (element.size() < 4 || !element.starts_with("{{") || !element.ends_with("}}"))
    return std::nullopt;
  auto inner = element.substr(2, element.size() - 4);
  if (inner.find("{{") != std::string_view::npos || inner.find("}}") != std::string_view::npos)
    return std::nullopt;
  return trim(inner);
}

// A value as one shell word: single-quoted, so bash never parses what the assistant sent.
std::string shell_quote(std::string_view v) {
  std::string out = "'";
  for (char c : v) {
    if (c == '\'')
      out += "'\\''";
    else
      out += c;
  }
  return out + "'";
}

// Expands the {{...}} of tmpl; with `quote`, each value becomes one shell word.
Result<std::string> expand(std::string_view tmpl, const TemplateContext& ctx, bool quote) {
  std::string out;
  size_t pos = 0;
  for (;;) {
    auto open = tmpl.find("{{", pos);
    if (open == std::string_view::npos) {
      out += tmpl.substr(pos);
      return out;
    }
    out += tmpl.substr(pos, open - pos);
    auto close = tmpl.find("}}", open + 2);
    if (close == std::string_view::npos)
      return Error{fmt::format("unterminated `{{{{` in template `{}`", tmpl)};
    auto value = resolve(trim(tmpl.substr(open + 2, close - open - 2)), ctx, tmpl);
    if (!value)
      return Error{value.error()};
    if (const Json* v = *value; v && !v->is_null()) {
      auto text = v->is_string() ? v->as_string() : v->dump();
      out += quote ? shell_quote(text) : text;
    }
    pos = close + 2;
  }
}

} // namespace

Result<std::string> expand_template(std::string_view tmpl, const TemplateContext& ctx) {
  return expand(tmpl, ctx, false);
}

Result<std::vector<std::string>> expand_argv(const ToolConfig& tool, const TemplateContext& ctx) {
  auto program = expand(tool.program, ctx, tool.shell);
  if (!program)
    return Error{fmt::format("{}: command.program: {}", tool.name, program.error())};
  if (program->empty())
    return Error{fmt::format("{}: command.program `{}` expanded to an empty string",
                             tool.name, tool.program)};

  std::vector<std::string> args;
  for (auto& element : tool.args) {
    // An optional parameter that was not given vanishes instead of becoming "".
    if (auto expr = sole_placeholder(element)) {
      auto value = resolve(*expr, ctx, element);
      if (!value)
        return Error{fmt::format("{}: command.args: {}", tool.name, value.error())};
      if (!*value || (*value)->is_null())
        continue;
    }
    auto arg = expand(element, ctx, tool.shell);
    if (!arg)
      return Error{fmt::format("{}: command.args: {}", tool.name, arg.error())};
    args.push_back(std::move(*arg));
  }

  if (!tool.shell) {
    args.insert(args.begin(), std::move(*program));
    return args;
  }
  // shell = true is the tool author's explicit choice of a shell: the words are
  // joined for bash to parse, but every substituted value is one quoted word.
  std::string script = std::move(*program);
  for (auto& a : args)
    script += " " + a;
  return std::vector<std::string>{"bash", "-c", std::move(script)};
}

} // namespace jp
