#include "runtime/provider/openai_format.hpp"
#include "runtime/provider/provider_extra.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <optional>
#include <utility>

#include "messages/json.hpp"
#include "messages/with_digest.hpp"
#include "runtime/provider/stream_error.hpp"
#include "runtime/text_nocase.hpp"
#include "config/assistant_model.hpp"
#include "runtime/provider/request_tools.hpp"
#include "runtime/provider/tool_result_pairing.hpp"

namespace jp {

namespace {

/// Adds the fields of `extra` (what the provider asked back) to `j`, when it was
/// `model` that asked; ours stand.
void add_provider_extra(Json& j, const std::string& extra, std::string_view model) {
  if (auto fields = provider_extra_for(extra, model))
    for (auto& [key, value] : fields->as_object())
      if (!j.find(key))
        j.set(key, value);
}

/// A call's id as api.openai.com takes it: at most 40 bytes, else it refuses the
/// request (string_above_max_length). Another server's longer one (vLLM's
/// `chatcmpl-tool-` and 32 hex digits, a conversation begun there) is cut, with its
/// digest; the same in its result.
std::string openai_call_id(const std::string& id) {
  constexpr size_t kMaxCallId = 40;
  return id.size() <= kMaxCallId ? id : with_digest(id, id, kMaxCallId);
}

Json openai_message(const ChatMessage& m, std::string_view model) {
  switch (m.role) {
    case chat_role::user:
      return JsonObject{{"role", "user"}, {"content", m.text}};
    case chat_role::tool:
      // The dialect has no error flag: the text says what failed.
      return JsonObject{{"role", "tool"}, {"tool_call_id", openai_call_id(m.tool_call_id)}, {"content", m.text}};
    case chat_role::assistant:
      break;
  }
  Json msg = JsonObject{{"role", "assistant"}};
  // null content is allowed only beside tool calls.
  msg.set("content", m.text.empty() && !m.tool_calls.empty() ? Json() : Json(m.text));
  if (!m.tool_calls.empty()) {
    Json calls = Json::array();
    for (const auto& c : m.tool_calls) {
      // As the model wrote them where they are an object; else (the call failed
      // saying why) none: Ollama and vLLM read each earlier call's into an object
      // and refuse the request otherwise.
      auto args = Json::parse(c.arguments);
      Json function = JsonObject{{"name", c.name},
                                 {"arguments", args && args->is_object() ? c.arguments : std::string("{}")}};
      Json call = JsonObject{{"id", openai_call_id(c.id)}, {"type", "function"}, {"function", std::move(function)}};
      add_provider_extra(call, c.provider_extra, model);
      calls.push(std::move(call));
    }
    msg.set("tool_calls", std::move(calls));
  }
  add_provider_extra(msg, m.provider_extra, model);
  // OpenRouter's reasoning details name the call they go with by its id.
  if (auto* details = msg.find("reasoning_details"); details && details->is_array())
    for (auto& d : details->as_array())
      if (auto* id = d.is_object() ? d.find("id") : nullptr; id && id->is_string())
        for (const auto& c : m.tool_calls)
          if (c.id == id->as_string()) {
            *id = Json(openai_call_id(c.id));
            break;
          }
  return msg;
}

/// `later`, an assistant message, joined to `text_only`, the assistant's message
/// before it with no calls: one message, its text first, the later one's calls, and
/// what either carries besides (a provider's reasoning: texts and lists joined in
/// order, else the later one's).
Json joined_assistant(Json text_only, Json later) {
  auto first = std::string(text_only.string_at("content"));
  auto* then = later.find("content");
  auto second = then && then->is_string() ? then->as_string() : std::string();
  auto text = first.empty() ? second : second.empty() ? first : first + "\n\n" + second;
  for (auto& [key, value] : text_only.as_object()) {
    if (key == "content" || key == "role")
      continue;
    auto* both = later.find(key);
    if (!both)
      later.set(key, value);
    else if (both->is_string() && value.is_string())
      *both = Json(value.as_string() + "\n\n" + both->as_string());
    else if (both->is_array() && value.is_array()) {
      auto joined = value.as_array();
      for (auto& item : both->as_array())
        joined.push_back(item);
      *both = Json(std::move(joined));
    }
  }
  later.set("content", text.empty() && later.find("tool_calls") ? Json() : Json(text));
  return later;
}

} // namespace

std::string_view max_tokens_parameter(std::string_view model, bool completion_tokens) {
  // OpenAI's reasoning models refuse `max_tokens` ("Use 'max_completion_tokens'
  // instead"), and all of api.openai.com's models take the new name; other servers
  // read `max_tokens`, but one that refused it (completion_tokens).
  return completion_tokens || openai_reasoning_model(model) ? "max_completion_tokens" : "max_tokens";
}

bool is_openai_service(std::string_view url) {
  constexpr std::string_view host = "https://api.openai.com";
  return url.starts_with(host) && (url.size() == host.size() || url[host.size()] == '/' || url[host.size()] == ':');
}

bool takes_no_user_after_tool(std::string_view model) {
  auto name = model_name(model);
  for (std::string_view family : {"mistral", "magistral", "ministral", "devstral", "codestral", "pixtral",
                                  "open-mistral", "open-mixtral", "mixtral"})
    if (equals_nocase(name.substr(0, family.size()), family)) // vLLM serves mistralai/Mistral-Small-...
      return true;
  return false;
}

std::string openai_request_body(const ChatRequest& request, bool ask_usage, bool completion_tokens) {
  Json body = Json::object();
  body.set("model", request.model);
  body.set("stream", true);
  // The last chunk then says how many tokens the response took (the report's).
  if (ask_usage)
    body.set("stream_options", JsonObject{{"include_usage", true}});
  Json messages = Json::array();
  if (!request.system.empty())
    messages.push(JsonObject{{"role", "system"}, {"content", request.system}});
  // Mistral's models refuse a user message right after tool results ("Unexpected
  // role 'user' after role 'tool'"): there its text goes with the last result.
  bool fold_user = takes_no_user_after_tool(request.model);
  // Images go in user messages only: a run of tool results is followed by one with
  // their images, each call's named (Mistral's models take no user message there).
  JsonArray shown;
  auto show = [&] {
    if (!shown.empty())
      messages.push(JsonObject{{"role", "user"}, {"content", std::move(shown)}});
    shown.clear();
  };
  for (const auto& m : pair_tool_results(request.messages)) {
    if (m.role != chat_role::tool)
      show();
    auto& sent = messages.as_array();
    if (fold_user && m.role == chat_role::user && !sent.empty() && sent.back().string_at("role") == "tool") {
      auto& content = *sent.back().find("content");
      // Said as the user's, so it is not read as the tool's output.
      content = Json(content.as_string() + "\n\n[The user, after these results:]\n" + m.text);
      continue;
    }
    // An assistant message right after one with text alone (the turn end's await,
    // after the answer it waited behind) joins it: Mistral's models refuse two in a
    // row ("Unexpected role 'assistant' after role 'assistant'"), strict chat
    // templates too.
    if (m.role == chat_role::assistant && !sent.empty() && sent.back().string_at("role") == "assistant" &&
        !sent.back().find("tool_calls")) {
      sent.back() = joined_assistant(std::move(sent.back()), openai_message(m, request.model));
      continue;
    }
    messages.push(openai_message(m, request.model));
    if (m.images.empty())
      continue;
    if (fold_user) {
      auto& content = *messages.as_array().back().find("content");
      content = Json(content.as_string() + fmt::format("\n[{} image(s) not shown: this API takes no user message "
                                                       "after tool results, where images go]",
                                                       m.images.size()));
      continue;
    }
    shown.push_back(JsonObject{{"type", "text"},
                               {"text", fmt::format("The image(s) of tool call `{}` ({}):", openai_call_id(m.tool_call_id),
                                                    m.tool_name)}});
    for (auto& image : m.images)
      shown.push_back(JsonObject{
        {"type", "image_url"},
        {"image_url", JsonObject{{"url", fmt::format("data:{};base64,{}", image.media_type, image.base64)}}}});
  }
  show();
  body.set("messages", std::move(messages));
  if (auto tools = request_tools(request.tools_json))
    body.set("tools", std::move(*tools));
  if (request.max_tokens > 0)
    body.set(max_tokens_parameter(request.model, completion_tokens), request.max_tokens);
  // Structured outputs: the service holds the answer to the schema.
  if (auto schema = Json::parse(request.response_schema); schema && schema->is_object())
    body.set("response_format",
             Json::object().set("type", "json_schema").set("json_schema", Json::object()
                                                                          .set("name", request.response_schema_name)
                                                                          .set("schema", std::move(*schema))
                                                                          .set("strict", true)));
  return body.dump();
}

void ReasoningDetails::add(const Json& pieces) {
  if (!pieces.is_array())
    return;
  auto& entries = merged_.as_array();
  for (const auto& piece : pieces.as_array()) {
    if (!piece.is_object())
      continue;
    auto* index = piece.find("index");
    if (!index || !index->is_int()) { // whole
      entries.push_back(piece);
      continue;
    }
    auto [at, fresh] = latest_.try_emplace({index->as_int(), std::string(piece.string_at("type"))}, entries.size());
    if (fresh) {
      entries.push_back(piece);
      continue;
    }
    auto& entry = entries[at->second];
    for (auto& [key, value] : piece.as_object()) {
      auto* have = entry.find(key);
      if ((key == "text" || key == "summary") && value.is_string() && have && have->is_string())
        have->as_string() += value.as_string();
      else if (!value.is_null() || !have)
        entry.set(key, value);
    }
  }
}

Status OpenAiStream::on_event(const SseEvent& event,
                              const std::function<void(ChatEvent)>& emit) {
  if (event.data.empty() || (finished_ && usage_seen_))
    return Status::success();
  if (event.data == "[DONE]") {
    ended_ = true;
    // A server that never sent a finish_reason: infer it.
    if (!finished_)
      finish(calls_.empty() ? "stop" : "tool_calls", emit);
    return Status::success();
  }
  auto chunk = Json::parse(event.data);
  if (finished_) { // only the usage chunk may follow; anything else is ignored
    if (chunk && chunk->is_object())
      usage_seen_ = emit_usage(*chunk, emit);
    return Status::success();
  }
  if (!chunk)
    return malformed_stream_error(chunk.error(), event.data);
  if (!chunk->is_object())
    return malformed_stream_error("expected a JSON object", event.data);
  if (auto* err = chunk->find("error"); err && !err->is_null()) {
    if (err->is_string())
      return provider_stream_error(err->as_string());
    auto message = err->is_object() ? err->string_at("message") : std::string_view();
    // OpenAI says `server_error`; OpenRouter gives the HTTP status the error would
    // have had (502: the model is down, 429: rate-limited), as a number.
    auto* code = err->is_object() ? err->find("code") : nullptr;
    bool transient_status = code && code->is_int() &&
                            (code->as_int() == 408 || code->as_int() == 429 || code->as_int() >= 500);
    error_transient_ = err->is_object() && (err->string_at("type") == "server_error" ||
                                            err->string_at("code") == "server_error" || transient_status);
    return provider_stream_error(message.empty() ? err->dump() : std::string(message));
  }
  // Some servers (Gemini's OpenAI endpoint) count in every chunk, each count the
  // response's so far: the last one stands.
  bool usage = emit_usage(*chunk, emit);
  // No choices: a usage chunk (stream_options.include_usage) or a keep-alive.
  auto* choices = chunk->find("choices");
  if (!choices || !choices->is_array() || choices->as_array().empty())
    return Status::success();
  const Json& choice = choices->as_array().front();
  if (!choice.is_object())
    return malformed_stream_error("choices[0] is not an object", event.data);
  if (auto* delta = choice.find("delta"); delta && delta->is_object()) {
    // A refusal (structured outputs) comes as `refusal` instead of `content`: it is
    // the answer the user gets, so it is shown and kept as its text.
    for (auto key : {"content", "refusal"})
      if (auto text = delta->string_at(key); !text.empty())
        emit(ChatEvent{chat_event_kind::text, std::string(text)});
    // OpenAI-compatible servers that stream the model's reasoning name it one of
    // two ways (DeepSeek and vLLM: reasoning_content; Ollama and OpenRouter:
    // reasoning); some send both, the same text: it is shown once.
    auto thought = delta->string_at("reasoning_content");
    reasoning_content_ += thought;
    // OpenRouter's structured reasoning (text, summaries, encrypted blocks and their
    // signatures), which it wants back unmodified with the calls.
    if (auto* details = delta->find("reasoning_details"); details && details->is_array())
      reasoning_details_.add(*details);
    if (thought.empty())
      thought = delta->string_at("reasoning");
    if (!thought.empty())
      emit(ChatEvent{chat_event_kind::reasoning, std::string(thought)});
    if (auto* calls = delta->find("tool_calls"); calls && calls->is_array())
      for (const auto& call : calls->as_array())
        if (call.is_object())
          add_tool_call_delta(call);
  }
  if (auto reason = choice.string_at("finish_reason"); !reason.empty())
    finish(std::string(reason), emit);
  usage_seen_ = finished_ && usage; // counted with the finish: nothing more to wait for
  return Status::success();
}

namespace {

/// Whether a fragment with neither index nor id is a call of its own: it names a tool
/// and brings arguments, and the call before it has whole arguments already (a server
/// that sends each call of a batch whole, bare). A fragment of the same call repeating
/// its name comes while its arguments are still cut.
bool starts_another_call(const std::string& last_arguments, const Json& delta) {
  auto* function = delta.find("function");
  if (!function || !function->is_object() || function->string_at("name").empty() || last_arguments.empty())
    return false;
  auto* args = function->find("arguments");
  if (!args || (args->is_string() && args->as_string().empty()))
    return false;
  // Parsed only where it may be whole: a server repeating the name with every
  // fragment would have the arguments so far parsed again at each.
  auto end = last_arguments.find_last_not_of(" \t\r\n");
  if (end == std::string::npos || last_arguments[end] != '}')
    return false;
  auto before = Json::parse(last_arguments);
  return before && before->is_object();
}

} // namespace

void OpenAiStream::add_tool_call_delta(const Json& delta) {
  auto id = delta.string_at("id");
  // The call this fragment belongs to: the latest one at its index. Some servers
  // omit `index`, or reuse index 0 for every call of a parallel batch; an id not
  // seen at that index then starts a new call.
  int64_t index = 0;
  if (auto* i = delta.find("index"); i && i->is_int()) {
    index = i->as_int();
  } else if (!calls_.empty()) {
    index = calls_.back().index;
    if ((!id.empty() && id != calls_.back().id) || (id.empty() && starts_another_call(calls_.back().arguments, delta)))
      for (const auto& c : calls_)
        index = std::max(index, c.index + 1);
  }
  auto it = std::find_if(calls_.rbegin(), calls_.rend(),
                         [&](const PartialCall& c) { return c.index == index; });
  if (it == calls_.rend() || (!id.empty() && !it->id.empty() && id != it->id)) {
    calls_.push_back(PartialCall{index});
    it = calls_.rbegin();
  }
  if (it->id.empty())
    it->id = id;
  // Gemini's thought signature, which it wants back with the call.
  if (auto* extra = delta.find("extra_content"); extra && extra->is_object())
    it->extra = Json::object().set("extra_content", *extra).set(kExtraModel, model_).dump();
  if (auto* function = delta.find("function"); function && function->is_object()) {
    // The name comes whole in the first fragment (OpenAI); some servers repeat it
    // whole in each, some send it in pieces as the arguments (the SDKs join them).
    if (auto name = function->string_at("name"); it->name.empty() || name.starts_with(it->name))
      it->name = name;
    else if (name != it->name)
      it->name += name;
    // Arguments come as JSON text in pieces; some compatible servers send the object
    // itself, whole.
    if (auto* args = function->find("arguments"); args && args->is_object())
      it->arguments += args->dump();
    else
      it->arguments += function->string_at("arguments");
  }
}

bool OpenAiStream::emit_usage(const Json& chunk, const std::function<void(ChatEvent)>& emit) {
  auto* usage = chunk.find("usage");
  if (!usage || !usage->is_object())
    return false;
  auto count = [&](std::string_view key) -> int64_t {
    auto* v = usage->find(key);
    return v && v->is_int() && v->as_int() >= 0 ? v->as_int() : -1;
  };
  ChatEvent e{chat_event_kind::usage};
  e.tokens_in = count("prompt_tokens");
  e.tokens_out = count("completion_tokens");
  emit(std::move(e));
  return true;
}

void OpenAiStream::finish(std::string reason, const std::function<void(ChatEvent)>& emit) {
  std::stable_sort(calls_.begin(), calls_.end(),
                   [](const PartialCall& a, const PartialCall& b) { return a.index < b.index; });
  for (auto& c : calls_) {
    ChatEvent ev{chat_event_kind::tool_call};
    // Without one, the turn gives the call an id of its own (its result names it).
    ev.call.id = std::move(c.id);
    ev.call.name = std::move(c.name);
    ev.call.arguments = c.arguments.empty() ? "{}" : std::move(c.arguments);
    ev.call.provider_extra = std::move(c.extra);
    emit(std::move(ev));
  }
  ChatEvent done{chat_event_kind::done};
  // DeepSeek's thinking mode wants a response's reasoning back with its tool calls,
  // and with the answer that ends a turn of calls (HTTP 400 "Missing
  // `reasoning_content` field" otherwise; elsewhere it is ignored), so every
  // response keeps it (the turn drops it from an answer where no tools were
  // called); OpenRouter its reasoning_details (Gemini 3 behind it: HTTP
  // 400 "Gemini models require OpenRouter reasoning details to be preserved in each
  // request").
  Json extra = Json::object();
  if (!reasoning_content_.empty())
    extra.set("reasoning_content", reasoning_content_);
  if (!calls_.empty() && !reasoning_details_.merged().as_array().empty())
    extra.set("reasoning_details", reasoning_details_.merged());
  if (!extra.as_object().empty())
    done.provider_extra = extra.set(kExtraModel, model_).dump();
  calls_.clear();
  finished_ = true;
  done.finish_reason = std::move(reason);
  emit(std::move(done));
}

} // namespace jp
