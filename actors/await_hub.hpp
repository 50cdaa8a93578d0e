// `await` (RFD 037) for one turn: every await it has waiting, each handle watched
// once. The turn subscribes at the registry (watch) as the one watcher of its
// awaits and hands the hub what it hears; the hub says which awaits that answers
// and which waiting questions to put to the resolver. Plain data, no actor: one
// stop answers every await it completes in one pass, and awaits with the same
// request share one result (1,000 awaits on one handle: one answer written once,
// not 1,000 actors each writing its own). Awaits alike (the same ids, any and all,
// holding the same statuses) wait as one group: a stop updates one condition for
// all of them. It also remembers what it heard of each
// handle, so that an await naming only handles it knows is answered without
// asking the registry again (a re-issued await, a poll of stopped handles).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <map>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "await_condition.hpp"
#include "../messages/id_hash.hpp"

namespace jp {

class AwaitHub {
public:
  using Key = uint64_t; // the host's name for one await (it holds the reply)

  /// `remembers`: whether what the registry says of a handle stays true until the
  /// host says otherwise (forget). So when the host watches one registry, which
  /// spawns only through it; not behind a shared view, where other agents'
  /// registries answer too and may spawn an id again unseen.
  explicit AwaitHub(bool remembers = true) : remembers_(remembers) {}

  /// Awaits answered alike, in the order they came, and their one result: a stop
  /// that answers 1,000 awaits of one group is one entry, not 1,000.
  struct Answer {
    std::vector<Key> keys;
    std::shared_ptr<const AwaitResult> result;
  };
  /// Handle `id` waits on `question`, for the awaits of group `key` (named by the
  /// first await of the group): the host puts it to its resolver (a person, the
  /// inquiry backend) and reports with resolved().
  struct Ask {
    Key key;
    std::string id;
    Question question;
  };
  /// What the host does next: deliver the answers, in order, and ask.
  struct Effects {
    std::vector<Answer> answers;
    std::vector<Ask> asks;
  };

  /// The host asks the registry to watch `ids` (distinct) for an await; add()
  /// follows with the answer, or unwatched() when none comes. Meanwhile the hub keeps
  /// the newest update it hears of each id, and add() takes it over an older answer:
  /// through a shared view the answer can arrive after the registry's own later
  /// updates (HandleStatus::seq orders them).
  void watching(std::span<const std::string> ids);
  void unwatched(std::span<const std::string> ids);

  /// A new await; `statuses` are the registry's answer to watching its ids
  /// (distinct_ids order, announced with watching()). Answered at once when its
  /// condition already holds.
  Effects add(Key key, const AwaitRequest& request, std::vector<HandleStatus> statuses);

  /// A new await answered from what the hub knows, when it knows every one of `ids`
  /// (distinct_ids of `request`): the newest status heard of each, kept since the
  /// registry's answer to a watch (it tells the watcher every change after that, and
  /// a stopped handle never changes). nullopt: some id is not known; the host asks
  /// the registry (watching, add). The host hands over its queued updates first.
  std::optional<Effects> add_known(Key key, const AwaitRequest& request, std::span<const std::string> ids);

  /// A new await of exactly the handles the last stop's answer left pending, in its
  /// order (the assistant awaiting the rest: `await any` re-issued), when the hub
  /// still knows each (as add_known would start): it starts from the statuses that
  /// answer held, those that changed since as the hub knows them now, with no ids
  /// told apart and no copy of the others. nullopt: not such an await, or every one
  /// of them stopped since; distinct_ids and stopped_answer / add_known / add as
  /// usual. The host hands over its queued updates first.
  std::optional<Effects> add_rest(Key key, const AwaitRequest& request);

  /// The answer to an await of `ids` (distinct_ids order) when the hub knows every
  /// one of them stopped: the text await_answer_text would write of their statuses,
  /// when it fits `cap`, from each status's text written once (an await of stopped
  /// handles copies no status and builds no result). nullopt: not so; add_known or
  /// add answer it. The host hands over its queued updates first.
  std::optional<std::string> stopped_answer(std::span<const std::string> ids, uint64_t cap);

  /// An answer's text as await_answer_text writes it, when it fits `cap`: each
  /// status the hub knows as it is (its seq) from its text written once, the others
  /// written here (a stop's answer lists every pending handle of its await again,
  /// each unchanged since the last answer). nullopt: it does not fit, and
  /// await_answer_text cuts it.
  std::optional<std::string> answer_text(const AwaitResult& result, uint64_t cap);

  /// The host is about to spawn `id` (or reserve it for a batch): whatever was
  /// known of it is of the handle that held the id before, and so is a watch answer
  /// for it still on its way. Also when the handle itself answered the host (fetch,
  /// apply, abort): the registry may not have told the host yet what the handle
  /// told it first; asked again, it answers after that.
  void forget(const std::string& id);

