// The registry: the supervisor of a turn's handles (DESIGN.md "Actor topology").
// It validates handle ids, pre-registers a batch's spawns before any call of the
// batch runs, routes fetch/apply/abort, monitors each handle (a handle actor that
// dies becomes Stopped{error} and its process group is killed), tells watchers
// (await actors) when a handle stops, and keeps final states.
//
// Protocol (registry_actor in actors/interfaces.hpp; errors are make_error(error_code,
// a message for the assistant)):
//   (batch_atom, vector<string> spawn_ids)      -> bool      reject whole on a duplicate
//   (cancel_atom, id, reason)                   -> void      a pre-registered spawn failed
//   (spawn_atom, id, LaunchSpec[, LookOptions]) -> HandleReport  after its first look
//   (oneshot_atom, LaunchSpec)                  -> HandleReport  once stopped, or when its
//        control channel asks (waiting, id "#N"; the tool runs on) ...
//   (answer_atom, "#N", answer_json)            -> HandleReport  ... answered ("": end it), as above
//   (fetch_atom, id, LookOptions)               -> HandleReport
//   (apply_atom, id, input_json, LookOptions)   -> HandleReport
//   (abort_atom, id)                            -> HandleReport
//   (retire_atom, id)                           -> void      nobody looks at `id` again (a
//        node client's handle gone): its entry goes once stopped, now if it has
//        (a reserved one's is left: its spawn is the caller's to cancel)
//   (abort_all_atom)                            -> void      abort every live handle
//   (watch_atom, vector<string> ids, watcher)   -> vector<HandleStatus>; then the
//        watcher gets (update_atom, HandleStatus) for each watched handle that stops,
//        or starts or stops waiting on a question (once per watcher however often
//        it watched; a turn watches for all its awaits). The registry monitors its
//        watchers and forgets one that ends.
//   (status_atom, vector<string> ids)           -> vector<HandleStatus>  the same answer
//        as watch, without subscribing
//   (list_atom)                                 -> vector<HandleSummary>  not yet stopped
//   (counts_atom)                               -> HandleCounts  started so far, most live at once
//        (policy = its child spec's on_turn_end)
//   (turn_end_atom, InquiryAnswers)             -> vector<HandleSummary>  after every
//        live handle had its turn-end strategy applied (abort | await | inquire, the
//        map answering the inquiry); outcome says which: aborted, awaited, inquired_wait...
// From its handles (supervisor_actor): (stopped_atom, HandleReport) once a handle's
// work is over; (waiting_atom, id, Question, in_response) its tool asks (empty:
// answered; in_response: a response to the assistant carries it, no notification);
// (content_atom, id) it has new output.
#pragma once

#include <functional>
#include <string>

#include "interfaces.hpp"
#include "../messages/error_category.hpp"

namespace jp {

class IoThread;

/// Starts the actor owning one handle, spawned by `parent` (the registry), which
/// tells `supervisor` (the registry) how its work went. The registry is done with
/// `spec` when it calls: a factory may move what it keeps out of it (a copy of a
/// spec is dozens of allocations a spawn); one taking `const LaunchSpec&` fits too.
using HandleFactory = std::function<handle_actor(caf::local_actor* parent, const std::string& id,
                                                 LaunchSpec& spec, const supervisor_actor& supervisor)>;

/// "Handle `ID` not found": how every refusal of an unknown id starts (the registry
/// names the ids there are after it; a caller may add its own words at its end).
std::string handle_not_found(const std::string& id);

/// Handles over real processes on `io`.
HandleFactory process_handle_factory(IoThread& io);

/// With a sink for notifications (RFD 037): (notify_atom, Notification) when a
/// handle nobody fetched or awaited stops, or has new output, as its config asks.
registry_actor spawn_registry(caf::actor_system& sys, HandleFactory factory,
                              const notification_sink& sink = {});

} // namespace jp
