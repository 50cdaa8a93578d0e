#include "runtime/mcp/mcp_input_schema.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>

#include "messages/with_digest.hpp"

namespace jp {

namespace {

const std::vector<std::string_view> kTypes = {"string", "integer", "number", "boolean", "array", "object"};

// A tool's properties written out past about this many bytes together are not
// passed on as declared: a few definitions referring to each other twice over grow
// a schema exponentially, and it goes with every request to the model. Writing out
// stops past kMaxWork for the whole tool, whatever was kept.
constexpr size_t kMaxWrittenBytes = 64 * 1024;
constexpr size_t kMaxWork = 1024 * 1024;
constexpr int kMaxDepth = 64;

/// A schema's type: the first known one of "type" (a name or a list of them), else
/// of its anyOf / oneOf branches (how `Optional[str]` comes: a string or null).
std::string type_of(const Json& schema, int depth = 0) {
  auto* t = schema.find("type");
  auto known = [](const Json& j) {
    return j.is_string() && std::find(kTypes.begin(), kTypes.end(), j.as_string()) != kTypes.end();
  };
  if (t && known(*t))
    return t->as_string();
  if (t && t->is_array())
    for (auto& x : t->as_array())
      if (known(x))
        return x.as_string();
  if (depth < kMaxDepth)
    for (auto key : {"anyOf", "oneOf"})
      if (auto* branches = schema.find(key); branches && branches->is_array())
        for (auto& b : branches->as_array())
          if (auto bt = type_of(b, depth + 1); !bt.empty())
            return bt;
  return "";
}

/// Whether `schema`'s own `type` is "array" or a list holding it.
bool admits_array(const Json& schema) {
  auto* type = schema.find("type");
  if (type && type->is_string())
    return type->as_string() == "array";
  if (type && type->is_array())
    for (auto& t : type->as_array())
      if (t.is_string() && t.as_string() == "array")
        return true;
  return false;
}

/// What `pointer` ("#/$defs/Item", RFC 6901 in a URI fragment) names in `root`; null
/// when it names nothing there (or another document).
const Json* resolve(const Json& root, std::string_view pointer) {
  if (pointer == "#")
    return &root;
  if (!pointer.starts_with("#/"))
    return nullptr;
  const Json* at = &root;
  pointer.remove_prefix(1);
  while (!pointer.empty() && at) {
    pointer.remove_prefix(1); // the '/'
    auto end = pointer.find('/');
    auto raw = pointer.substr(0, end);
    pointer = end == std::string_view::npos ? std::string_view() : pointer.substr(end);
    std::string token;
    for (size_t i = 0; i < raw.size(); ++i) {
      if (raw[i] == '~' && i + 1 < raw.size() && (raw[i + 1] == '0' || raw[i + 1] == '1'))
        token += raw[++i] == '0' ? '~' : '/';
      else
        token += raw[i];
    }
    if (at->is_object()) {
      at = at->find(token);
    } else if (at->is_array() && !token.empty() && token.size() < 10 &&
               std::all_of(token.begin(), token.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      auto i = std::strtoul(token.c_str(), nullptr, 10);
      at = i < at->as_array().size() ? &at->as_array()[i] : nullptr;
    } else {
      at = nullptr;
    }
  }
  return at;
}

/// Writes a property's schema out with its references in place (see the header).
struct References {
  const Json& root;
  std::vector<std::string> open; // the references being written out: one met again is a cycle
  size_t bytes = 0; // about what this property's writing out has come to
  size_t limit = 0; // what it may come to
  size_t work = 0;  // about what the whole tool's has taken
  bool follow = true; // false: a reference fails the writing out

  /// Counts `n` bytes written out; false past this property's limit or the tool's work.
  bool spend(size_t n) {
    bytes += n;
    work += n;
    return bytes <= limit && work <= kMaxWork;
  }

  /// `schema` written out; a value (`data`: an enum's, a default) is copied, counted
  /// as well.
  std::optional<Json> write_out(const Json& schema, int depth, bool data = false) {
    if (!spend(1 + (schema.is_string() ? schema.as_string().size() : 0)) || depth > kMaxDepth)
      return std::nullopt;
    if (schema.is_array()) {
      auto out = Json::array();
      for (auto& x : schema.as_array()) {
        auto y = write_out(x, depth + 1, data);
        if (!y)
          return std::nullopt;
        out.push(std::move(*y));
      }
      return out;
    }
    if (!schema.is_object())
      return schema;
    auto out = Json::object();
    for (auto& [key, value] : schema.as_object()) {
      if (!spend(key.size()))
        return std::nullopt;
      if (!data && (key == "$ref" || key == "$defs" || key == "definitions"))
        continue; // written out below, or the definitions only references used
      // Values, not schemas: a `$ref` in them is data.
      bool value_data = data || key == "const" || key == "enum" || key == "default" || key == "examples";
      // Schemas by name: a property may be named "default" or "$ref".
      bool by_name = !data && (key == "properties" || key == "patternProperties" || key == "dependentSchemas");
      auto y = by_name ? write_named(value, depth + 1) : write_out(value, depth + 1, value_data);
      if (!y)
        return std::nullopt;
      out.as_object().emplace_back(key, std::move(*y));
    }
    // OpenAI refuses an array schema without items at any depth ("array schema
    // missing items"); any item is what the server's schema said.
    auto with_items = [data](Json written) {
      if (!data && !written.find("items") && admits_array(written))
        written.as_object().emplace_back("items", Json::object());
      return written;
    };
    auto* ref = data ? nullptr : schema.find("$ref");
    if (!ref)
      return with_items(std::move(out));
    if (!follow || !ref->is_string() || std::find(open.begin(), open.end(), ref->as_string()) != open.end())
      return std::nullopt;
    if (!spend(ref->as_string().size())) // looking it up is work too
      return std::nullopt;
    auto* target = resolve(root, ref->as_string());
    if (!target || !target->is_object())
      return std::nullopt;
    open.push_back(ref->as_string());
    auto written = write_out(*target, depth + 1);
    open.pop_back();
    if (!written)
      return std::nullopt;
    // What stands beside the reference (a description) applies too, over what it
    // names; properties and required of both hold together.
    std::unordered_set<std::string> beside;
    for (auto& [key, value] : out.as_object())
      beside.insert(key);
    for (auto& [key, value] : written->as_object()) {
      if (!beside.contains(key)) {
        out.as_object().emplace_back(key, std::move(value));
        continue;
      }
      auto* ours = out.find(key);
      if (key == "properties" && ours->is_object() && value.is_object()) {
        std::unordered_set<std::string> named;
        for (auto& [name, schema] : ours->as_object())
          named.insert(name);
        for (auto& [name, schema] : value.as_object())
          if (named.insert(name).second)
            ours->as_object().emplace_back(name, std::move(schema));
      } else if (key == "required" && ours->is_array() && value.is_array()) {
        std::unordered_set<std::string> named;
        for (auto& name : ours->as_array())
          if (name.is_string())
            named.insert(name.as_string());
        for (auto& name : value.as_array())
          if (name.is_string() && named.insert(name.as_string()).second)
            ours->push(std::move(name));
      }
    }
    return with_items(std::move(out));
  }

  /// An object of schemas by name (`properties`), each written out; one that is not
  /// a schema (an object or a boolean) is a schema services refuse.
  std::optional<Json> write_named(const Json& schemas, int depth) {
    if (!schemas.is_object())
      return std::nullopt;
    auto out = Json::object();
    for (auto& [name, schema] : schemas.as_object()) {
      if (!spend(name.size()))
        return std::nullopt;
      if (!schema.is_object() && !schema.is_bool())
        return std::nullopt;
      auto y = write_out(schema, depth + 1);
      if (!y)
        return std::nullopt;
      out.as_object().emplace_back(name, std::move(*y));
    }
    return out;
  }
};

/// Each parameter named as Anthropic takes a tool's property (`^[a-zA-Z0-9_.-]{1,64}$`;
/// it refuses the whole request for one, and servers write `filter[id]`, `$top`, ...):
/// each other byte made `_`, cut to 64 with a digest where too long or like another
/// parameter's name. The server's name is kept in declared_name to call it with.
/// Only the top level: the service checks no nested object's keys.
void fit_names(std::vector<ParameterConfig>& params) {
  auto allowed = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-'; };
  auto fits = [&](const std::string& name) {
    return !name.empty() && name.size() <= 64 && std::all_of(name.begin(), name.end(), allowed);
  };
  std::unordered_set<std::string> taken;
  for (auto& p : params)
    if (fits(p.name))
      taken.insert(p.name);
  for (auto& p : params) {
    if (fits(p.name))
      continue;
    auto made = p.name;
    std::replace_if(made.begin(), made.end(), [&](char c) { return !allowed(c); }, '_');
    if (made.empty() || made.size() > 64 || taken.contains(made))
      made = with_digest(made, p.name, 64);
    taken.insert(made);
    p.declared_name = std::exchange(p.name, std::move(made));
  }
}

/// The schema of the arguments: the root itself, or the definition it refers to.
const Json& arguments_schema(const Json& input_schema) {
  if (auto* ref = input_schema.find("$ref"); ref && ref->is_string() && !input_schema.find("properties"))
    if (auto* target = resolve(input_schema, ref->as_string()); target && target->is_object())
      return *target;
  return input_schema;
}

} // namespace

Json mcp_extra_keys(const Json& input_schema) {
  const Json* root = &arguments_schema(input_schema);
  auto out = Json::object();
  if (auto* more = root->find("additionalProperties"); more && ((more->is_bool() && more->as_bool()) || more->is_object()))
    out.set("additionalProperties", *more);
  if (auto* patterns = root->find("patternProperties"); patterns && patterns->is_object() && !patterns->as_object().empty())
    out.set("patternProperties", *patterns);
  return out.as_object().empty() ? Json() : out;
}

std::vector<ParameterConfig> mcp_parameters(const Json& input_schema) {
  std::vector<ParameterConfig> out;
  const Json* root = &arguments_schema(input_schema);
  auto* props = root->find("properties");
  if (!props || !props->is_object())
    return out;
  std::vector<std::string> required;
  if (auto* r = root->find("required"); r && r->is_array())
    for (auto& x : r->as_array())
      if (x.is_string())
        required.push_back(x.as_string());
  References references{input_schema}; // one budget for the whole tool
  size_t kept = 0;                      // bytes of the properties written out
  for (auto& [name, declared] : props->as_object()) {
    references.bytes = 0;
    references.limit = kMaxWrittenBytes - kept;
    auto written = references.write_out(declared, 0);
    if (written) {
      kept += references.bytes;
    } else {
      // Without references it is no bigger than the server made it: kept whole,
      // whatever the others took, rather than lose its type.
      References plain{input_schema};
      plain.limit = kMaxWork;
      plain.follow = false;
      written = plain.write_out(declared, 0);
    }
    const Json& schema = written ? *written : declared;
    ParameterConfig p;
    p.name = name;
    p.type = type_of(schema);
    if (p.type.empty()) // no type, or one we do not know: any JSON, as an object says
      p.type = "object";
    if (auto* d = schema.find("description"); d && d->is_string())
      p.description = d->as_string();
    p.required = std::find(required.begin(), required.end(), name) != required.end();
    if (auto* e = schema.find("enum"); e && e->is_array() && p.type == "string")
      for (auto& v : e->as_array())
        if (v.is_string())
          p.enum_values.push_back(v.as_string());
    if (auto* items = schema.find("items"); items && p.type == "array")
      p.items_type = type_of(*items);
    if (auto* d = schema.find("default"))
      p.default_value = *d;
    // One that cannot be written out is declared as any value, for the server to
    // check: its first type alone would tell the model less than nothing (a tree of
    // nodes as a string). Gemini gets the type, as it does every property.
    p.declared_schema = written && written->is_object() ? std::move(*written) : Json::object();
    out.push_back(std::move(p));
  }
  fit_names(out);
  return out;
}

} // namespace jp
