#include "config/workspace_sets.hpp"

#include <fmt/format.h>

#include "messages/json.hpp"

namespace jp {

std::vector<std::string> what_workspace_sets(const Config& before, const Config& after) {
  std::vector<std::string> sets;
  for (auto& [name, tool] : after.tools) {
    auto was = before.tools.find(name);
    if (was == before.tools.end()) {
      auto where = tool.node.empty() ? fmt::format("runs `{}`", cut_text(tool.program, 60))
                                     : fmt::format("runs on node {}", tool.node);
      sets.push_back(fmt::format("tool `{}` ({}, {})", name, where, to_string(tool.run)));
    } else if (tool.description != was->second.description || tool.summary != was->second.summary) {
      sets.push_back(fmt::format("what tool `{}` tells the model", name));
    }
  }
  auto& a = after.assistant;
  auto& b = before.assistant;
  if (a.model != b.model)
    sets.push_back(fmt::format("assistant.model = {}", json_quote_cut(a.model)));
  if (a.inquiry_model != b.inquiry_model)
    sets.push_back(fmt::format("assistant.inquiry_model = {}", json_quote_cut(a.inquiry_model)));
  if (a.max_tokens != b.max_tokens)
    sets.push_back(fmt::format("assistant.max_tokens = {}", a.max_tokens));
  if (a.system_prompt != b.system_prompt)
    sets.push_back("assistant.system_prompt");
  return sets;
}

} // namespace jp
