// What W3's driver reads of an `await any` answer, as an assistant would: the id and
// result of each handle that completed, nothing of those still pending (it knows
// which it awaited). Read with simdjson's on-demand parser: a tree of every pending
// status (about 170 in W3) would cost the loop that issues the next await two thirds
// as much as jp-actors' own cycle (bench/README.md, "Issue 18 on this VM
// (2026-11-27, session 23)").
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "messages/result.hpp"

namespace jp::bench {

struct Completed {
  std::string id;
  std::string result;
};

/// Fails, naming what is wrong, on anything but an await answer whose completed
/// handles each have an id and a result.
Result<std::vector<Completed>> read_any_answer(std::string_view text);

} // namespace jp::bench
