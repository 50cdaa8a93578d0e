#include "runtime/provider/llm_inquiry.hpp"

#include <atomic>
#include <cctype>
#include <fmt/format.h>

#include "messages/json_codec.hpp"

namespace jp {

namespace {

/// How many of the conversation's last messages an inquiry carries, and how much
/// of each: enough to know why a handle was spawned, no more.
constexpr size_t excerpt_messages = 8;
constexpr size_t excerpt_chars = 600;

std::string clip(const std::string& text) {
  if (text.size() <= excerpt_chars)
    return text;
  return text.substr(0, excerpt_chars) + fmt::format("…[{} more bytes]", text.size() - excerpt_chars);
}

/// The conversation's last messages as text (tool calls and their responses
/// included), to put before an inquiry's question; "" when there are none.
std::string conversation_excerpt(const std::vector<ChatMessage>& recent) {
  if (recent.empty())
    return {};
  std::string out = "The conversation so far (its last messages):\n";
  auto from = recent.size() > excerpt_messages ? recent.size() - excerpt_messages : 0;
  for (auto i = from; i < recent.size(); ++i) {
    auto& m = recent[i];
    switch (m.role) {
      case chat_role::user: out += "[user] " + clip(m.text) + "\n"; break;
      case chat_role::assistant:
        if (!m.text.empty())
          out += "[assistant] " + clip(m.text) + "\n";
        for (auto& c : m.tool_calls)
          out += fmt::format("[assistant calls {} (call {})] {}\n", c.name, c.id, clip(c.arguments));
        break;
      case chat_role::tool:
        out += fmt::format("[{} answered call {}{}] {}\n", m.tool_name.empty() ? "tool" : m.tool_name,
                           m.tool_call_id, m.tool_error ? ", failed" : "", clip(m.text));
        break;
    }
  }
  return out + "\n";
}

} // namespace

Json turn_end_answer_schema(const std::vector<HandleSummary>& outstanding) {
  auto properties = Json::object();
  auto required = Json::array();
  auto choices = Json::array();
  for (auto a : {inquiry_answer::wait, inquiry_answer::abort})
    choices.push(Json(std::string(to_string(a))));
  for (auto& h : outstanding) {
    properties.set(h.id, Json::object().set("type", "string").set("enum", choices));
    required.push(Json(h.id));
  }
  auto answer = Json::object()
                  .set("type", "object")
                  .set("properties", std::move(properties))
                  .set("required", std::move(required))
                  .set("additionalProperties", false);
  return Json::object()
    .set("type", "object")
    .set("properties", Json::object()
                         .set("inquiry_id", Json::object().set("type", "string").set("enum", Json(JsonArray{Json("turn_end")})))
                         .set("answer", std::move(answer)))
    .set("required", Json(JsonArray{Json("inquiry_id"), Json("answer")}))
    .set("additionalProperties", false);
}

namespace {

class LlmInquiry final : public InquiryBackend {
public:
  LlmInquiry(std::shared_ptr<Provider> provider, std::string model)
    : provider_(std::move(provider)), model_(std::move(model)) {}

  Result<InquiryAnswers> turn_end(const std::vector<HandleSummary>& outstanding,
                                  const std::vector<ChatMessage>& recent) override {
    return turn_end(outstanding, recent, {});
  }

  Result<InquiryAnswers> turn_end(const std::vector<HandleSummary>& outstanding,
                                  const std::vector<ChatMessage>& recent,
                                  const std::function<bool()>& stopped) override {
    auto list = Json::array();
    for (auto& h : outstanding)
      list.push(inquiry_handle_json(h));
    auto schema = turn_end_answer_schema(outstanding);
    auto text = ask(fmt::format(
      "{}Your turn is ending, but these tool handles are still running:\n{}\n\nFor each one, choose "
      "\"wait\" (it runs on and its result comes back to you as a tool response) or \"abort\" (it is "
      "stopped now and its result is lost). Reply with only a JSON object that matches this JSON "
      "schema (an entry for every handle):\n{}",
      conversation_excerpt(recent), list.dump(), schema.dump()), stopped, schema);
    if (!text)
      return Error{fmt::format("the turn-end inquiry got no answer ({}); every handle was aborted", text.error())};
    auto parsed = json_in_answer(*text);
    if (!parsed)
      return Error{fmt::format("the assistant's answer to the turn-end inquiry is not a JSON object "
                               "({}); every handle was aborted. It said: {}",
                               parsed.error(), text->substr(0, 300))};
    // {inquiry_id, answer: {...}}; a bare map of answers is taken too.
    Json answer = *parsed;
    if (auto* inner = parsed->find("answer"); inner && inner->is_object())
      answer = *inner;
    InquiryAnswers out;
    for (auto& h : outstanding) {
      auto* choice = answer.find(h.id);
      auto a = choice && choice->is_string() ? inquiry_answer_from(choice->as_string()) : std::nullopt;
      if (!a)
        return Error{fmt::format("the assistant did not answer \"wait\" or \"abort\" for handle "
                                 "`{}` ({}); it was aborted",
                                 h.id, h.tool)};
      out[h.id] = *a;
    }
    return out;
  }

  std::optional<Json> answer(const std::string& tool, const Question& q) override { return answer(tool, q, {}); }

