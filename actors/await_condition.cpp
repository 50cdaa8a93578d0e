#include "actors/await_condition.hpp"

#include <algorithm>
#include <unordered_set>

namespace jp {

AwaitCondition::AwaitCondition(const AwaitRequest& req, std::vector<HandleStatus> statuses)
    : statuses_(std::move(statuses)) {
  auto n = statuses_.size();
  in_any_.assign(n, 0);
  in_all_.assign(n, 0);
  any_hit_ = req.any.empty();
  std::unordered_set<std::string_view> any(req.any.begin(), req.any.end());
  std::unordered_set<std::string_view> all(req.all.begin(), req.all.end());
  for (size_t i = 0; i < n; ++i) {
    auto& s = statuses_[i];
    index_.emplace(s.id, i);
    in_any_[i] = any.count(s.id) > 0;
    in_all_[i] = all.count(s.id) > 0;
    if (s.state.stopped())
      any_hit_ = any_hit_ || in_any_[i];
    else if (in_all_[i])
      ++all_left_;
  }
}

const HandleStatus* AwaitCondition::update(HandleStatus s) {
  auto it = index_.find(s.id);
  if (it == index_.end())
    return nullptr;
  auto& cur = statuses_[it->second];
  if (cur.state.stopped())
    return &cur;
  cur = std::move(s); // the same id: its state, spill file and node
  if (cur.state.stopped()) {
    any_hit_ = any_hit_ || in_any_[it->second];
    if (in_all_[it->second])
      --all_left_;
  }
  return &cur;
}

const HandleStatus* AwaitCondition::find(std::string_view id) const {
  auto it = index_.find(id);
  return it == index_.end() ? nullptr : &statuses_[it->second];
}

AwaitResult AwaitCondition::result(bool timed_out) && {
  index_.clear(); // its keys view the statuses moved out next
  AwaitResult r;
  r.timed_out = timed_out;
  for (auto& s : statuses_)
    (s.state.stopped() ? r.completed : r.pending).push_back(std::move(s));
  return r;
}

bool await_condition_met(const AwaitRequest& req, std::vector<HandleStatus> statuses) {
  return AwaitCondition(req, std::move(statuses)).met();
}

std::vector<std::string> distinct_ids(const AwaitRequest& req) {
  std::vector<std::string> ids;
  for (auto* list : {&req.any, &req.all})
    for (auto& id : *list)
      if (std::find(ids.begin(), ids.end(), id) == ids.end())
        ids.push_back(id);
  return ids;
}

} // namespace jp
