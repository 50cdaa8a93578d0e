// The registry: the supervisor of a turn's handles (DESIGN.md "Actor topology").
// It validates handle ids, pre-registers a batch's spawns before any call of the
// batch runs, routes fetch/apply/abort, monitors each handle (a handle actor that
// dies becomes Stopped{error} and its process group is killed), tells watchers
// (await actors) when a handle stops, and keeps final states.
//
// Protocol (all requests; errors are make_error(error_code, a message for the assistant)):
//   (batch_atom, vector<string> spawn_ids)      -> bool      reject whole on a duplicate
//   (cancel_atom, id, reason)                   -> void      a pre-registered spawn failed
//   (spawn_atom, id, LaunchSpec[, LookOptions]) -> HandleReport  after its first look
//   (oneshot_atom, LaunchSpec)                  -> HandleReport  once stopped, or when its
//        control channel asks (waiting, id "#N"; the tool runs on) ...
//   (oneshot_atom, "#N", answer_json)           -> HandleReport  ... answered ("": end it), as above
//   (fetch_atom, id, LookOptions)               -> HandleReport
//   (apply_atom, id, input_json, LookOptions)   -> HandleReport
//   (abort_atom, id)                            -> HandleReport
//   (abort_atom)                                -> void      abort every live handle
//   (watch_atom, vector<string> ids)            -> vector<HandleStatus>; then the
//        sender gets (stopped_atom, HandleStatus) for each watched handle that stops,
//        and (waiting_atom, HandleStatus) when one starts or stops waiting on a question
//   (waiting_atom, id, Question, in_response)   -> void      its tool asks (empty: answered);
//        in_response: a response to the assistant carries it (no notification)
//   (status_atom, vector<string> ids)           -> vector<HandleStatus>  the same answer
//        as watch, without subscribing (await's fast path: already stopped)
//   (unwatch_atom)                              -> void
//   (list_atom)                                 -> vector<HandleSummary>  not yet stopped
//        (policy = its child spec's on_turn_end)
//   (content_atom, id)                          -> void      a handle has new output
//   (turn_end_atom, InquiryAnswers)             -> vector<HandleSummary>  after every
//        live handle had its turn-end strategy applied (abort | await | inquire, the
//        map answering the inquiry); outcome says which: aborted, awaited, inquired_wait...
#pragma once

#include <caf/fwd.hpp>
#include <functional>
#include <string>

#include "messages/error_category.hpp"
#include "messages/handle_summary.hpp"
#include "messages/launch_spec.hpp"

namespace jp {

class IoThread;

/// Starts the actor owning one handle; `registry` is the calling registry.
using HandleFactory = std::function<caf::actor(caf::local_actor* registry, const std::string& id,
                                               const LaunchSpec& spec)>;

/// Handles over real processes on `io`.
HandleFactory process_handle_factory(IoThread& io);

caf::actor spawn_registry(caf::actor_system& sys, HandleFactory factory);

/// With a sink for notifications (RFD 037): (notify_atom, Notification) when a
/// handle nobody fetched or awaited stops, or has new output, as its config asks.
caf::actor spawn_registry(caf::actor_system& sys, HandleFactory factory, const caf::actor& sink);

} // namespace jp
