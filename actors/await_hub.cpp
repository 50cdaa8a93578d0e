#include "actors/await_hub.hpp"

#include <algorithm>
#include <optional>

#include "messages/json_codec.hpp"

namespace jp {

namespace {

/// The same status of one handle: the registry counts every change of a handle (the
/// same seq is the same status); one not counted (0) is compared whole.
bool same_status(const HandleStatus& a, const HandleStatus& b) {
  return a.seq != 0 ? a.seq == b.seq : a == b;
}

} // namespace

void AwaitHub::watching(std::span<const std::string> ids) {
  for (auto& id : ids)
    ++expected_[id].answers;
}

void AwaitHub::unwatched(std::span<const std::string> ids) {
  for (auto& id : ids)
    if (auto e = expected_.find(id); e != expected_.end() && --e->second.answers == 0)
      expected_.erase(e);
}

AwaitHub::Effects AwaitHub::add(Key key, const AwaitRequest& request, std::vector<HandleStatus> statuses) {
  for (auto& s : statuses) {
    auto e = expected_.find(s.id);
    bool forgotten = false;
    if (e != expected_.end()) {
      if (e->second.newest && e->second.newest->seq > s.seq)
        s = *e->second.newest; // heard before this older answer came
      forgotten = e->second.forgotten;
      if (--e->second.answers == 0)
        expected_.erase(e);
    }
    if (!forgotten)
      remember(s);
  }
  return start(key, request, std::move(statuses));
}

std::optional<AwaitHub::Effects> AwaitHub::add_rest(Key key, const AwaitRequest& request) {
  if (!left_ || !request.all.empty())
    return std::nullopt;
  auto& pending = left_->pending;
  if (request.any.size() != pending.size())
    return std::nullopt;
  // Exactly the rest, each still known (what add_known would start from: not
  // forgotten, kept). One that changed since starts as the hub knows it now: a stop
  // that came while the answer was on its way (two stops close together, W3's
  // tail). Looked up unless answer_text found each unchanged while writing the
  // answer and nothing known changed since.
  bool checked = left_checked_ == known_version_;
  std::vector<std::pair<size_t, const HandleStatus*>> changed;
  for (size_t i = 0; i < pending.size(); ++i) {
    if (request.any[i] != pending[i].id)
      return std::nullopt;
    if (checked)
      continue;
    auto k = known_.find(pending[i].id);
    if (k == known_.end())
      return std::nullopt;
    if (!same_status(k->second.status, pending[i]))
      changed.emplace_back(i, &k->second.status);
  }
  // Every one stopped since: answered from their texts (stopped_answer).
  if (changed.size() == pending.size() &&
      std::all_of(changed.begin(), changed.end(), [](auto& c) { return c.second->state.stopped(); }))
    return std::nullopt;
  // The answer's own statuses, when nobody holds the answer any more, else a copy.
  std::vector<HandleStatus> statuses;
  if (left_.use_count() == 1)
    statuses = std::move(pending);
  else
    statuses = pending;
  for (auto& [i, now] : changed)
    statuses[i] = *now;
  left_ = nullptr;
  left_checked_.reset();
  return start(key, request, std::move(statuses));
}

std::optional<AwaitHub::Effects> AwaitHub::add_known(Key key, const AwaitRequest& request,
                                                     std::span<const std::string> ids) {
  if (!remembers_)
    return std::nullopt;
  std::vector<HandleStatus> statuses;
  statuses.reserve(ids.size());
  for (auto& id : ids) {
    auto k = known_.find(id);
    if (k == known_.end())
      return std::nullopt;
    statuses.push_back(k->second.status);
  }
  return start(key, request, std::move(statuses));
}

const HandleStatus* AwaitHub::known(const std::string& id) const {
  auto k = known_.find(id);
  return k == known_.end() ? nullptr : &k->second.status;
}

std::optional<std::string> AwaitHub::stopped_answer(std::span<const std::string> ids, uint64_t cap) {
  if (!remembers_)
    return std::nullopt;
  texts_.clear();
  for (auto& id : ids) {
    auto k = known_.find(id);
    if (k == known_.end() || !k->second.status.state.stopped())
      return std::nullopt;
    texts_.push_back(&text_of(k->second));
  }
  auto text = completed_await_text(texts_);
  if (text.size() > cap)
    return std::nullopt; // await_answer_text cuts it to fit
  return text;
}

std::optional<std::string> AwaitHub::answer_text(const AwaitResult& result, uint64_t cap) {
  size_t pending_known = 0;
  auto text = await_result_text(result, [&](std::string& out, const HandleStatus& s, bool with_result) {
    // The registry counts every change of a handle: the same seq is the same status.
    if (remembers_ && s.seq != 0 && with_result == s.state.stopped())
      if (auto k = known_.find(s.id); k != known_.end() && k->second.status.seq == s.seq) {
        out += text_of(k->second);
        pending_known += !with_result;
        return;
      }
    append_status_json(out, s, with_result);
  });
  // Each of the rest is the status the hub knows of its handle: add_rest need not
  // look them up again while nothing known changes.
  if (left_ && &result == left_.get() && pending_known == result.pending.size())
    left_checked_ = known_version_;
  if (text.size() > cap)
    return std::nullopt; // await_answer_text cuts it to fit
  return text;
}

const std::string& AwaitHub::text_of(Known& known) {
  if (known.text.empty())
    append_status_json(known.text, known.status, known.status.state.stopped());
  return known.text;
}

void AwaitHub::forget(const std::string& id) {
  known_.erase(id);
  ++known_version_;
  if (auto e = expected_.find(id); e != expected_.end())
    e->second.forgotten = true;
}

size_t AwaitHub::ids_hash(const AwaitRequest& request) {
  size_t h = request.any.size();
  for (auto* list : {&request.any, &request.all})
    for (auto& id : *list)
      h = h * 1000003 ^ id_hash(id);
  return h;
}

namespace {

/// Whether the hub keeps `s`: one-shot runs ("#N") are no handles an await names
/// again, and a large result is left to the registry, which keeps it anyway (this
/// would be a second copy).
bool keepable(const HandleStatus& s) {
  constexpr size_t kept_bytes = 4096;
  return !s.id.starts_with('#') &&
         s.state.content.size() + s.state.error.message.size() + s.state.question.text.size() <= kept_bytes;
}

} // namespace

void AwaitHub::remember(const HandleStatus& s) {
  if (!remembers_)
    return;
  auto k = known_.find(s.id);
  if (k == known_.end()) {
    if (keepable(s)) {
      known_.emplace(s.id, Known{s, {}});
      ++known_version_;
    }
  } else {
    refresh(k, s);
  }
}

void AwaitHub::refresh(ById<Known>::iterator k, const HandleStatus& s) {
  if (s.seq != 0 && s.seq <= k->second.status.seq)
    return; // older than what is known
  ++known_version_;
  if (keepable(s))
    k->second = Known{s, {}};
  else
    known_.erase(k);
}

AwaitHub::Effects AwaitHub::start(Key key, const AwaitRequest& request, std::vector<HandleStatus> statuses) {
  Effects fx;
  // Every handle stopped: any condition holds, and all of them are its result.
  if (std::all_of(statuses.begin(), statuses.end(), [](auto& s) { return s.state.stopped(); })) {
    fx.answers.push_back({{key}, std::make_shared<const AwaitResult>(AwaitResult{std::move(statuses), {}})});
    return fx;
  }
  if (awaits_.count(key))
    return fx; // a key is the host's and never reused
  // Alike awaits share a group while they hold the same statuses (a newer answer
  // than the group has taken in yet begins a group of its own).
  auto hash = ids_hash(request);
  for (auto [at, end] = by_request_.equal_range(hash); at != end; ++at) {
    auto& group = groups_.at(at->second);
    if (group.request.any == request.any && group.request.all == request.all && group.cond.statuses() == statuses) {
      group.keys.push_back(key);
      awaits_.emplace(key, at->second);
      return fx; // its questions are already put for the group
    }
  }
  AwaitCondition cond(request, std::move(statuses));
  if (cond.met()) {
    auto result = std::make_shared<AwaitResult>(std::move(cond).result(false));
    leave(request, result);
    fx.answers.push_back({{key}, std::move(result)});
    return fx;
  }
  auto& group = groups_.emplace(key, Group{request, hash, std::move(cond), {key}, {}}).first->second;
  awaits_.emplace(key, key);
  by_request_.emplace(hash, key);
  auto& kept = group.cond.statuses();
  for (size_t i = 0; i < kept.size(); ++i) {
    if (kept[i].state.stopped())
      continue;
    auto& list = by_id_[kept[i].id];
    if (list.size() > 2 * groups_.size() + 8) // mostly groups long answered: drop them
      std::erase_if(list, [this](const Watching& w) { return !groups_.count(w.group); });
    list.push_back({key, i});
  }
  for (size_t i = 0; i < kept.size(); ++i)
    consider_waiting(key, group, i, kept[i], fx);
  return fx;
}

AwaitHub::Effects AwaitHub::update(std::span<const HandleStatus> batch) {
  Effects fx;
  std::vector<GroupId> met; // in the order they were met
  for (auto& s : batch) {
    if (auto e = expected_.find(s.id); e != expected_.end())
      if (!e->second.newest || s.seq >= e->second.newest->seq)
        e->second.newest = s;
    // Only what is already known is brought up to date: an update of a forgotten
    // id may be of the handle that held it before the host spawned it again.
    if (auto k = known_.find(s.id); k != known_.end())
      refresh(k, s);
    auto it = by_id_.find(s.id);
    if (it == by_id_.end())
      continue;
    auto watching = std::move(it->second);
    by_id_.erase(it);
    std::vector<Watching> kept;
    for (auto w : watching) {
      auto g = groups_.find(w.group);
      if (g == groups_.end())
        continue; // answered, or timed out
      auto& cond = g->second.cond;
      if (s.seq != 0 && s.seq <= cond.statuses()[w.at].seq) {
        kept.push_back(w); // older than what it holds (came behind a shared view's answer)
        continue;
      }
      bool was_met = cond.met();
      auto& cur = cond.update(w.at, s);
      if (!cur.state.stopped()) {
        kept.push_back(w);
        consider_waiting(w.group, g->second, w.at, cur, fx);
      } else if (!was_met && cond.met()) {
        met.push_back(w.group);
      }
    }
    // A stopped handle never changes again: nobody needs to hear of it any more.
    if (!kept.empty())
      by_id_[s.id] = std::move(kept);
  }
  for (auto g : met)
    if (auto group = groups_.find(g); group != groups_.end()) {
      auto result = std::make_shared<AwaitResult>(std::move(group->second.cond).result(false));
      leave(group->second.request, result);
      finish(g, std::move(result), fx);
    }
  return fx;
}

AwaitHub::Effects AwaitHub::resolved(Key key, const std::string& id, const Question& question, bool answered) {
  Effects fx;
  auto g = groups_.find(key);
  if (answered || g == groups_.end())
    return fx;
  // Only the assistant can answer it, and it waits here: the await ends now if the
  // rest cannot meet its condition (`any` of another handle still can).
  auto& group = g->second;
  auto* cur = group.cond.find(id);
  if (!cur || cur->state.kind != state_kind::waiting || !(cur->state.question == question))
    return fx;
  if (group.blocked.empty())
    group.blocked.assign(group.cond.statuses().size(), 0);
  group.blocked[static_cast<size_t>(cur - group.cond.statuses().data())] = 1;
  if (!group.cond.reachable(group.blocked))
    finish(key, std::make_shared<const AwaitResult>(std::move(group.cond).result(false)), fx);
  return fx;
}

AwaitHub::Effects AwaitHub::timeout(Key key) {
  Effects fx;
  auto a = awaits_.find(key);
  if (a == awaits_.end())
    return fx;
  auto g = groups_.find(a->second);
  auto& group = g->second;
  if (group.keys.size() == 1) {
    finish(g->first, std::make_shared<const AwaitResult>(std::move(group.cond).result(true)), fx);
    return fx;
  }
  // The others of its group wait on.
  awaits_.erase(a);
  std::erase(group.keys, key);
  fx.answers.push_back({{key}, std::make_shared<const AwaitResult>(AwaitCondition(group.cond).result(true))});
  return fx;
}

void AwaitHub::leave(const AwaitRequest& request, const std::shared_ptr<AwaitResult>& result) {
  if (remembers_ && request.all.empty() && !result->pending.empty()) {
    left_ = result;
    left_checked_.reset();
  }
}

void AwaitHub::consider_waiting(GroupId g, Group& group, size_t at, const HandleStatus& s, Effects& fx) {
  if (s.state.kind != state_kind::waiting) {
    if (!group.asked.empty())
      group.asked.erase(s.id); // answered: a later question is a new one
    if (!group.blocked.empty())
      group.blocked[at] = 0;
    return;
  }
  auto [it, made] = group.asked.try_emplace(s.id, s.state.question);
  if (!made && it->second == s.state.question)
    return; // already put
  if (!group.blocked.empty())
    group.blocked[at] = 0; // a new question: put to the resolver again
  it->second = s.state.question;
  fx.asks.push_back({g, s.id, s.state.question});
}

void AwaitHub::finish(GroupId g, std::shared_ptr<const AwaitResult> result, Effects& fx) {
  auto group = groups_.find(g);
  if (group == groups_.end())
    return;
  for (auto key : group->second.keys)
    awaits_.erase(key);
  fx.answers.push_back({std::move(group->second.keys), std::move(result)});
  for (auto [at, end] = by_request_.equal_range(group->second.hash); at != end; ++at)
    if (at->second == g) {
      by_request_.erase(at);
      break;
    }
  groups_.erase(group);
}

} // namespace jp
