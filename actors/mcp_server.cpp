#include "actors/mcp_server.hpp"
#include "config/workspace_sets.hpp"

#include <algorithm>
#include <caf/all.hpp>
#include <chrono>
#include <cmath>
#include <fmt/format.h>
#include <map>
#include <optional>
#include <set>
#include <utility>

#include "config/config.hpp"
#include "messages/error_category.hpp"
#include "messages/json.hpp"
#include "runtime/mcp/mcp_protocol.hpp"
#include "runtime/mcp/mcp_requests.hpp"
#include "tools/describe_tools.hpp"

namespace jp {

namespace {

constexpr auto progress_interval = std::chrono::seconds(1);

/// A tools/call in flight.
struct mcp_call {
  std::string tool;
  Json progress_token; // null: the client asked for no progress
  std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
  bool cancelled = false;
  uint64_t batch = 0; // the batch it came in (0: none)
};

/// A batch's responses (protocol 2025-03-26), sent as one array once each of its
/// requests is answered.
struct mcp_batch {
  JsonArray responses;
  size_t owed = 0; // its calls still running
};

struct mcp_state {
  mcp_state() {} // not an aggregate: CAF would build it from the actor pointer
  turn_actor turn; // made at initialize
  McpTurnMaker make_turn;
  std::shared_ptr<const Config> config;
  ToolsNow tools_now; // empty: `config`'s tools for good
  // The set the client last listed, and whether a change since was told.
  std::shared_ptr<const ToolSet> listed;
  bool told_changed = false;
  McpWriter write;
  std::shared_ptr<McpRequests> requests; // ours to the client, waiting for its answers
  // The session's end, asked for while calls were in flight: it comes after their
  // answers. A cancelled call's is not waited for (none is sent; an await's may take
  // hours): Streamable HTTP's end cancels every call its client still waits on.
  std::optional<caf::typed_response_promise<std::vector<HandleSummary>, std::string>> ending;
  std::map<std::string, mcp_call> calls; // by request id, as JSON text
  std::string version;                   // agreed at initialize
  std::map<uint64_t, mcp_batch> batches;
  uint64_t next_batch = 1;
  uint64_t reading = 0; // the batch whose messages are being read (0: none)
  bool ticking = false;
  // The session is ending and its awaits in flight waited their bound: they no
  // longer hold its end (their handles get their turn-end policies, which answers them).
  bool awaits_waited = false;
  bool awaits_bounded = false; // ... and that bound is set
  std::set<std::string> called; // the tools called in the session (but await)
  // The tools behind it still start (null: they have): the messages held meanwhile.
  std::shared_ptr<ToolsStarting> starting;
  std::vector<Json> held;
  static inline const char* name = "jp.mcp_server";
};

// Its own progress timer is no one else's business.
using mcp_impl =
  mcp_server_actor::extend<caf::reacts_to<tick_atom>, caf::reacts_to<timeout_atom>, caf::reacts_to<ready_atom>>;
using mcp_actor_t = mcp_impl::stateful_base<mcp_state>;

void send(mcp_actor_t* self, const Json& message) {
  self->state.write(message.dump(), ""); // a response names its request itself
}

/// Sends batch `batch`'s array once it is read and each of its calls answered; none
/// when it held only notifications.
void send_batch_if_done(mcp_actor_t* self, uint64_t batch) {
  auto& st = self->state;
  auto it = st.batches.find(batch);
  if (it == st.batches.end() || it->second.owed > 0 || st.reading == batch)
    return;
  if (!it->second.responses.empty())
    send(self, Json(std::move(it->second.responses)));
  st.batches.erase(it);
}

/// A response: into its batch's array when it came in one, else out at once.
void respond(mcp_actor_t* self, Json message, uint64_t batch) {
  if (batch == 0)
    return send(self, message);
  self->state.batches[batch].responses.push_back(std::move(message));
}

/// A response to the message being read.
void respond(mcp_actor_t* self, Json message) {
  respond(self, std::move(message), self->state.reading);
}

void fail(mcp_actor_t* self, const Json& id, int code, std::string message) {
  respond(self, mcp::error_response(id, code, std::move(message)));
}

void tick_later(mcp_actor_t* self) {
  if (self->state.ticking)
    return;
  self->state.ticking = true;
  self->delayed_send(self, progress_interval, tick_atom::value);
}

/// notifications/progress for each call that asked for it; again in a second while any does.
void tick(mcp_actor_t* self) {
  auto& st = self->state;
  st.ticking = false;
  auto now = std::chrono::steady_clock::now();
  bool any = false;
  for (auto& [key, c] : st.calls) {
    if (c.progress_token.is_null() || c.cancelled)
      continue;
    any = true;
    auto secs = std::chrono::duration<double>(now - c.started).count();
    send(self, mcp::notification("notifications/progress",
                                 Json::object()
                                   .set("progressToken", c.progress_token)
                                   .set("progress", std::floor(secs * 10) / 10)
                                   .set("message", fmt::format("`{}` running for {:.0f} s", c.tool, secs))));
  }
  if (any)
    tick_later(self);
}

/// The session's end: each handle still running gets its turn-end policy.
void end_session(mcp_actor_t* self, caf::typed_response_promise<std::vector<HandleSummary>, std::string> rp) {
  if (!self->state.turn) {
    rp.deliver(std::vector<HandleSummary>{}, std::string{});
    return;
  }
  self->request(self->state.turn, caf::infinite, turn_end_atom::value)
    .then([rp](std::vector<HandleSummary>& ended, std::string& failure) mutable { rp.deliver(std::move(ended), std::move(failure)); },
          [rp](caf::error& err) mutable { rp.deliver(std::move(err)); });
}

/// The session's end, if it waits and no answer is owed any more.
void end_when_answered(mcp_actor_t* self) {
  auto& st = self->state;
  auto holds = [&](auto& c) { return !c.second.cancelled && !(st.awaits_waited && c.second.tool == "await"); };
  if (!st.ending || !st.held.empty() || std::any_of(st.calls.begin(), st.calls.end(), holds))
    return;
  auto rp = std::move(*st.ending);
  st.ending.reset();
  end_session(self, std::move(rp));
}

/// The tools on offer now.
std::shared_ptr<const Config> offered(mcp_actor_t* self) {
  auto& st = self->state;
  auto set = st.tools_now ? st.tools_now() : nullptr;
  return set ? set->config : st.config;
}

/// Tells the client its list is out of date, once, where the tools changed since it
/// listed them (`related`: the request whose stream it goes on, over HTTP).
/// `spontaneous`: told as it happened, with no answer: over HTTP it may reach no
/// stream, so it is told again with the next answer (a client told twice lists twice).
void tell_if_changed(mcp_actor_t* self, const std::string& related, bool spontaneous = false) {
  auto& st = self->state;
  if (!st.tools_now || !st.listed || st.told_changed)
    return;
  if (auto set = st.tools_now(); set && set != st.listed) {
    st.told_changed = !spontaneous;
    st.write(mcp::notification("notifications/tools/list_changed", Json::object()).dump(), related);
  }
}

/// The call's answer, unless the client cancelled it (MCP: then none is sent).
void finish(mcp_actor_t* self, const Json& id, const std::string& key, const CallResult& r) {
  auto& st = self->state;
  auto it = st.calls.find(key);
  if (it == st.calls.end())
    return;
  bool cancelled = it->second.cancelled;
  auto batch = it->second.batch;
  st.calls.erase(it);
  st.requests->forget(key);
  // A call that changed the tools answers with the client told (its next list
  // has them).
  tell_if_changed(self, key);
  if (!cancelled)
    respond(self, mcp::response(id, mcp::call_tool_result(r)), batch);
  else // its abort may have come after this answer: the turn forgets the tag, which the client may use again
    self->send(st.turn, retire_atom::value, key);
  if (batch != 0) {
    --st.batches[batch].owed;
    send_batch_if_done(self, batch);
  }
  end_when_answered(self);
}

void call_tool(mcp_actor_t* self, const Json& id, const Json& params) {
  auto& st = self->state;
  auto* name = params.find("name");
  if (!name || !name->is_string())
    return fail(self, id, mcp::invalid_params, "tools/call needs params.name, a tool's name (tools/list lists them)");
  // MCP (server/tools, Error Handling): an unknown tool is a protocol error, not a tool's.
  if (auto tools = offered(self); !tools->tools.count(name->as_string()))
    return fail(self, id, mcp::invalid_params, unknown_tool(*tools, name->as_string()));
  auto args = Json::object();
  if (auto* a = params.find("arguments"); a && !a->is_null()) {
    if (!a->is_object())
      return fail(self, id, mcp::invalid_params,
                  fmt::format("tools/call: params.arguments must be an object, got {}", a->described()));
    args = *a;
  }
  auto key = id.dump();
  mcp_call c{name->as_string(), Json()};
  c.batch = st.reading;
  if (c.batch != 0)
    ++st.batches[c.batch].owed;
  if (auto* meta = params.find("_meta"); meta && meta->is_object())
    if (auto* token = meta->find("progressToken"); token && (token->is_string() || token->is_int()))
      c.progress_token = *token;
  bool progress = !c.progress_token.is_null();
  if (c.tool != "await")
    st.called.insert(c.tool);
  st.calls.emplace(key, std::move(c));
  if (progress)
    tick_later(self);
  // Tagged with its request id: a cancel ends its one-shot run or the handle it spawned.
  self->request(st.turn, caf::infinite, call_atom::value, name->as_string(), args.dump(), key)
    .then([self, id, key](CallResult& r) { finish(self, id, key, r); },
          [self, id, key](caf::error& err) { finish(self, id, key, CallResult{false, error_text(err)}); });
}

/// notifications/cancelled: the call's answer is dropped, and the turn ends what the
/// call started by its tag (its one-shot run, or the handle its spawn started). A
/// fetch, apply, abort or await started nothing: its handle runs on.
/// The request a notifications/cancelled names (its params), if it names one lawfully.
std::optional<Json> cancelled_request(const Json& params) {
  auto* request = params.is_object() ? params.find("requestId") : nullptr;
  return request ? mcp::request_id(*request) : std::nullopt;
}

void cancel(mcp_actor_t* self, const Json& params) {
  auto valid = cancelled_request(params);
  if (!valid)
    return;
  auto key = valid->dump();
  auto it = self->state.calls.find(key);
  if (it == self->state.calls.end() || it->second.cancelled)
    return;
  it->second.cancelled = true;
  self->send(self->state.turn, abort_atom::value, key);
  self->state.requests->withdraw(key, "the tools/call it asks for was cancelled");
  // Its batch's other answers no longer wait for it: it gets none, and its run may
  // take a while to end (an abort's grace).
  if (auto batch = std::exchange(it->second.batch, 0); batch != 0) {
    --self->state.batches[batch].owed;
    send_batch_if_done(self, batch);
  }
  end_when_answered(self);
}

/// The client is gone (it reads no answer): every call in flight is cancelled, as
/// notifications/cancelled of each would.
void cancel_all(mcp_actor_t* self) {
  self->state.held.clear(); // nobody reads their answers: none is run
  for (auto& [key, call] : self->state.calls)
    if (!call.cancelled) {
      call.cancelled = true;
      self->send(self->state.turn, abort_atom::value, key);
      self->state.requests->withdraw(key, "the tools/call it asks for was cancelled");
    }
  end_when_answered(self);
}

/// Asks the person through the client, when it declared elicitation and the session's
/// `version` has it; else nobody, and `why_nobody` says why.
AskPermission permission_asker(const std::shared_ptr<McpRequests>& requests, const Json& initialize_params,
                               std::string_view version, std::string& why_nobody,
                               std::shared_ptr<const Config> config) {
  auto* caps = initialize_params.find("capabilities");
  auto* elicitation = caps && caps->is_object() ? caps->find("elicitation") : nullptr;
  bool declared = elicitation && elicitation->is_object();
  bool has_it = version >= mcp::elicitation_version; // dates, compared as text
  if (!declared || !has_it) {
    why_nobody = !declared ? "this MCP client declared no elicitation to ask the user through"
                           : fmt::format("this session's protocol version, {}, has no elicitation to ask the user "
                                         "through (it came with {})",
                                         version, mcp::elicitation_version);
    return {};
  }
  return [requests, config](const std::string& tool, const Json& args,
                            const std::string& tag) -> std::optional<PermissionReply> {
    // A repository's tool is said to be one, with what it runs: the question was
    // worded as for the user's own tools, and it is the only guard here.
    auto about = config ? workspace_tool_note(*config, tool) : std::string();
    auto response = requests->ask("elicitation/create", mcp::permission_elicitation(tool, args, about), tag);
    if (!response)
      return std::nullopt; // the session ended first
    return mcp::permission_from_elicitation(*response);
  };
}

/// One JSON-RPC message, on its own or of a batch.
void on_one(mcp_actor_t* self, Json* msg) {
  auto& st = self->state;
  if (!msg->is_object())
    return fail(self, Json(), mcp::invalid_request,
                fmt::format("a message must be a JSON-RPC 2.0 object, got {}", msg->type_name()));
  auto* method = msg->find("method");
  auto* id = msg->find("id");
  if (auto wrong = mcp::wrong_jsonrpc(*msg))
    return fail(self, id && mcp::request_id(*id) ? *mcp::request_id(*id) : Json(), mcp::invalid_request,
                std::move(*wrong));
  if (!method) {
    if (!msg->find("result") && !msg->find("error"))
      return fail(self, id && mcp::request_id(*id) ? *mcp::request_id(*id) : Json(), mcp::invalid_request,
                  std::string(mcp::no_kind));
    st.requests->answered(*msg); // a response to one of ours; any other is ignored
    return;
  }
  // JSON-RPC answers a request whose id it cannot echo with id null.
  std::optional<Json> request_id;
  if (id && !(request_id = mcp::request_id(*id)))
    return fail(self, Json(), mcp::invalid_request, mcp::bad_id_message(*id));
  if (request_id)
    id = &*request_id;
  if (!method->is_string())
    return fail(self, id ? *id : Json(), mcp::invalid_request, "`method` must be a string");
  auto params = Json::object();
  auto* p = msg->find("params");
  if (p && p->is_object())
    params = *p;
  auto& m = method->as_string();
  if (!id) { // a notification: initialized, cancelled, and whatever else needs no answer
    if (m == "notifications/cancelled")
      cancel(self, params);
    else if (m == "notifications/initialized")
      st.requests->initialized();
    return;
  }
  // MCP's params are an object (JSON-RPC allows an array, which no MCP method takes).
  if (p && !p->is_null() && !p->is_object())
    return fail(self, *id, mcp::invalid_params,
                fmt::format("`params` of {} must be an object, got {}", cut_text(m), p->described()));
  if (m == "initialize") {
    // Once: a second would change the version (batches, elicitation) under the
    // session's calls and handles.
    if (st.turn)
      return fail(self, *id, mcp::invalid_request,
                  fmt::format("this session is initialized already (protocol version {}); a new session is a new "
                              "connection (stdio) or an initialize without Mcp-Session-Id (HTTP)",
                              st.version));
    auto version = mcp::requested_version(&params);
    if (!version)
      return fail(self, *id, mcp::invalid_params, version.error());
    st.version = mcp::negotiate_version(*version);
    std::string why_nobody;
    auto asker = permission_asker(st.requests, params, st.version, why_nobody, st.config);
    st.turn = st.make_turn(std::move(asker), why_nobody);
    self->link_to(st.turn); // the session's turn ends with it
    return respond(self, mcp::response(*id, mcp::initialize_result(st.version, static_cast<bool>(st.tools_now))));
  }
  // MCP: a request id is not reused in a session; a call in flight holds its own.
  if (st.calls.count(id->dump()))
    return fail(self, *id, mcp::invalid_request,
                fmt::format("request id {} is already used by a call in flight", cut_text(id->dump())));
  if (m == "ping")
    return respond(self, mcp::response(*id, Json::object()));
  if (!st.turn)
    return fail(self, *id, mcp::invalid_request, fmt::format("`{}` before initialize: send initialize first", cut_text(m)));
  if (m == "tools/list") {
    // The whole list comes at once, with no nextCursor: any cursor is none of ours
    // (MCP pagination: an invalid cursor is -32602).
    if (auto* cursor = params.find("cursor"); cursor && !cursor->is_null())
      return fail(self, *id, mcp::invalid_params,
                  fmt::format("tools/list: cursor {} is not one this server gave; it lists every tool at once "
                              "and gives no cursor, so send tools/list without one",
                              cut_text(cursor->dump())));
    auto set = st.tools_now ? st.tools_now() : nullptr;
    st.listed = set;
    st.told_changed = false;
    return respond(self, mcp::response(*id, mcp::tools_list_result(set ? *set->config : *st.config)));
  }
  if (m == "tools/call")
    return call_tool(self, *id, params);
  // A notification sent as a request (with an id) would wait for an answer none gives.
  if (m.starts_with("notifications/"))
    return fail(self, *id, mcp::invalid_request,
                fmt::format("`{}` is a notification: send it without an `id` (a message with an `id` is a request, "
                            "which this server answers; a notification gets no answer)",
                            cut_text(m)));
  fail(self, *id, mcp::method_not_found,
       fmt::format("unknown method `{}`: this server offers initialize, ping, tools/list and tools/call", cut_text(m)));
}

/// A batch (an array of messages): part of protocol 2025-03-26 only, where receiving
/// one is a MUST; 2025-06-18 dropped them. Its responses go out as one array.
void on_batch(mcp_actor_t* self, JsonArray& messages) {
  auto& st = self->state;
  if (st.version != mcp::batch_version)
    return fail(self, Json(), mcp::invalid_request,
                fmt::format("a message must be one JSON-RPC 2.0 object: batches (arrays) belong to protocol {} "
                            "only, and this session agreed on {}",
                            mcp::batch_version, st.version.empty() ? "none yet (send initialize first)" : st.version));
  if (messages.empty())
    return fail(self, Json(), mcp::invalid_request, "an empty batch: a batch holds one message or more");
  // Its answers are told apart by their ids: one id twice refuses the batch whole,
  // before any of it runs (as over HTTP). Each request is refused under its own id,
  // in one array: its client waits on those ids (one answer with id null settled none).
  std::set<std::string> ids;
  std::vector<Json> requests; // each answered if refused: by its id, else (no valid one) by null
  std::optional<std::string> twice;
  for (auto& m : messages) {
    auto* id = m.is_object() && m.find("method") ? m.find("id") : nullptr;
    auto request = id ? mcp::request_id(*id) : std::nullopt;
    if (!request) {
      bool notification = m.is_object() && m.find("method") && !m.find("id");
      if (!notification) // as read alone, it would be refused with id null
        requests.push_back(Json());
      continue;
    }
    requests.push_back(*request);
    if (!ids.insert(request->dump()).second && !twice)
      twice = request->dump();
  }
  if (twice) {
    auto message = fmt::format("request id {} is used twice in this batch: its answers are told apart by their ids; "
                               "nothing of the batch was run",
                               cut_text(*twice));
    auto refused = Json::array();
    for (auto& id : requests)
      refused.push(mcp::error_response(id, mcp::invalid_request, message));
    return send(self, refused);
  }
  auto batch = st.next_batch++;
  st.batches[batch];
  st.reading = batch;
  for (auto& m : messages)
    on_one(self, &m);
  st.reading = 0;
  send_batch_if_done(self, batch);
}

void on_parsed(mcp_actor_t* self, Json& json) {
  if (json.is_array())
    return on_batch(self, json.as_array());
  on_one(self, &json);
}

/// Whether `json` waits for the tools still starting: after initialize, all but a
/// ping (which has no order to keep, and tells a client that waits we live).
bool waits_for_tools(mcp_actor_t* self, const Json& json) {
  auto& st = self->state;
  if (!st.starting || !st.turn)
    return false;
  auto* method = json.is_object() ? json.find("method") : nullptr;
  if (method && method->is_string() && method->as_string() == "ping")
    return false;
  // Behind those held (ready, the news of it on its way): in order.
  if (!st.held.empty())
    return true;
  if (st.starting->ready()) {
    st.starting = nullptr;
    return false;
  }
  return true;
}

/// A notifications/cancelled of a request still held: the request is dropped with it,
/// never run nor answered (as MCP has a cancelled request), and true.
bool drops_held_request(mcp_actor_t* self, const Json& json) {
  auto& st = self->state;
  auto* method = json.is_object() ? json.find("method") : nullptr;
  auto* params = json.is_object() ? json.find("params") : nullptr;
  if (!method || !method->is_string() || method->as_string() != "notifications/cancelled" || json.find("id") || !params)
    return false;
  auto valid = cancelled_request(*params);
  if (!valid)
    return false;
  auto held = std::find_if(st.held.begin(), st.held.end(), [&](const Json& m) {
    auto* id = m.is_object() ? m.find("id") : nullptr;
    return id && m.find("method") && *id == *valid;
  });
  if (held == st.held.end())
    return false;
  st.held.erase(held);
  return true;
}

void on_message(mcp_actor_t* self, const std::string& text) {
  auto& st = self->state;
  auto msg = mcp::parse_message(text);
  if (msg.code)
    return fail(self, msg.error_id, msg.code, std::move(msg.error));
  if (waits_for_tools(self, msg.json)) {
    if (drops_held_request(self, msg.json))
      return;
    if (st.held.empty())
      st.starting->when_ready([me = caf::actor_cast<caf::actor>(self)] { caf::anon_send(me, ready_atom::value); });
    st.held.push_back(std::move(msg.json));
    return;
  }
  on_parsed(self, msg.json);
}

/// Whether `json` (a message or a batch) has a request in it: one owed an answer.
bool owes_answer(const Json& json) {
  if (json.is_array())
    return std::any_of(json.as_array().begin(), json.as_array().end(), owes_answer);
  return json.is_object() && json.find("id") && json.find("method");
}

/// The session is ending: what is held for the tools still starting but owes the
/// client no answer (notifications, its `initialized` among them) is read now, so a
/// client that left while a server starts is not held for that start (which the
/// session's end then stops). A request held still waits for it: a piped session's
/// last call is answered.
void read_held_notifications(mcp_actor_t* self) {
  auto& st = self->state;
  if (st.held.empty() || std::any_of(st.held.begin(), st.held.end(), owes_answer))
    return;
  auto held = std::move(st.held);
  st.held.clear();
  for (auto& json : held)
    on_parsed(self, json);
}

/// The session is ending: an await in flight waits for its handles as a shell's
/// `wait` does (a piped session's last await sees them finish), but not past the
/// longest of the tools' await_timeout_secs, as the turn end would: a server it
/// awaits runs for good.
void bound_awaits_at_end(mcp_actor_t* self) {
  auto& st = self->state;
  if (!st.ending || st.awaits_bounded ||
      std::none_of(st.calls.begin(), st.calls.end(), [](auto& c) { return c.second.tool == "await"; }))
    return;
  st.awaits_bounded = true;
  double bound = 0; // of the tools whose handles it may await: those called here
  auto tools = offered(self); // with the MCP servers' behind it
  for (auto& name : st.called)
    if (auto t = tools->tools.find(name); t != tools->tools.end())
      bound = std::max(bound, t->second.lifecycle.await_timeout_secs);
  self->delayed_send(self, std::chrono::duration_cast<caf::timespan>(std::chrono::duration<double>(bound)),
                     timeout_atom::value);
}

/// The tools started: what waited for them is read now, in order.
void on_ready(mcp_actor_t* self) {
  auto& st = self->state;
  st.starting = nullptr;
  auto held = std::move(st.held);
  st.held.clear();
  for (auto& json : held)
    on_parsed(self, json);
  // A session's end that came meanwhile: as it would have with these calls in flight.
  bound_awaits_at_end(self);
  end_when_answered(self);
}

mcp_impl::behavior_type mcp_server(mcp_actor_t* self, McpTurnMaker make_turn, std::shared_ptr<const Config> config,
                                   McpWriter write, ToolsNow tools_now, std::shared_ptr<ToolsStarting> starting) {
  auto& st = self->state;
  st.starting = std::move(starting);
  st.make_turn = std::move(make_turn);
  st.config = std::move(config);
  st.tools_now = std::move(tools_now);
  st.requests = std::make_shared<McpRequests>(write);
  st.write = std::move(write);
  return {
    [self](message_atom, const std::string& text) { on_message(self, text); },
    [self](cancel_atom) { cancel_all(self); },
    [self](turn_end_atom) -> caf::result<std::vector<HandleSummary>, std::string> {
      auto& st = self->state;
      // Nobody answers now: a question still out is a no.
      st.requests->close();
      auto rp = self->make_response_promise<std::vector<HandleSummary>, std::string>();
      // The calls in flight are answered first (the client may still read them), an
      // await within a bound.
      st.ending = rp;
      read_held_notifications(self);
      bound_awaits_at_end(self);
      end_when_answered(self);
      return rp;
    },
    [self](tick_atom) { tick(self); },
    [self](ready_atom) { on_ready(self); },
    [self](update_atom) { tell_if_changed(self, "", true); },
    [self](timeout_atom) {
      self->state.awaits_waited = true;
      end_when_answered(self);
    },
  };
}

} // namespace

mcp_server_actor spawn_mcp_server(caf::actor_system& sys, McpTurnMaker make_turn, std::shared_ptr<const Config> config,
                                  McpWriter write, ToolsNow tools_now, std::shared_ptr<ToolsStarting> starting) {
  return caf::actor_cast<mcp_server_actor>(sys.spawn(mcp_server, std::move(make_turn), std::move(config),
                                                     std::move(write), std::move(tools_now), std::move(starting)));
}

} // namespace jp
