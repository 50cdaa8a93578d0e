#include "runtime/provider/anthropic_format.hpp"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <fmt/format.h>
#include <optional>
#include <utility>
#include <vector>

#include "messages/blank.hpp"
#include "messages/json.hpp"
#include "messages/with_digest.hpp"
#include "messages/tool_state.hpp"
#include "runtime/provider/provider_extra.hpp"
#include "runtime/provider/stream_error.hpp"
#include "runtime/provider/request_tools.hpp"
#include "runtime/provider/tool_result_pairing.hpp"

namespace jp {

namespace {

/// The member if it is an object, else nullptr.
const Json* object_member(const Json& obj, std::string_view key) {
  auto* v = obj.find(key);
  return v && v->is_object() ? v : nullptr;
}

/// usage.key as a count, -1 when absent or not a count.
int64_t usage_count(const Json& usage, std::string_view key) {
  auto* v = usage.find(key);
  return v && v->is_int() && v->as_int() >= 0 ? v->as_int() : -1;
}

int64_t index_member(const Json& obj) {
  auto* v = obj.find("index");
  return v && v->is_int() ? v->as_int() : 0;
}

/// A tool call's arguments as the `input` object the API requires.
Json tool_input(const std::string& arguments) {
  auto parsed = Json::parse(arguments);
  return parsed && parsed->is_object() ? std::move(*parsed) : Json::object();
}

Json text_block(const std::string& text) {
  return JsonObject{{"type", "text"}, {"text", text}};
}


/// A call's id as Anthropic takes it (`^[a-zA-Z0-9_-]+$`): another service's
/// (`functions.Bash:0`, a conversation begun elsewhere) with each other byte made `_`
/// and its own hash added, so two ids never become one; the same in its result.
std::string anthropic_call_id(const std::string& id) {
  auto allowed = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-'; };
  if (!id.empty() && std::all_of(id.begin(), id.end(), allowed))
    return id;
  std::string out = id;
  std::replace_if(out.begin(), out.end(), [&](char c) { return !allowed(c); }, '_');
  return with_digest(out, id);
}

/// The content blocks of one message (`model`: the request's).
JsonArray content_blocks(const ChatMessage& m, std::string_view model) {
  JsonArray blocks;
  switch (m.role) {
    case chat_role::user:
      if (!is_blank(m.text)) // refused: "text content blocks must contain non-whitespace text"
        blocks.push_back(text_block(m.text));
      break;
    case chat_role::assistant:
      // Its thinking first, as it came, where this model asked it back.
      if (auto extra = provider_extra_for(m.provider_extra, model))
        if (auto* thinking = extra->find("thinking_blocks"); thinking && thinking->is_array())
          for (auto& block : thinking->as_array())
            blocks.push_back(block);
      if (!is_blank(m.text))
        blocks.push_back(text_block(m.text));
      for (const auto& c : m.tool_calls)
        blocks.push_back(JsonObject{{"type", "tool_use"},
                                    {"id", anthropic_call_id(c.id)},
                                    {"name", c.name},
                                    {"input", tool_input(c.arguments)}});
      break;
    case chat_role::tool: {
      Json block = JsonObject{{"type", "tool_result"},
                              {"tool_use_id", anthropic_call_id(m.tool_call_id)},
                              {"content", m.text}};
      // "content cannot be empty if is_error is true" (a conversation kept from
      // before error results were never empty).
      if (m.tool_error) {
        block.set("is_error", true);
        if (is_blank(m.text))
          block.set("content", failed_saying_nothing);
      }
      if (!m.images.empty() && m.tool_error) {
        // "all content must be type 'text' if 'is_error' is true": said instead.
        block.set("content", fmt::format("{}\n[{} image(s) not shown: the API takes no images in a failed tool's "
                                         "result]",
                                         block.string_at("content"), m.images.size()));
      } else if (!m.images.empty()) {
        // Its images as blocks of its content, after the text.
        JsonArray content;
        if (auto text = std::string(block.string_at("content")); !is_blank(text))
          content.push_back(text_block(text));
        for (auto& image : m.images)
          content.push_back(JsonObject{{"type", "image"},
                                       {"source", JsonObject{{"type", "base64"},
                                                             {"media_type", image.media_type},
                                                             {"data", image.base64}}}});
        block.set("content", std::move(content));
      }
      blocks.push_back(std::move(block));
      break;
    }
  }
  return blocks;
}

} // namespace

std::string anthropic_request_body(const ChatRequest& request) {
  Json body = Json::object();
  body.set("model", request.model);
  body.set("max_tokens", request.max_tokens > 0 ? request.max_tokens : int64_t{4096});
  body.set("stream", true);
  // Prompt caching: a breakpoint after the system prompt (and the tools before it),
  // which every request of a conversation shares, one at the end of the last
  // message (and one at the end of the previous request's, below), so the next round of a tool loop reads all of this one from the cache
  // (a tenth of the price and most of the wait). Below the model's minimum (1024 or
  // 2048 tokens) the API caches nothing and says nothing.
  auto cached = [](Json block) { return block.set("cache_control", JsonObject{{"type", "ephemeral"}}); };
  if (!request.system.empty())
    body.set("system", JsonArray{cached(text_block(request.system))});
  // Tool results travel in user messages; consecutive messages of one role merge.
  // Paired first, so a user turn starts with the results of the assistant's calls.
  struct Turn {
    const char* role;
    JsonArray content;
  };
  std::vector<Turn> turns;
  for (const auto& m : pair_tool_results(request.messages)) {
    auto blocks = content_blocks(m, request.model);
    if (blocks.empty())
      continue;
    const char* role = m.role == chat_role::assistant ? "assistant" : "user";
    if (turns.empty() || std::string_view(turns.back().role) != role)
      turns.push_back(Turn{role, {}});
    auto& content = turns.back().content;
    content.insert(content.end(), std::make_move_iterator(blocks.begin()),
                   std::make_move_iterator(blocks.end()));
  }
  // The API wants the user to speak first.
  if (!turns.empty() && std::string_view(turns.front().role) == "assistant")
    turns.insert(turns.begin(), Turn{"user", {text_block("(continued)")}});
  // A breakpoint goes on a turn's last block that says something: a tool that printed
  // nothing has an empty result, and the API refuses cache_control on an empty text
  // ("cache_control cannot be set for empty text blocks"), which a result's string
  // content may be taken as. The prefix cached is one block shorter.
  auto cache_last_filled = [&cached](JsonArray& content) {
    for (auto b = content.rbegin(); b != content.rend(); ++b) {
      auto* text = b->find("content");
      if (b->string_at("type") == "tool_result" && text && text->is_string() && is_blank(text->as_string()))
        continue;
      *b = cached(std::move(*b));
      return;
    }
  };
  if (!turns.empty())
    cache_last_filled(turns.back().content);
  // And one where the previous request ended (the user turn before the last): the
  // API looks back about 20 blocks from a breakpoint for a cached prefix, and a round
  // of ten parallel calls adds twenty, past which the last one alone finds nothing.
  for (auto t = turns.rbegin() + (turns.empty() ? 0 : 1); t != turns.rend(); ++t)
    if (std::string_view(t->role) == "user") {
      cache_last_filled(t->content);
      break;
    }
  Json messages = Json::array();
  for (auto& t : turns)
    messages.push(JsonObject{{"role", t.role}, {"content", std::move(t.content)}});
  body.set("messages", std::move(messages));
  if (auto tools = request_tools(request.tools_json))
    body.set("tools", std::move(*tools));
  return body.dump();
}

Status AnthropicStream::on_event(const SseEvent& event,
                                 const std::function<void(ChatEvent)>& emit) {
  if (finished_ || event.data.empty())
    return Status::success();
  auto parsed = Json::parse(event.data);
  if (!parsed)
    return malformed_stream_error(parsed.error(), event.data);
  const Json& ev = *parsed;
  if (!ev.is_object())
    return malformed_stream_error("expected a JSON object", event.data);
  auto type = ev.string_at("type");
  if (type.empty())
    type = event.event; // the SSE event name mirrors it

  if (type == "content_block_start") {
    auto* block = object_member(ev, "content_block");
    if (!block)
      return malformed_stream_error("content_block_start without a content_block",
                                    event.data);
    auto block_type = block->string_at("type");
    if (block_type == "tool_use") {
      ToolUse use{std::string(block->string_at("id")), std::string(block->string_at("name"))};
      // Anthropic starts with an empty input and streams it; some compatible servers
      // give it whole here and send no delta.
      if (auto* input = block->find("input"); input && input->is_object() && !input->as_object().empty())
        use.given = input->dump();
      tool_uses_[index_member(ev)] = std::move(use);
    } else if (block_type == "thinking" || block_type == "redacted_thinking") {
      thinking_[index_member(ev)] = Thinking{*block, std::string(block->string_at("thinking")),
                                             std::string(block->string_at("signature"))};
    } else if (block_type == "text") {
      // Blocks on either side of a tool_use ("Let me look." [call] "Found it.") are
      // kept apart: joined, they read "Let me look.Found it.".
      if (texted_)
        emit(ChatEvent{chat_event_kind::text, "\n\n"});
      if (auto text = block->string_at("text"); !text.empty()) {
        emit(ChatEvent{chat_event_kind::text, std::string(text)});
        texted_ = true;
      }
    }
  } else if (type == "content_block_delta") {
    auto* delta = object_member(ev, "delta");
    if (!delta)
      return malformed_stream_error("content_block_delta without a delta", event.data);
    auto delta_type = delta->string_at("type");
    if (delta_type == "text_delta") {
      if (auto text = delta->string_at("text"); !text.empty()) {
        emit(ChatEvent{chat_event_kind::text, std::string(text)});
        texted_ = true;
      }
    } else if (delta_type == "thinking_delta") {
      auto thought = delta->string_at("thinking");
      if (auto it = thinking_.find(index_member(ev)); it != thinking_.end())
        it->second.thinking += thought;
      if (!thought.empty())
        emit(ChatEvent{chat_event_kind::reasoning, std::string(thought)});
    } else if (delta_type == "signature_delta") {
      if (auto it = thinking_.find(index_member(ev)); it != thinking_.end())
        it->second.signature += delta->string_at("signature");
    } else if (delta_type == "input_json_delta") {
      if (auto it = tool_uses_.find(index_member(ev)); it != tool_uses_.end())
        it->second.arguments += delta->string_at("partial_json");
    }
  } else if (type == "content_block_stop") {
    if (auto it = tool_uses_.find(index_member(ev)); it != tool_uses_.end()) {
      emit_call(it->second, emit);
      tool_uses_.erase(it);
      called_ = true;
    }
  } else if (type == "message_start") {
    if (auto* message = object_member(ev, "message"))
      if (auto* usage = object_member(*message, "usage")) {
        // The prompt's tokens are those read fresh plus those written to and read
        // from the prompt cache.
        for (auto key : {"input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"})
          if (auto n = usage_count(*usage, key); n >= 0)
            tokens_in_ = std::max<int64_t>(tokens_in_, 0) + n;
        tokens_out_ = usage_count(*usage, "output_tokens");
      }
  } else if (type == "message_delta") {
    if (auto* delta = object_member(ev, "delta"))
      if (auto reason = delta->string_at("stop_reason"); !reason.empty())
        stop_reason_ = reason;
    if (auto* usage = object_member(ev, "usage"))
      if (auto n = usage_count(*usage, "output_tokens"); n >= 0)
        tokens_out_ = n;
  } else if (type == "message_stop") {
    // Blocks the stream never stopped still carry complete calls.
    for (auto& [index, block] : tool_uses_) {
      emit_call(block, emit);
      called_ = true;
    }
    tool_uses_.clear();
    if (tokens_in_ >= 0 || tokens_out_ >= 0) {
      ChatEvent usage{chat_event_kind::usage};
      usage.tokens_in = tokens_in_;
      usage.tokens_out = tokens_out_;
      emit(std::move(usage));
    }
    finished_ = true;
    ChatEvent done{chat_event_kind::done};
    done.finish_reason =
        !stop_reason_.empty() ? stop_reason_ : called_ ? "tool_use" : "end_turn";
    if (!thinking_.empty()) {
      Json blocks = Json::array();
      for (auto& [index, t] : thinking_) {
        if (t.block.string_at("type") == "thinking")
          t.block.set("thinking", std::move(t.thinking)).set("signature", std::move(t.signature));
        blocks.push(std::move(t.block));
      }
      thinking_.clear();
      done.provider_extra =
        Json::object().set("thinking_blocks", std::move(blocks)).set(kExtraModel, model_).dump();
    }
    emit(std::move(done));
  } else if (type == "error") {
    auto* err = object_member(ev, "error");
    if (!err)
      return provider_stream_error(event.data);
    auto kind = err->string_at("type");
    error_transient_ = kind == "overloaded_error" || kind == "api_error" || kind == "rate_limit_error" ||
                       kind == "timeout_error";
    return provider_stream_error(std::string(kind) + ": " + std::string(err->string_at("message")));
  }
  // ping, and types added later: nothing to emit.
  return Status::success();
}

void AnthropicStream::emit_call(ToolUse& block, const std::function<void(ChatEvent)>& emit) {
  ChatEvent ev{chat_event_kind::tool_call};
  ev.call.id = std::move(block.id);
  ev.call.name = std::move(block.name);
  ev.call.arguments = !block.arguments.empty() ? std::move(block.arguments)
                      : !block.given.empty()    ? std::move(block.given)
                                                : std::string("{}");
  emit(std::move(ev));
}

} // namespace jp
