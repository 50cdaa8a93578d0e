// `jp-actors query` and `jp-actors conversations`: a real (or scripted) assistant
// in a conversation kept under <workspace>/.jp/conversations.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "config/config.hpp"

namespace jp {

struct QueryOptions {
  std::string prompt;
  bool new_conversation = false;
  std::string continue_id; // --continue: this conversation, made the active one and the user's own
  bool json = false;
  std::vector<std::string> allow; // tools that run without asking
  std::vector<std::string> attach; // files and directories added to the prompt (runtime/attachments)
  bool keep_conversation = true;  // false: nothing can be written, the turn is kept in memory only
};

/// One turn of the active conversation (a new one with --new, or when none is).
int run_query(std::shared_ptr<const Config> config, const QueryOptions& options);

/// `conversations ls`: one line per conversation, the active one marked.
int list_conversations(const Config& config, bool json = false);

/// `conversations show ID`: the conversation as a transcript, or its events (--json).
int show_conversation(const Config& config, const std::string& id, bool json);

} // namespace jp
