#include "runtime/store/script.hpp"
#include "runtime/store/named_file.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <set>
#include <fmt/format.h>
#include <toml++/toml.h>

#include "config/bounded_read.hpp"
#include "config/config.hpp"
#include "config/toml_depth.hpp"
#include "config/toml_json.hpp"
#include "messages/duration.hpp"
#include "messages/json_codec.hpp"
#include "tools/builtin_tools.hpp"

namespace jp {

namespace {

/// The tool whose handle gets `id` when its call gives none (`shell-1` is a `shell`'s,
/// as the registry numbers them): the text before the last '-' of an id ending in
/// digits; "" for an id of another form.
std::string_view numbered_id_tool(std::string_view id) {
  auto dash = id.rfind('-');
  if (dash == std::string_view::npos || dash == 0 || dash + 1 == id.size() ||
      id.find_first_not_of("0123456789", dash + 1) != std::string_view::npos)
    return {};
  return id.substr(0, dash);
}

struct Reader {
  std::string_view origin;
  std::string error;

  bool fail(const std::string& key, const std::string& what) {
    if (error.empty())
      error = fmt::format("{}: {}: {}", origin, key, what);
    return false;
  }

  template <class F>
  bool each_table(const toml::table& t, const std::string& parent, const char* name, F f) {
    auto key = parent.empty() ? std::string(name) : parent + "." + name;
    auto* node = t.get(name);
    if (!node)
      return true;
    auto* arr = node->as_array();
    if (!arr) {
      // The header as TOML writes it: [[agents.steps]], whichever agent it is under.
      std::string header;
      for (size_t i = 0; i < key.size(); ++i)
        if (key[i] == '[')
          i = key.find(']', i);
        else
          header += key[i];
      return fail(key, "expected an array of tables ([[" + header + "]])");
    }
    for (size_t i = 0; i < arr->size(); ++i) {
      auto* tbl = (*arr)[i].as_table();
      auto k = fmt::format("{}[{}]", key, i);
      if (!tbl)
        return fail(k, "expected a table");
      if (!f(*tbl, k))
        return false;
    }
    return true;
  }

  // Arguments and answers become JSON, which has no NaN or infinity: such a value would
  // reach the call as null (`timeout_secs = nan` as "no timeout"). Refused, naming it.
  // `what`: "arguments" or "answers".
  bool finite_numbers(const toml::node& n, const std::string& key, std::string_view what = "arguments") {
    if (auto* f = n.as_floating_point(); f && !std::isfinite(f->get()))
      return fail(key, fmt::format("{} is not allowed: {} are JSON, whose numbers are finite{}", f->get(), what,
                                   what == "arguments"
                                     ? fmt::format(" (a duration such as timeout_secs is {})", duration_rule())
                                     : std::string()));
    if (auto* a = n.as_array())
      for (size_t i = 0; i < a->size(); ++i)
        if (!finite_numbers((*a)[i], fmt::format("{}[{}]", key, i), what))
          return false;
    if (auto* t = n.as_table())
      for (auto&& [k, v] : *t)
        if (!finite_numbers(v, key + "." + std::string(k.str()), what))
          return false;
    return true;
  }

