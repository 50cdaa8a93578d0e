// The cap on a whole `await` response (runtime.response_cap_bytes): an await over a
// hundred handles must not hand the model megabytes. Ids, states, questions and
// output files always stay; results share what is left of the cap.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tool_state.hpp"

namespace jp {

/// `r` with its completed results cut so that await_result_text(r) fits `cap` bytes
/// (as long as the ids, states and questions alone do): results that fit their
/// share stay whole, larger ones keep their tails after "…[N bytes omitted]…\n"
/// (an error keeps its message's tail or its last trace lines; a result with no
/// spill file says "…[N bytes omitted; fetch `ID` for all of it]…"), and
/// `omitted_bytes` says how much was left out in all.
AwaitResult cap_response(AwaitResult r, uint64_t cap);

/// `s` cut to its last characters that fit `budget` bytes of JSON text, after
/// "…[N bytes omitted<hint>]…\n"; N is added to `omitted`.
std::string keep_tail(const std::string& s, size_t budget, uint64_t& omitted, std::string_view hint = {});

/// Bytes for each of `costs` out of `room`, smallest first: each gets its whole cost
/// while that fits an equal share of what is left; the rest split what remains
/// equally.
std::vector<size_t> fair_shares(const std::vector<size_t>& costs, size_t room);

/// The size of `s` as the text of a JSON string (its escapes counted, no quotes).
size_t json_string_size(std::string_view s);

/// The await's answer as the assistant reads it: await_result_text of `r`, capped
/// as above. (Written once when it fits, which it mostly does; `r` is not copied.)
std::string await_answer_text(const AwaitResult& r, uint64_t cap);

} // namespace jp
