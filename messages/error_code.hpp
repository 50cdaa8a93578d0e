// What kind of error an actor of jp-actors replied with, or a turn ended on: an
// embedder tells auth, network, store and interrupted apart by the code; the text
// that goes with it (error_category.hpp) says what to do. Plain data: no CAF here.
#pragma once

#include <cstdint>

namespace jp {

enum class error_code : uint8_t {
  none = 0,          // no error (CAF reads code 0 as "no error")
  unknown_handle,    // a handle id nothing was spawned under
  handle_exists,     // a spawn under an id still in use
  bad_arguments,     // a call's arguments (or options) are refused
  batch_rejected,    // a batch's spawns could not all be registered
  input_refused,     // a handle takes no input now (stopped, not started, queue full)
  provider_auth,     // the provider refused the key, or wants one
  provider_network,  // the provider could not be reached or stopped answering
  provider_http,     // the provider answered with an HTTP error
  provider_stream,   // the provider's stream failed or made no sense
  store,             // the conversation store could not be read or written
  interrupted,       // the user interrupted; what waited ended with the turn
  inquiry_failed,    // the turn-end inquiry gave no answers
  limit_reached,     // a limit was reached: of [agents] (depth, concurrency, rounds), or
                     // assistant.max_tokens (a response cut off there)
  node_unreachable,  // a node could not be reached, or was lost (worth trying again)
  provider_refused,  // the provider refused or filtered the answer (a refusal, a content
                     // filter): asking again as before will not help
  hook_threw,        // a hook of the embedding program (its observer, renderer, store,
                     // provider) threw: the program's own bug, said in the text
};

/// The enumerator's name ("provider_auth"), for logs and CAF's to_string.
inline const char* to_string(error_code code) {
  switch (code) {
    case error_code::none: return "none";
    case error_code::unknown_handle: return "unknown_handle";
    case error_code::handle_exists: return "handle_exists";
    case error_code::bad_arguments: return "bad_arguments";
    case error_code::batch_rejected: return "batch_rejected";
    case error_code::input_refused: return "input_refused";
    case error_code::provider_auth: return "provider_auth";
    case error_code::provider_network: return "provider_network";
    case error_code::provider_http: return "provider_http";
    case error_code::provider_stream: return "provider_stream";
    case error_code::store: return "store";
    case error_code::interrupted: return "interrupted";
    case error_code::inquiry_failed: return "inquiry_failed";
    case error_code::limit_reached: return "limit_reached";
    case error_code::node_unreachable: return "node_unreachable";
    case error_code::provider_refused: return "provider_refused";
    case error_code::hook_threw: return "hook_threw";
  }
  return "unknown";
}

} // namespace jp
