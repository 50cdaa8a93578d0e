#include "messages/plain_await_request.hpp"

#include "messages/duration.hpp"
#include "messages/json_codec.hpp"
#include "messages/json_parser.hpp"

namespace jp {

namespace {

/// `value`'s strings appended to `ids`; false when it is not an array of handle ids.
bool read_ids(simdjson::dom::element value, std::vector<std::string>& ids) {
  simdjson::dom::array array;
  if (value.get_array().get(array))
    return false;
  ids.reserve(array.size());
  for (auto item : array) {
    std::string_view id;
    if (item.get_string().get(id) || !valid_handle_id(id))
      return false;
    ids.emplace_back(id);
  }
  return true;
}

} // namespace

std::optional<AwaitRequest> plain_await_request(std::string_view args_json) {
  simdjson::padded_string padded(args_json);
  simdjson::dom::object object;
  if (thread_json_parser().parse(padded).get_object().get(object))
    return std::nullopt;
  AwaitRequest r;
  bool seen_any = false, seen_all = false, seen_timeout = false;
  for (auto field : object) {
    auto key = field.key;
    bool* seen = key == "any" ? &seen_any : key == "all" ? &seen_all : key == "timeout_secs" ? &seen_timeout : nullptr;
    if (!seen || *seen)
      return std::nullopt; // an unknown key, or one given twice
    *seen = true;
    if (field.value.is_null())
      continue;
    if (key == "timeout_secs") {
      double t;
      auto type = field.value.type();
      if (type == simdjson::dom::element_type::INT64)
        t = static_cast<double>(field.value.get_int64().value_unsafe());
      else if (type == simdjson::dom::element_type::UINT64)
        t = static_cast<double>(field.value.get_uint64().value_unsafe());
      else if (type == simdjson::dom::element_type::DOUBLE)
        t = field.value.get_double().value_unsafe();
      else
        return std::nullopt;
      if (!is_duration(t))
        return std::nullopt;
      r.timeout_secs = t;
    } else if (!read_ids(field.value, key == "any" ? r.any : r.all)) {
      return std::nullopt;
    }
  }
  if (r.any.empty() && r.all.empty())
    return std::nullopt;
  return r;
}

} // namespace jp
