#include "messages/json_codec.hpp"
#include "messages/duration.hpp"
#include "messages/launch_spec.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace jp {

namespace {

// -- field access with messages a user (or an LLM) can act on ---------------------------

// A member, treating null as absent: serde writes Option::None as null.
const Json* field(const Json& obj, std::string_view key) {
  auto* v = obj.find(key);
  return v && !v->is_null() ? v : nullptr;
}

std::string join_path(std::string_view path, std::string_view key) {
  return path.empty() ? std::string(key) : fmt::format("{}.{}", path, key);
}

Error wrong_type(std::string_view name, std::string_view expected, const Json& got) {
  return Error{fmt::format("`{}` must be {}, got {}", name, expected, got.described())};
}

Error missing(std::string_view name, std::string_view expected) {
  return Error{fmt::format("missing `{}` (expected {})", name, expected)};
}

Result<std::string> required_string(const Json& obj, std::string_view path,
                                    std::string_view key) {
  auto name = join_path(path, key);
  auto* v = field(obj, key);
  if (!v)
    return missing(name, "a string");
  if (!v->is_string())
    return wrong_type(name, "a string", *v);
  return v->as_string();
}

/// "" when absent.
Result<std::string> optional_string(const Json& obj, std::string_view path,
                                    std::string_view key) {
  auto* v = field(obj, key);
  if (!v)
    return std::string();
  if (!v->is_string())
    return wrong_type(join_path(path, key), "a string", *v);
  return v->as_string();
}

Result<std::vector<std::string>> string_array(const Json& v, std::string_view name) {
  if (!v.is_array())
    return wrong_type(name, "an array of strings", v);
  std::vector<std::string> out;
  out.reserve(v.as_array().size());
  for (auto& item : v.as_array()) {
    if (!item.is_string())
      return wrong_type(fmt::format("{}[{}]", name, out.size()), "a string", item);
    out.push_back(item.as_string());
  }
  return out;
}

Json string_array_json(const std::vector<std::string>& xs) {
  auto a = Json::array();
  for (auto& x : xs)
    a.push(x);
  return a;
}

/// Integral seconds are written as integers: the await schema says "integer".
Json number_json(double d) {
  if (std::fabs(d) < 1e15 && d == std::floor(d))
    return Json(static_cast<int64_t>(d));
  return Json(d);
}

// -- AnswerType ---------------------------------------------------------------------------

Json answer_type_json(const AnswerType& t) {
  auto j = Json::object();
  switch (t.kind) {
    case answer_kind::boolean:
      j.set("type", "boolean");
      break;
    case answer_kind::select:
      j.set("type", "select");
      j.set("options", string_array_json(t.options));
      break;
    case answer_kind::text:
      j.set("type", "text");
      break;
  }
  return j;
}

Result<AnswerType> select_options(const Json& obj, std::string_view path) {
  auto name = join_path(path, "options");
  auto* opts = field(obj, "options");
  if (!opts)
    return missing(name, "an array of strings");
  auto options = string_array(*opts, name);
  if (!options)
    return Error{options.error()};
  return AnswerType{answer_kind::select, std::move(*options)};
}

// Accepts {"type":"boolean"|"text"|"select",..} and JP's serde spellings
// "Boolean" / "Text" / {"Select":{"options":[..]}}.
Result<AnswerType> answer_type_from_json(const Json& j, std::string_view path) {
  constexpr std::string_view expected =
    R"({"type":"boolean"}, {"type":"text"} or {"type":"select","options":[..]})";
  if (j.is_string()) {
    auto& s = j.as_string();
    if (s == "Boolean" || s == "boolean")
      return AnswerType{answer_kind::boolean, {}};
    if (s == "Text" || s == "text")
      return AnswerType{answer_kind::text, {}};
    return Error{fmt::format("`{}` must be {}, got \"{}\"", path, expected, s)};
  }
  if (!j.is_object())
    return wrong_type(path, expected, j);
  if (auto* legacy = field(j, "Select")) {
    if (!legacy->is_object())
      return wrong_type(join_path(path, "Select"), "an object with `options`", *legacy);
    return select_options(*legacy, join_path(path, "Select"));
  }
  auto type = required_string(j, path, "type");
  if (!type)
    return Error{type.error()};
  if (*type == "boolean")
    return AnswerType{answer_kind::boolean, {}};
  if (*type == "text")
    return AnswerType{answer_kind::text, {}};
  if (*type == "select")
    return select_options(j, path);
  return Error{fmt::format("`{}.type` must be \"boolean\", \"text\" or \"select\", got \"{}\"",
                           path, *type)};
}

// -- Question / ToolError with a path prefix for nested messages ---------------------------

Result<Question> read_question(const Json& j, std::string_view path) {
  if (!j.is_object())
    return wrong_type(path, "an object", j);
  Question q;
  auto id = required_string(j, path, "id");
  if (!id)
    return Error{id.error()};
  q.id = std::move(*id);
  auto text = required_string(j, path, "text");
  if (!text)
    return Error{text.error()};
  q.text = std::move(*text);
  auto pre = optional_string(j, path, "pre_amble");
  if (!pre)
    return Error{pre.error()};
  q.pre_amble = std::move(*pre);
  // A question without a type asks for free text.
  if (auto* t = field(j, "answer_type")) {
    auto at = answer_type_from_json(*t, join_path(path, "answer_type"));
    if (!at)
      return Error{at.error()};
    q.answer_type = std::move(*at);
  }
  if (auto* d = field(j, "default"))
    q.default_json = d->dump();
  return q;
}

Result<ToolError> read_tool_error(const Json& j, std::string_view path) {
  if (!j.is_object())
    return wrong_type(path, "an object with `message`", j);
  ToolError e;
  auto msg = required_string(j, path, "message");
  if (!msg)
    return Error{msg.error()};
  e.message = std::move(*msg);
  if (auto* t = field(j, "trace")) {
    auto trace = string_array(*t, join_path(path, "trace"));
    if (!trace)
      return Error{trace.error()};
    e.trace = std::move(*trace);
  }
  if (auto* t = field(j, "transient")) {
    if (!t->is_bool())
      return wrong_type(join_path(path, "transient"), "a boolean", *t);
    e.transient = t->as_bool();
  }
  return e;
}

// -- ToolState fields shared by stdout JSON, response content and await ---------------------

/// `,"state":"<kind>"`, appended at once (every status and report writes one).
std::string_view state_member(state_kind k) {
  static const std::array<std::string, 3> members = [] {
    std::array<std::string, 3> m;
    for (auto kind : {state_kind::running, state_kind::waiting, state_kind::stopped})
      m[static_cast<size_t>(kind)] = fmt::format(",\"state\":\"{}\"", to_string(kind));
    return m;
  }();
  return members[static_cast<size_t>(k)];
}

/// `,"key":"text"` at the end of an object's text.
void append_string_member(std::string& out, std::string_view key, std::string_view text) {
  out += ",\"";
  out += key;
  out += "\":";
  append_json_string(out, text);
}

/// A state's own fields after its discriminator ("type" or "state"), as JSON members
/// (",\"content\":..."): the one writer of them, for a handle's report and for a
/// ToolState's JSON.
void append_state_fields(std::string& out, const ToolState& s) {
  switch (s.kind) {
    case state_kind::running:
      if (!s.content.empty())
        append_string_member(out, "content", s.content);
      break;
    case state_kind::waiting:
      if (!s.content.empty())
        append_string_member(out, "content", s.content);
      out += ",\"question\":";
      to_json(s.question).dump_to(out);
      break;
    case state_kind::stopped:
      if (s.ok) {
        append_string_member(out, "result", s.content); // kept even when empty: it marks success
      } else {
        out += ",\"error\":";
        to_json(s.error).dump_to(out);
        if (!s.content.empty())
          append_string_member(out, "content", s.content);
      }
      break;
  }
}

Result<ToolState> read_stopped(const Json& j) {
  auto content = optional_string(j, "", "content");
  if (!content)
    return Error{content.error()};
  if (auto* e = field(j, "error")) {
    auto err = read_tool_error(*e, "error");
    if (!err)
      return Error{err.error()};
    return ToolState::failure(std::move(*err), std::move(*content));
  }
  if (auto* r = field(j, "result")) {
    if (r->is_string())
      return ToolState::success(r->as_string());
    // serde's Result<String, ToolError>: {"Ok":".."} / {"Err":{..}}
    if (auto* ok = field(*r, "Ok"); ok && ok->is_string())
      return ToolState::success(ok->as_string());
    if (auto* e = field(*r, "Err")) {
      auto err = read_tool_error(*e, "result.Err");
      if (!err)
        return Error{err.error()};
      return ToolState::failure(std::move(*err), std::move(*content));
    }
    return wrong_type("result", "a string", *r);
  }
  // RFD 009's From<Outcome> spelling: {"content":..,"error":null}.
  return ToolState::success(std::move(*content));
}

/// Reads the fields after the discriminator, for a state of kind k.
Result<ToolState> read_state_fields(const Json& j, state_kind k) {
  if (k == state_kind::stopped)
    return read_stopped(j);
  auto content = optional_string(j, "", "content");
  if (!content)
    return Error{content.error()};
  if (k == state_kind::running)
    return ToolState::running(std::move(*content));
  auto* q = field(j, "question");
  if (!q)
    return missing("question", "an object: a waiting tool asks a question");
  auto question = read_question(*q, "question");
  if (!question)
    return Error{question.error()};
  return ToolState::waiting(std::move(*question), std::move(*content));
}

/// Reads {"<key>":"running|waiting|stopped", ..}.
Result<ToolState> read_state(const Json& j, std::string_view key) {
  if (!j.is_object())
    return wrong_type("state", "an object", j);
  auto name = required_string(j, "", key);
  if (!name)
    return Error{name.error()};
  auto k = state_kind_from(*name);
  if (!k)
    return Error{fmt::format("`{}` must be \"running\", \"waiting\" or \"stopped\", got \"{}\"",
                             key, *name)};
  return read_state_fields(j, *k);
}

Result<std::vector<HandleStatus>> read_statuses(const Json& obj, std::string_view key) {
  std::vector<HandleStatus> out;
  auto* arr = field(obj, key);
  if (!arr)
    return out;
  if (!arr->is_array())
    return wrong_type(key, "an array", *arr);
  for (auto& entry : arr->as_array()) {
    auto where = fmt::format("{}[{}]", key, out.size());
    if (!entry.is_object())
      return wrong_type(where, "an object", entry);
    auto id = required_string(entry, where, "id");
    if (!id)
      return Error{id.error()};
    auto kind_name = required_string(entry, where, "state");
    if (!kind_name)
      return Error{kind_name.error()};
    auto k = state_kind_from(*kind_name);
    if (!k)
      return Error{fmt::format("`{}.state` must be \"running\", \"waiting\" or \"stopped\", "
                               "got \"{}\"", where, *kind_name)};
    // Pending entries carry only the question a waiting one asks.
    ToolState state;
    state.kind = *k;
    if (auto* q = field(entry, "question"); q && *k == state_kind::waiting) {
      auto question = read_question(*q, where + ".question");
      if (!question)
        return Error{question.error()};
      state.question = std::move(*question);
    }
    if (*k == state_kind::stopped) {
      auto st = read_stopped(entry);
      if (!st)
        return Error{fmt::format("{}: {}", where, st.error())};
      state = std::move(*st);
    }
    auto file = optional_string(entry, where, "output_file");
    if (!file)
      return Error{file.error()};
    auto node = optional_string(entry, where, "node");
    if (!node)
      return Error{node.error()};
    out.push_back({std::move(*id), std::move(state), std::move(*file), std::move(*node)});
  }
  return out;
}

// -- handle ids and actions -----------------------------------------------------------------


} // namespace

