// The insides of the public API's objects (include/jp/): what a Runtime, a Session
// and a Turn hold. Internal: embedders never include it.
#pragma once

#include <caf/actor.hpp>
#include <caf/actor_addr.hpp>
#include <deque>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <condition_variable>
#include <mutex>
#include <string>
#include <vector>

#include "actors/interfaces.hpp"
#include "actors/tool_set.hpp"
#include "actors/registry_actor.hpp"
#include "jp/runtime.hpp"
#include "jp/session.hpp"
#include "jp/turn.hpp"
#include "runtime/actor_config.hpp"
#include "runtime/mcp/mcp_client.hpp"
#include "runtime/process/io_thread.hpp"

namespace jp {

struct Runtime::Impl {
  Impl(Config config, caf::actor_system* system);
  ~Impl();
  // The io thread outlives the actor system (members are destroyed in reverse).
  IoThread io;
  std::unique_ptr<RuntimeActorConfig> own_config;
  std::unique_ptr<caf::actor_system> own_system;
  caf::actor_system* sys = nullptr;

  // Its MCP servers ([mcp.servers]): gone before the io thread, after the actors.
  std::vector<std::shared_ptr<McpClient>> mcp_clients;

  std::mutex mtx; // guards what follows
  std::vector<std::string> notes; // what could not be set up (Runtime::notes)
  Config config;
  std::map<std::string, HandleFactory> executors;
  std::shared_ptr<ConversationStore> store;
  // The runtime's own conversation in each store its turns used without naming one
  // (its own store's, and each a program gave: hooks.store), made on the first.
  std::vector<std::pair<std::weak_ptr<ConversationStore>, std::string>> conversations;
  // Made under a lock of their own (a program's store may call the runtime from
  // create(), or be slow).
  std::mutex conversations_mtx;
  // The turns of each conversation (store, id), the running one first: they run one
  // after the other, as two at once would interleave their events, each reading a
  // history the other is writing. Each is a start of its turn. Shared with the
  // turns' waiters, which start the next (and must not hold the runtime: the last
  // owner dropped there would end it on an actor's thread).
  struct Queued {
    std::mutex mtx;
    std::map<std::pair<const ConversationStore*, std::string>, std::deque<std::function<void()>>> turns;
  };
  std::shared_ptr<Queued> queued = std::make_shared<Queued>();
  std::vector<caf::actor_addr> started; // turns and loops: ended before the io thread

  // The MCP servers' tools as they list them now (actors/mcp_tools.hpp) and the set
  // of the start, which `config` holds. A later set gets the runtime's own tools
  // (function tools, executors set) laid over it, made once for each change.
  ToolsNow mcp_now;
  std::shared_ptr<const ToolSet> mcp_first;
  uint64_t own_changes = 0; // add_function_tool, set_executor
  std::shared_ptr<const ToolSet> merged_from, merged;
  uint64_t merged_changes = 0;
  // What tools_now() hands out reaches this Impl through here: a registry still
  // ending as the Impl goes (a given system's) gets no tools rather than a dangling one.
  struct Reach {
    Impl* impl;
    std::mutex mtx;
  };
  std::shared_ptr<Reach> reach = std::make_shared<Reach>(this);
  std::shared_ptr<const ToolSet> tools_merged();

  std::shared_ptr<const Config> snapshot();
  std::map<std::string, HandleFactory> executors_now();
  /// For a TurnContext: the tools as they are now, once a server changed its own
  /// (null where none can; the function returns null once this Impl is ending).
  ToolsNow tools_now();
  void track(const caf::actor_addr& a);
};

/// What a session's call is answered with (one of them, by the kind of call).
struct SessionReply {
  CallResult call;
  std::vector<HandleSummary> handles;
  std::string failure; // the turn end's inquiry failure
  std::string error;   // the call could not be made at all
};

struct Session::Impl {
  std::shared_ptr<Runtime::Impl> rt;
  turn_actor turn;
  // Every call goes through this one actor, so calls made in order (from one
  // thread) reach the turn in that order.
  caf::actor client;
  struct Pending {
    std::mutex mtx;
    uint64_t next = 0;
    std::map<uint64_t, std::function<void(SessionReply&)>> waiting;
    // Callbacks running now, and whether the session has ended: its destructor waits
    // for those running (no callback runs once it returned) and none starts after.
    int running = 0;
    bool ended = false;
    std::condition_variable idle;
  };
  std::shared_ptr<Pending> pending = std::make_shared<Pending>();
};

struct Turn::Impl {
  std::shared_ptr<Runtime::Impl> rt;
  caf::actor loop; // none: the turn could not start
  std::future<TurnResult> result;
  int interrupts = 0;
  std::mutex mtx;
};

/// How the API's objects reach each other's insides.
struct RuntimeAccess {
  static std::shared_ptr<Runtime::Impl>& of(Runtime& r) { return r.impl_; }
  static Session session(std::shared_ptr<Session::Impl> s) { return Session(std::move(s)); }
  static Turn turn(std::shared_ptr<Turn::Impl> t) { return Turn(std::move(t)); }
  static caf::actor loop_of(const Turn& t) { return t.impl_->loop; }
};

} // namespace jp
