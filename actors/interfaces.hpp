// The typed interfaces of the actors (DESIGN.md "Typed protocol"): who answers what,
// checked by the compiler. Each actor's header says what a message means; this file
// is the one place the signatures are written. One meaning per atom.
#pragma once

#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>
#include <string>
#include <vector>

#include "../messages/atoms.hpp"
#include "../messages/call_result.hpp"
#include "../messages/handle_summary.hpp"
#include "../messages/launch_spec.hpp"
#include "../messages/notification.hpp"
#include "../messages/tool_state.hpp"

namespace jp {

/// One handle, whatever owns its work (a process today; a function, an MCP call, a
/// sub-agent or a remote handle later): the registry, await and turn never know
/// which kind they talk to.
using handle_actor = caf::typed_actor<
  caf::replies_to<fetch_atom, LookOptions>::with<HandleReport>,              // output since the last look
  caf::replies_to<apply_atom, std::string, LookOptions>::with<HandleReport>, // input (JSON text)
  caf::replies_to<abort_atom>::with<HandleReport>,                           // once its work is gone
  caf::replies_to<peek_atom>::with<HandleProgress>,                          // what it reports of itself
  caf::reacts_to<answer_atom, std::string>, // a one-shot run's question, answered (JSON text)
  caf::reacts_to<rename_atom, std::string>, // a one-shot run goes on as a handle of this id
  caf::reacts_to<retire_atom>>;             // the supervisor has the final state: go

/// What a handle tells its supervisor (the registry).
using supervisor_actor = caf::typed_actor<
  caf::reacts_to<stopped_atom, HandleReport>,                  // final: its work is over
  caf::reacts_to<waiting_atom, std::string, Question, bool>,   // id, question (empty: answered),
                                                               // whether a response carries it
  caf::reacts_to<content_atom, std::string>>;                  // id: it has new output

/// Who watches handles at the registry (an await): every change of a watched
/// handle that is not yet stopped -- it stopped, or asks, or was answered.
using watcher_actor = caf::typed_actor<caf::reacts_to<update_atom, HandleStatus>>;

/// Where the registry sends notifications (RFD 037): the turn.
using notification_sink = caf::typed_actor<caf::reacts_to<notify_atom, Notification>>;

/// The supervisor of a turn's handles; actors/registry_actor.hpp says what each does.
using registry_actor = supervisor_actor::extend<
  caf::replies_to<batch_atom, std::vector<std::string>>::with<bool>,
  caf::reacts_to<cancel_atom, std::string, std::string>,
  caf::replies_to<spawn_atom, std::string, LaunchSpec>::with<HandleReport>,
  caf::replies_to<spawn_atom, std::string, LaunchSpec, LookOptions>::with<HandleReport>,
  caf::replies_to<oneshot_atom, LaunchSpec>::with<HandleReport>,
  caf::replies_to<oneshot_atom, LaunchSpec, std::string>::with<HandleReport>, // under the caller's id ("#...")
  // One-shot run "#..." goes on as a handle, under the first free id "NAME-N": its
  // report so far (its waiters hear it running under that id).
  caf::replies_to<detach_atom, std::string, std::string>::with<HandleReport>,
  caf::replies_to<answer_atom, std::string, std::string>::with<HandleReport>,
  caf::replies_to<fetch_atom, std::string, LookOptions>::with<HandleReport>,
  caf::replies_to<apply_atom, std::string, std::string, LookOptions>::with<HandleReport>,
  caf::replies_to<abort_atom, std::string>::with<HandleReport>,
  caf::reacts_to<retire_atom, std::string>, // nobody looks at `id` again: its entry goes once stopped
  caf::reacts_to<abort_all_atom>,
  caf::replies_to<watch_atom, std::vector<std::string>, watcher_actor>::with<std::vector<HandleStatus>>,
  caf::replies_to<status_atom, std::vector<std::string>>::with<std::vector<HandleStatus>>,
  caf::replies_to<list_atom>::with<std::vector<HandleSummary>>,
  caf::replies_to<counts_atom>::with<HandleCounts>,
  caf::replies_to<turn_end_atom, InquiryAnswers>::with<std::vector<HandleSummary>>>;

/// What an await and a look need of a registry: the registry itself, or a view over
/// the registries of agents that share (actors/shared_registry.hpp).
using handle_view_actor = caf::typed_actor<
  caf::replies_to<watch_atom, std::vector<std::string>, watcher_actor>::with<std::vector<HandleStatus>>,
  caf::replies_to<status_atom, std::vector<std::string>>::with<std::vector<HandleStatus>>,
  caf::replies_to<fetch_atom, std::string, LookOptions>::with<HandleReport>>;

/// A turn: one response's tool calls; actors/turn_actor.hpp says what each does.
using turn_actor = caf::typed_actor<
  caf::replies_to<batch_atom, std::vector<std::string>>::with<bool>,
  caf::replies_to<call_atom, std::string, std::string>::with<CallResult>,
  caf::replies_to<call_atom, std::string, std::string, std::string>::with<CallResult>, // tagged
  caf::reacts_to<abort_atom, std::string>, // ends the one-shot run of the call so tagged
  caf::reacts_to<retire_atom, std::string>, // the call so tagged was answered: an abort of it since is moot
  caf::replies_to<list_atom>::with<std::vector<HandleSummary>>,
  caf::replies_to<counts_atom>::with<HandleCounts>,
  caf::replies_to<turn_end_atom>::with<std::vector<HandleSummary>, std::string>,
  caf::replies_to<pending_atom>::with<std::vector<Notification>>,
  caf::reacts_to<abort_all_atom>,
  caf::reacts_to<notify_atom, Notification>,
  caf::replies_to<user_abort_atom, std::string>::with<HandleReport>>; // a person aborts handle `id`

/// `jp-actors mcp`'s server (actors/mcp_server.hpp): one JSON-RPC message in (a
/// line of text); turn_end ends the MCP session's handles by their policies.
using mcp_server_actor =
  caf::typed_actor<caf::reacts_to<message_atom, std::string>,
                   caf::reacts_to<cancel_atom>, // the client is gone: every call in flight is cancelled
                   caf::reacts_to<update_atom>, // the MCP servers behind it changed their tools
                   caf::replies_to<turn_end_atom>::with<std::vector<HandleSummary>, std::string>>;

/// A node's gate (actors/node_gate.hpp), published through CAF's middleman:
/// (open_atom, token, client, heartbeat_secs, timeout_secs) -> a node session for
/// `client`, which it watches, and the session's key, which every message to the
/// session carries. The client's [node] heartbeat and timeout are checked against
/// the node's (node_heartbeat.hpp).
/// (list_atom, token) -> the handles still running on the node, of every session.
using node_gate_actor =
  caf::typed_actor<caf::replies_to<open_atom, std::string, caf::actor, double, double>::with<caf::actor, std::string>,
                   caf::replies_to<list_atom, std::string>::with<std::vector<HandleSummary>>>;

/// A turn's way to one configured node (actors/node_client.hpp): (open_atom) -> the
/// node session every remote handle of the turn on that node shares, and its key;
/// opened on first use and again after the node was lost.
using node_client_actor = caf::typed_actor<caf::replies_to<open_atom>::with<caf::actor, std::string>>;

/// One client's session on a node (actors/node_session.hpp): the node's own tools,
/// by name, with the client's arguments and the answers its call has so far (JSON
/// object text, "" none); `watcher` (the client's remote handle) hears of each change
/// as an await would. Each message's first string is the session's
/// key (the gate's answer to open): an actor of the node is reachable by its id by
/// any peer that can connect, token or not.
using node_session_actor = caf::typed_actor<
  caf::replies_to<spawn_atom, std::string, std::string, std::string, std::string, std::string, caf::actor>::with<
    HandleReport>,
  caf::replies_to<fetch_atom, std::string, std::string, LookOptions>::with<HandleReport>,
  caf::replies_to<apply_atom, std::string, std::string, std::string, LookOptions>::with<HandleReport>,
  caf::replies_to<abort_atom, std::string, std::string>::with<HandleReport>,
  caf::replies_to<list_atom, std::string>::with<std::vector<HandleSummary>>>;

} // namespace jp