bool valid_handle_id(std::string_view id) {
  if (id.empty() || id.size() > max_handle_id_length)
    return false;
  for (char c : id) {
    bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')
              || c == '_' || c == '.' || c == ':' || c == '-';
    if (!ok)
      return false;
  }
  return true;
}

namespace {

Result<std::vector<std::string>> await_ids(const Json& j, std::string_view key) {
  auto* v = field(j, key);
  if (!v)
    return std::vector<std::string>{};
  if (!v->is_array())
    return wrong_type(key, "an array of handle ID strings", *v);
  auto ids = string_array(*v, key);
  // No handle has another id (the runtime's own, "#1" of a blocking call, are not
  // the assistant's to wait on).
  if (ids)
    for (auto& id : *ids)
      if (!valid_handle_id(id))
        return Error{fmt::format("`{}` holds {}, which is no handle's id: ids are 1 to {} characters of A-Z a-z "
                                 "0-9 _ . : -",
                                 key, json_quote_cut(id), max_handle_id_length)};
  return ids;
}

} // namespace

// -- Question / ToolError -------------------------------------------------------------------

Json to_json(const Question& q) {
  auto j = Json::object();
  j.set("id", q.id);
  j.set("text", q.text);
  if (!q.pre_amble.empty())
    j.set("pre_amble", q.pre_amble);
  j.set("answer_type", answer_type_json(q.answer_type));
  if (!q.default_json.empty()) {
    // default_json is JSON text; should it not parse, keep it as a string.
    auto d = Json::parse(q.default_json);
    j.set("default", d ? std::move(*d) : Json(q.default_json));
  }
  return j;
}

