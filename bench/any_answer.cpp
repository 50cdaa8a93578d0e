#include "bench/any_answer.hpp"

#include <fmt/format.h>
#include <simdjson.h>

namespace jp::bench {

Result<std::vector<Completed>> read_any_answer(std::string_view text) {
  static thread_local simdjson::ondemand::parser parser;
  auto bad = [&](std::string_view why) {
    return Error{fmt::format("W3: {}: {}", why, text.substr(0, 400))};
  };
  simdjson::padded_string padded(text);
  simdjson::ondemand::document doc;
  simdjson::ondemand::array completed;
  if (parser.iterate(padded).get(doc) || doc.find_field_unordered("completed").get(completed))
    return bad("not an await answer");
  std::vector<Completed> out;
  for (auto s : completed) {
    simdjson::ondemand::object o;
    std::string_view id, result;
    if (s.get(o) || o.find_field_unordered("id").get(id))
      return bad("a completed handle without its id");
    if (o.find_field_unordered("result").get(result) || result.empty())
      return bad("a handle ended without its stamp");
    out.push_back(Completed{std::string(id), std::string(result)});
  }
  return out;
}

} // namespace jp::bench
