// The atoms of the actor protocol (CAF 0.17: at most 10 characters each). One
// meaning per atom; actors/interfaces.hpp says who answers which.
#pragma once

#include <caf/atom.hpp>

namespace jp {

using spawn_atom = caf::atom_constant<caf::atom("spawn")>;     // registry: start a handle
using fetch_atom = caf::atom_constant<caf::atom("fetch")>;     // output since last look
using apply_atom = caf::atom_constant<caf::atom("apply")>;     // input to a handle
using abort_atom = caf::atom_constant<caf::atom("abort")>;     // stop a handle
using abort_all_atom = caf::atom_constant<caf::atom("abort_all")>; // stop every live handle, now
using batch_atom = caf::atom_constant<caf::atom("batch")>;     // pre-register a batch's spawns
using cancel_atom = caf::atom_constant<caf::atom("cancel")>;   // a pre-registered spawn failed
using oneshot_atom = caf::atom_constant<caf::atom("oneshot")>; // run to completion
using answer_atom = caf::atom_constant<caf::atom("answer")>;   // a one-shot tool's question answered
using watch_atom = caf::atom_constant<caf::atom("watch")>;     // await subscribes
using stopped_atom = caf::atom_constant<caf::atom("stopped")>; // handle -> supervisor: it reached Stopped
using update_atom = caf::atom_constant<caf::atom("update")>;   // registry -> watcher: a watched handle changed
using settle_atom = caf::atom_constant<caf::atom("settle")>;   // turn -> itself: the updates queued are in
using retire_atom = caf::atom_constant<caf::atom("retire")>;   // a stopped handle may go
using leave_atom = caf::atom_constant<caf::atom("leave")>;     // a retired handle -> itself: go now
using output_atom = caf::atom_constant<caf::atom("output")>;   // io thread -> handle
using exited_atom = caf::atom_constant<caf::atom("exited")>;   // io thread -> handle
using gone_atom = caf::atom_constant<caf::atom("gone")>;       // io thread: group gone
using timeout_atom = caf::atom_constant<caf::atom("timeout")>; // timers (awaits, looks, turn-end waits)
using run_atom = caf::atom_constant<caf::atom("run")>;         // start an await / agent
using call_atom = caf::atom_constant<caf::atom("call")>;       // turn: one tool call
using list_atom = caf::atom_constant<caf::atom("list")>;       // registry: live handles
using counts_atom = caf::atom_constant<caf::atom("counts")>;   // registry: handles started, peak
using status_atom = caf::atom_constant<caf::atom("status")>;   // registry: states, no watch
using notify_atom = caf::atom_constant<caf::atom("notify")>;   // registry -> turn: a notification
using content_atom = caf::atom_constant<caf::atom("content")>; // handle -> registry: new output
using pending_atom = caf::atom_constant<caf::atom("pending")>; // turn: undelivered notifications
using control_atom = caf::atom_constant<caf::atom("control")>; // io thread -> handle: fd 3 bytes
using waiting_atom = caf::atom_constant<caf::atom("waiting")>; // handle -> supervisor: asks / answered
using tick_atom = caf::atom_constant<caf::atom("tick")>;       // agent: progress timer
using ready_atom = caf::atom_constant<caf::atom("ready")>;     // mcp server: the tools behind it started
using turn_end_atom = caf::atom_constant<caf::atom("turn_end")>; // turn: apply policies
using chat_atom = caf::atom_constant<caf::atom("chat")>;       // provider stream -> turn loop
using retry_atom = caf::atom_constant<caf::atom("retry")>;     // provider retries a response
using streamed_atom = caf::atom_constant<caf::atom("streamed")>; // provider: the response ended
using interrupt_atom = caf::atom_constant<caf::atom("interrupt")>; // stop the turn cleanly
using quit_atom = caf::atom_constant<caf::atom("quit")>;       // abort everything, now
using stop_atom = caf::atom_constant<caf::atom("stop")>;       // stop the turn cleanly, asking nobody
using detach_atom = caf::atom_constant<caf::atom("detach")>;   // registry: a one-shot run goes on as a handle
using rename_atom = caf::atom_constant<caf::atom("rename")>;   // registry -> handle: its id from now on
using background_atom = caf::atom_constant<caf::atom("backgr")>; // turn -> itself: a one-shot run ran long
using user_abort_atom = caf::atom_constant<caf::atom("user_abort")>; // a person aborts a handle (control socket)
using menu_atom = caf::atom_constant<caf::atom("menu")>;       // turn loop: the interrupt menu's choice
using peek_atom = caf::atom_constant<caf::atom("peek")>;       // handle: its progress (HandleProgress)
using open_atom = caf::atom_constant<caf::atom("open")>;       // client -> node gate: a session, please
using message_atom = caf::atom_constant<caf::atom("message")>; // mcp server: one JSON-RPC message in

} // namespace jp