Result<Question> question_from_json(const Json& j) {
  return read_question(j, "question");
}

Json to_json(const ToolError& e) {
  auto j = Json::object();
  j.set("message", e.message);
  j.set("trace", string_array_json(e.trace));
  j.set("transient", e.transient);
  return j;
}

Result<ToolError> tool_error_from_json(const Json& j) {
  return read_tool_error(j, "error");
}

// -- ToolState / Outcome --------------------------------------------------------------------

Json to_json(const ToolState& s) {
  // One writer (append_state_fields); the tree is read back from what it wrote.
  std::string text = "{\"type\":\"";
  text += to_string(s.kind);
  text += '"';
  append_state_fields(text, s);
  text += '}';
  auto j = Json::parse(text);
  return j ? std::move(*j) : Json();
}

Result<ToolState> tool_state_from_json(const Json& j) {
  return read_state(j, "type");
}

Json to_json(const Outcome& o) {
  auto j = Json::object();
  switch (o.kind) {
    case outcome_kind::success:
      j.set("type", "success");
      j.set("content", o.content);
      break;
    case outcome_kind::error:
      j.set("type", "error");
      j.set("message", o.error.message);
      j.set("trace", string_array_json(o.error.trace));
      j.set("transient", o.error.transient);
      break;
    case outcome_kind::needs_input:
      j.set("type", "needs_input");
      j.set("question", to_json(o.question));
      break;
  }
  return j;
}

