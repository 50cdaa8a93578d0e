#include "runtime/provider/scripted_provider.hpp"

#include <fmt/format.h>
#include <mutex>

namespace jp {

namespace {

class ScriptedProvider final : public Provider {
public:
  explicit ScriptedProvider(ScriptAgent agent) : agent_(std::move(agent)) {}

  Status stream(const ChatRequest&, const StreamHooks& hooks) override {
    std::lock_guard lock(mtx_);
    // A step without calls is narration: its text goes with the next response (an
    // answer without calls would end the turn), unless it ends the turn itself.
    std::string text;
    auto answer = [&] {
      if (!text.empty())
        hooks.emit(ChatEvent{chat_event_kind::text, text, {}, {}});
      hooks.emit(ChatEvent{chat_event_kind::done, {}, {}, "stop"});
      return Status::success();
    };
    while (next_ < agent_.steps.size() && agent_.steps[next_].calls.empty()) {
      auto& step = agent_.steps[next_++];
      if (!step.text.empty())
        text += (text.empty() ? "" : "\n") + step.text;
      if (step.end_turn)
        return answer();
    }
    // Past its last step, it answers with nothing more (a turn goes on after its
    // answer when the turn end waits for handles, as the inquiry chose).
    if (next_ >= agent_.steps.size())
      return answer();
    auto n = ++next_;
    auto& step = agent_.steps[n - 1];
    if (!step.text.empty())
      text += (text.empty() ? "" : "\n") + step.text;
    if (!text.empty())
      hooks.emit(ChatEvent{chat_event_kind::text, text, {}, {}});
    for (size_t i = 0; i < step.calls.size(); ++i) {
      ToolCall call{fmt::format("call_{}_{}", n, i), step.calls[i].tool, step.calls[i].arguments.dump()};
      hooks.emit(ChatEvent{chat_event_kind::tool_call, {}, std::move(call), {}});
    }
    hooks.emit(ChatEvent{chat_event_kind::done, {}, {}, "tool_calls"});
    return Status::success();
  }

  bool blocking() const override { return false; }

private:
  std::mutex mtx_;
  ScriptAgent agent_;
  size_t next_ = 0;
};

class ScriptedInquiry final : public InquiryBackend {
public:
  ScriptedInquiry(ScriptAgent agent, std::string table, std::function<void(const std::string&)> missing)
    : agent_(std::move(agent)), table_(std::move(table)), missing_(std::move(missing)) {}

  Result<InquiryAnswers> turn_end(const std::vector<HandleSummary>& outstanding,
                                  const std::vector<ChatMessage>&) override {
    InquiryAnswers out;
    for (auto& h : outstanding) {
      auto it = agent_.on_turn_end.find(h.id);
      if (it == agent_.on_turn_end.end()) {
        auto text = fmt::format("handle `{}` ({}) was still running when the turn ended and its tool says "
                                "on_turn_end = \"inquire\", but [{}.on_turn_end]{} has no answer for "
                                "it; add {} = \"wait\" or \"abort\" ({})",
                                h.id, h.tool, table_,
                                table_ == "subagents" ? fmt::format(" of `{}`", agent_.name) : std::string(), h.id,
                                outstanding.size() == 1 ? "it was aborted"
                                                        : "it was aborted, and so was every other handle asked "
                                                          "about, whatever its answer");
        if (missing_)
          missing_(text);
        return Error{std::move(text)};
      }
      out[h.id] = it->second;
    }
    return out;
  }

  std::optional<Json> answer(const std::string&, const Question& q) override {
    auto it = agent_.questions.find(q.id);
    if (it == agent_.questions.end())
      return std::nullopt;
    return it->second;
  }

private:
  ScriptAgent agent_;
  std::string table_; // where its answers are written: agents, or subagents
  std::function<void(const std::string&)> missing_;
};

} // namespace

std::shared_ptr<Provider> make_scripted_provider(ScriptAgent agent) {
  return std::make_shared<ScriptedProvider>(std::move(agent));
}

std::shared_ptr<InquiryBackend> make_scripted_inquiry(ScriptAgent agent, bool subagent,
                                                      std::function<void(const std::string&)> missing) {
  return std::make_shared<ScriptedInquiry>(std::move(agent), subagent ? "subagents" : "agents", std::move(missing));
}

} // namespace jp
