// Where conversations live between runs (RFD 026's ConversationStore): the agent
// loop loads a conversation's events, appends each new one as it happens, and
// remembers which conversation is active.
//
// On disk (FileConversationStore), under a root such as <workspace>/.jp/conversations:
//   <root>/<id>/events.jsonl   one JSON object per line, oldest first, each with
//                              "event" (turn_start, chat_request, chat_response,
//                              tool_call_request, tool_call_response,
//                              inquiry_request, inquiry_response,
//                              system_notification, turn_end) and "time"
//                              (RFC 3339 UTC with milliseconds); each kind's fields
//                              are messages/conversation_event.hpp, its JSON the codec
//                              beside it
//   <root>/<id>/images/NAME.b64  a tool result's image, its base64 (the event names
//                              it as "file"): only the newest a request carries are
//                              read back
//   <root>/active              the active conversation's id (one line)
// Ids are the UTC creation time and 4 random hex digits (20261122-061234-3f9a), so
// they sort by age and name a directory safely.
#pragma once

#include <cstddef>
#include <map>
#include <mutex>
#include <string>
#include <sys/types.h>
#include <utility>
#include <vector>

#include "../../messages/json.hpp"
#include "../../messages/result.hpp"
#include "../process/private_file.hpp"

namespace jp {

/// Now as RFC 3339 UTC with milliseconds (2026-11-22T06:12:34.567Z): the "time" of
/// stored and logged events.
std::string now_rfc3339();

/// A conversation as read back, with what was dropped on the way (a line torn by a
/// crash, a corrupt line): reading never fails for a damaged line.
struct LoadedConversation {
  std::vector<Json> events;
  std::vector<std::string> warnings;
};

/// One line of `jp-actors conversations ls`.
struct ConversationInfo {
  std::string id;
  std::string created;      // RFC 3339 UTC: the first event's "time", else when it was created
  size_t events = 0;
  std::string first_prompt; // the first turn_start's "prompt" on one line, ~80 chars; "" = none
  bool active = false;
};

class ConversationStore {
public:
  virtual ~ConversationStore() = default;

  /// Starts an empty conversation and returns its new id (it does not become active).
  virtual Result<std::string> create() = 0;
  /// The events of conversation `id`, oldest first.
  virtual Result<LoadedConversation> load(const std::string& id) = 0;
  /// Appends `event` (an object with a known "event"; "time" is added when absent), durably.
  virtual Status append(const std::string& id, const Json& event) = 0;
  /// Every conversation, sorted by id (so by the second it began).
  virtual Result<std::vector<ConversationInfo>> list() = 0;
  /// The active conversation's id; "" when none is set or it no longer exists.
  virtual Result<std::string> active() = 0;
  /// Makes the existing conversation `id` the active one.
  virtual Status set_active(const std::string& id) = 0;
};

/// A conversation held by one process while it continues it (FileConversationStore::
/// hold): its locked `in-use` file, let go when this goes.
using ConversationHold = UniqueFd;

/// Conversations as files under `root` (created when the first conversation is).
/// Thread-safe; other processes appending to the same conversation are excluded by
/// a lock on its file. `root` below `trusted` (the workspace: someone's repository)
/// is reached through no link, and so is everything the store reads or writes
/// under it: its files must be regular files of this user's with no other name.
class FileConversationStore : public ConversationStore {
public:
  explicit FileConversationStore(std::string root, std::string trusted = {})
    : root_(std::move(root)), trusted_(std::move(trusted)) {}
  ~FileConversationStore() override;
  FileConversationStore(const FileConversationStore&) = delete;
  FileConversationStore& operator=(const FileConversationStore&) = delete;

  const std::string& root() const { return root_; }

  Result<std::string> create() override;
  Result<LoadedConversation> load(const std::string& id) override;
  Status append(const std::string& id, const Json& event) override;
  Result<std::vector<ConversationInfo>> list() override;
  Result<std::string> active() override;
  Status set_active(const std::string& id) override;
  /// The events of conversation `id` as its file has them: images named by their
  /// files, none read (a listing, a transcript).
  Result<LoadedConversation> read_events(const std::string& id);
  /// Holds conversation `id` for this process (a lock on its `in-use` file), or says
  /// another process holds it: two queries continuing one conversation at once each
  /// took the other's prompts and calls for its own history.
  Result<ConversationHold> hold(const std::string& id);
  /// Success when `id` is a conversation here; else why not (no id, none of it).
  Status known(const std::string& id) const;

private:
  std::string dir(const std::string& id) const { return root_ + "/" + id; }
  std::string events_path(const std::string& id) const { return dir(id) + "/events.jsonl"; }
  /// The lstat mode of `id`'s events file, its directory being one (not a link); 0:
  /// none. exists(): a regular file, the only kind read.
  mode_t events_mode(const std::string& id) const;
  bool exists(const std::string& id) const;
  Status open_for_append(const std::string& id);
  void close_appender();
  /// Whether `root` and `id`'s directory (when given) are reached through no link.
  Status unlinked(const std::string& id = {}) const;
  /// Opens a file of the store's: not through a link at its name, and one of ours.
  Result<int> open_own(const std::string& path, int flags) const;
  /// Writes the data of `event`'s images (a tool's result) to files of their own in
  /// the conversation's `images/`, leaving their names in the event: the file of
  /// events stays small however many screenshots a session takes. The names made.
  Result<std::vector<std::string>> put_images_aside(const std::string& id, Json& event);
  /// Removes image files of `id` that no event names (an append that failed).
  void remove_images(const std::string& id, const std::vector<std::string>& names) const;
  /// Reads into `loaded` the data of the newest images a request carries
  /// (NewestImages); older ones are left as their names, which the model is told
  /// were not sent again.
  void read_newest_images(const std::string& id, LoadedConversation& loaded) const;

  std::string root_;
  std::string trusted_;
  std::mutex mutex_;    // guards the appender below
  std::string open_id_; // the conversation whose events.jsonl fd_ is ("" = none open)
  int fd_ = -1;         // kept open between appends: the loop appends to one conversation
};

/// Conversations in memory, for tests and embedding: the same rules, no files.
class MemoryConversationStore : public ConversationStore {
public:
  Result<std::string> create() override;
  Result<LoadedConversation> load(const std::string& id) override;
  Status append(const std::string& id, const Json& event) override;
  Result<std::vector<ConversationInfo>> list() override;
  Result<std::string> active() override;
  Status set_active(const std::string& id) override;

private:
  struct Conversation {
    std::string created; // for a conversation without events yet
    std::vector<Json> events;
  };
  std::mutex mutex_;
  std::map<std::string, Conversation> conversations_; // ordered by id, as list() wants
  std::string active_;
};

} // namespace jp