Result<Outcome> outcome_from_json(const Json& j) {
  if (!j.is_object())
    return wrong_type("outcome", "an object", j);
  auto type = required_string(j, "", "type");
  if (!type)
    return Error{type.error()};
  Outcome o;
  if (*type == "success") {
    o.kind = outcome_kind::success;
    auto content = optional_string(j, "", "content");
    if (!content)
      return Error{content.error()};
    o.content = std::move(*content);
    return o;
  }
  if (*type == "error") {
    // The error fields sit beside "type", not in a nested object.
    auto err = read_tool_error(j, "");
    if (!err)
      return Error{err.error()};
    o.kind = outcome_kind::error;
    o.error = std::move(*err);
    return o;
  }
  if (*type == "needs_input") {
    auto* q = field(j, "question");
    if (!q)
      return missing("question", "an object");
    auto question = read_question(*q, "question");
    if (!question)
      return Error{question.error()};
    o.kind = outcome_kind::needs_input;
    o.question = std::move(*question);
    return o;
  }
  return Error{fmt::format(
    "`type` must be \"success\", \"error\" or \"needs_input\", got \"{}\"", *type)};
}

Result<ToolState> parse_tool_output(std::string_view stdout_text) {
  constexpr std::string_view space = " \t\r\n";
  auto begin = stdout_text.find_first_not_of(space);
  if (begin == std::string_view::npos)
    return Error{"empty output"};
  auto text = stdout_text.substr(begin, stdout_text.find_last_not_of(space) - begin + 1);
  // Cheap check first: most plain text output is not JSON at all.
  if (text.front() != '{')
    return Error{"not a JSON object"};
  auto j = Json::parse(text);
  if (!j)
    return Error{j.error()};
  auto* type = field(*j, "type");
  if (!type || !type->is_string())
    return Error{"JSON without a string `type`: neither Outcome nor ToolState"};
  auto& t = type->as_string();
  if (t == "success" || t == "error" || t == "needs_input") {
    auto o = outcome_from_json(*j);
    if (!o)
      return Error{o.error()};
    return to_tool_state(std::move(*o));
  }
  if (state_kind_from(t))
    return tool_state_from_json(*j);
  return Error{fmt::format("JSON of unknown `type` \"{}\": neither Outcome nor ToolState", t)};
}

// -- Stateful calls -------------------------------------------------------------------------

namespace {

/// An integer argument in [lo, hi]; `fallback` when absent. Numbers with a
/// fraction are taken when whole (some models write 1000.0).
Result<int64_t> int_argument(const Json& args, std::string_view key, int64_t lo, int64_t hi,
                             int64_t fallback, std::string_view unit) {
  auto* v = field(args, key);
  if (!v)
    return fallback;
  if (!v->is_number() || v->as_number() != std::floor(v->as_number()))
    return wrong_type(key, fmt::format("an integer ({})", unit), *v);
  // Compared as doubles first: casting an out-of-range double to int64_t is undefined.
  double d = v->as_number();
  if (d < static_cast<double>(lo) || d > static_cast<double>(hi))
    return Error{fmt::format("`{}` must be from {} to {} ({}), got {}", key, lo, hi, unit, v->dump())}; // as written (up to int64; beyond, a double)
  return static_cast<int64_t>(d);
}

Result<LookOptions> look_options(const Json& args) {
  LookOptions o;
  if (auto* w = field(args, "wait_ms"); w && w->is_number())
    if (auto ok = check_duration("wait_ms", w->as_number(), "milliseconds"); !ok)
      return Error{ok.error};
  auto wait = int_argument(args, "wait_ms", 0, kMaxWaitMs, -1, "milliseconds");
  if (!wait)
    return Error{wait.error()};
  o.wait_ms = *wait;
  if (auto* screen = field(args, "screen")) {
    if (!screen->is_bool())
      return wrong_type("screen", "true or false", *screen);
    o.screen = screen->as_bool();
  }
  auto rows = int_argument(args, "rows", terminal_rows_min, terminal_rows_max, 0, "terminal rows");
  if (!rows)
    return Error{rows.error()};
  auto cols = int_argument(args, "cols", terminal_cols_min, terminal_cols_max, 0, "terminal columns");
  if (!cols)
    return Error{cols.error()};
  if ((*rows == 0) != (*cols == 0))
    return Error{"give `rows` and `cols` together to resize the terminal"};
  o.rows = static_cast<int>(*rows);
  o.cols = static_cast<int>(*cols);
  return o;
}

} // namespace

