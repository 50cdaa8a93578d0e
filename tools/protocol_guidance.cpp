#include "tools/protocol_guidance.hpp"

#include <algorithm>

namespace jp {

std::string protocol_guidance(const Config& config) {
  bool stateful = std::any_of(config.tools.begin(), config.tools.end(),
                              [](auto& entry) { return entry.second.stateful; });
  if (!stateful)
    return {};
  return "Tools that take an `action` run as handles in the background:\n"
         "- Start long work with {\"action\":\"spawn\",\"id\":\"<name you choose>\", ...}; "
         "start independent work in parallel, each under its own id.\n"
         "- To wait, put the spawns and an `await` call on their ids in the same batch of "
         "tool calls (it waits for any or all of them, with timeout_secs); do not poll.\n"
         "- {\"action\":\"fetch\",\"id\":...} returns the output produced since your last look; "
         "{\"action\":\"apply\",...} sends input or answers a handle's question.\n"
         "- Abort ({\"action\":\"abort\",\"id\":...}) what you no longer need.\n"
         "Without `action` a tool runs to completion and returns its result.";
}

std::string system_prompt_with_guidance(const Config& config) {
  auto guidance = protocol_guidance(config);
  auto& prompt = config.assistant.system_prompt;
  if (guidance.empty())
    return prompt;
  return prompt.empty() ? guidance : prompt + "\n\n" + guidance;
}

} // namespace jp