  /// Watched handles changed: they stopped, ask, or were answered. All of `batch`
  /// is taken in before any await answers, so an answer holds every stop known by
  /// then (the turn hands over what queued up while it was busy).
  Effects update(std::span<const HandleStatus> batch);
  Effects update(const HandleStatus& s) { return update(std::span<const HandleStatus>(&s, 1)); }

  /// The resolver's word on a question put to it (`key`: the Ask's): not answered,
  /// and the handle still waits on it, the awaits answer now with it pending (only
  /// the assistant can answer it, and it is blocked in this await).
  Effects resolved(Key key, const std::string& id, const Question& question, bool answered);

  /// The await's timeout fired: it answers with what it has (aborting nothing).
  Effects timeout(Key key);

  /// The status the hub knows of `id` (none: it knows none).
  const HandleStatus* known(const std::string& id) const;

  bool waiting(Key key) const { return awaits_.count(key) > 0; }
  size_t size() const { return awaits_.size(); }

private:
  // A status the hub knows, with its text as an answer lists it (a stopped one
  // among the completed, with its result; any other among the pending), written
  // when an answer first needs it.
  struct Known {
    HandleStatus status;
    std::string text; // "" until written
  };
  /// A table by handle id, looked up by string or view alike.
  template <class V>
  using ById = std::unordered_map<std::string, V, IdHash, std::equal_to<>>;
  /// `known`'s text, written now if it is not yet.
  static const std::string& text_of(Known& known);
  /// Awaits alike waiting as one: their request's ids, one condition, their keys.
  struct Group {
    AwaitRequest request; // its timeout is each await's own
    size_t hash = 0;      // ids_hash(request)
    AwaitCondition cond;
    std::vector<Key> keys; // in the order they came
    std::map<std::string, Question> asked; // handle id -> the question put while it still asks it
    std::vector<char> blocked; // by position: asks what only the assistant can answer (empty: none)
  };
  using GroupId = Key; // the key of the await it began with
  /// A hash of a request's ids (any, all): groups are found by it, and told apart
  /// by their requests (no copy of the ids as a key).
  static size_t ids_hash(const AwaitRequest& request);

  /// Puts a pending handle's question to the resolver, once per group and question
  /// asked (a handle that asks again, even the same, is asked about again).
  /// `at`: the handle's position in the group's condition.
  void consider_waiting(GroupId g, Group& group, size_t at, const HandleStatus& s, Effects& fx);
  /// An answer to an `any` await that leaves handles pending: what a re-issued await
  /// of the rest would start from (add_rest), whether a stop answered it or it was
  /// answered at once (a stop heard before the await came).
  void leave(const AwaitRequest& request, const std::shared_ptr<AwaitResult>& result);
  /// Answers every await of group `g` with `result` and forgets the group.
  void finish(GroupId g, std::shared_ptr<const AwaitResult> result, Effects& fx);
  /// The await's statuses as they are now: answered at once, or kept waiting (with
  /// the awaits alike, when they hold the same).
  Effects start(Key key, const AwaitRequest& request, std::vector<HandleStatus> statuses);
  /// Keeps `s` as the newest known of its handle (when it is newer than what is kept).
  void remember(const HandleStatus& s);
  /// Brings a known handle's status up to `s` when it is newer.
  void refresh(ById<Known>::iterator known, const HandleStatus& s);

  struct Watching {
    GroupId group;
    size_t at; // the handle's position in that group's statuses
  };

  std::unordered_map<GroupId, Group> groups_;
  std::unordered_map<Key, GroupId> awaits_; // every await waiting, and its group
  std::unordered_multimap<size_t, GroupId> by_request_; // ids_hash -> the groups waiting
  // Pending handle -> the groups on it. A group answered is dropped from these
  // lists lazily (when its handle next changes, or the list outgrows the groups
  // there are): answering one of 200 handles costs one lookup, not 200.
  ById<std::vector<Watching>> by_id_;

  // Ids whose watch answer is still to come: how many answers, and the newest
  // update heard of each since.
  struct Expected {
    size_t answers = 0;
    std::optional<HandleStatus> newest;
    bool forgotten = false; // the host spawned the id since: these answers are not remembered
  };
  ById<Expected> expected_;

  bool remembers_;
  // What the registry said of each handle watched, and every change since.
  ById<Known> known_;
  std::vector<const std::string*> texts_; // stopped_answer's, kept for its capacity

  // The last answer that left handles pending (shared with the answer, which the
  // host drops once written): add_rest starts from its pending statuses while the
  // hub still knows each.
  std::shared_ptr<AwaitResult> left_;
  // Counts every change to known_: what was found there holds while it stays.
  uint64_t known_version_ = 0;
  // known_version_ when answer_text found each of left_'s pending statuses to be the
  // one the hub knows of its handle (add_rest's check, made while writing its answer).
  std::optional<uint64_t> left_checked_;
};

} // namespace jp
