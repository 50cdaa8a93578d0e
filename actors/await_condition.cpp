#include "actors/await_condition.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <unordered_set>

#include "messages/id_hash.hpp"

namespace jp {

namespace {

// Up to this many ids, a linear look beats hashing (most awaits name a few).
constexpr size_t few_ids = 16;

/// Calls `k` with each id of `lists` the first time it comes.
template <class F>
void each_distinct(std::initializer_list<const std::vector<std::string>*> lists, F k) {
  size_t total = 0;
  for (auto* list : lists)
    total += list->size();
  // Ids are compared by hash first (ids alike but for their end, t0..t9, would each
  // be compared whole). A few are kept on the stack and looked through; more in one
  // open-addressed table of twice their number (no allocation per id).
  std::array<std::pair<size_t, std::string_view>, few_ids> few;
  size_t n_few = 0;
  struct Slot {
    size_t hash = 0;
    std::string_view id;
    bool used = false;
  };
  std::vector<Slot> table(total > few_ids ? std::bit_ceil(2 * total) : 0);
  size_t mask = table.empty() ? 0 : table.size() - 1;
  for (auto* list : lists)
    for (auto& id : *list) {
      auto h = id_hash(id);
      bool fresh;
      if (total <= few_ids) {
        fresh = std::none_of(few.begin(), few.begin() + static_cast<std::ptrdiff_t>(n_few),
                             [&](auto& f) { return f.first == h && f.second == id; });
        if (fresh)
          few[n_few++] = {h, id};
      } else {
        size_t at = h & mask;
        while (table[at].used && !(table[at].hash == h && table[at].id == id))
          at = (at + 1) & mask;
        fresh = !table[at].used;
        if (fresh)
          table[at] = {h, id, true};
      }
      if (fresh)
        k(id);
    }
}

size_t distinct_count(const std::vector<std::string>& ids) {
  size_t n = 0;
  each_distinct({&ids}, [&](const std::string&) { ++n; });
  return n;
}

} // namespace

AwaitCondition::AwaitCondition(const AwaitRequest& req, std::vector<HandleStatus> statuses)
    : statuses_(std::move(statuses)) {
  auto n = statuses_.size();
  // distinct_ids puts any's ids first, then those of all not in any: membership
  // follows from the position, but for ids in both lists.
  auto n_any = req.any.empty() ? size_t{0} : req.all.empty() ? n : std::min(n, distinct_count(req.any));
  in_any_.assign(n, 0);
  in_all_.assign(n, 0);
  std::fill(in_any_.begin(), in_any_.begin() + static_cast<ptrdiff_t>(n_any), 1);
  std::fill(in_all_.begin() + static_cast<ptrdiff_t>(n_any), in_all_.end(), 1);
  if (n_any > 0 && !req.all.empty()) {
    std::unordered_set<std::string_view, IdHash> all(req.all.begin(), req.all.end());
    for (size_t i = 0; i < n_any; ++i)
      in_all_[i] = all.count(statuses_[i].id) > 0;
  }
  any_hit_ = req.any.empty();
  for (size_t i = 0; i < n; ++i) {
    if (statuses_[i].state.stopped())
      any_hit_ = any_hit_ || in_any_[i];
    else if (in_all_[i])
      ++all_left_;
  }
}

const HandleStatus& AwaitCondition::update(size_t i, const HandleStatus& s) {
  auto& cur = statuses_[i];
  if (cur.state.stopped())
    return cur;
  cur = s; // the same id: its state, spill file and node
  if (cur.state.stopped()) {
    any_hit_ = any_hit_ || in_any_[i];
    if (in_all_[i])
      --all_left_;
  }
  return cur;
}

bool AwaitCondition::reachable(const std::vector<char>& blocked) const {
  bool any_left = any_hit_;
  for (size_t i = 0; i < statuses_.size(); ++i) {
    if (statuses_[i].state.stopped() || !blocked[i])
      any_left = any_left || in_any_[i];
    else if (in_all_[i])
      return false;
  }
  return any_left;
}

const HandleStatus* AwaitCondition::find(std::string_view id) const {
  auto it = std::find_if(statuses_.begin(), statuses_.end(), [&](const HandleStatus& s) { return s.id == id; });
  return it == statuses_.end() ? nullptr : &*it;
}

AwaitResult AwaitCondition::result(bool timed_out) && {
  AwaitResult r;
  r.timed_out = timed_out;
  size_t stopped = std::count_if(statuses_.begin(), statuses_.end(), [](auto& s) { return s.state.stopped(); });
  // The larger side takes the statuses as they are and gives up the others, so that
  // a stop among 200 pending moves the statuses after it one place, not all 200 (a
  // status is a dozen strings, each moved with a copy of its bytes).
  bool more_stopped = 2 * stopped >= statuses_.size();
  auto& kept = more_stopped ? r.completed : r.pending;
  auto& given = more_stopped ? r.pending : r.completed;
  kept = std::move(statuses_);
  given.reserve(more_stopped ? kept.size() - stopped : stopped);
  auto stays = kept.begin();
  for (auto it = kept.begin(); it != kept.end(); ++it) {
    if (it->state.stopped() != more_stopped) {
      given.push_back(std::move(*it));
      continue;
    }
    if (stays != it)
      *stays = std::move(*it);
    ++stays;
  }
  kept.erase(stays, kept.end());
  return r;
}

std::vector<std::string> distinct_ids(const AwaitRequest& req) {
  std::vector<std::string> ids;
  ids.reserve(req.any.size() + req.all.size());
  each_distinct({&req.any, &req.all}, [&](const std::string& id) { ids.push_back(id); });
  return ids;
}

} // namespace jp
