// RFD 037's completion condition for `await`: any of `any` (or `any` empty) and
// all of `all` stopped. One definition, kept by the await hub for each await as
// its handles change.
#pragma once

#include <string_view>
#include <vector>

#include "../messages/tool_state.hpp"

namespace jp {

class AwaitCondition {
public:
  /// `statuses`: one per distinct id of `req`, in distinct_ids order (as the
  /// registry answers watch or status for those ids).
  AwaitCondition(const AwaitRequest& req, std::vector<HandleStatus> statuses);

  bool met() const { return any_hit_ && all_left_ == 0; }

  /// The handle at position `i` of the statuses changed (it stopped, or asks, or
  /// was answered). Its status as now kept; a stopped status never changes again.
  const HandleStatus& update(size_t i, const HandleStatus& s);

  /// The status kept for `id`; nullptr when it is not awaited. (Linear: for the
  /// rare look by id; updates go by position.)
  const HandleStatus* find(std::string_view id) const;

  const std::vector<HandleStatus>& statuses() const { return statuses_; }

  /// Whether the condition can still be met if the handles marked in `blocked` (by
  /// position) never stop: their questions wait on the assistant, which waits here.
  bool reachable(const std::vector<char>& blocked) const;

  /// The answer: stopped handles completed, the rest pending, in request order.
  AwaitResult result(bool timed_out) &&;

private:
  std::vector<HandleStatus> statuses_;
  std::vector<char> in_any_, in_all_; // per position
  size_t all_left_ = 0;               // ids of `all` not stopped yet
  bool any_hit_ = false;              // some id of `any` stopped (or none given)
};

/// The ids of a request, each once, any's first.
std::vector<std::string> distinct_ids(const AwaitRequest& req);

} // namespace jp
