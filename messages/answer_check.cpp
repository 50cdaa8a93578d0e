#include "messages/answer_check.hpp"

#include <algorithm>
#include <fmt/format.h>

namespace jp {

Result<Json> answer_as_declared(const Question& q, const Json& answer) {
  auto refuse = [&](std::string_view takes) {
    auto got = answer.dump();
    if (got.size() > 80)
      got = got.substr(0, 80) + "…";
    return Error{fmt::format("question `{}` (\"{}\") takes {}; got {}", q.id, q.text, takes, got)};
  };
  switch (q.answer_type.kind) {
    case answer_kind::boolean:
      if (answer.is_bool())
        return answer;
      if (answer.is_string() && (answer.as_string() == "true" || answer.as_string() == "false"))
        return Json(answer.as_string() == "true");
      return refuse("true or false");
    case answer_kind::select: {
      auto& opts = q.answer_type.options;
      if (answer.is_string() && std::find(opts.begin(), opts.end(), answer.as_string()) != opts.end())
        return answer;
      std::string listed;
      for (auto& o : opts)
        listed += (listed.empty() ? "" : ", ") + Json(o).dump();
      return refuse(fmt::format("one of {}", listed));
    }
    case answer_kind::text:
      return answer.is_string() ? Result<Json>(answer) : refuse("a string");
  }
  return answer;
}

Result<Json> answer_text_as_declared(const Question& q, const std::string& json_text) {
  auto parsed = Json::parse(json_text);
  return answer_as_declared(q, parsed.ok() ? *parsed : Json(json_text));
}

} // namespace jp
