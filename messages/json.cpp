#include "messages/json.hpp"

#include <charconv>
#include <cmath>
#include <optional>
#include <fmt/format.h>
#include <unordered_set>

#include "messages/json_number_range.hpp"
#include "messages/json_parser.hpp"

namespace jp {

const Json* Json::find(std::string_view key) const {
  if (!is_object())
    return nullptr;
  for (auto& [k, v] : as_object())
    if (k == key)
      return &v;
  return nullptr;
}

Json* Json::find(std::string_view key) {
  return const_cast<Json*>(std::as_const(*this).find(key));
}

Json& Json::operator[](std::string_view key) {
  if (auto* v = find(key))
    return *v;
  auto& obj = as_object();
  obj.emplace_back(std::string(key), Json{});
  return obj.back().second;
}

Json& Json::set(std::string_view key, Json value) {
  (*this)[key] = std::move(value);
  return *this;
}

void Json::erase(std::string_view key) {
  if (!is_object())
    return;
  auto& obj = as_object();
  std::erase_if(obj, [&](auto& kv) { return kv.first == key; });
}

Json& Json::push(Json value) {
  as_array().push_back(std::move(value));
  return *this;
}

std::string_view Json::type_name() const {
  switch (v_.index()) {
    case 0: return "null";
    case 1: return "boolean";
    case 2: return "integer";
    case 3: return "number";
    case 4: return "string";
    case 5: return "array";
    default: return "object";
  }
}

std::string Json::described() const {
  if (is_array() || is_object() || is_null())
    return std::string(type_name());
  return std::string(type_name()) + " " + cut_text(dump(), 40);
}

namespace {

// Length of the valid UTF-8 sequence starting at s[i], or 0 if invalid.
size_t utf8_sequence_length(std::string_view s, size_t i) {
  auto c = static_cast<unsigned char>(s[i]);
  size_t n;
  uint32_t cp;
  if (c < 0x80)
    return 1;
  else if ((c & 0xE0) == 0xC0)
    n = 2, cp = c & 0x1F;
  else if ((c & 0xF0) == 0xE0)
    n = 3, cp = c & 0x0F;
  else if ((c & 0xF8) == 0xF0)
    n = 4, cp = c & 0x07;
  else
    return 0;
  if (i + n > s.size())
    return 0;
  for (size_t k = 1; k < n; ++k) {
    auto cc = static_cast<unsigned char>(s[i + k]);
    if ((cc & 0xC0) != 0x80)
      return 0;
    cp = (cp << 6) | (cc & 0x3F);
  }
  // Reject overlong forms, surrogates and values past U+10FFFF.
  if ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000)
      || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
    return 0;
  return n;
}

constexpr std::string_view replacement = "\xEF\xBF\xBD";

// Appends the character at s[i], or U+FFFD for a byte that starts no valid UTF-8
// sequence; returns how many bytes of s it consumed.
size_t append_utf8(std::string& out, std::string_view s, size_t i) {
  if (auto n = utf8_sequence_length(s, i)) {
    out.append(s.substr(i, n));
    return n;
  }
  out += replacement;
  return 1;
}

void dump_number(std::string& out, double d) {
  if (!std::isfinite(d)) {
    out += "null"; // JSON has no NaN/Inf
    return;
  }
  if (d == std::floor(d) && std::fabs(d) < 1e15) {
    fmt::format_to(std::back_inserter(out), "{:.1f}", d);
    return;
  }
  fmt::format_to(std::back_inserter(out), "{}", d);
}

Json from_element(simdjson::dom::element e);

/// Hands `put` what builds `e`'s value: a scalar as itself, so that the container
/// constructs its Json where it stays (no temporary moved in), a tree built here.
template <class Put>
void put_element(simdjson::dom::element e, Put put) {
  using simdjson::dom::element_type;
  switch (e.type()) {
    case element_type::INT64: return put(e.get_int64().value_unsafe());
    case element_type::UINT64: return put(static_cast<double>(e.get_uint64().value_unsafe()));
    case element_type::DOUBLE: return put(e.get_double().value_unsafe());
    case element_type::STRING: return put(e.get_string().value_unsafe());
    case element_type::BOOL: return put(e.get_bool().value_unsafe());
    case element_type::NULL_VALUE: return put(nullptr);
    case element_type::ARRAY:
    case element_type::OBJECT: return put(from_element(e));
  }
}

Json from_element(simdjson::dom::element e) {
  using simdjson::dom::element_type;
  if (e.type() == element_type::ARRAY) {
    JsonArray a;
    simdjson::dom::array arr = e.get_array().value_unsafe();
    a.reserve(arr.size());
    for (auto child : arr)
      put_element(child, [&a](auto&& v) { a.emplace_back(std::forward<decltype(v)>(v)); });
    return Json(std::move(a));
  }
  if (e.type() == element_type::OBJECT) {
    JsonObject o;
    simdjson::dom::object obj = e.get_object().value_unsafe();
    o.reserve(obj.size());
    for (auto field : obj)
      put_element(field.value, [&o, &field](auto&& v) {
        o.emplace_back(std::piecewise_construct, std::forward_as_tuple(field.key),
                       std::forward_as_tuple(std::forward<decltype(v)>(v)));
      });
    return Json(std::move(o));
  }
  Json out;
  put_element(e, [&out](auto&& v) { out = Json(std::forward<decltype(v)>(v)); });
  return out;
}

// The path ("a.b") of the first key that an object holds twice, or nullopt. The
// path is written only when there is one: this runs on every call's arguments.
std::optional<std::string> duplicate_key(const Json& j) {
  if (j.is_array()) {
    auto& a = j.as_array();
    for (size_t i = 0; i < a.size(); ++i)
      if (auto d = duplicate_key(a[i]))
        return std::to_string(i) + "." + *d;
    return std::nullopt;
  }
  if (!j.is_object())
    return std::nullopt;
  auto& o = j.as_object();
  // Most objects have a few keys: comparing them beats hashing.
  constexpr size_t few_keys = 8;
  if (o.size() <= few_keys) {
    for (size_t i = 1; i < o.size(); ++i)
      for (size_t k = 0; k < i; ++k)
        if (o[k].first == o[i].first)
          return o[i].first;
  } else {
    std::unordered_set<std::string_view> seen;
    for (auto& [k, v] : o)
      if (!seen.insert(k).second)
        return k;
  }
  for (auto& [k, v] : o)
    if (auto d = duplicate_key(v))
      return k + "." + *d;
  return std::nullopt;
}

} // namespace

