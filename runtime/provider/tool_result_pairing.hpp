// Both providers insist that every tool call of an assistant message is answered by
// exactly one tool result right after that message (OpenAI: `tool` messages next;
// Anthropic: tool_result blocks first in the next user turn). A conversation may not
// be in that shape: a notification or prompt recorded between a call and its
// result, a result left over from a cut turn, a call whose result was never
// recorded. This puts it in that shape without losing anything the model was told.
#pragma once

#include <vector>

#include "../../messages/chat.hpp"

namespace jp {

/// `messages` with each assistant message's tool calls answered right after it, in
/// call order: the first result for each id moves up there; other messages between
/// the call and the next assistant message follow the results, in their order; a
/// result no call of the preceding assistant message asked for (or a second one)
/// becomes a user text naming the call; a call without a result gets an error result
/// saying none was recorded.
std::vector<ChatMessage> pair_tool_results(const std::vector<ChatMessage>& messages);

} // namespace jp
