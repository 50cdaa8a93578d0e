#include "messages/answer_check.hpp"

#include <algorithm>
#include <fmt/format.h>

namespace jp {

Status answer_fits(const Question& q, const Json& answer) {
  auto refuse = [&](std::string_view takes) {
    auto got = answer.dump();
    if (got.size() > 80)
      got = got.substr(0, 80) + "…";
    return Status::fail(fmt::format("question `{}` (\"{}\") takes {}; got {}", q.id, q.text, takes, got));
  };
  switch (q.answer_type.kind) {
    case answer_kind::boolean:
      return answer.is_bool() ? Status::ok() : refuse("true or false");
    case answer_kind::select: {
      auto& opts = q.answer_type.options;
      if (answer.is_string() && std::find(opts.begin(), opts.end(), answer.as_string()) != opts.end())
        return Status::ok();
      std::string listed;
      for (auto& o : opts)
        listed += (listed.empty() ? "" : ", ") + Json(o).dump();
      return refuse(fmt::format("one of {}", listed));
    }
    case answer_kind::text:
      return answer.is_string() ? Status::ok() : refuse("a string");
  }
  return Status::ok();
}

} // namespace jp
