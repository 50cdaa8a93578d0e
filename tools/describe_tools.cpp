#include "tools/describe_tools.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "messages/json_codec.hpp"
#include "tools/schema.hpp"

namespace jp {

namespace {

std::string describe(const ToolConfig& t) {
  std::string out = fmt::format("## {}\n", t.name);
  if (auto text = full_description(t); !text.empty())
    out += text + "\n";
  if (t.stateful) {
    out += "Stateful: call with \"action\" ";
    std::string sep;
    for (auto a : declared_actions(t)) {
      out += sep + std::string(to_string(a));
      sep = "|";
    }
    out += fmt::format(" and a handle \"id\" you choose; spawn, fetch and apply wait for its output to settle up "
                       "to \"wait_ms\" (default {}); without \"action\" it runs once and returns its output.\n",
                       default_wait_ms(t));
  }
  if (!t.parameters.empty()) {
    out += "Parameters:\n";
    for (auto& p : t.parameters) {
      if (!offered(t, p))
        continue;
      out += fmt::format("- {} ({}{})", p.name, p.type, p.required ? ", required" : "");
      if (!p.enum_values.empty())
        out += fmt::format(" one of: {}", fmt::join(p.enum_values, ", "));
      if (auto said = parameter_description(t, p); !said.empty())
        out += ": " + said;
      out += "\n";
    }
  }
  return out;
}

} // namespace

Result<std::string> describe_tools(const Config& config, const Json& args) {
  // The tools the model is offered (a tool whose run is "skip" is not): describing
  // another would only lead to a refused call.
  auto offered = offered_tools(config);
  std::string out;
  auto* names = args.find("tools");
  if (!names || names->is_null()) {
    for (auto* t : offered)
      out += describe(*t) + "\n";
    return out;
  }
  if (!names->is_array())
    return Error{fmt::format("describe_tools: `tools` must be an array of tool names, got {}",
                             names->described())};
  if (names->as_array().empty())
    return Error{"describe_tools: `tools` is empty: name the tools to describe, or leave `tools` out for all"};
  std::vector<std::string> described;
  for (auto& n : names->as_array()) {
    if (!n.is_string())
      return Error{"describe_tools: `tools` must contain strings"};
    auto it = std::find_if(offered.begin(), offered.end(), [&](auto* t) { return t->name == n.as_string(); });
    if (it == offered.end()) {
      std::vector<std::string> known;
      for (auto* t : offered)
        known.push_back(t->name);
      return Error{fmt::format("describe_tools: unknown tool `{}`; the tools are {}", cut_text(n.as_string()),
                               fmt::join(known, ", "))};
    }
    if (std::find(described.begin(), described.end(), (*it)->name) != described.end())
      continue; // named twice: described once
    described.push_back((*it)->name);
    out += describe(**it) + "\n";
  }
  return out;
}

std::string unknown_tool(const Config& config, const std::string& name) {
  std::vector<std::string> names;
  for (auto& [n, t] : config.tools)
    names.push_back(n);
  return fmt::format("Unknown tool `{}`; available tools: {}", cut_text(name), fmt::join(names, ", "));
}

} // namespace jp
