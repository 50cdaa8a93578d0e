// A handle's final text that no process wrote (a sub-agent's answer, a foreach's
// results) held to the output cap as a process's output is: past the cap, its head
// and tail stay and the whole goes to a spill file.
#pragma once

#include <cstdint>
#include <string>

#include "../../messages/tool_state.hpp"
#include "output_buffer.hpp"

namespace jp {

struct ResultHold {
  uint64_t cap = 0;       // bytes kept (0: no cap)
  std::string spill_dir;  // where the whole goes when cut ("": nowhere)
  std::string spill_root; // as OutputBuffer's
  SpillLimits limits;
};

/// `text` as a look shows it: whole within the cap; else its head and tail, with
/// how much was left out and the spill file holding the whole (named after handle `id`).
OutputBuffer::Taken held_result(const ResultHold& hold, const std::string& id, std::string text);

/// A result's content and its error's message, each held as held_result holds a text,
/// with one spill file: `file` when it names one already (past it, a text is only
/// cut), else the first cut's. What was left out adds to `omitted`.
void hold_state(const ResultHold& hold, const std::string& id, ToolState& state, uint64_t& omitted,
                std::string& file);

} // namespace jp
