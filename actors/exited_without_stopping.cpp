#include "actors/exited_without_stopping.hpp"

#include <fmt/format.h>

namespace jp {

ToolState exited_without_stopping(const std::string& id, const ToolState& last, bool configured) {
  if (last.kind == state_kind::running)
    return ToolState::success(last.content);
  auto& q = last.question;
  // A handle that exits asking is not run again with a configured answer, as a
  // one-shot call is.
  auto what = configured ? fmt::format("a handle is not run again with its configured answer (questions.{}.answer): "
                                       "call the tool without `action`, which runs it again with that answer",
                                       q.id)
                         : fmt::format("call the tool without `action` to have the question answered, or configure "
                                       "questions.{}.answer",
                                       q.id);
  auto failed = ToolState::failure(
    ToolError{fmt::format("handle `{}` asked \"{}\" (question `{}`) and exited; {}", id, q.text, q.id, what), {},
              false},
    last.content);
  // For a node's client, whose own call may run it again with its answer: not when
  // this side's config answers it (the tool had that answer, and asked all the same).
  if (!configured)
    failed.question = q;
  return failed;
}

} // namespace jp
