#include "tools/argument_validation.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "messages/json_codec.hpp"
#include "tools/schema.hpp"

namespace jp {

namespace {

bool has_type(const Json& v, std::string_view type) {
  if (type == "string") return v.is_string();
  // Models sometimes write 3.0 for 3; an integral number is an integer.
  if (type == "integer")
    return v.is_int() || (v.is_double() && std::trunc(v.as_number()) == v.as_number());
  if (type == "number") return v.is_number();
  if (type == "boolean") return v.is_bool();
  if (type == "array") return v.is_array();
  // An object, or a string holding one (parsed only then: no copy of a real object).
  if (type == "object") return v.is_object() || (v.is_string() && object_argument(v).has_value());
  return true; // unknown declared type: nothing to check against
}

std::string join_names(const std::vector<std::string>& names) {
  std::string out;
  for (auto& n : names)
    out += fmt::format("{}`{}`", out.empty() ? "" : ", ", n);
  return out;
}

std::string article(std::string_view type) {
  return (type == "integer" || type == "array" || type == "object") ? "an" : "a";
}

/// Whether an MCP server declared `p` as more than its one type: a union (anyOf,
/// oneOf, a list of types) or no type at all. Its value is then the server's to check:
/// `type` is only the first type jp-actors could read (what gemini is told).
bool declared_beyond_type(const ParameterConfig& p) {
  if (!p.declared_schema.is_object())
    return false;
  auto* type = p.declared_schema.find("type");
  return !type || !type->is_string() || p.declared_schema.find("anyOf") || p.declared_schema.find("oneOf");
}

/// Whether an integral number fits 64 bits: 1e21 is integral, but no program reads
/// it as an integer.
bool fits_int64(const Json& v) {
  return !v.is_double() || (v.as_number() >= -0x1p63 && v.as_number() < 0x1p63);
}

Status integer_range_error(const ToolConfig& tool, const std::string& name, const Json& v) {
  return Status::fail(fmt::format("{}: `{}` must be an integer from -9223372036854775808 to "
                                  "9223372036854775807, got {}",
                                  tool.name, name, v.described()));
}

/// An integral number given as one with a fraction (a model's 3.0 for 3) as the
/// integer it is, as a template then writes it (checked to fit before).
void as_integer(Json& v) {
  if (v.is_double() && has_type(v, "integer") && fits_int64(v))
    v = Json(static_cast<int64_t>(v.as_number()));
}

Status check_value(const ToolConfig& tool, const ParameterConfig& p, const Json& v) {
  if (declared_beyond_type(p))
    return Status::success();
  if (p.type == "object" && v.is_string() && !object_argument(v))
    return Status::fail(fmt::format("{}: `{}` must be an object, or a string holding one as JSON; "
                                    "got a string that is not a JSON object",
                                    tool.name, p.name));
  if (p.type == "integer" && has_type(v, p.type) && !fits_int64(v))
    return integer_range_error(tool, p.name, v);
  if (!has_type(v, p.type))
    return Status::fail(fmt::format("{}: `{}` must be {} {}, got {}", tool.name, p.name,
                                    article(p.type), p.type, v.described()));
  if (!p.enum_values.empty()) {
    bool allowed = false;
    for (auto& e : p.enum_values)
      allowed = allowed || (v.is_string() && v.as_string() == e);
    if (!allowed) {
      std::string list;
      for (auto& e : p.enum_values)
        list += fmt::format("{}{}", list.empty() ? "" : ", ", e);
      return Status::fail(fmt::format("{}: `{}` must be one of {}, got {}", tool.name,
                                      p.name, list, cut_text(v.dump())));
    }
  }
  if (p.type == "array" && !p.items_type.empty()) {
    auto& items = v.as_array();
    for (size_t i = 0; i < items.size(); ++i)
      if (!has_type(items[i], p.items_type))
        return Status::fail(fmt::format("{}: `{}[{}]` must be {} {}, got {}", tool.name,
                                        p.name, i, article(p.items_type), p.items_type,
                                        items[i].described()));
      else if (p.items_type == "integer" && !fits_int64(items[i]))
        return integer_range_error(tool, fmt::format("{}[{}]", p.name, i), items[i]);
  }
  return Status::success();
}

} // namespace

Json arguments_as_declared(const Json& args, const std::vector<ParameterConfig>& params) {
  Json out = args;
  for (auto& p : params) {
    auto* v = out.find(p.name);
    if (!v)
      continue;
    if (p.type == "object" && v->is_string()) {
      if (auto o = object_argument(*v))
        *v = std::move(*o);
    } else if (p.type == "integer") {
      as_integer(*v);
    } else if (p.type == "array" && p.items_type == "integer" && v->is_array()) {
      for (auto& item : v->as_array())
        as_integer(item);
    }
  }
  return out;
}

std::optional<Json> object_argument(const Json& value) {
  if (value.is_object())
    return value;
  if (!value.is_string())
    return std::nullopt;
  auto parsed = Json::parse(value.as_string());
  if (!parsed || !parsed->is_object())
    return std::nullopt;
  return std::move(*parsed);
}

Status refuse_spawn_only(const ToolConfig& tool, const Json& args) {
  for (auto& p : tool.parameters)
    if (auto* given = p.spawn_only ? args.find(p.name) : nullptr;
        given && !given->is_null() && !(given->is_bool() && !given->as_bool()))
      return Status::fail(fmt::format("`{}`: `{}` is for a handle: call it with {{\"action\": \"spawn\", "
                                         "\"id\": \"<a name>\", ...}}, then type with `apply` and read with `fetch`",
                                         tool.name, p.name));
  return Status::success();
}

Status refuse_unknown_keys(const ToolConfig& tool, const Json& args, call_form form) {
  for (auto& field : args.as_object()) {
    auto& key = field.first; // a name, not a binding: clang before 16 captures no bindings
    bool known = std::any_of(tool.parameters.begin(), tool.parameters.end(),
                             [&](const ParameterConfig& p) { return key == p.name; });
    // A server's schema that takes more keys (a map, patterns) checks them itself.
    if (known || !tool.extra_keys.is_null())
      continue;
    std::vector<std::string> declared;
    for (auto& p : tool.parameters)
      if (form == call_form::spawn || !p.spawn_only)
        declared.push_back(p.name);
    if (form == call_form::spawn) {
      declared.insert(declared.end(), {"action", "id", "wait_ms"});
      bool terminal = tool.io == io_mode::pty || std::any_of(tool.parameters.begin(), tool.parameters.end(),
                                                             [](const ParameterConfig& p) { return p.spawn_only; });
      if (terminal)
        declared.insert(declared.end(), {"screen", "rows", "cols"});
    }
    auto note = key == "input" ? std::string(" (`input` is for action `apply`, on a handle)") : std::string();
    // The protocol's own, given to a call without `action`: said what they are for.
    bool protocol = key == "id" || key == "wait_ms" || key == "screen" || key == "rows" || key == "cols";
    if (form == call_form::oneshot && tool.stateful && protocol)
      note = fmt::format(" (`{}` is for a handle: give \"action\": \"spawn\" with an \"id\", or fetch it later)", key);
    return Status::fail(fmt::format("{}: unknown parameter `{}` ({}){}", tool.name, cut_text(key),
                                    declared.empty() ? std::string("the tool takes no parameters")
                                                     : fmt::format("allowed: {}", join_names(declared)),
                                    note));
  }
  return Status::success();
}

Status validate_arguments(const ToolConfig& tool, const Json& args, call_form form) {
  if (!args.is_object())
    return Status::fail(fmt::format("{}: arguments must be an object, got {}", tool.name,
                                    args.described()));
  if (auto known = refuse_unknown_keys(tool, args, form); !known)
    return known;

  // A null counts as absent: models often spell "not given" as null.
  auto given = [&](std::string_view name) {
    auto* v = args.find(name);
    return v && !v->is_null();
  };
  for (auto& p : tool.parameters) {
    if (!given(p.name)) {
      if (p.required)
        return Status::fail(fmt::format("{}: parameter `{}` is required", tool.name, p.name));
      continue;
    }
    if (auto s = check_value(tool, p, *args.find(p.name)); !s)
      return s;
  }

  if (!tool.one_of_required.empty()) {
    bool any = false;
    for (auto& name : tool.one_of_required)
      any = any || given(name);
    if (!any)
      return Status::fail(fmt::format("{}: at least one of {} is required", tool.name,
                                      join_names(tool.one_of_required)));
  }
  return Status::success();
}

Status validate_action(const ToolConfig& tool, action_kind action) {
  if (!tool.stateful)
    return Status::fail(fmt::format("{}: not a stateful tool; call it without `action`",
                                    tool.name));
  auto actions = declared_actions(tool);
  for (auto a : actions)
    if (a == action)
      return Status::success();
  std::string list;
  for (auto a : actions)
    list += fmt::format("{}{}", list.empty() ? "" : ", ", to_string(a));
  return Status::fail(fmt::format("{}: action `{}` is not supported (actions: {})", tool.name,
                                  to_string(action), list));
}

} // namespace jp