void append_utf8(std::string& out, uint32_t c) {
  if (c < 0x80) {
    out += static_cast<char>(c);
  } else if (c < 0x800) {
    out += static_cast<char>(0xC0 | (c >> 6));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else if (c < 0x10000) {
    out += static_cast<char>(0xE0 | (c >> 12));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (c >> 18));
    out += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  }
}

std::string sanitize_utf8(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();)
    i += append_utf8(out, s, i);
  return out;
}

size_t not_text_bytes(std::string_view s) {
  size_t invalid = 0;
  for (size_t i = 0; i < s.size();) {
    auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      invalid += c == 0x7f || (c < 0x20 && !(c >= 0x08 && c <= 0x0d) && c != 0x1b);
      ++i;
      continue;
    }
    auto n = utf8_sequence_length(s, i);
    invalid += n == 0;
    i += n == 0 ? 1 : n;
  }
  return invalid;
}

size_t incomplete_utf8_tail(std::string_view s) {
  for (size_t back = 1; back <= std::min<size_t>(3, s.size()); ++back) {
    auto c = static_cast<unsigned char>(s[s.size() - back]);
    if ((c & 0xc0) == 0x80)
      continue; // a continuation byte: its lead is further back
    if (c < 0xc2 || c > 0xf4)
      return 0; // ASCII, or no character's start: nothing to wait for
    size_t length = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : 2;
    return length > back ? back : 0;
  }
  return 0;
}

void append_json_string(std::string& out, std::string_view s) {
  out.reserve(out.size() + s.size() + 2);
  out += '"';
  size_t i = 0;
  while (i < s.size()) {
    // A run of characters written as they are, appended at once (most of any text).
    size_t plain = i;
    while (plain < s.size()) {
      auto c = static_cast<unsigned char>(s[plain]);
      if (c < 0x20 || c >= 0x80 || c == '"' || c == '\\')
        break;
      ++plain;
    }
    out.append(s.data() + i, plain - i);
    i = plain;
    if (i == s.size())
      break;
    auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x80) {
      i += append_utf8(out, s, i);
      continue;
    }
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      default: fmt::format_to(std::back_inserter(out), "\\u{:04x}", c);
    }
    ++i;
  }
  out += '"';
}

std::string json_quote(std::string_view s) {
  std::string out;
  append_json_string(out, s);
  return out;
}

namespace {

// Where to cut s (longer than max_bytes) so that no UTF-8 sequence is split.
size_t cut_point(std::string_view s, size_t max_bytes) {
  size_t cut = max_bytes;
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80)
    --cut;
  return cut;
}

} // namespace

std::string cut_text(std::string_view s, size_t max_bytes) {
  if (s.size() <= max_bytes)
    return std::string(s);
  return fmt::format("{}…({} bytes)", s.substr(0, cut_point(s, max_bytes)), s.size());
}