Result<ToolCommand> command_from_arguments(std::string_view tool, const Json& args) {
  if (!args.is_object())
    return wrong_type("arguments", "an object", args);
  auto action = required_string(args, "", "action");
  if (!action)
    return Error{action.error()};
  auto kind = action_from(*action);
  if (!kind)
    return Error{fmt::format("unknown action `{}` for tool `{}`; expected one of "
                             "spawn, fetch, apply, abort",
                             cut_text(*action), tool)};
  auto* id = field(args, "id");
  if (!id)
    return Error{fmt::format("missing `id` (expected the handle ID string, e.g. \"check\", "
                             "that action `{}` applies to)",
                             *action)};
  if (!id->is_string())
    return wrong_type("id", "a handle ID string", *id);
  if (!valid_handle_id(id->as_string()))
    return Error{fmt::format("`id` must be 1 to {} characters of A-Z a-z 0-9 _ . : -, got {}",
                             max_handle_id_length, json_quote_cut(id->as_string()))};
  // A look, input or abort takes its own keys: one meant for another action (input
  // on a fetch) would be dropped without a word, and the model think it typed.
  // Null is absent: a flat schema's caller sends every field.
  if (*kind != action_kind::spawn) {
    auto look_key = [](std::string_view k) { return k == "wait_ms" || k == "screen" || k == "rows" || k == "cols"; };
    std::vector<std::string_view> takes = {"action", "id"};
    if (*kind != action_kind::abort)
      takes.insert(takes.end(), {"wait_ms", "screen", "rows", "cols"});
    if (*kind == action_kind::apply)
      takes.push_back("input");
    for (auto& [key, value] : args.as_object())
      if (!value.is_null() && std::find(takes.begin(), takes.end(), key) == takes.end())
        return Error{fmt::format("action `{}` takes {}; `{}` is not one of them{}", *action, fmt::join(takes, ", "),
                                 cut_text(key, 40),
                                 key == "input" ? std::string(" (`input` is for action `apply`)")
                                 : look_key(key)
                                   ? fmt::format(" (`{}` is a look's: spawn, fetch and apply take it; an abort "
                                                 "answers once the tool stopped)",
                                                 key)
                                   : std::string(" (a tool's own parameters go with action `spawn` only)"))};
  }
  ToolCommand c;
  c.action = *kind;
  c.id = id->as_string();
  c.tool = std::string(tool);
  switch (*kind) {
    case action_kind::spawn: {
      // The first look waits like a fetch's; the rest are the tool's own parameters.
      auto look = look_options(args);
      if (!look)
        return Error{look.error()};
      c.look = *look;
      auto rest = args;
      for (auto key : {"action", "id", "wait_ms", "screen", "rows", "cols"})
        rest.erase(key);
      c.args_json = rest.dump();
      break;
    }
    case action_kind::apply: {
      // null is a valid answer, so presence is checked without field().
      auto* input = args.find("input");
      if (!input)
        return Error{"missing `input` (action `apply` sends it to the handle: text for "
                     "its stdin or the answer to its question)"};
      c.input_json = input->dump();
      auto look = look_options(args);
      if (!look)
        return Error{look.error()};
      c.look = *look;
      break;
    }
    case action_kind::fetch: {
      auto look = look_options(args);
      if (!look)
        return Error{look.error()};
      c.look = *look;
      break;
    }
    case action_kind::abort:
      break;
  }
  return c;
}

