// Schema generation per dialect. Three shapes:
//  - flat:        {"type":"object","properties":{..},"required":[..]} (one-shot tools)
//  - oneOf:       RFD 009's one branch per declared action, and one without `action`
//                 (stateful tools, json-schema)
//  - flat action: action enum + id + input + the tool's params, descriptions saying
//                 which action uses which field (stateful tools, openai, anthropic
//                 and gemini); nothing required, since a call without `action` runs
//                 the tool to completion, but on a terminal (pty): there action and
//                 id are required
// Whatever a schema cannot express is checked at call time (argument_validation.hpp).
#include "tools/schema.hpp"

#include <fmt/format.h>

#include "messages/json.hpp"
#include "messages/json_codec.hpp"
#include "messages/launch_spec.hpp"
#include "messages/typed_keys.hpp"
#include "tools/builtin_tools.hpp"

namespace jp {

namespace {

// Where oneOf/anyOf may sit at the top level of a tool's schema: only in json-schema.
//  - openai: api.openai.com answers 400 "schema must have type 'object' and not have
//    'oneOf'/'anyOf'/'allOf'/'enum'/'const'/'not' at the top level".
//  - anthropic: 400 "input_schema does not support oneOf, allOf, or anyOf at the top
//    level" (e.g. anthropics/claude-code #27337, #40075).
//  - gemini: its Schema (an OpenAPI 3.0 subset) takes anyOf only as the sole key of
//    a schema object (RFD 009 "Risks"), and never oneOf, const or additionalProperties.
bool top_level_combinators(dialect d) {
  return d == dialect::json_schema;
}

/// Whether a spawn of `t` may ask for a terminal: the built-in shell's `tty` (not one
/// the config put on a terminal already, io = "pty").
bool takes_tty(const ToolConfig& t) {
  return t.source == "builtin" && t.name == "shell" && t.io != io_mode::pty;
}

const std::string id_spawn_description =
    fmt::format("Handle ID for this tool instance (1 to {} characters of A-Z a-z 0-9 _ . : -). Must be unique "
                "across active handles.",
                max_handle_id_length);
const char* const id_other_description = "Handle ID of a handle you spawned earlier.";
const char* const input_description =
    "Text to write to the tool's stdin (end lines with \"\\n\"), or the answer to the "
    "question of a waiting handle.";
const char* const pipe_input_description =
    "Text to write to the tool's stdin (end lines with \"\\n\"; end with \"\\u0004\", Ctrl-D, to "
    "close its stdin after the text: end of input; end with \"\\u0003\", Ctrl-C, to interrupt "
    "it with SIGINT once the text is queued), or the answer to the question of a waiting handle.";

std::string input_text(const ToolConfig& t) {
  if (!t.input_description.empty())
    return t.input_description;
  if (takes_tty(t))
    return std::string(pipe_input_description) +
           " With `tty`: typed as on a terminal (\\n is Enter, \\u0003 Ctrl-C, \\u0004 Ctrl-D), or "
           "{\"keys\": [\"Up\", \"Enter\", \"C-c\"]} for named keys.";
  if (t.io == io_mode::pipe)
    return pipe_input_description;
  if (t.io != io_mode::pty)
    return input_description;
  return fmt::format("What to type into the terminal: text, typed as written (\\n is Enter, "
                     "\\u0003 Ctrl-C, \\u001b Esc; a backslash is a backslash); or {{\"keys\": [..]}} "
                     "for named keys ({}), with an optional \"text\" typed first.",
                     key_help());
}

/// fetch and apply: how long to wait, and a terminal's screen and size.
void set_look_properties(Json& properties, const ToolConfig& t, std::string_view note) {
  auto with_note = [&](std::string text) {
    return note.empty() ? text : fmt::format("{}. {}", note, text);
  };
  properties.set("wait_ms",
                 Json::object().set("type", "integer").set(
                     "description",
                     with_note(fmt::format(
                         "Wait up to this many milliseconds (0 to {}, default {}) for the "
                         "output to settle: the answer comes as soon as the tool waits for "
                         "input (a fetch given wait_ms at a wait already shown: at its next "
                         "output), has been quiet after new output, or stopped.",
                         kMaxWaitMs, default_wait_ms(t)))));
  if (t.io != io_mode::pty && !takes_tty(t))
    return;
  auto tty_only = [&](std::string text) { return takes_tty(t) ? "With `tty`: " + text : text; };
  properties.set("screen", Json::object().set("type", "boolean").set(
                               "description",
                               with_note(tty_only("Also return the terminal's screen as text rows, "
                                                  "with the cursor position (returned unasked while a full-screen "
                                                  "program such as vi or top has the terminal)."))));
  struct Size {
    const char* name;
    const char* what;
    int min, max;
  };
  for (auto [name, what, min, max] : {Size{"rows", "rows", terminal_rows_min, terminal_rows_max},
                                      Size{"cols", "columns", terminal_cols_min, terminal_cols_max}})
    properties.set(name, Json::object().set("type", "integer").set(
                             "description",
                             with_note(tty_only(fmt::format("Resize the terminal to this many {} ({} to {}) first "
                                                            "(give rows and cols together; now {}x{}).",
                                                            what, min, max, t.rows, t.cols)))));
}

std::string_view action_summary(action_kind a) {
  switch (a) {
    case action_kind::spawn: return "start the tool in the background under a new id";
    case action_kind::fetch: return "current state and the output since the last look";
    case action_kind::apply: return "send `input` to a running or waiting handle";
    case action_kind::abort: return "stop the handle";
  }
  return "";
}

Json strings(const std::vector<std::string>& xs) {
  auto out = Json::array();
  for (auto& x : xs)
    out.push(Json(x));
  return out;
}

// Gemini refuses an OBJECT without properties ("properties[env].properties: should be
// non-empty for OBJECT type"), and a config's `object` parameter declares none: there
// it is declared as a string holding the object as JSON, which the runtime takes in
// place of the object (object_argument in argument_validation.hpp).
bool as_json_text(std::string_view type, dialect d) {
  return d == dialect::gemini && type == "object";
}

const char* const json_text_note = R"(A JSON object written as a string, e.g. {"NAME": "value"})";

// One parameter of `t` as a JSON-schema property; `note` goes before its description.
Json property_schema(const ToolConfig& t, const ParameterConfig& p, dialect d, std::string_view note = {}) {
  auto s = Json::object();
  s.set("type", as_json_text(p.type, d) ? "string" : p.type);
  auto own = parameter_description(t, p);
  std::string description = note.empty() ? own : own.empty() ? std::string(note) : fmt::format("{}. {}", note, own);
  if (as_json_text(p.type, d))
    description += fmt::format("{}{}.", description.empty() ? "" : ". ", json_text_note);
  // A server's own schema, as it declared it (its arrays given items: mcp_parameters),
  // but to gemini, whose subset refuses much of JSON Schema.
  if (p.declared_schema.is_object() && d != dialect::gemini) {
    auto declared = p.declared_schema;
    if (!description.empty())
      declared.set("description", description);
    return declared;
  }
  // Gemini's Schema has no reliable `default`; say it in words instead.
  if (d == dialect::gemini && !p.default_value.is_null())
    description += fmt::format("{}(default: {})", description.empty() ? "" : " ",
                               p.default_value.dump());
  if (!description.empty())
    s.set("description", description);
  if (!p.enum_values.empty())
    s.set("enum", strings(p.enum_values));
  if (p.type == "array") { // gemini and openai require items; "string" when the config says nothing
    auto items = p.items_type.empty() ? std::string("string") : p.items_type;
    auto item = Json::object().set("type", as_json_text(items, d) ? "string" : items);
    if (as_json_text(items, d))
      item.set("description", std::string(json_text_note) + ".");
    s.set("items", std::move(item));
  }
  if (d != dialect::gemini && !p.default_value.is_null())
    s.set("default", p.default_value);
  return s;
}

/// The tool's own parameters as a schema's `properties` and `required`.
/// A call's own parameters without `action` (a spawn-only one left out).
std::pair<Json, Json> parameter_properties(const ToolConfig& t, dialect d) {
  auto properties = Json::object();
  auto required = Json::array();
  for (auto& p : t.parameters) {
    if (p.spawn_only || !offered(t, p))
      continue;
    properties.set(p.name, property_schema(t, p, d));
    if (p.required)
      required.push(Json(p.name));
  }
  return {std::move(properties), std::move(required)};
}

Json one_shot_schema(const ToolConfig& t, dialect d) {
  auto [properties, required] = parameter_properties(t, d);
  auto s = Json::object();
  s.set("type", "object").set("properties", std::move(properties)).set("required", std::move(required));
  // What an MCP server's schema takes besides (Gemini's Schema has no such keys).
  if (t.extra_keys.is_object() && d != dialect::gemini)
    for (auto& [key, value] : t.extra_keys.as_object())
      s.set(key, value);
  // RFD 037's "at least one of any/all"; elsewhere validated at call time only.
  if (!t.one_of_required.empty() && top_level_combinators(d)) {
    auto any_of = Json::array();
    for (auto& name : t.one_of_required)
      any_of.push(Json::object().set("required", Json(JsonArray{Json(name)})));
    s.set("anyOf", std::move(any_of));
  }
  return s;
}

// RFD 009: {"type":"object","oneOf":[one branch per declared action]}, and one for a
// call without `action`.
Json one_of_schema(const ToolConfig& t, dialect d) {
  auto branches = Json::array();
  for (auto a : declared_actions(t)) {
    auto properties = Json::object();
    auto required = Json(JsonArray{Json("action"), Json("id")});
    properties.set("action", Json::object().set("const", Json(to_string(a))));
    properties.set("id", Json::object().set("type", "string").set(
                             "description", a == action_kind::spawn ? id_spawn_description
                                                                    : id_other_description));
    if (a == action_kind::spawn) {
      for (auto& p : t.parameters) {
        if (!offered(t, p))
          continue;
        properties.set(p.name, property_schema(t, p, d));
        if (p.required)
          required.push(Json(p.name));
      }
    } else if (a == action_kind::apply) {
      properties.set("input", Json::object().set("description", input_text(t)));
      required.push(Json("input"));
    }
    if (a != action_kind::abort) // spawn, fetch and apply may wait and look
      set_look_properties(properties, t, {});
    branches.push(Json::object().set("properties", std::move(properties)).set("required", std::move(required)));
  }
  if (runs_without_action(t)) {
    // Without `action`: the tool's own parameters, run to completion.
    auto [properties, required] = parameter_properties(t, d);
    branches.push(Json::object()
                    .set("properties", std::move(properties))
                    .set("required", std::move(required))
                    .set("not", Json::object().set("required", Json(JsonArray{Json("action")}))));
  }
  return Json::object().set("type", "object").set("oneOf", std::move(branches));
}

// The flat form of a stateful tool: every field optional but action and id; the
// descriptions carry what the oneOf branches would have said.
Json flat_action_schema(const ToolConfig& t, dialect d) {
  auto actions = declared_actions(t);
  auto names = Json::array();
  std::string how;
  bool has_apply = false;
  std::vector<std::string> looking; // the declared actions that wait and look
  for (auto a : actions) {
    names.push(Json(to_string(a)));
    how += fmt::format("{}{}: {}", how.empty() ? "" : "; ", to_string(a), action_summary(a));
    has_apply = has_apply || a == action_kind::apply;
    if (a != action_kind::abort)
      looking.emplace_back(to_string(a));
  }

  auto properties = Json::object();
  bool oneshot = runs_without_action(t);
  properties.set("action", Json::object()
                               .set("type", "string")
                               .set("enum", std::move(names))
                               .set("description", how + (oneshot ? ". Omit `action` (and `id`) to run the tool to "
                                                                     "completion and get its result in one answer."
                                                                   : ".")));
  properties.set("id", Json::object().set("type", "string").set(
                           "description",
                           "Handle ID. spawn: a new name you choose, unique across active "
                           "handles; other actions: the handle to act on."));
  if (has_apply) {
    auto input = Json::object();
    // Gemini wants a type on every property, and so did Gemini CLI as an MCP client
    // (it skipped a tool with an untyped one); the runtime takes a string answer too.
    bool text_only = d == dialect::gemini || d == dialect::mcp;
    if (text_only)
      input.set("type", "string");
    input.set("description",
              fmt::format("apply only (required there). {}{}", input_text(t),
                          text_only && (t.io == io_mode::pty || takes_tty(t))
                            ? " The {\"keys\": [..]} form goes as that object's JSON text here."
                            : ""));
    properties.set("input", std::move(input));
  }
  if (!looking.empty()) {
    auto last = looking.back();
    looking.pop_back();
    auto which = looking.empty() ? last : fmt::format("{} and {}", fmt::join(looking, ", "), last);
    set_look_properties(properties, t, which + " only");
  }
  for (auto& p : t.parameters) {
    if (!offered(t, p))
      continue;
    auto used_by = oneshot && !p.spawn_only ? "spawn, or without `action`" : "spawn only";
    properties.set(p.name, property_schema(t, p, d, p.required ? fmt::format("{} (required there)", used_by)
                                                            : std::string(used_by)));
  }
  return Json::object()
      .set("type", "object")
      .set("properties", std::move(properties))
      .set("required", oneshot ? Json::array() : Json(JsonArray{Json("action"), Json("id")}));
}

// The description's bytes kept before cut_text's marker, which ends it by 1,024.
constexpr size_t kOpenAiDescriptionCut = 1000;

/// What a call of `t` without `action` does once it runs long, as the config has it
/// ("" when it never goes on as a handle).
std::string background_note(const ToolConfig& t) {
  auto secs = background_after_secs(t);
  if (secs <= 0 || !runs_without_action(t))
    return {};
  return fmt::format("A call without `action` still running after {:g} s goes on as a handle, whose id the "
                     "answer gives.",
                     secs);
}

} // namespace

std::string full_description(const ToolConfig& t) {
  auto note = background_note(t);
  auto with_note = [&](std::string text) { return note.empty() ? text : fmt::format("{} {}", text, note); };
  auto description = described_as_configured(t);
  if (t.summary.empty())
    return with_note(description);
  // A description that already starts with the summary says it once.
  if (description.empty() || description.starts_with(t.summary))
    return with_note(description.empty() ? t.summary : description);
  return with_note(fmt::format("{}\n\n{}", t.summary, description));
}

bool runs_without_action(const ToolConfig& t) {
  return t.io != io_mode::pty;
}

Result<dialect> parse_dialect(std::string_view name) {
  for (auto d : {dialect::openai, dialect::anthropic, dialect::gemini, dialect::json_schema, dialect::mcp})
    if (name == to_string(d))
      return d;
  return Error{fmt::format("unknown schema dialect \"{}\" (expected one of openai, "
                           "anthropic, gemini, json-schema, mcp)",
                           name)};
}

std::string_view to_string(dialect d) {
  switch (d) {
    case dialect::openai: return "openai";
    case dialect::anthropic: return "anthropic";
    case dialect::gemini: return "gemini";
    case dialect::json_schema: return "json-schema";
    case dialect::mcp: return "mcp";
  }
  return "?";
}

std::vector<action_kind> declared_actions(const ToolConfig& t) {
  if (!t.actions.empty())
    return t.actions;
  return {action_kind::spawn, action_kind::fetch, action_kind::apply, action_kind::abort};
}

Json parameters_schema(const ToolConfig& t, dialect d) {
  if (!t.stateful)
    return one_shot_schema(t, d);
  if (top_level_combinators(d))
    return one_of_schema(t, d);
  return flat_action_schema(t, d);
}

Json tool_declaration(const ToolConfig& t, dialect d) {
  auto params = parameters_schema(t, d);
  // A dialect without anyOf at the top says in words what it would have said.
  auto description = full_description(t);
  std::string needs; // after any cut of the description, never cut itself
  if (!t.one_of_required.empty() && !top_level_combinators(d)) {
    std::string names;
    for (auto& name : t.one_of_required)
      names += fmt::format("{}`{}`", names.empty() ? "" : ", ", name);
    needs = fmt::format("{}At least one of {} is required.", description.empty() ? "" : " ", names);
  }
  switch (d) {
    case dialect::openai:
      // api.openai.com refuses a description past 1,024 characters (an MCP server's
      // may be longer): it is cut, saying so, rather than failing every request.
      return Json::object().set("type", "function").set(
          "function", Json::object()
                          .set("name", t.name)
                          .set("description", cut_text(description, kOpenAiDescriptionCut - needs.size()) + needs)
                          .set("parameters", std::move(params)));
    case dialect::anthropic:
      return Json::object()
          .set("name", t.name)
          .set("description", description + needs)
          .set("input_schema", std::move(params));
    case dialect::gemini: {
      auto decl = Json::object().set("name", t.name).set("description", description + needs);
      // Gemini rejects an OBJECT schema with no properties; a tool without
      // parameters simply has no "parameters".
      auto* props = params.find("properties");
      if (props && !props->as_object().empty())
        decl.set("parameters", std::move(params));
      return decl;
    }
    case dialect::json_schema:
      return Json::object()
          .set("name", t.name)
          .set("description", description + needs)
          .set("parameters", std::move(params));
    case dialect::mcp:
      return Json::object()
          .set("name", t.name)
          .set("description", description + needs)
          .set("inputSchema", std::move(params));
  }
  return Json{};
}

bool offered(const ToolConfig& t, const ParameterConfig& p) {
  // The shell's `tty` asks for the terminal a shell with io = "pty" has anyway.
  return !(t.source == "builtin" && t.name == "shell" && p.name == "tty" && !takes_tty(t));
}

std::string parameter_description(const ToolConfig& t, const ParameterConfig& p) {
  if (t.source == "builtin" && t.name == "shell" && p.name == "cwd" && t.cwd_outside_workspace)
    return "Working directory, relative to the workspace, or absolute (it may be outside the workspace)";
  return p.description;
}

bool tool_offered(const ToolConfig& t) {
  // A tool whose run is "skip" is refused at every call: offered, it only costs the
  // model attention and a failed call. Its spawn may be let through all the same.
  return permission_mode(t, std::nullopt) != run_mode::skip ||
         (t.stateful && permission_mode(t, action_kind::spawn) != run_mode::skip);
}

std::vector<const ToolConfig*> offered_tools(const Config& c) {
  auto offered = [](const ToolConfig& t) { return tool_offered(t); };
  bool any_stateful = false;
  for (auto& [name, t] : c.tools)
    any_stateful = any_stateful || (t.stateful && offered(t));
  std::vector<const ToolConfig*> out;
  for (auto& [name, t] : c.tools) { // std::map: sorted by name
    if (!offered(t))
      continue;
    // RFD 037 "Schema availability": nothing to await without stateful tools.
    if (name == "await" && t.source == "builtin" && !any_stateful)
      continue;
    out.push_back(&t);
  }
  return out;
}

Json tool_declarations(const Config& c, dialect d) {
  auto out = Json::array();
  for (auto* t : offered_tools(c))
    out.push(tool_declaration(*t, d));
  return out;
}

} // namespace jp
