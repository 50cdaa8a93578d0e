#include "tools/argv_template.hpp"

#include <cmath>
#include <fmt/format.h>
#include <iterator>

#include "config/placeholder.hpp"
#include "config/shell_template.hpp"

namespace jp {

namespace {

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
  auto found = find_placeholders(element);
  if (!found || found->size() != 1 || found->front().length != element.size())
    return std::nullopt;
  return found->front().expression;
}

// A number as a program reads one: a whole number without ".0" or an exponent
// (a model sends 8080.0 for 8080, and an integer parameter takes it), others in
// their shortest form.
std::string number_text(const Json& v) {
  if (v.is_int())
    return std::to_string(v.as_int());
  double d = v.as_number();
  if (std::isfinite(d) && d == std::trunc(d) && d >= -0x1p63 && d < 0x1p63) // int64's range, exactly
    return std::to_string(static_cast<int64_t>(d));
  return fmt::format("{}", d);
}

// A value as text: strings as-is, numbers as number_text, anything else as compact
// JSON. A NUL byte would silently cut an argv element, an environment value or a
// path, so it is refused.
Result<std::string> value_text(const Json& v, std::string_view expr) {
  auto text = v.is_string() ? v.as_string() : v.is_number() ? number_text(v) : v.dump();
  if (text.find('\0') != std::string::npos)
    return Error{fmt::format("`{{{{{}}}}}`: the value holds a NUL byte (\\u0000), which "
                             "cannot be passed to a process; send it without NUL bytes",
                             expr)};
  return text;
}

// Expands the {{...}} of tmpl. Only tmpl is scanned: a value is never read for
// placeholders, whatever it holds.
Result<std::string> expand(std::string_view tmpl, const TemplateContext& ctx) {
  auto found = find_placeholders(tmpl);
  if (!found)
    return Error{found.error()};
  std::string out;
  size_t pos = 0;
  for (auto& p : *found) {
    out += tmpl.substr(pos, p.offset - pos);
    auto value = resolve(p.expression, ctx, tmpl);
    if (!value)
      return Error{value.error()};
    if (const Json* v = *value; v && !v->is_null()) {
      auto text = value_text(*v, p.expression);
      if (!text)
        return Error{text.error()};
      out += *text;
    }
    pos = p.offset + p.length;
  }
  out += tmpl.substr(pos);
  return out;
}

// Whether args element `element` is one placeholder whose value is absent (or null):
// an optional parameter that was not given vanishes instead of becoming "".
Result<bool> absent_sole_placeholder(std::string_view element, const TemplateContext& ctx) {
  auto expr = sole_placeholder(element);
  if (!expr)
    return false;
  auto value = resolve(*expr, ctx, element);
  if (!value)
    return Error{value.error()};
  return !*value || (*value)->is_null();
}

bool is_blank_char(char c) {
  return c == ' ' || c == '\t' || c == '\n';
}

bool is_operator_char(char c) {
  return c == ';' || c == '&' || c == '|' || c == '(' || c == ')' || c == '<' || c == '>';
}

/// Whether the end of `script` is a redirection waiting for its target (`>`, `2>&`,
/// `<<<`, blanks after them): an absent target there would take the next word.
bool awaits_redirect_target(std::string_view script) {
  for (auto c = script.rbegin(); c != script.rend() && (is_blank_char(*c) || is_operator_char(*c)); ++c)
    if (*c == '<' || *c == '>')
      return true;
  return false;
}

/// Whether nothing in place of a value between `script` and `right` leaves them as
/// bash read them with a word between: a blank on one side and a blank or an
/// operator on the other (`make {{x}})`, `{{x}};`), and no redirection before it.
/// Two operators would join (`((`, `&&`, `>>`), as two word characters would.
bool ends_word_alone(std::string_view script, char right) {
  char left = script.empty() ? ' ' : script.back();
  if (awaits_redirect_target(script))
    return false;
  if (is_blank_char(left))
    return is_blank_char(right) || is_operator_char(right);
  return is_blank_char(right) && is_operator_char(left);
}

// shell = true is the tool author's explicit choice of a shell: program and args are
// joined for bash to parse, but no value is ever shell text. Each placeholder becomes a
// positional parameter and its value an argv element after `bash -c SCRIPT NAME`.
Result<std::vector<std::string>> expand_shell(const ToolConfig& tool, const TemplateContext& ctx) {
  auto segments = scan_shell_template(tool.program, tool.args);
  if (!segments)
    return Error{fmt::format("{}: {}", tool.name, segments.error())};
  std::vector<bool> dropped(tool.args.size() + 1, false);
  for (size_t i = 0; i < tool.args.size(); ++i) {
    auto absent = absent_sole_placeholder(tool.args[i], ctx);
    if (!absent)
      return Error{fmt::format("{}: command.args: {}", tool.name, absent.error())};
    dropped[i + 1] = *absent;
  }
  std::string script;
  std::vector<std::string> values;
  // What follows segment i: its first character, ' ' when nothing does, and 'x' (a
  // word's) for a placeholder, whose value is unknown here.
  auto char_after = [&](size_t i) {
    for (size_t j = i + 1; j < segments->size(); ++j) {
      auto& next = (*segments)[j];
      if (!dropped[next.element])
        return next.placeholder ? 'x' : next.text.front();
    }
    return ' ';
  };
  for (size_t i = 0; i < segments->size(); ++i) {
    auto& seg = (*segments)[i];
    // An args element of an absent value alone, as a redirection's target, is kept:
    // it becomes "" below, where gone the next word would be the file written.
    if (dropped[seg.element] && awaits_redirect_target(script))
      dropped[seg.element] = false;
    if (dropped[seg.element])
      continue;
    if (!seg.placeholder) {
      script += seg.text;
      continue;
    }
    const std::string& element = seg.element == 0 ? tool.program : tool.args[seg.element - 1];
    auto value = resolve(seg.text, ctx, element);
    if (!value)
      return Error{fmt::format("{}: {}: {}", tool.name, shell_element_key(seg.element), value.error())};
    if (!*value || (*value)->is_null()) {
      // Gone where it is a word of its own. Between other text it stays an empty word
      // (""), so that what the template checked stays what bash reads: with nothing,
      // `({{x}}(` or `[{{x}}[` would join into arithmetic, where a value is code.
      if (!seg.double_quoted && !ends_word_alone(script, char_after(i)))
        script += "\"\"";
      continue;
    }
    auto text = value_text(**value, seg.text);
    if (!text)
      return Error{fmt::format("{}: {}: {}", tool.name, shell_element_key(seg.element), text.error())};
    values.push_back(std::move(*text));
    // Inside "..." the parameter is already quoted; unquoted it is quoted here, so the
    // value stays one word and is never split or globbed.
    auto param = fmt::format("${{{}}}", values.size());
    script += seg.double_quoted ? param : fmt::format("\"{}\"", param);
  }
  std::vector<std::string> argv{"bash", "-c", std::move(script), tool.name};
  std::move(values.begin(), values.end(), std::back_inserter(argv));
  return argv;
}

} // namespace

Result<std::string> expand_template(std::string_view tmpl, const TemplateContext& ctx) {
  return expand(tmpl, ctx);
}

Result<std::vector<std::string>> expand_argv(const ToolConfig& tool, const TemplateContext& ctx) {
  if (tool.shell)
    return expand_shell(tool, ctx);
  auto program = expand(tool.program, ctx);
  if (!program)
    return Error{fmt::format("{}: command.program: {}", tool.name, program.error())};
  if (program->empty())
    return Error{fmt::format("{}: command.program `{}` expanded to an empty string",
                             tool.name, tool.program)};

  std::vector<std::string> argv{std::move(*program)};
  for (auto& element : tool.args) {
    auto absent = absent_sole_placeholder(element, ctx);
    if (!absent)
      return Error{fmt::format("{}: command.args: {}", tool.name, absent.error())};
    if (*absent)
      continue;
    auto arg = expand(element, ctx);
    if (!arg)
      return Error{fmt::format("{}: command.args: {}", tool.name, arg.error())};
    argv.push_back(std::move(*arg));
  }
  return argv;
}

} // namespace jp
