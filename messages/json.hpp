// A small owning JSON value: the one codec of the project reads with simdjson
// (parse) and writes with fmt (dump). Objects keep insertion order, because the
// wire formats in DESIGN.md are read by people and compared by tests.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "result.hpp"

namespace jp {

class Json;
/// What Json::parse does with an object that holds a key twice: keep both (find()
/// sees the first), or refuse the text -- for input from a model, where another
/// parser would take the last copy and the two would disagree.
enum class duplicate_keys { keep, refuse };
using JsonArray = std::vector<Json>;
using JsonObject = std::vector<std::pair<std::string, Json>>;

class Json {
public:
  using Storage = std::variant<std::nullptr_t, bool, int64_t, double, std::string,
                               JsonArray, JsonObject>;

  Json() : v_(nullptr) {}
  Json(std::nullptr_t) : v_(nullptr) {}
  Json(bool b) : v_(b) {}
  Json(int i) : v_(int64_t{i}) {}
  Json(int64_t i) : v_(i) {}
  Json(uint64_t i) : v_(static_cast<int64_t>(i)) {}
  Json(double d) : v_(d) {}
  Json(const char* s) : v_(std::string(s)) {}
  Json(std::string s) : v_(std::move(s)) {}
  Json(std::string_view s) : v_(std::string(s)) {}
  Json(JsonArray a) : v_(std::move(a)) {}
  Json(JsonObject o) : v_(std::move(o)) {}

  static Json object() { return Json(JsonObject{}); }
  static Json array() { return Json(JsonArray{}); }

  bool is_null() const { return std::holds_alternative<std::nullptr_t>(v_); }
  bool is_bool() const { return std::holds_alternative<bool>(v_); }
  bool is_int() const { return std::holds_alternative<int64_t>(v_); }
  bool is_double() const { return std::holds_alternative<double>(v_); }
  bool is_number() const { return is_int() || is_double(); }
  bool is_string() const { return std::holds_alternative<std::string>(v_); }
  bool is_array() const { return std::holds_alternative<JsonArray>(v_); }
  bool is_object() const { return std::holds_alternative<JsonObject>(v_); }

  bool as_bool() const { return std::get<bool>(v_); }
  int64_t as_int() const { return std::get<int64_t>(v_); }
  double as_number() const {
    return is_int() ? static_cast<double>(std::get<int64_t>(v_)) : std::get<double>(v_);
  }
  const std::string& as_string() const { return std::get<std::string>(v_); }
  std::string& as_string() { return std::get<std::string>(v_); }
  const JsonArray& as_array() const { return std::get<JsonArray>(v_); }
  JsonArray& as_array() { return std::get<JsonArray>(v_); }
  const JsonObject& as_object() const { return std::get<JsonObject>(v_); }
  JsonObject& as_object() { return std::get<JsonObject>(v_); }

  /// Object member or nullptr (also when this is not an object).
  const Json* find(std::string_view key) const;
  Json* find(std::string_view key);
  /// Object member as a string; "" when absent, not a string, or this is not an object.
  std::string_view string_at(std::string_view key) const {
    auto* v = find(key);
    return v && v->is_string() ? std::string_view(v->as_string()) : std::string_view();
  }
  /// Object member, inserted as null if absent (this must be an object).
  Json& operator[](std::string_view key);
  /// Object: set key (replacing an existing one, keeping its position). Returns *this.
  Json& set(std::string_view key, Json value);
  /// Object: remove key if present.
  void erase(std::string_view key);
  /// Array: append.
  Json& push(Json value);

  /// Name of the type for error messages: "null", "boolean", "integer", ...
  std::string_view type_name() const;
  /// Its type and, for a scalar, its value (cut): `number 3.5`, `string "yes"`;
  /// for what a wrong value was, in an error message.
  std::string described() const;

  /// Compact JSON text.
  std::string dump() const;
  /// Appends compact JSON text to out.
  void dump_to(std::string& out) const;

  /// Parses JSON text (simdjson). The error names the position and problem, or with
  /// duplicate_keys::refuse the first key found twice (with its path).
  static Result<Json> parse(std::string_view text, duplicate_keys dup = duplicate_keys::keep);

  friend bool operator==(const Json&, const Json&) = default;

  const Storage& storage() const { return v_; }

private:
  Storage v_;
};

/// Appends `s` to out as a JSON string literal (quotes included). Invalid UTF-8 is
/// replaced by U+FFFD, so child output that is binary still yields valid JSON.
void append_json_string(std::string& out, std::string_view s);

/// `s` as a JSON string literal.
std::string json_quote(std::string_view s);

/// For a message that echoes a value: `s` itself, or when longer than `max_bytes` its
/// first `max_bytes` (cut at a character) followed by "…(N bytes)", so a hostile
/// 100 KB value is never echoed whole.
std::string cut_text(std::string_view s, size_t max_bytes = 64);
/// The end of `s`: at most its last `max_bytes`, from a character's start on (a cut
/// never leaves half a UTF-8 sequence to show as U+FFFD).
std::string_view utf8_tail(std::string_view s, size_t max_bytes);

/// The same, as a JSON string literal: "first bytes"…(N bytes).
std::string json_quote_cut(std::string_view s, size_t max_bytes = 64);

/// The last non-empty line of `text` (trailing newlines ignored); "" when it has none.
/// What a handle's peek shows.
std::string last_line_of(std::string_view text);

/// Replaces invalid UTF-8 sequences by U+FFFD.
std::string sanitize_utf8(std::string_view s);

/// How many bytes of `s` are no text: those that start no valid UTF-8 sequence (each
/// one U+FFFD in sanitize_utf8) and the controls no text has (NUL, and the C0 ones
/// but backspace, tab, line ends, form feed and ESC; DEL): most of a binary file's
/// (an executable is mostly NULs), few of a text's.
size_t not_text_bytes(std::string_view s);

/// How many bytes at the end of `s` (0 to 3) begin a UTF-8 character they do not
/// finish: what output read in chunks holds back until the next chunk completes it.
size_t incomplete_utf8_tail(std::string_view s);

/// Appends code point `c` (at most U+10FFFF) encoded as UTF-8.
void append_utf8(std::string& out, uint32_t c);

} // namespace jp