Json to_arguments(const ToolCommand& c) {
  auto j = Json::object();
  j.set("action", to_string(c.action));
  j.set("id", c.id);
  if (c.action == action_kind::spawn) {
    if (auto args = Json::parse(c.args_json); args && args->is_object())
      for (auto& [k, v] : args->as_object())
        if (k != "action" && k != "id")
          j.set(k, v);
  } else if (c.action == action_kind::apply) {
    auto input = Json::parse(c.input_json);
    j.set("input", input ? std::move(*input) : Json(c.input_json));
  }
  if (c.action != action_kind::abort) {
    if (c.look.wait_ms >= 0)
      j.set("wait_ms", c.look.wait_ms);
    if (c.look.screen)
      j.set("screen", true);
    if (c.look.rows > 0) {
      j.set("rows", int64_t{c.look.rows});
      j.set("cols", int64_t{c.look.cols});
    }
  }
  return j;
}

std::string response_content(const HandleReport& r) {
  // Written as text, not built as a tree and dumped: a fetch's content (up to the
  // response cap) is escaped once, straight into the answer, with no copy before.
  std::string out;
  out.reserve(80 + r.id.size() + r.state.content.size() + r.output_file.size());
  out += "{\"id\":";
  append_json_string(out, r.id);
  out += state_member(r.state.kind);
  append_state_fields(out, r.state);
  if (!r.node.empty())
    append_string_member(out, "node", r.node);
  if (!r.output_file.empty())
    append_string_member(out, "output_file", r.output_file);
  if (r.omitted_bytes > 0)
    fmt::format_to(std::back_inserter(out), ",\"omitted_bytes\":{}", r.omitted_bytes);
  if (r.screen.height > 0) {
    auto screen = Json::object();
    screen.set("rows", string_array_json(r.screen.rows));
    screen.set("cursor", Json::object()
                             .set("row", int64_t{r.screen.cursor_row})
                             .set("col", int64_t{r.screen.cursor_col}));
    screen.set("size", Json::object()
                           .set("rows", int64_t{r.screen.height})
                           .set("cols", int64_t{r.screen.width}));
    if (r.screen.omitted_bytes > 0)
      screen.set("omitted_bytes", static_cast<int64_t>(r.screen.omitted_bytes));
    out += ",\"screen\":";
    screen.dump_to(out);
  }
  out += '}';
  return out;
}

Result<HandleReport> report_from_response(std::string_view content) {
  auto j = Json::parse(content);
  if (!j)
    return Error{j.error()};
  if (!j->is_object())
    return wrong_type("response", "an object", *j);
  HandleReport r;
  auto id = required_string(*j, "", "id");
  if (!id)
    return Error{id.error()};
  r.id = std::move(*id);
  auto state = read_state(*j, "state");
  if (!state)
    return Error{state.error()};
  r.state = std::move(*state);
  auto file = optional_string(*j, "", "output_file");
  if (!file)
    return Error{file.error()};
  r.output_file = std::move(*file);
  auto node = optional_string(*j, "", "node");
  if (!node)
    return Error{node.error()};
  r.node = std::move(*node);
  if (auto* n = field(*j, "omitted_bytes")) {
    if (!n->is_int() || n->as_int() < 0)
      return wrong_type("omitted_bytes", "a non-negative integer", *n);
    r.omitted_bytes = static_cast<uint64_t>(n->as_int());
  }
  if (auto* screen = field(*j, "screen")) {
    auto* rows = field(*screen, "rows");
    auto* cursor = field(*screen, "cursor");
    auto* size = field(*screen, "size");
    if (!rows || !cursor || !size || !cursor->is_object() || !size->is_object())
      return Error{"`screen` must have rows, cursor {row, col} and size {rows, cols}"};
    auto lines = string_array(*rows, "screen.rows");
    if (!lines)
      return Error{lines.error()};
    r.screen.rows = std::move(*lines);
    auto number = [](const Json* v) { return v && v->is_int() ? static_cast<int>(v->as_int()) : -1; };
    r.screen.cursor_row = number(field(*cursor, "row"));
    r.screen.cursor_col = number(field(*cursor, "col"));
    r.screen.height = number(field(*size, "rows"));
    r.screen.width = number(field(*size, "cols"));
    if (r.screen.cursor_row < 0 || r.screen.cursor_col < 0 || r.screen.height <= 0 || r.screen.width <= 0)
      return Error{"`screen` cursor and size must be non-negative integers"};
    if (auto* n = field(*screen, "omitted_bytes")) {
      if (!n->is_int() || n->as_int() < 0)
        return wrong_type("screen.omitted_bytes", "a non-negative integer", *n);
      r.screen.omitted_bytes = static_cast<uint64_t>(n->as_int());
    }
  }
  return r;
}

// -- await ----------------------------------------------------------------------------------