  std::optional<Json> answer(const std::string& tool, const Question& q,
                             const std::function<bool()>& stopped) override {
    auto text = ask(fmt::format(
      "The tool `{}` asks a question (its answer_type says what an answer may be):\n{}\nReply with "
      "only a JSON object {{\"inquiry_id\": \"{}\", \"answer\": <your answer>}}.",
      tool, to_json(q).dump(), q.id), stopped);
    if (!text)
      return std::nullopt;
    auto parsed = json_in_answer(*text);
    if (!parsed)
      return std::nullopt;
    auto* value = parsed->find("answer");
    if (!value)
      return std::nullopt;
    switch (q.answer_type.kind) {
      case answer_kind::boolean:
        return value->is_bool() ? std::optional<Json>(*value) : std::nullopt;
      case answer_kind::select:
        for (auto& o : q.answer_type.options)
          if (value->is_string() && value->as_string() == o)
            return *value;
        return std::nullopt;
      case answer_kind::text:
        return value->is_string() ? std::optional<Json>(*value) : std::nullopt;
    }
    return std::nullopt;
  }

private:
  // One backend serves the main loop and every sub-agent: each loop stops its own
  // questions (`stopped`), and a cancel, which does not say whose, stops none (it
  // once ended every later question, then every one in flight, a sibling's too).
  void cancel() override {}

  /// One request with no tools; the answer's text. `schema`: what it must match,
  /// enforced where the provider can (OpenAI's structured outputs).
  Result<std::string> ask(const std::string& prompt, const std::function<bool()>& stopped,
                          const Json& schema = Json()) {
    if (stopped && stopped())
      return Error{"cancelled"};
    ChatRequest req;
    req.model = model_;
    if (schema.is_object() && !schema_refused_) {
      req.response_schema = schema.dump();
      req.response_schema_name = "inquiry_answer";
    }
    req.system = "You answer questions from the runtime that runs your tools. Answer with JSON only.";
    req.messages.push_back(ChatMessage{chat_role::user, prompt});
    std::string text;
    std::string finish; // how the answer ended
    StreamHooks hooks;
    hooks.emit = [&](ChatEvent e) {
      if (e.kind == chat_event_kind::text)
        text += e.text;
      else if (e.kind == chat_event_kind::done)
        finish = e.finish_reason;
    };
    hooks.on_retry = [&](const std::string&) { text.clear(); };
    hooks.cancelled = [stopped] { return stopped && stopped(); };
    error_code kind = error_code::none;
    auto s = provider_->stream_classified(req, hooks, kind);
    // Some OpenAI-compatible servers refuse structured outputs (DeepSeek: HTTP 400
    // "This response_format type is unavailable now"). The prompt asks for JSON
    // anyway: ask again without it, and from then on never send it to this provider.
    if (!s && !req.response_schema.empty() && refuses_response_format(s.error, kind)) {
      schema_refused_ = true;
      req.response_schema.clear();
      req.response_schema_name.clear();
      text.clear();
      s = provider_->stream_classified(req, hooks, kind);
    }
    if (!s)
      return Error{s.error};
    // An answer the provider cut short is no answer (it would read as "not JSON").
    switch (cut_off_of(finish)) {
      case cut_off::none: return text;
      case cut_off::token_limit:
        return Error{fmt::format("the inquiry model's answer was cut off at the token limit before it was "
                                 "complete (finish reason \"{}\"; a reasoning model can spend the limit on its "
                                 "hidden reasoning); set assistant.inquiry_model to a model that answers at once",
                                 finish)};
      case cut_off::context_full:
        return Error{fmt::format("the inquiry model's answer was cut off because its context window was full "
                                 "(finish reason \"{}\"); set assistant.inquiry_model to a model with a larger one",
                                 finish)};
      case cut_off::refused:
      case cut_off::filtered:
        return Error{fmt::format("the inquiry model did not answer (finish reason \"{}\")", finish)};
    }
    return text;
  }

  /// An HTTP 400 whose message names the response_format we sent, but for a schema
  /// the server read and found wrong: that is ours to fix, not to stop sending.
  static bool refuses_response_format(const std::string& error, error_code kind) {
    if (kind != error_code::provider_http)
      return false;
    auto at = error.find("(HTTP 400 ");
    if (at == std::string::npos)
      return false;
    // The provider's words follow "(HTTP 400 from <url>): ".
    auto words = error.find("): ", at);
    auto message = error.substr(words == std::string::npos ? at : words);
    for (auto& c : message)
      c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (message.find("invalid schema") != std::string::npos)
      return false;
    return message.find("response_format") != std::string::npos || message.find("json_schema") != std::string::npos;
  }

  std::shared_ptr<Provider> provider_;
  std::string model_;
  // The provider refused response_format once: the inquiries after go without it.
  // One backend serves the main loop and its sub-agents, on their own threads.
  std::atomic<bool> schema_refused_{false};

};

} // namespace

Result<Json> json_in_answer(const std::string& text) {
  auto open = text.find('{');
  auto close = text.rfind('}');
  if (open == std::string::npos || close == std::string::npos || close < open)
    return Error{"no JSON object in it"};
  auto j = Json::parse(std::string_view(text).substr(open, close - open + 1));
  if (!j)
    return Error{j.error()};
  if (!j->is_object())
    return Error{"not an object"};
  return *j;
}

std::shared_ptr<InquiryBackend> make_llm_inquiry(std::shared_ptr<Provider> provider, std::string model) {
  return std::make_shared<LlmInquiry>(std::move(provider), std::move(model));
}

} // namespace jp