std::string_view utf8_tail(std::string_view s, size_t max_bytes) {
  if (s.size() <= max_bytes)
    return s;
  auto start = s.size() - max_bytes;
  while (start < s.size() && (static_cast<unsigned char>(s[start]) & 0xC0) == 0x80)
    ++start;
  return s.substr(start);
}

std::string json_quote_cut(std::string_view s, size_t max_bytes) {
  if (s.size() <= max_bytes)
    return json_quote(s);
  return fmt::format("{}…({} bytes)", json_quote(s.substr(0, cut_point(s, max_bytes))), s.size());
}

std::string last_line_of(std::string_view text) {
  auto end = text.find_last_not_of('\n');
  if (end == std::string_view::npos)
    return {};
  auto start = text.rfind('\n', end);
  start = start == std::string_view::npos ? 0 : start + 1;
  return std::string(text.substr(start, end - start + 1));
}

void Json::dump_to(std::string& out) const {
  switch (v_.index()) {
    case 0: out += "null"; break;
    case 1: out += as_bool() ? "true" : "false"; break;
    case 2: fmt::format_to(std::back_inserter(out), "{}", as_int()); break;
    case 3: dump_number(out, std::get<double>(v_)); break;
    case 4: append_json_string(out, as_string()); break;
    case 5: {
      out += '[';
      bool first = true;
      for (auto& v : as_array()) {
        if (!first)
          out += ',';
        first = false;
        v.dump_to(out);
      }
      out += ']';
      break;
    }
    default: {
      out += '{';
      bool first = true;
      for (auto& [k, v] : as_object()) {
        if (!first)
          out += ',';
        first = false;
        append_json_string(out, k);
        out += ':';
        v.dump_to(out);
      }
      out += '}';
    }
  }
}

std::string Json::dump() const {
  std::string out;
  dump_to(out);
  return out;
}

namespace {

bool hex4_at(std::string_view s, size_t i, uint32_t& value) {
  if (i + 4 > s.size())
    return false;
  auto [end, err] = std::from_chars(s.data() + i, s.data() + i + 4, value, 16);
  return err == std::errc() && end == s.data() + i + 4;
}

// Whether text may hold a \uD800-\uDFFF escape (a cheap look: most text has none).
bool may_hold_surrogate_escape(std::string_view text) {
  for (auto i = text.find('\\'); i != std::string_view::npos; i = text.find('\\', i + 1))
    if (i + 3 < text.size() && text[i + 1] == 'u' && (text[i + 2] == 'd' || text[i + 2] == 'D'))
      return true;
  return false;
}

// JSON allows an escaped UTF-16 surrogate without its other half (RFC 8259 8.2): a
// model's text cut between the halves of a pair carries one. simdjson refuses a lone
// high half (the whole message would be lost) and decodes a lone low half to bytes that
// are no UTF-8, so each lone half becomes \ufffd here; a pair stays as it is.
std::string mend_lone_surrogates(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '"')
      in_string = !in_string;
    if (!in_string || c != '\\' || i + 1 == text.size()) {
      out += c;
      continue;
    }
    uint32_t unit = 0;
    if (text[i + 1] != 'u' || !hex4_at(text, i + 2, unit) || unit < 0xD800 || unit > 0xDFFF) {
      out.append(text.substr(i, 2)); // any other escape, \\ and \" included, as it is
      ++i;
      continue;
    }
    uint32_t low = 0;
    if (unit <= 0xDBFF && i + 12 <= text.size() && text[i + 6] == '\\' && text[i + 7] == 'u'
        && hex4_at(text, i + 8, low) && low >= 0xDC00 && low <= 0xDFFF) {
      out.append(text.substr(i, 12));
      i += 11;
      continue;
    }
    out += "\\ufffd";
    i += 5;
  }
  return out;
}

} // namespace

simdjson::dom::parser& thread_json_parser() {
  thread_local simdjson::dom::parser parser;
  return parser;
}

Result<Json> Json::parse(std::string_view text, duplicate_keys dup) {
  std::string mended;
  if (may_hold_surrogate_escape(text)) {
    mended = mend_lone_surrogates(text);
    text = mended;
  }
  simdjson::padded_string padded(text);
  auto doc = thread_json_parser().parse(padded);
  // A number out of range is valid JSON all the same: said as what it is.
  if (doc.error() == simdjson::NUMBER_ERROR)
    return Error{fmt::format("invalid JSON, or a number in it out of range: {}", json_number_range)};
  if (doc.error())
    return Error{fmt::format("invalid JSON: {}", simdjson::error_message(doc.error()))};
  auto json = from_element(doc.value_unsafe());
  if (dup == duplicate_keys::refuse)
    if (auto twice = duplicate_key(json))
      return Error{fmt::format("the key {} appears twice; send each key once (JSON parsers "
                               "disagree on which copy counts)", json_quote_cut(*twice))};
  return json;
}

} // namespace jp