Result<AwaitRequest> await_request_from_json(const Json& j) {
  if (!j.is_object())
    return wrong_type("await arguments", "an object", j);
  AwaitRequest r;
  auto any = await_ids(j, "any");
  if (!any)
    return Error{any.error()};
  r.any = std::move(*any);
  auto all = await_ids(j, "all");
  if (!all)
    return Error{all.error()};
  r.all = std::move(*all);
  if (r.any.empty() && r.all.empty())
    return Error{"At least one handle ID required: `all` or `any`, an array of ids"};
  if (auto* t = field(j, "timeout_secs")) {
    if (!t->is_number())
      return wrong_type("timeout_secs", "a number", *t);
    if (auto ok = check_duration("timeout_secs", t->as_number()); !ok)
      return Error{ok.error};
    r.timeout_secs = t->as_number();
  }
  return r;
}

Json to_json(const AwaitRequest& r) {
  auto j = Json::object();
  if (!r.any.empty())
    j.set("any", string_array_json(r.any));
  if (!r.all.empty())
    j.set("all", string_array_json(r.all));
  if (r.timeout_secs >= 0)
    j.set("timeout_secs", number_json(r.timeout_secs));
  return j;
}

Json to_json(const AwaitResult& r) {
  // One writer (await_result_text); the tree is read back from what it wrote.
  auto j = Json::parse(await_result_text(r));
  return j ? std::move(*j) : Json();
}

Json to_json(const Notification& n) {
  auto kind = Json::object();
  kind.set("source", n.source);
  kind.set("name", n.name);
  auto j = Json::object();
  j.set("kind", std::move(kind));
  j.set("level", n.level);
  j.set("message", n.message);
  return j;
}

Result<Notification> notification_from_json(const Json& j) {
  if (!j.is_object())
    return wrong_type("notification", "an object", j);
  auto* kind = field(j, "kind");
  if (!kind || !kind->is_object())
    return missing("kind", "an object {source, name}");
  Notification n;
  auto source = required_string(*kind, "kind", "source");
  auto name = required_string(*kind, "kind", "name");
  auto level = optional_string(j, "", "level");
  auto message = required_string(j, "", "message");
  auto handle = optional_string(j, "", "handle");
  for (auto* r : {&source, &name, &level, &message, &handle})
    if (!*r)
      return Error{r->error()};
  n.source = *source;
  n.name = *name;
  n.level = level->empty() ? "info" : *level;
  n.message = *message;
  n.handle = *handle;
  return n;
}

void append_status_json(std::string& out, const HandleStatus& s, bool with_result) {
  out += "{\"id\":";
  append_json_string(out, s.id);
  out += state_member(s.state.kind);
  if (with_result && s.state.stopped()) {
    if (s.state.ok) {
      out += ",\"result\":";
      append_json_string(out, s.state.content);
    } else {
      out += ",\"error\":";
      to_json(s.state.error).dump_to(out);
      // Its output, as a fetch shows it: a failed build's or test run's says why.
      if (!s.state.content.empty())
        append_string_member(out, "content", s.state.content);
    }
  } else if (s.state.kind == state_kind::waiting) {
    // What it waits for: the assistant answers it with apply.
    out += ",\"question\":";
    to_json(s.state.question).dump_to(out);
  }
  if (with_result && !s.output_file.empty()) {
    out += ",\"output_file\":";
    append_json_string(out, s.output_file);
  }
  if (!s.node.empty()) {
    out += ",\"node\":";
    append_json_string(out, s.node);
  }
  out += '}';
}

std::string completed_await_text(std::span<const std::string* const> texts) {
  size_t size = 32;
  for (auto* t : texts)
    size += t->size() + 1;
  std::string out;
  out.reserve(size);
  out += "{\"completed\":[";
  for (size_t i = 0; i < texts.size(); ++i) {
    if (i)
      out += ',';
    out += *texts[i];
  }
  out += "],\"pending\":[]}";
  return out;
}

std::string await_result_text(const AwaitResult& r) {
  return await_result_text(r, append_status_json);
}

std::string await_result_text(const AwaitResult& r,
                              const std::function<void(std::string&, const HandleStatus&, bool)>& put) {
  std::string out;
  out.reserve(48 + 40 * (r.completed.size() + r.pending.size()));
  auto list = [&](const std::vector<HandleStatus>& statuses, bool with_result) {
    for (size_t i = 0; i < statuses.size(); ++i) {
      if (i)
        out += ',';
      put(out, statuses[i], with_result);
    }
  };
  out += "{\"completed\":[";
  list(r.completed, true);
  out += "],\"pending\":[";
  list(r.pending, false);
  out += ']';
  if (r.omitted_bytes > 0)
    fmt::format_to(std::back_inserter(out), ",\"omitted_bytes\":{}", r.omitted_bytes);
  out += r.timed_out ? ",\"timed_out\":true}" : "}";
  return out;
}