  bool known_keys(const toml::table& t, const std::string& key,
                  std::initializer_list<std::string_view> allowed) {
    for (auto& [k, v] : t) {
      bool ok = false;
      for (auto a : allowed)
        ok = ok || k.str() == a;
      if (!ok)
        return fail(key.empty() ? std::string(k.str()) : key + "." + std::string(k.str()),
                    fmt::format("unknown key; allowed: {}", fmt::join(allowed, ", ")));
    }
    return true;
  }
};

} // namespace

Result<Script> parse_script(std::string_view text, std::string_view origin) {
  toml::table root;
  if (auto deep = check_toml_depth(text, origin); !deep)
    return Error{deep.error};
  try {
    root = toml::parse(text, origin);
  } catch (const toml::parse_error& e) {
    auto& where = e.source().begin;
    return Error{fmt::format("{}:{}:{}: {}", origin, where.line, where.column, e.description())};
  }
  Reader r{origin, {}};
  Script script;
  if (!r.known_keys(root, "", {"experiment", "agents", "subagents"}))
    return Error{r.error};
  if (auto* node = root.get("experiment"); node && !node->is_table()) {
    r.fail("experiment", fmt::format("expected a table ([experiment] with name, description, repeat, "
                                     "shared_registry), got {}",
                                     toml_to_json(*node).dump()));
    return Error{r.error};
  }
  if (auto* exp = root["experiment"].as_table()) {
    if (!r.known_keys(*exp, "experiment", {"name", "description", "repeat", "shared_registry"}))
      return Error{r.error};
    for (auto* key : {"name", "description"})
      if (auto* text = exp->get(key); text && !text->is_string()) {
        r.fail(fmt::format("experiment.{}", key), fmt::format("expected a string, got {}", toml_to_json(*text).dump()));
        return Error{r.error};
      }
    script.name = (*exp)["name"].value_or(std::string{});
    if (auto* repeat = exp->get("repeat")) {
      auto n = repeat->value<int64_t>();
      if (!repeat->is_integer() || !n || *n < 1 || *n > Script::max_repeat) {
        r.fail("experiment.repeat", fmt::format("expected a whole number of runs from 1 to {}, got {}",
                                                Script::max_repeat, toml_to_json(*repeat).dump()));
        return Error{r.error};
      }
      script.repeat = static_cast<int>(*n);
    }
    if (auto* shared = exp->get("shared_registry")) {
      if (!shared->is_boolean()) {
        r.fail("experiment.shared_registry", fmt::format("expected true or false, got {}", toml_to_json(*shared).dump()));
        return Error{r.error};
      }
      script.shared_registry = shared->value_or(false);
    }
  }
  // [[agents]] and [[subagents]] have one form.
  auto read_agents = [&](const char* key, std::vector<ScriptAgent>& into) {
    return r.each_table(root, "", key, [&](const toml::table& at, const std::string& ak) {
      if (!r.known_keys(at, ak, {"name", "steps", "on_turn_end", "questions"}))
        return false;
      ScriptAgent agent;
      // A name tells agents apart in the log and the report, where "/" joins an
      // agent's path to its sub-agents'.
      // It is one word of the transcript's "[name]" prefix and a column of the
      // report: printable ASCII with no space, and not the report's `total`. Beyond
      // ASCII, spaces, invisible and bidirectional characters and letters that look
      // alike would tell two agents apart wrongly, and wide ones break the columns.
      if (auto* name = at.get("name")) {
        auto text = name->value_or(std::string{});
        bool plain = std::all_of(text.begin(), text.end(), [](char c) {
          auto u = static_cast<unsigned char>(c);
          return u > 0x20 && u < 0x7f && c != '/';
        });
        if (!name->is_string() || text.empty() || !plain)
          return r.fail(ak + ".name", fmt::format("expected a non-empty string of printable ASCII without '/' or "
                                                  "spaces (letters, digits, punctuation), got {}",
                                                  toml_to_json(*name).dump()));
        if (text == "total")
          return r.fail(ak + ".name", "`total` is the report's row of all agents: name the agent otherwise");
      }
      agent.name = at["name"].value_or(fmt::format("{}{}", key == std::string_view("agents") ? "agent" : "subagent", into.size() + 1));
      if (auto* qs = at.get("questions")) {
        auto* t = qs->as_table();
        if (!t)
          return r.fail(ak + ".questions", "expected a table: question id = answer");
        for (auto&& [id, v] : *t) {
          if (!r.finite_numbers(v, fmt::format("{}.questions.{}", ak, id.str()), "answers"))
            return false;
          agent.questions[std::string(id.str())] = toml_to_json(v);
        }
      }
      if (auto* ote = at.get("on_turn_end")) {
        auto* t = ote->as_table();
        if (!t)
          return r.fail(ak + ".on_turn_end", "expected a table: handle id = \"wait\" | \"abort\"");
        for (auto&& [id, v] : *t) {
          auto text = v.value<std::string>();
          auto answer = text ? inquiry_answer_from(*text) : std::nullopt;
          if (!answer)
            return r.fail(fmt::format("{}.on_turn_end.{}", ak, id.str()), "expected \"wait\" or \"abort\"");
          agent.on_turn_end[std::string(id.str())] = *answer;
        }
      }
      bool ok = r.each_table(at, ak, "steps", [&](const toml::table& stt, const std::string& sk) {
        if (!r.known_keys(stt, sk, {"text", "calls", "end_turn"}))
          return false;
        ScriptStep step;
        if (auto* text = stt.get("text"); text && !text->is_string())
          return r.fail(sk + ".text", fmt::format("expected a string, got {}", toml_to_json(*text).dump()));
        step.text = stt["text"].value_or(std::string{});
        if (auto* end = stt.get("end_turn")) {
          if (!end->is_boolean())
            return r.fail(sk + ".end_turn", fmt::format("expected true or false, got {}", toml_to_json(*end).dump()));
          step.end_turn = end->as_boolean()->get();
          if (step.end_turn && stt.contains("calls"))
            return r.fail(sk + ".end_turn", "a step that ends the turn answers without calls: put its calls in "
                                            "a step before it");
        }
        bool ok = r.each_table(stt, sk, "calls", [&](const toml::table& ct, const std::string& ck) {
          if (!r.known_keys(ct, ck, {"tool", "arguments"}))
            return false;
          ScriptCall call;
          auto tool = ct["tool"].value<std::string>();
          if (!tool)
            return r.fail(ck + ".tool", "expected the tool's name (a string)");
          call.tool = *tool;
          if (auto* args = ct.get("arguments")) {
            if (!args->is_table())
              return r.fail(ck + ".arguments", "expected a table (the call's JSON arguments)");
            if (!r.finite_numbers(*args, ck + ".arguments"))
              return false;
            call.arguments = toml_to_json(*args);
          } else {
            call.arguments = Json::object();
          }
          step.calls.push_back(std::move(call));
          return true;
        });
        agent.steps.push_back(std::move(step));
        return ok;
      });
      into.push_back(std::move(agent));
      return ok;
    });
  };
  if (read_agents("agents", script.agents))
    read_agents("subagents", script.subagents);
  if (!r.error.empty())
    return Error{r.error};
  if (script.agents.empty())
    return Error{fmt::format("{}: agents: the script has no [[agents]]", origin)};
  // Agents are told apart by name: in the event log, the report, a shared registry.
  for (auto& agent : script.agents)
    if (std::count_if(script.agents.begin(), script.agents.end(), [&](auto& o) { return o.name == agent.name; }) > 1)
      return Error{fmt::format("{}: agents: two [[agents]] are named `{}`; give each its own name", origin,
                               agent.name)};
  for (auto& sub : script.subagents)
    if (std::count_if(script.subagents.begin(), script.subagents.end(), [&](auto& o) { return o.name == sub.name; }) > 1)
      return Error{fmt::format("{}: subagents: two [[subagents]] are named `{}`; `script` picks one by name",
                               origin, sub.name)};
  // A sub-agent's `script` names one of them: a typo found now, not when the call
  // runs (a name filled in then, from {{element}} or {{prompt}}, is checked then).
  auto names = [&] {
    std::vector<std::string> all;
    for (auto& sub : script.subagents)
      all.push_back("`" + sub.name + "`");
    return all.empty() ? std::string("this script has none") : fmt::format("{}", fmt::join(all, ", "));
  };
  for (auto* table : {"agents", "subagents"}) {
    auto& agents = std::string(table) == "agents" ? script.agents : script.subagents;
    for (size_t k = 0; k < agents.size(); ++k)
      for (size_t i = 0; i < agents[k].steps.size(); ++i)
        for (size_t j = 0; j < agents[k].steps[i].calls.size(); ++j) {
          auto& call = agents[k].steps[i].calls[j];
          auto* named = call.tool == agent_tool_name || call.tool == foreach_tool_name
                          ? call.arguments.find("script")
                          : nullptr;
          // Filled in only where a sub-agent is played (its own script's {{prompt}},
          // {{element}}): in [[agents]] the name is as written.
          bool filled_later = std::string(table) == "subagents";
          if (!named || !named->is_string() || (filled_later && named->as_string().find("{{") != std::string::npos))
            continue;
          auto& name = named->as_string();
          if (std::none_of(script.subagents.begin(), script.subagents.end(), [&](auto& s) { return s.name == name; }))
            return Error{fmt::format("{}: {}[{}].steps[{}].calls[{}].arguments.script: no [[subagents]] entry is "
                                     "named `{}` ({})",
                                     origin, table, k, i, j, name, names())};
        }
  }
  // An answer at the turn's end names a handle one of the agent's calls spawns: by
  // the id a call gives, or as one it is given (`shell-2`). A typo was never asked
  // about, and the handle it meant was aborted for want of an answer.
  for (auto* table : {"agents", "subagents"}) {
    auto& agents = std::string(table) == "agents" ? script.agents : script.subagents;
    for (size_t k = 0; k < agents.size(); ++k) {
      std::set<std::string> ids, tools;
      bool filled_later = false;
      for (auto& step : agents[k].steps)
        for (auto& call : step.calls) {
          // Tools that never make a handle give none of their name (`await-1`).
          if (call.tool != "await" && call.tool != yield_tool_name)
            tools.insert(call.tool);
          if (auto* id = call.arguments.find("id"); id && id->is_string()) {
            ids.insert(id->as_string());
            filled_later = filled_later || id->as_string().find("{{") != std::string::npos;
          }
        }
      auto given = [&](const std::string& id) {
        auto tool = numbered_id_tool(id);
        return !tool.empty() && tools.count(std::string(tool));
      };
      for (auto& [id, answer] : agents[k].on_turn_end)
        if (!filled_later && !ids.count(id) && !given(id))
          return Error{fmt::format("{}: {}[{}].on_turn_end.{}: no call of `{}` spawns a handle of that id ({}); an "
                                   "answer names a handle its calls spawn, by the id a call gives or as one it is "
                                   "given (shell-1)",
                                   origin, table, k, id, agents[k].name,
                                   ids.empty() ? std::string("its calls give no ids")
                                               : fmt::format("the ids its calls give: {}", fmt::join(ids, ", ")))};
    }
  }
  return script;
}

namespace {

using Marks = std::vector<std::pair<std::string, std::string>>; // "{{prompt}}" -> its value

/// `text` with each mark replaced by its value, in one pass (a value is never read
/// again for marks).
std::string filled(const std::string& text, const Marks& marks) {
  std::string out;
  for (size_t at = 0; at < text.size();) {
    auto hit = std::find_if(marks.begin(), marks.end(), [&](auto& m) { return text.compare(at, m.first.size(), m.first) == 0; });
    if (hit == marks.end()) {
      out += text[at++];
      continue;
    }
    out += hit->second;
    at += hit->first.size();
  }
  return out;
}

Json filled(const Json& value, const Marks& marks) {
  if (value.is_string())
    return Json(filled(value.as_string(), marks));
  if (value.is_array()) {
    auto out = Json::array();
    for (auto& v : value.as_array())
      out.push(filled(v, marks));
    return out;
  }
  if (value.is_object()) {
    auto out = Json::object();
    for (auto& [k, v] : value.as_object())
      out.set(k, filled(v, marks));
    return out;
  }
  return value;
}

} // namespace

Result<ScriptAgent> scripted_subagent(const Script& script, const std::string& name, const std::string& prompt,
                                      const std::string& element) {
  Marks marks{{"{{prompt}}", prompt}, {"{{element}}", element}};
  for (auto& sub : script.subagents)
    if (sub.name == name) {
      auto agent = sub;
      for (auto& step : agent.steps) {
        step.text = filled(step.text, marks);
        for (auto& call : step.calls) {
          // A foreach's own prompt keeps its {{element}}: each of its sub-agents fills it.
          auto* own = call.tool == "foreach" ? call.arguments.find("prompt") : nullptr;
          auto kept = own && own->is_string() ? std::optional<std::string>(own->as_string()) : std::nullopt;
          call.arguments = filled(call.arguments, marks);
          if (kept)
            call.arguments.set("prompt", filled(*kept, Marks{{"{{prompt}}", prompt}}));
        }
      }
      return agent;
    }
  std::vector<std::string> names;
  for (auto& sub : script.subagents)
    names.push_back("`" + sub.name + "`");
  return Error{names.empty()
                 ? fmt::format("script `{}` names no [[subagents]] entry, and this script has none", cut_text(name))
                 : fmt::format("script `{}` names no [[subagents]] entry; the script has {}", cut_text(name),
                               fmt::join(names, ", "))};
}

Status check_script_tools(const Script& script, const Config& config, const std::string& origin) {
  auto offered = [&](const std::string& tool, bool subagent) {
    if (config.tools.count(tool) || (subagent && tool == yield_to_parent_tool().name))
      return true;
    auto sep = tool.find("__");
    return sep != std::string::npos && config.mcp_servers.count(tool.substr(0, sep)) > 0;
  };
  for (auto* table : {"agents", "subagents"}) {
    bool subagents = std::string(table) == "subagents";
    auto& agents = subagents ? script.subagents : script.agents;
    for (size_t k = 0; k < agents.size(); ++k)
      for (size_t i = 0; i < agents[k].steps.size(); ++i)
        for (size_t j = 0; j < agents[k].steps[i].calls.size(); ++j) {
          auto& tool = agents[k].steps[i].calls[j].tool;
          if (offered(tool, subagents))
            continue;
          auto at = fmt::format("{}: {}[{}].steps[{}].calls[{}].tool", origin, table, k, i, j);
          if (tool == yield_to_parent_tool().name)
            return Status::fail(fmt::format("{}: `{}` is a sub-agent's (it hands its result to the agent that "
                                            "spawned it); an agent of [[agents]] has no parent to yield to",
                                            at, tool));
          std::vector<std::string> names;
          for (auto& [name, _] : config.tools)
            names.push_back(name);
          if (subagents)
            names.push_back(yield_to_parent_tool().name);
          return Status::fail(fmt::format("{}: no tool is named `{}`; the tools are {}", at, cut_text(tool),
                                          fmt::join(names, ", ")));
        }
  }
  // An answer in [agents.questions] is for a question some tool routes to the
  // assistant (and answers no other way): a typo's was never given, and the question
  // it meant went unanswered.
  std::set<std::string> routed;
  std::vector<std::string> shown;
  for (auto& [name, tool] : config.tools)
    for (auto& [id, target] : tool.question_targets)
      if (target == "assistant" && !tool.answers.count(id)) {
        routed.insert(id);
        shown.push_back(fmt::format("{}'s `{}`", name, id));
      }
  for (auto* table : {"agents", "subagents"}) {
    auto& agents = std::string(table) == "subagents" ? script.subagents : script.agents;
    for (size_t k = 0; k < agents.size(); ++k)
      for (auto& [id, answer] : agents[k].questions)
        if (!routed.count(id))
          return Status::fail(fmt::format(
            "{}: {}[{}].questions.{}: no tool asks the assistant a question `{}` (a tool's questions.{}.target = "
            "\"assistant\" without a fixed answer does); {}",
            origin, table, k, cut_text(id), cut_text(id), cut_text(id),
            shown.empty() ? std::string("no tool's question goes to the assistant")
                          : fmt::format("the questions that go to it: {}", fmt::join(shown, ", "))));
  }
  // An answer at the turn's end is read for a handle whose tool inquires
  // (on_turn_end = "inquire") alone: one for a handle its tool aborts or awaits was
  // taken and never read, so a "wait" lost the handle it meant to keep.
  for (auto* table : {"agents", "subagents"}) {
    auto& agents = std::string(table) == "subagents" ? script.subagents : script.agents;
    for (size_t k = 0; k < agents.size(); ++k)
      for (auto& [id, answer] : agents[k].on_turn_end) {
        std::set<std::string> tools; // of the calls that name the handle or are given its id
        bool asked = false;
        for (auto& step : agents[k].steps)
          for (auto& call : step.calls) {
            auto* given = call.arguments.find("id");
            bool named = given && given->is_string() && given->as_string() == id;
            bool numbered = numbered_id_tool(id) == call.tool;
            if (given && given->is_string() && given->as_string().find("{{") != std::string::npos)
              asked = true; // an id filled in when it runs: which one is not known now
            if (!named && !numbered)
              continue;
            auto tool = config.tools.find(call.tool);
            // An MCP server's tool is known when it runs.
            asked = asked || tool == config.tools.end() || tool->second.lifecycle.on_turn_end == turn_end_policy::inquire;
            tools.insert(fmt::format("`{}` (on_turn_end = \"{}\")", call.tool,
                                     tool == config.tools.end() ? "?" : to_string(tool->second.lifecycle.on_turn_end)));
          }
        if (!asked && !tools.empty())
          return Status::fail(fmt::format(
            "{}: {}[{}].on_turn_end.{}: `{}` is a handle of {}, which the turn's end does not ask about: only a "
            "handle whose tool's [spawn.lifecycle] on_turn_end is \"inquire\" gets this answer; remove it, or "
            "give the tool on_turn_end = \"inquire\" in your config",
            origin, table, k, cut_text(id), cut_text(id), fmt::join(tools, ", ")));
      }
  }
  return Status::success();
}

// Far beyond any script a person writes; a larger one is refused, not read into memory.
constexpr size_t kMaxScriptBytes = 16 << 20;

Result<Script> load_script(const std::string& path) {
  auto fd = open_named_file(path, "a script file (a .toml with [[agents]])");
  if (!fd)
    return Error{fd.error()};
  auto read = read_bounded(fd->get(), kMaxScriptBytes);
  if (read.error)
    return Error{fmt::format("{}: cannot read the script file: {}", path, std::strerror(read.error))};
  if (read.too_large)
    return Error{fmt::format("{}: larger than {} MiB; a script is expected to be far smaller", path,
                             kMaxScriptBytes >> 20)};
  return parse_script(read.bytes, path);
}

} // namespace jp
