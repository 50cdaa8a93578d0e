#include "actors/control_channel.hpp"

#include <fmt/format.h>
#include <utility>

#include "messages/answer_check.hpp"
#include "messages/json.hpp"
#include "messages/json_codec.hpp"

namespace jp {

ControlChannel::Step ControlChannel::over_long() const {
  Step step;
  step.note = fmt::format("[control channel] ignored a line longer than {} bytes: a ToolState must fit in that "
                          "(4 MiB, or runtime.output_cap_bytes if larger)\n",
                          line_cap_);
  return step;
}

std::optional<ControlChannel::Step> ControlChannel::next() {
  for (auto nl = line_.find('\n'); nl != std::string::npos; nl = line_.find('\n')) {
    auto line = line_.substr(0, nl);
    line_.erase(0, nl + 1);
    // Its end, or a line that came whole: said as what it was, whatever the chunks were.
    if (std::exchange(over_long_, false) || line.size() > line_cap_)
      return over_long();
    if (line.find_first_not_of(" \t\r") != std::string::npos)
      return read(line);
  }
  if (line_.size() > line_cap_) { // a line too long to keep: dropped up to its end
    line_.clear();
    over_long_ = true;
  }
  return std::nullopt;
}

std::optional<ControlChannel::Step> ControlChannel::finish() {
  auto line = std::exchange(line_, {});
  if (std::exchange(over_long_, false) || line.size() > line_cap_)
    return over_long();
  if (line.find_first_not_of(" \t\r") == std::string::npos)
    return std::nullopt;
  auto step = read(line);
  if (step.asks) { // a question as it exits: never asked, so never to be answered
    question_.reset();
    step.asks = false;
  }
  step.answer.reset();
  return step;
}

/// waiting asks (unless the config answers), running adds content, stopped is the
/// result the exit will report.
ControlChannel::Step ControlChannel::read(std::string_view line) {
  Step step;
  auto state = parse_tool_output(line);
  if (!state) {
    step.note = fmt::format("[control channel] ignored a line that is not a ToolState: {}\n", state.error());
    return step;
  }
  switch (state->kind) {
    case state_kind::waiting:
      // A question the config answers is answered at once: nobody is asked. An
      // answer that is not what the question takes is not given: it is asked, and
      // the output says why.
      if (auto it = fixed_answers_.find(state->question.id); it != fixed_answers_.end()) {
        auto fits = answer_text_as_declared(state->question, it->second);
        if (fits) {
          step.answer = fits->dump() + "\n";
          break;
        }
        step.note = fmt::format("[control channel] the configured answer to `{}` was not given: {}\n",
                                state->question.id, fits.error());
      }
      question_ = state->question;
      step.asks = true;
      break;
    case state_kind::running:
      break;
    case state_kind::stopped:
      declared_ = *state;
      break;
  }
  if (!state->content.empty() && state->kind != state_kind::stopped)
    step.content = std::move(state->content);
  return step;
}

} // namespace jp