Result<AwaitResult> await_result_from_json(const Json& j) {
  if (!j.is_object())
    return wrong_type("await result", "an object", j);
  AwaitResult r;
  auto completed = read_statuses(j, "completed");
  if (!completed)
    return Error{completed.error()};
  r.completed = std::move(*completed);
  auto pending = read_statuses(j, "pending");
  if (!pending)
    return Error{pending.error()};
  r.pending = std::move(*pending);
  if (auto* n = field(j, "omitted_bytes")) {
    if (!n->is_int() || n->as_int() < 0)
      return wrong_type("omitted_bytes", "a non-negative integer", *n);
    r.omitted_bytes = static_cast<uint64_t>(n->as_int());
  }
  if (auto* t = field(j, "timed_out")) {
    if (!t->is_bool())
      return wrong_type("timed_out", "a boolean", *t);
    r.timed_out = t->as_bool();
  }
  return r;
}

std::string_view to_string(action_kind a) {
  switch (a) {
    case action_kind::spawn: return "spawn";
    case action_kind::fetch: return "fetch";
    case action_kind::apply: return "apply";
    case action_kind::abort: return "abort";
  }
  return "?";
}

std::optional<action_kind> action_from(std::string_view s) {
  if (s == "spawn")
    return action_kind::spawn;
  if (s == "fetch")
    return action_kind::fetch;
  if (s == "apply")
    return action_kind::apply;
  if (s == "abort")
    return action_kind::abort;
  return std::nullopt;
}

std::string_view to_string(state_kind k) {
  switch (k) {
    case state_kind::running: return "running";
    case state_kind::waiting: return "waiting";
    case state_kind::stopped: return "stopped";
  }
  return "running";
}

std::optional<state_kind> state_kind_from(std::string_view s) {
  if (s == "running" || s == "spawned") // RFD 009's "spawned" is a running tool
    return state_kind::running;
  if (s == "waiting")
    return state_kind::waiting;
  if (s == "stopped")
    return state_kind::stopped;
  return std::nullopt;
}

std::string_view to_string(turn_end_policy p) {
  switch (p) {
    case turn_end_policy::inquire: return "inquire";
    case turn_end_policy::await: return "await";
    case turn_end_policy::abort: return "abort";
  }
  return "?";
}

std::optional<turn_end_policy> turn_end_policy_from(std::string_view s) {
  for (auto p : {turn_end_policy::inquire, turn_end_policy::await, turn_end_policy::abort})
    if (s == to_string(p))
      return p;
  return std::nullopt;
}

std::string_view to_string(inquiry_answer a) {
  return a == inquiry_answer::wait ? "wait" : "abort";
}

std::optional<inquiry_answer> inquiry_answer_from(std::string_view s) {
  for (auto a : {inquiry_answer::wait, inquiry_answer::abort})
    if (s == to_string(a))
      return a;
  return std::nullopt;
}

std::string_view to_string(turn_end_outcome o) {
  switch (o) {
    case turn_end_outcome::none: return "";
    case turn_end_outcome::aborted: return "abort";
    case turn_end_outcome::awaited: return "await";
    case turn_end_outcome::inquired_wait: return "inquire:wait";
    case turn_end_outcome::inquired_abort: return "inquire:abort";
  }
  return "";
}

std::optional<turn_end_outcome> turn_end_outcome_from(std::string_view s) {
  for (auto o : {turn_end_outcome::aborted, turn_end_outcome::awaited, turn_end_outcome::inquired_wait,
                 turn_end_outcome::inquired_abort})
    if (s == to_string(o))
      return o;
  return std::nullopt;
}

} // namespace jp

namespace jp {

Json inquiry_handle_json(const HandleSummary& h) {
  auto item = Json::object()
                .set("id", h.id)
                .set("tool", h.tool)
                .set("state", std::string(to_string(h.state.kind)))
                .set("elapsed_secs", h.elapsed_secs);
  if (!h.progress.last_line.empty())
    item.set("output_preview", h.progress.last_line);
  return item;
}

Json turn_end_json(const HandleSummary& h) {
  Json x = Json::object();
  x.set("id", h.id).set("tool", h.tool).set("policy", std::string(to_string(h.outcome)));
  x.set("state", std::string(to_string(h.state.kind)));
  if (waited(h.outcome) && h.state.stopped()) {
    if (h.state.ok)
      x.set("result", h.state.content);
    else
      x.set("error", h.state.error.message);
  }
  return x;
}

} // namespace jp
