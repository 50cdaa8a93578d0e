#include "runtime/cli/tty_prompt.hpp"

#include <cstdio>
#include <fmt/format.h>

namespace jp {

namespace {

std::optional<std::string> read_line(std::FILE* tty) {
  char buf[4096];
  if (!std::fgets(buf, sizeof buf, tty))
    return std::nullopt;
  std::string line(buf);
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r'))
    line.pop_back();
  return line;
}

} // namespace

std::optional<Json> tty_ask(const std::string& tool, const Question& q) {
  std::FILE* tty = std::fopen("/dev/tty", "r+");
  if (!tty)
    return std::nullopt;
  std::optional<Json> answer;
  auto deflt = q.default_json.empty() ? Result<Json>(Error{""}) : Json::parse(q.default_json);
  if (!q.pre_amble.empty())
    fmt::print(tty, "{}\n", q.pre_amble);
  for (int tries = 0; tries < 5 && !answer; ++tries) {
    switch (q.answer_type.kind) {
      case answer_kind::boolean: fmt::print(tty, "[{}] {} [y/n] ", tool, q.text); break;
      case answer_kind::select:
        fmt::print(tty, "[{}] {} ({}) ", tool, q.text, fmt::join(q.answer_type.options, "/"));
        break;
      case answer_kind::text: fmt::print(tty, "[{}] {} ", tool, q.text); break;
    }
    std::fflush(tty);
    auto line = read_line(tty);
    if (!line)
      break;
    if (line->empty() && deflt) {
      answer = *deflt;
      break;
    }
    switch (q.answer_type.kind) {
      case answer_kind::boolean:
        if (*line == "y" || *line == "yes")
          answer = Json(true);
        else if (*line == "n" || *line == "no")
          answer = Json(false);
        break;
      case answer_kind::select:
        for (auto& o : q.answer_type.options)
          if (o == *line)
            answer = Json(o);
        break;
      case answer_kind::text: answer = Json(*line); break;
    }
  }
  std::fclose(tty);
  return answer;
}

} // namespace jp
