#include "messages/response_cap.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <numeric>
#include <string_view>

#include "messages/json_codec.hpp"
#include "messages/omission_marker.hpp"

namespace jp {

namespace {

// Room for "…[N bytes omitted]…\n" as JSON text (and its comma and quotes in a trace).
constexpr size_t marker_room = 48;
// Room for the response's own ,"omitted_bytes":N.
constexpr size_t total_room = 40;

size_t escaped_size(unsigned char c) {
  switch (c) {
    case '"': case '\\': case '\n': case '\r': case '\t': case '\b': case '\f':
      return 2;
    default:
      return c < 0x20 ? 6 : 1;
  }
}

size_t escaped_size(std::string_view s) {
  size_t n = 0;
  for (unsigned char c : s)
    n += escaped_size(c);
  return n;
}

std::string omission(uint64_t n, std::string_view hint = {}) {
  return fmt::format("…[{} bytes omitted{}]…", n, hint);
}

/// The output that `cut`, a part left out, stood for: its bytes, each marker of an
/// earlier omission in it ("\n…[N bytes omitted]…\n", the output cap's) counted as
/// the N bytes it stands for. (Counted as its own bytes, a look cut to 32 KiB of 109 KB
/// and then to the response's share said 29 KB were left out.)
uint64_t stood_for(std::string_view cut) {
  uint64_t n = cut.size();
  for (auto at = find_omission_marker(cut, 0); at != std::string_view::npos; at = find_omission_marker(cut, at + 1)) {
    auto marker = omission_marker_at(cut, at);
    if (!marker)
      continue;
    n = n + marker->bytes - std::min<uint64_t>(n + marker->bytes, marker->to - marker->from);
    at = marker->to - 1;
  }
  return n;
}

} // namespace

std::string keep_tail(const std::string& s, size_t budget, uint64_t& omitted, std::string_view hint) {
  auto room = marker_room + escaped_size(hint);
  budget = budget > room ? budget - room : 0;
  size_t start = s.size();
  for (size_t used = 0; start > 0; --start) {
    used += escaped_size(static_cast<unsigned char>(s[start - 1]));
    if (used > budget)
      break;
  }
  start = s.size() - utf8_tail(s, s.size() - start).size(); // a whole character
  auto left = stood_for(std::string_view(s).substr(0, start));
  omitted += left;
  return omission(left, hint) + "\n" + s.substr(start);
}

namespace {

// Room for a failure's ,"content":"" around its output.
constexpr size_t content_room = 14;

size_t error_cost(const ToolError& e) {
  size_t n = escaped_size(e.message);
  for (auto& line : e.trace)
    n += escaped_size(line) + 3; // quotes and comma
  return n;
}

// What a completed result costs in the response beyond its fixed part.
size_t cost(const HandleStatus& s) {
  if (s.state.ok)
    return escaped_size(s.state.content);
  return error_cost(s.state.error) + (s.state.content.empty() ? 0 : escaped_size(s.state.content) + content_room);
}

// Fits a result into `budget` bytes, keeping its tail: an error its message's tail, or
// its message and as many last trace lines as fit.
void cut(HandleStatus& s, size_t budget, uint64_t& omitted) {
  // Without a spill file (its output was under the output cap) the whole result is
  // the handle's own: the marker says where to read it.
  auto hint = s.output_file.empty() ? fmt::format("; fetch `{}` for all of it", s.id) : std::string();
  if (budget < marker_room + escaped_size(hint)) {
    // No room even for the note of what was left out: a thousand such notes took the
    // answer past the cap. The output goes, but for "…" (3 bytes: left out, not
    // empty; omitted_bytes counts it); a failure keeps its message's tail within the
    // share. A text no longer than "…" stays.
    if (escaped_size(s.state.content) > 3) {
      omitted += stood_for(s.state.content);
      s.state.content = s.state.ok ? "…" : "";
    }
    if (s.state.ok)
      return;
    auto& e = s.state.error;
    for (auto& line : e.trace)
      omitted += line.size();
    e.trace.clear();
    size_t start = e.message.size();
    for (size_t used = 0; start > 0; --start) {
      used += escaped_size(static_cast<unsigned char>(e.message[start - 1]));
      if (used > budget)
        break;
    }
    start = e.message.size() - utf8_tail(e.message, e.message.size() - start).size(); // a whole character
    omitted += start;
    e.message.erase(0, start);
    return;
  }
  if (s.state.ok) {
    s.state.content = keep_tail(s.state.content, budget, omitted, hint);
    return;
  }
  auto& e = s.state.error;
  // A failure's output gives way first: its message and the tail of its stderr
  // (the trace) say what failed; the output gets what they leave.
  if (!s.state.content.empty()) {
    size_t error = error_cost(e) + content_room;
    if (error + marker_room + escaped_size(hint) < budget) {
      s.state.content = keep_tail(s.state.content, budget - error, omitted, hint);
      return;
    }
    omitted += stood_for(s.state.content);
    s.state.content.clear();
    if (error_cost(e) <= budget)
      return; // the error whole; the answer's omitted_bytes counts the output
  }
  size_t message = escaped_size(e.message);
  if (message + marker_room + escaped_size(hint) >= budget) {
    e.message = keep_tail(e.message, budget, omitted, hint);
    for (auto& line : e.trace)
      omitted += line.size();
    e.trace.clear();
    return;
  }
  size_t room = budget - message - marker_room - escaped_size(hint);
  size_t first = e.trace.size(); // the first trace line kept
  for (size_t used = 0; first > 0; --first) {
    used += escaped_size(e.trace[first - 1]) + 3;
    if (used > room)
      break;
  }
  uint64_t left_out = 0;
  for (size_t i = 0; i < first; ++i)
    left_out += e.trace[i].size();
  e.trace.erase(e.trace.begin(), e.trace.begin() + static_cast<std::ptrdiff_t>(first));
  e.trace.insert(e.trace.begin(), omission(left_out, hint));
  omitted += left_out;
}

} // namespace

std::string await_answer_text(const AwaitResult& r, uint64_t cap) {
  auto text = await_result_text(r);
  return text.size() <= cap ? text : await_result_text(cap_response(r, cap));
}

AwaitResult cap_response(AwaitResult r, uint64_t cap) {
  if (await_result_text(r).size() <= cap)
    return r;
  // The texts as they will be written: a byte that starts no UTF-8 sequence becomes
  // U+FFFD (3 bytes), which the sizes below would count as 1 (a binary output's
  // answer grew to about 3 times the cap).
  for (auto& s : r.completed) {
    s.state.content = sanitize_utf8(s.state.content);
    s.state.error.message = sanitize_utf8(s.state.error.message);
    for (auto& line : s.state.error.trace)
      line = sanitize_utf8(line);
  }
  // What always stays: the response without any result text.
  AwaitResult bare = r;
  for (auto& s : bare.completed) {
    s.state.content.clear();
    s.state.error.message.clear();
    s.state.error.trace.clear();
  }
  size_t fixed = await_result_text(bare).size() + total_room;
  size_t left = cap > fixed ? static_cast<size_t>(cap - fixed) : 0;
  // Results within their share stay whole; the rest keep their tails.
  auto& done = r.completed;
  std::vector<size_t> costs(done.size());
  for (size_t i = 0; i < done.size(); ++i)
    costs[i] = cost(done[i]);
  auto shares = fair_shares(costs, left);
  for (size_t i = 0; i < done.size(); ++i)
    if (costs[i] > shares[i])
      cut(done[i], shares[i], r.omitted_bytes);
  return r;
}

std::vector<size_t> fair_shares(const std::vector<size_t>& costs, size_t room) {
  std::vector<size_t> order(costs.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return costs[a] < costs[b]; });
  std::vector<size_t> shares(costs.size());
  for (size_t k = 0; k < order.size(); ++k) {
    auto i = order[k];
    shares[i] = std::min(costs[i], room / (order.size() - k));
    room -= shares[i];
  }
  return shares;
}

size_t json_string_size(std::string_view s) {
  return escaped_size(s);
}

} // namespace jp
