#define CAF_SUITE schema
#include <caf/test/unit_test.hpp>

#include <algorithm>
#include <fmt/format.h>
#include <functional>
#include <regex>

#include "config/config_loader.hpp"
#include "contains.hpp"
#include "tools/builtin_tools.hpp"
#include "provider_request_rules.hpp"
#include "runtime/mcp/mcp_input_schema.hpp"
#include "runtime/provider/assistant.hpp"
#include "tools/argument_validation.hpp"
#include "tools/describe_tools.hpp"
#include "tools/schema.hpp"

using namespace jp;

namespace {

const dialect all_dialects[] = {dialect::openai, dialect::anthropic, dialect::gemini,
                                dialect::json_schema, dialect::mcp};
// The dialects of services that reject top-level combinators (and MCP's, which its
// clients pass on to theirs).
const dialect flat_dialects[] = {dialect::openai, dialect::anthropic, dialect::gemini, dialect::mcp};

/// What Anthropic would refuse in a request offering the config's tools ("" none).
std::string anthropic_violation(const Config& c) {
  auto body = Json::object()
                .set("model", "m")
                .set("max_tokens", 1)
                .set("messages", Json(JsonArray{Json::object().set("role", "user").set("content", "hi")}))
                .set("tools", tool_declarations(c, dialect::anthropic));
  auto v = jp::testing::anthropic_request_violation(body);
  return v ? v->message : "";
}

ParameterConfig param(std::string name, std::string type, bool required = false) {
  ParameterConfig p;
  p.name = std::move(name);
  p.type = std::move(type);
  p.required = required;
  return p;
}

ToolConfig grep_tool() {
  ToolConfig t;
  t.name = "grep";
  t.summary = "Search files";
  t.program = "grep";
  t.parameters = {param("pattern", "string", true), param("max", "integer")};
  return t;
}

// RFD 009's cargo_check: stateful with spawn, fetch, abort only.
ToolConfig cargo_check_tool() {
  ToolConfig t;
  t.name = "cargo_check";
  t.summary = "Type-check a crate";
  t.program = "cargo";
  t.parameters = {param("package", "string")};
  t.stateful = true;
  t.actions = {action_kind::spawn, action_kind::fetch, action_kind::abort};
  return t;
}

// Every key of every object anywhere in `j`.
void walk_keys(const Json& j, const std::function<void(const std::string&, const Json&)>& f) {
  if (j.is_object())
    for (auto& [k, v] : j.as_object()) {
      f(k, v);
      walk_keys(v, f);
    }
  else if (j.is_array())
    for (auto& v : j.as_array())
      walk_keys(v, f);
}

bool has_key_anywhere(const Json& j, std::string_view key) {
  bool found = false;
  walk_keys(j, [&](const std::string& k, const Json&) { found = found || k == key; });
  return found;
}

std::string names(const Json& declarations, dialect d) {
  std::string out;
  for (auto& decl : declarations.as_array()) {
    auto& name = d == dialect::openai ? *decl.find("function")->find("name") : *decl.find("name");
    out += (out.empty() ? "" : ",") + name.as_string();
  }
  return out;
}

} // namespace

CAF_TEST(dialect names parse and the error lists the allowed ones) {
  for (auto d : all_dialects) {
    auto parsed = parse_dialect(to_string(d));
    CAF_REQUIRE(parsed.ok());
    CAF_CHECK(*parsed == d);
  }
  auto bad = parse_dialect("claude");
  CAF_REQUIRE(!bad.ok());
  CAF_CHECK(bad.error().find("\"claude\"") != std::string::npos);
  CAF_CHECK(bad.error().find("openai, anthropic, gemini, json-schema, mcp") != std::string::npos);
}

CAF_TEST(a tool every call of which is refused is not offered) {
  auto names = [](const Config& c) {
    std::vector<std::string> out;
    auto decls = tool_declarations(c, dialect::openai); // kept: a range-for over a temporary's member dangles
    for (auto& d : decls.as_array())
      out.push_back(d.find("function")->find("name")->as_string());
    return out;
  };
  auto c = apply_config_text(default_config(), R"(
[conversation.tools.shell]
run = "skip"
[conversation.tools.lint]
command = { program = "make", args = ["lint"] }
run = "skip"
[conversation.tools.server]
command = { program = "make", args = ["serve"] }
run = "skip"
spawn.stateful = true
spawn.permissions.spawn = "ask"
)", "c.toml");
  CAF_REQUIRE(c.ok());
  auto offered = names(*c);
  CAF_CHECK(std::find(offered.begin(), offered.end(), "shell") == offered.end());
  CAF_CHECK(std::find(offered.begin(), offered.end(), "lint") == offered.end());
  // Its spawn is allowed (asked): offered, and await with it.
  CAF_CHECK(std::find(offered.begin(), offered.end(), "server") != offered.end());
  CAF_CHECK(std::find(offered.begin(), offered.end(), "await") != offered.end());
}

CAF_TEST(the shell s description says when a long call goes on as a handle as the config has it) {
  auto shell_text = [](const std::string& toml) {
    auto c = apply_config_text(default_config(), toml, "c.toml");
    CAF_REQUIRE(c.ok());
    auto& shell = c->tools.at("shell");
    auto described = describe_tools(*c, *Json::parse(R"({"tools":["shell"]})"));
    CAF_REQUIRE(described.ok());
    return std::pair{tool_declaration(shell, dialect::anthropic).find("description")->as_string(), *described};
  };
  auto [by_default, described] = shell_text("");
  CAF_CHECK(testing::contains(by_default, "still running after 120 s goes on as a handle"));
  CAF_CHECK(testing::contains(described, "still running after 120 s goes on as a handle"));
  CAF_CHECK(testing::contains(described, R"("wait_ms" (default 1000))"));
  auto [sooner, described_sooner] = shell_text("[conversation.tools.shell]\nbackground_after_secs = 2.5\nwait_ms = 50\n");
  CAF_CHECK(testing::contains(sooner, "still running after 2.5 s goes on as a handle"));
  CAF_CHECK(!testing::contains(sooner, "120 s"));
  CAF_CHECK(testing::contains(described_sooner, R"("wait_ms" (default 50))"));
  auto [never, described_never] = shell_text("[conversation.tools.shell]\nbackground_after_secs = 0\n");
  CAF_CHECK(!testing::contains(never, "goes on as a handle"));
  CAF_CHECK(!testing::contains(described_never, "goes on as a handle"));
}

CAF_TEST(the shell s description follows what the config made of it) {
  // It spoke of handles and `action` to a shell made one-shot, of calls without
  // `action` to a terminal's, and of apply where the config took apply away.
  auto text = [](const std::string& toml) {
    auto c = apply_config_text(default_config(), toml, "c.toml");
    CAF_REQUIRE(c.ok());
    return tool_declaration(c->tools.at("shell"), dialect::anthropic).find("description")->as_string();
  };
  auto by_default = text("");
  CAF_CHECK(testing::contains(by_default, "as a background handle that you drive with `action`"));
  CAF_CHECK(testing::contains(by_default, "- apply: write `input` to the command's stdin"));
  CAF_CHECK(testing::contains(by_default, "Without `action` the command runs to its end"));
  auto oneshot = text("[conversation.tools.shell.spawn]\nstateful = false\n");
  CAF_CHECK(testing::contains(oneshot, "Runs `command` with `bash -c` in the workspace (or `cwd`) to its end and "
                                       "returns its output."));
  CAF_CHECK(!testing::contains(oneshot, "action"));
  CAF_CHECK(!testing::contains(oneshot, "handle"));
  auto terminal = text("[conversation.tools.shell]\nio = \"pty\"\n");
  CAF_CHECK(testing::contains(terminal, "on a terminal of its own as a background handle"));
  {
    // Its schema says so too: no `tty` to ask for, input typed (not a pipe's stdin).
    auto c = apply_config_text(default_config(), "[conversation.tools.shell]\nio = \"pty\"\n", "c.toml");
    CAF_REQUIRE(c.ok());
    auto schema = tool_declaration(c->tools.at("shell"), dialect::anthropic).dump();
    CAF_CHECK(!testing::contains(schema, "\"tty\""));
    CAF_CHECK(!testing::contains(schema, "stdin"));
    CAF_CHECK(testing::contains(schema, "What to type into the terminal"));
  }
  CAF_CHECK(testing::contains(terminal, "- apply: type `input` on its terminal"));
  CAF_CHECK(testing::contains(terminal, "Every call names its `action`"));
  CAF_CHECK(!testing::contains(terminal, "Without `action`"));
  auto fewer = text("[conversation.tools.shell.spawn]\nactions = [\"spawn\", \"abort\"]\n");
  CAF_CHECK(!testing::contains(fewer, "- apply"));
  CAF_CHECK(!testing::contains(fewer, "- fetch"));
  CAF_CHECK(!testing::contains(fewer, "polling with fetch"));
  CAF_CHECK(testing::contains(fewer, "- abort: stop the command and its children."));
  // A description the config gives stands as given.
  auto own = text("[conversation.tools.shell]\ndescription = \"Our shell.\"\n[conversation.tools.shell.spawn]\n"
                  "stateful = false\n");
  CAF_CHECK(testing::contains(own, "Our shell."));
  CAF_CHECK(!testing::contains(own, "bash -c"));
}

CAF_TEST(one shot tools get a flat schema in every dialect) {
  for (auto d : all_dialects) {
    auto s = parameters_schema(grep_tool(), d);
    CAF_CHECK_EQUAL(s.dump(), R"({"type":"object","properties":{"pattern":{"type":"string"},)"
                              R"("max":{"type":"integer"}},"required":["pattern"]})");
  }
}

CAF_TEST(declared actions default to all four) {
  auto t = cargo_check_tool();
  CAF_CHECK_EQUAL(declared_actions(t).size(), 3u);
  t.actions.clear();
  CAF_CHECK(declared_actions(t) == (std::vector<action_kind>{action_kind::spawn, action_kind::fetch,
                                                             action_kind::apply,
                                                             action_kind::abort}));
}

CAF_TEST(json-schema stateful schema is RFD 009 oneOf with only the declared actions) {
  auto s = parameters_schema(cargo_check_tool(), dialect::json_schema);
  CAF_CHECK_EQUAL(
      s.dump(),
      R"({"type":"object","oneOf":[)"
      R"({"properties":{"action":{"const":"spawn"},"id":{"type":"string","description":)"
      R"("Handle ID for this tool instance (1 to 64 characters of A-Z a-z 0-9 _ . : -). Must be unique across active handles."},)"
      R"("package":{"type":"string"},"wait_ms":{"type":"integer",)"
      R"("description":"Wait up to this many milliseconds (0 to 60000, default 0) for the )"
      R"(output to settle: the answer comes as soon as the tool waits for input (a fetch )"
      R"(given wait_ms at a wait already shown: at its next output), has been quiet after )"
      R"(new output, or stopped."}},"required":["action","id"]},)"
      R"({"properties":{"action":{"const":"fetch"},"id":{"type":"string","description":)"
      R"("Handle ID of a handle you spawned earlier."},"wait_ms":{"type":"integer",)"
      R"("description":"Wait up to this many milliseconds (0 to 60000, default 0) for the )"
      R"(output to settle: the answer comes as soon as the tool waits for input (a fetch )"
      R"(given wait_ms at a wait already shown: at its next output), has been quiet after )"
      R"(new output, or stopped."}},"required":["action","id"]},)"
      R"({"properties":{"action":{"const":"abort"},"id":{"type":"string","description":)"
      R"("Handle ID of a handle you spawned earlier."}},"required":["action","id"]},)"
      // Without `action`: the tool run to completion.
      R"({"properties":{"package":{"type":"string"}},"required":[],"not":{"required":["action"]}}]})");

  // All four: apply requires input; a required tool parameter is required on spawn.
  auto t = cargo_check_tool();
  t.actions.clear();
  t.parameters[0].required = true;
  auto full = parameters_schema(t, dialect::json_schema);
  auto& branches = full.find("oneOf")->as_array();
  CAF_REQUIRE_EQUAL(branches.size(), 5u);
  CAF_CHECK_EQUAL(branches[0].find("required")->dump(), R"(["action","id","package"])");
  CAF_CHECK_EQUAL(branches[2].find("properties")->find("action")->dump(), R"({"const":"apply"})");
  CAF_CHECK(branches[2].find("properties")->find("input") != nullptr);
  CAF_CHECK_EQUAL(branches[2].find("required")->dump(), R"(["action","id","input"])");
  CAF_CHECK_EQUAL(branches[4].find("required")->dump(), R"(["package"])");
  // A terminal's tool runs only as a handle: no branch without `action`.
  t.io = io_mode::pty;
  CAF_CHECK_EQUAL(parameters_schema(t, dialect::json_schema).find("oneOf")->as_array().size(), 4u);
}

CAF_TEST(openai anthropic and gemini stateful schemas are flat with an action enum) {
  for (auto d : flat_dialects) {
    auto s = parameters_schema(cargo_check_tool(), d);
    for (auto key : {"oneOf", "anyOf", "allOf"})
      CAF_CHECK(s.find(key) == nullptr);
    CAF_CHECK_EQUAL(s.find("type")->as_string(), "object");
    // A call without `action` runs it to completion: nothing is required, and the
    // descriptions say so.
    CAF_CHECK_EQUAL(s.find("required")->dump(), "[]");
    auto& props = *s.find("properties");
    CAF_CHECK_EQUAL(props.find("action")->find("enum")->dump(), R"(["spawn","fetch","abort"])");
    CAF_CHECK(props.find("action")->find("description")->as_string().ends_with(
      "Omit `action` (and `id`) to run the tool to completion and get its result in one answer."));
    CAF_CHECK(props.find("input") == nullptr); // no apply declared
    auto& package = *props.find("package");
    CAF_CHECK(package.find("description")->as_string().starts_with("spawn, or without `action`"));
    // Spawn waits like fetch (apply is not declared here).
    CAF_CHECK(props.find("wait_ms")->find("description")->as_string().starts_with("spawn and fetch only."));
  }
  auto t = cargo_check_tool();
  t.actions.clear();
  auto gem = parameters_schema(t, dialect::gemini);
  CAF_CHECK_EQUAL(gem.find("properties")->find("input")->find("type")->as_string(), "string");
  auto served = parameters_schema(t, dialect::mcp); // for any MCP client, Gemini CLI's too
  CAF_CHECK_EQUAL(served.find("properties")->find("input")->find("type")->as_string(), "string");
  CAF_CHECK(parameters_schema(t, dialect::openai).find("properties")->find("input")->find("type") == nullptr);
  // A terminal's tool runs only as a handle: action and id are required.
  t.io = io_mode::pty;
  auto pty = parameters_schema(t, dialect::openai);
  CAF_CHECK_EQUAL(pty.find("required")->dump(), R"(["action","id"])");
  CAF_CHECK(pty.find("properties")->find("package")->find("description")->as_string().starts_with("spawn only"));
}

CAF_TEST(the assistant is sent the dialect its service takes gemini s for google s openai endpoint) {
  // Gemini refuses an object schema without properties (shell's env in openai's).
  auto of = [](std::string provider, std::string base_url) {
    AssistantConfig a;
    a.provider = std::move(provider);
    a.base_url = std::move(base_url);
    return tool_dialect_for(a);
  };
  CAF_CHECK(of("openai", "https://generativelanguage.googleapis.com/v1beta/openai") == dialect::gemini);
  CAF_CHECK(of("openai", "https://generativelanguage.googleapis.com:443/v1beta/openai/") == dialect::gemini);
  CAF_CHECK(of("openai", "") == dialect::openai);
  CAF_CHECK(of("openai", "http://127.0.0.1:11434/v1") == dialect::openai);
  CAF_CHECK(of("openai", "https://generativelanguage.googleapis.com.example.org/v1") == dialect::openai);
  CAF_CHECK(of("openai", "HTTPS://key@GenerativeLanguage.googleapis.com/v1beta/openai") == dialect::gemini);
  CAF_CHECK(of("anthropic", "https://api.anthropic.com") == dialect::anthropic);
  // And so make_assistant's, which query and the embedding's turns send.
  Config c = default_config();
  c.assistant.provider = "openai";
  c.assistant.model = "gemini-2.5-flash";
  c.assistant.base_url = "https://generativelanguage.googleapis.com/v1beta/openai";
  c.assistant.api_key_env = "JP_SCHEMA_TEST_KEY";
  ::setenv("JP_SCHEMA_TEST_KEY", "k", 1);
  auto made = make_assistant(c);
  ::unsetenv("JP_SCHEMA_TEST_KEY");
  CAF_REQUIRE_EQUAL(made.error(), "");
  CAF_CHECK(made->tool_dialect == dialect::gemini);
}

CAF_TEST(a pty tool documents typing keys the screen and resizing) {
  auto t = cargo_check_tool();
  t.actions.clear();
  t.io = io_mode::pty;
  for (auto d : all_dialects) {
    auto text = parameters_schema(t, d).dump();
    // The sizes a call may ask for, as the call checks them.
    for (auto word : {"a backslash is a backslash", "\"keys\\\"", "C-c", "\"screen\"", "\"rows\"", "\"cols\"",
                      "default 1000", "many rows (2 to 500)", "many columns (10 to 500)"})
      CAF_CHECK_EQUAL(text.find(word) != std::string::npos ? "" : std::string(word) + " missing in " + text, "");
  }
  // Pipes have neither screen nor size.
  t.io = io_mode::pipe;
  auto text = parameters_schema(t, dialect::anthropic).dump();
  CAF_CHECK(text.find("\"screen\"") == std::string::npos);
  CAF_CHECK(text.find("\"wait_ms\"") != std::string::npos);
  CAF_CHECK(text.find("spawn, fetch and apply only.") != std::string::npos);
}

CAF_TEST(the shell s cwd says what its config lets it reach) {
  // With cwd_outside_workspace it may leave the workspace: the schema said it may not.
  auto c = default_config();
  auto& shell = c.tools.at("shell");
  CAF_CHECK(testing::contains(parameters_schema(shell, dialect::anthropic).dump(), "relative to the workspace and inside it"));
  shell.cwd_outside_workspace = true;
  for (auto d : all_dialects) {
    auto text = parameters_schema(shell, d).dump();
    CAF_CHECK(testing::contains(text, "or absolute (it may be outside the workspace)"));
    CAF_CHECK(!testing::contains(text, "and inside it"));
  }
}

CAF_TEST(a sub-agent s input is its next message not stdin) {
  auto c = default_config();
  auto agent = parameters_schema(c.tools.at("agent"), dialect::openai).dump();
  CAF_CHECK(agent.find("Its next message") != std::string::npos);
  CAF_CHECK(agent.find("stdin") == std::string::npos);
  auto each = parameters_schema(c.tools.at("foreach"), dialect::openai).dump();
  CAF_CHECK(each.find("one of its sub-agents waits on") != std::string::npos);
  CAF_CHECK(each.find("stdin") == std::string::npos);
}

CAF_TEST(gemini never gets anyOf oneOf const or additionalProperties anywhere) {
  auto c = default_config();
  c.tools.emplace("cargo_check", cargo_check_tool());
  auto git = cargo_check_tool();
  git.name = "git";
  git.actions.clear();
  auto cmd = param("command", "string", true);
  cmd.enum_values = {"stage", "commit", "rebase"};
  git.parameters.push_back(cmd);
  c.tools.emplace("git", git);
  c.tools.emplace("grep", grep_tool());

  auto decls = tool_declarations(c, dialect::gemini);
  CAF_CHECK_EQUAL(names(decls, dialect::gemini), "agent,await,cargo_check,describe_tools,foreach,git,grep,shell");
  for (auto key : {"anyOf", "oneOf", "allOf", "const", "additionalProperties", "default"})
    CAF_CHECK(!has_key_anywhere(decls, key));
  // Every property has a type and no object schema is empty.
  walk_keys(decls, [](const std::string& k, const Json& v) {
    if (k != "properties")
      return;
    CAF_CHECK(!v.as_object().empty());
    for (auto& [name, prop] : v.as_object())
      CAF_CHECK(prop.find("type") != nullptr);
  });
  // ...while json-schema does use oneOf for the same config.
  CAF_CHECK(has_key_anywhere(tool_declarations(c, dialect::json_schema), "oneOf"));
}

CAF_TEST(anthropic never gets a top level combinator) {
  auto c = default_config();
  c.tools.emplace("cargo_check", cargo_check_tool());
  auto decls = tool_declarations(c, dialect::anthropic);
  for (auto& decl : decls.as_array()) {
    auto& schema = *decl.find("input_schema");
    CAF_CHECK_EQUAL(schema.find("type")->as_string(), "object");
    for (auto key : {"oneOf", "anyOf", "allOf"})
      CAF_CHECK(schema.find(key) == nullptr);
  }
}

CAF_TEST(await has the anyOf required form only in json-schema) {
  auto c = default_config();
  auto& await = c.tools["await"];
  auto full = parameters_schema(await, dialect::json_schema);
  CAF_REQUIRE(full.find("anyOf") != nullptr);
  CAF_CHECK_EQUAL(full.find("anyOf")->dump(), R"([{"required":["any"]},{"required":["all"]}])");
  CAF_CHECK_EQUAL(full.find("required")->dump(), "[]");
  for (auto d : all_dialects) {
    auto s = parameters_schema(await, d);
    CAF_CHECK_EQUAL(s.find("properties")->find("timeout_secs")->find("type")->as_string(), "number");
    CAF_CHECK_EQUAL(s.find("properties")->find("any")->find("items")->dump(), R"({"type":"string"})");
    if (d != dialect::json_schema)
      CAF_CHECK(!has_key_anywhere(s, "anyOf"));
  }
  // Where there is no anyOf, the description says it (a model learnt it from the error).
  for (auto d : all_dialects) {
    auto text = tool_declaration(await, d).dump();
    CAF_CHECK_EQUAL(testing::contains(text, "At least one of `any`, `all` is required."), d != dialect::json_schema);
  }
}

CAF_TEST(await is declared only when a stateful tool exists) {
  auto c = default_config();
  for (auto d : all_dialects)
    CAF_CHECK_EQUAL(names(tool_declarations(c, d), d), "agent,await,describe_tools,foreach,shell");
  for (auto name : {"shell", "agent", "foreach"})
    c.tools[name].stateful = false;
  for (auto d : all_dialects)
    CAF_CHECK_EQUAL(names(tool_declarations(c, d), d), "agent,describe_tools,foreach,shell");
}

CAF_TEST(declarations have the shape of each provider) {
  auto t = grep_tool();
  t.description = "Longer text.";
  auto openai = tool_declaration(t, dialect::openai);
  CAF_CHECK_EQUAL(openai.find("type")->as_string(), "function");
  auto& fn = *openai.find("function");
  CAF_CHECK_EQUAL(fn.find("name")->as_string(), "grep");
  CAF_CHECK_EQUAL(fn.find("description")->as_string(), "Search files\n\nLonger text.");
  CAF_CHECK(fn.find("parameters") != nullptr);

  auto anthropic = tool_declaration(t, dialect::anthropic);
  CAF_CHECK_EQUAL(anthropic.find("name")->as_string(), "grep");
  CAF_CHECK(anthropic.find("input_schema") != nullptr);
  CAF_CHECK(anthropic.find("parameters") == nullptr);

  auto gemini = tool_declaration(t, dialect::gemini);
  CAF_CHECK_EQUAL(gemini.find("name")->as_string(), "grep");
  CAF_CHECK(gemini.find("parameters") != nullptr);

  auto mcp = tool_declaration(t, dialect::mcp);
  CAF_CHECK_EQUAL(mcp.find("name")->as_string(), "grep");
  CAF_CHECK(mcp.find("inputSchema") != nullptr);
  CAF_CHECK(*mcp.find("inputSchema") == *fn.find("parameters"));

  // Gemini rejects an object schema without properties: no parameters at all.
  t.parameters.clear();
  CAF_CHECK(tool_declaration(t, dialect::gemini).find("parameters") == nullptr);
  CAF_CHECK(tool_declaration(t, dialect::anthropic).find("input_schema") != nullptr);
}

CAF_TEST(parameter details carry over and gemini states defaults in words) {
  auto t = grep_tool();
  t.parameters[1].description = "Most matches";
  t.parameters[1].default_value = Json(10);
  auto openai = parameters_schema(t, dialect::openai);
  CAF_CHECK_EQUAL(openai.find("properties")->find("max")->dump(),
                  R"({"type":"integer","description":"Most matches","default":10})");
  auto gemini = parameters_schema(t, dialect::gemini);
  CAF_CHECK_EQUAL(gemini.find("properties")->find("max")->dump(),
                  R"j({"type":"integer","description":"Most matches (default: 10)"})j");
}

// ---- Each dialect fits its service's documented schema subset ----------------------

namespace {

/// The default config plus tools using every kind of parameter a config can declare.
Config config_with_every_parameter_kind() {
  auto c = default_config();
  c.tools.emplace("cargo_check", cargo_check_tool());
  auto t = grep_tool();
  t.name = "kinds";
  auto choice = param("choice", "string");
  choice.enum_values = {"a", "b"};
  auto objects = param("objects", "array");
  objects.items_type = "object";
  auto with_default = param("n", "number");
  with_default.default_value = Json(1.5);
  t.parameters = {param("flag", "boolean"), param("opts", "object", true), choice, objects, with_default,
                  param("list", "array")};
  c.tools.emplace("kinds", t);
  return c;
}

} // namespace

CAF_TEST(openai declarations are flat and pass the service checks) {
  auto c = config_with_every_parameter_kind();
  auto decls = tool_declarations(c, dialect::openai);
  auto v = jp::testing::openai_tools_violation(decls);
  CAF_CHECK_EQUAL(v ? v->message : "", "");
  for (auto& decl : decls.as_array())
    for (auto key : {"oneOf", "anyOf", "allOf", "enum", "const", "not"})
      CAF_CHECK(decl.find("function")->find("parameters")->find(key) == nullptr);
}

CAF_TEST(anthropic declarations pass the service checks) {
  auto c = config_with_every_parameter_kind();
  CAF_CHECK_EQUAL(anthropic_violation(c), "");
}

CAF_TEST(gemini declarations fit the gemini schema subset and a free form object is JSON text) {
  auto c = config_with_every_parameter_kind();
  auto decls = tool_declarations(c, dialect::gemini);
  std::string problems;
  for (auto& p : jp::testing::gemini_declaration_problems(decls))
    problems += p + "\n";
  CAF_CHECK_EQUAL(problems, "");
  // shell's env: a string holding the object, said so in its description.
  auto env = *parameters_schema(c.tools["shell"], dialect::gemini).find("properties")->find("env");
  CAF_CHECK_EQUAL(env.find("type")->as_string(), "string");
  CAF_CHECK(env.find("description")->as_string().find("A JSON object written as a string") != std::string::npos);
  // Other dialects keep the object.
  auto openai_env = *parameters_schema(c.tools["shell"], dialect::openai).find("properties")->find("env");
  CAF_CHECK_EQUAL(openai_env.find("type")->as_string(), "object");
}

CAF_TEST(the gemini check refuses what gemini refuses) {
  auto decls = Json::parse(R"([{"name":"shell","parameters":{"type":"object","properties":{)"
                           R"("env":{"type":"object"},"xs":{"type":"array"},"c":{"const":"x","type":"string"}}}}])");
  CAF_REQUIRE(decls.ok());
  std::string problems;
  for (auto& p : jp::testing::gemini_declaration_problems(*decls))
    problems += p + "\n";
  CAF_CHECK(problems.find("properties[env].properties: should be non-empty for OBJECT type") != std::string::npos);
  CAF_CHECK(problems.find("properties[xs].items: missing field.") != std::string::npos);
  CAF_CHECK(problems.find("Unknown name \"const\"") != std::string::npos);
}

// ---- An MCP server's input schema ---------------------------------------------------

namespace {

/// A config with one MCP tool `t` whose input schema is `schema` (JSON text).
Config with_mcp_tool(const std::string& schema) {
  auto c = default_config();
  auto parsed = Json::parse(schema);
  CAF_REQUIRE(parsed.ok());
  ToolConfig t;
  t.name = "demo__t";
  t.summary = "An MCP tool";
  t.source = "mcp.demo";
  t.parameters = mcp_parameters(*parsed);
  t.extra_keys = mcp_extra_keys(*parsed);
  c.tools.emplace(t.name, t);
  return c;
}

const ParameterConfig& parameter(const Config& c, const std::string& name) {
  for (auto& p : c.tools.at("demo__t").parameters)
    if (p.name == name)
      return p;
  CAF_FAIL("no parameter " << name);
}

std::string openai_violation(const Config& c) {
  auto v = jp::testing::openai_tools_violation(tool_declarations(c, dialect::openai));
  return v ? v->message : "";
}

// As pydantic writes a model's nested types: definitions at the root, referred to.
const char* const pydantic_schema = R"({"type":"object","properties":{
  "query":{"$ref":"#/$defs/Query","description":"What to look for"},
  "color":{"$ref":"#/$defs/Color"},
  "default":{"$ref":"#/$defs/Color"}},
  "required":["query"],
  "$defs":{
    "Query":{"type":"object","properties":{"text":{"type":"string"},
      "tags":{"type":"array","items":{"$ref":"#/$defs/Color"}}},"required":["text"]},
    "Color":{"type":"string","enum":["red","green"],"default":{"$ref":"data, not a reference"}}}})";

} // namespace

CAF_TEST(a server schema with references to its definitions reaches the model written out) {
  auto c = with_mcp_tool(pydantic_schema);
  auto& query = parameter(c, "query");
  CAF_CHECK_EQUAL(query.type, "object");
  CAF_CHECK(query.required);
  CAF_CHECK_EQUAL(query.declared_schema.dump(),
                  R"({"description":"What to look for","type":"object","properties":{"text":{"type":"string"},)"
                  R"("tags":{"type":"array","items":{"type":"string","enum":["red","green"],)"
                  R"("default":{"$ref":"data, not a reference"}}}},"required":["text"]})");
  // What jp-actors checks comes from the definition too.
  auto& color = parameter(c, "color");
  CAF_CHECK_EQUAL(color.type, "string");
  CAF_CHECK_EQUAL(color.enum_values.size(), 2u);
  // A property named as a keyword is a schema all the same.
  CAF_CHECK_EQUAL(parameter(c, "default").declared_schema, color.declared_schema);
  CAF_CHECK_EQUAL(openai_violation(c), "");
  CAF_CHECK_EQUAL(anthropic_violation(c), "");
}

CAF_TEST(a server schema that takes more keys than its properties is offered and called so) {
  // A map of names to values (additionalProperties), or keys by pattern: any key the
  // schema takes reaches the server, which checks it; the model is told so.
  for (auto* schema : {R"({"type":"object","additionalProperties":{"type":"string"}})",
                       R"({"type":"object","properties":{"n":{"type":"integer"}},"additionalProperties":true})",
                       R"({"type":"object","patternProperties":{"^x-":{"type":"string"}}})"}) {
    CAF_MESSAGE(schema);
    auto c = with_mcp_tool(schema);
    auto s = validate_arguments(c.tools.at("demo__t"), *Json::parse(R"({"a":"1","x-b":"2"})"));
    CAF_CHECK_EQUAL(s ? std::string() : s.error, "");
    auto declared = parameters_schema(c.tools.at("demo__t"), dialect::openai);
    CAF_CHECK(declared.find("additionalProperties") || declared.find("patternProperties"));
    CAF_CHECK(!parameters_schema(c.tools.at("demo__t"), dialect::gemini).find("additionalProperties"));
    CAF_CHECK_EQUAL(openai_violation(c), "");
    CAF_CHECK_EQUAL(anthropic_violation(c), "");
  }
  // Without them (or with additionalProperties false) a key it does not name is a typo.
  auto closed = with_mcp_tool(R"({"type":"object","properties":{"n":{"type":"integer"}},"additionalProperties":false})");
  CAF_CHECK(!validate_arguments(closed.tools.at("demo__t"), *Json::parse(R"({"m":1})")));
}

CAF_TEST(server parameter names anthropic refuses are offered by names it takes and keep the server s) {
  // Anthropic refuses the whole request for one property named outside
  // ^[a-zA-Z0-9_.-]{1,64}$; servers write query parameters (`filter[id]`, `$top`).
  std::string long_name(70, 'n');
  auto c = with_mcp_tool(R"({"type":"object","properties":{"filter[id]":{"type":"string"},"filter_id_":{"type":"string"},
    "$top":{"type":"integer"},"has space":{"type":"string"},"@odata.x":{"type":"string"},")" + long_name +
                         R"(":{"type":"string"},"fine.name-1":{"type":"string"}},"required":["filter[id]","$top"]})");
  std::vector<std::string> names;
  for (auto& p : c.tools.at("demo__t").parameters) {
    CAF_MESSAGE(p.name << " from " << p.declared_name);
    static const std::regex pattern("^[a-zA-Z0-9_.-]{1,64}$");
    CAF_CHECK(std::regex_match(p.name, pattern));
    CAF_CHECK(std::find(names.begin(), names.end(), p.name) == names.end()); // no two alike
    names.push_back(p.name);
  }
  // One that fits keeps its name, and one like it made another.
  CAF_CHECK_EQUAL(parameter(c, "filter_id_").declared_name, "");
  CAF_CHECK_EQUAL(parameter(c, "fine.name-1").declared_name, "");
  CAF_CHECK_EQUAL(parameter(c, "_top").declared_name, "$top");
  CAF_CHECK(parameter(c, "_top").required);
  CAF_CHECK_EQUAL(parameter(c, "has_space").declared_name, "has space");
  CAF_CHECK_EQUAL(parameter(c, "_odata.x").declared_name, "@odata.x");
  CAF_CHECK_EQUAL(c.tools.at("demo__t").parameters.at(0).declared_name, "filter[id]");
  CAF_CHECK(c.tools.at("demo__t").parameters.at(0).required);
  CAF_CHECK(c.tools.at("demo__t").parameters.at(0).name.starts_with("filter_id__"));
  CAF_CHECK_EQUAL(c.tools.at("demo__t").parameters.at(5).declared_name, long_name);
  CAF_CHECK_EQUAL(c.tools.at("demo__t").parameters.at(5).name.size(), 64u);
  // The service takes the tool, and its required names what is offered.
  auto tools = tool_declarations(c, dialect::anthropic);
  auto body = Json::object()
                .set("model", "m")
                .set("max_tokens", 1)
                .set("messages", Json(JsonArray{Json::object().set("role", "user").set("content", "hi")}))
                .set("tools", tools);
  auto v = jp::testing::anthropic_request_violation(body);
  CAF_CHECK_EQUAL(v ? v->message : "", "");
  CAF_CHECK(jp::testing::contains(tools.dump(), R"("required":[")" + c.tools.at("demo__t").parameters.at(0).name + R"(","_top"])"));
}

CAF_TEST(the openai check refuses a reference that names nothing and a property that is not a schema) {
  auto c = with_mcp_tool(R"({"type":"object","properties":{"x":{"type":"string"}}})");
  auto& x = c.tools.at("demo__t").parameters.at(0);
  x.declared_schema = *Json::parse(R"({"$ref":"#/$defs/X"})");
  CAF_CHECK_EQUAL(openai_violation(c), "Invalid schema for function 'demo__t': reference #/$defs/X can't be resolved.");
  x.declared_schema = *Json::parse(R"({"type":"object","properties":{"type":"object"}})");
  CAF_CHECK_EQUAL(openai_violation(c), "Invalid schema for function 'demo__t': In context=('properties', 'type'), "
                                       "\"object\" is not of type 'object', 'boolean'.");
}

CAF_TEST(a server schema that cannot be written out is declared as any value for the server to check) {
  // A cycle (a tree), another document, a reference to nothing, a property that is
  // no schema, and definitions referring to each other twice over (2^40 nodes).
  std::string doubling = R"("$defs":{"Node":{"type":"object","properties":{)"
                         R"("children":{"type":"array","items":{"$ref":"#/$defs/Node"}}}},"D0":{"type":"string"})";
  for (int i = 1; i <= 40; ++i)
    doubling += fmt::format(R"(,"D{}":{{"type":"object","properties":{{"l":{{"$ref":"#/$defs/D{}"}},)"
                            R"("r":{{"$ref":"#/$defs/D{}"}}}}}})",
                            i, i - 1, i - 1);
  doubling += "}";
  auto c = with_mcp_tool(R"({"type":"object","properties":{
    "tree":{"$ref":"#/$defs/Node"},
    "remote":{"$ref":"https://example.com/schema.json"},
    "missing":{"$ref":"#/$defs/Nothing"},
    "bad":{"type":"object","properties":{"type":"object"}},
    "huge":{"$ref":"#/$defs/D40"},
    "fine":{"$ref":"#/$defs/D1"}},)" +
                         doubling + "}");
  // Its first type alone would tell the model less than nothing (a tree as a string);
  // gemini is told the type, as it is of every property.
  for (auto name : {"tree", "remote", "missing", "bad", "huge"}) {
    CAF_MESSAGE(name);
    CAF_CHECK_EQUAL(parameter(c, name).declared_schema, Json::object());
    CAF_CHECK_EQUAL(parameter(c, name).type, "object");
  }
  CAF_CHECK(parameter(c, "fine").declared_schema.find("properties"));
  CAF_CHECK_EQUAL(openai_violation(c), "");
  // Any value goes to the server, which checks it.
  auto s = validate_arguments(c.tools.at("demo__t"), *Json::parse(R"({"tree":{"children":[]},"remote":"x"})"));
  CAF_CHECK_EQUAL(s ? std::string() : s.error, "");
}

CAF_TEST(a server schema s properties written out together stay within a bound) {
  // 200 properties, each naming a definition of 2^8 nodes: 7 KB declared, megabytes
  // written out. What is kept stays near 64 KiB; the rest is any value.
  std::string defs = R"("$defs":{"D0":{"type":"string"})";
  for (int i = 1; i <= 8; ++i)
    defs += fmt::format(R"(,"D{}":{{"type":"object","properties":{{"l":{{"$ref":"#/$defs/D{}"}},)"
                        R"("r":{{"$ref":"#/$defs/D{}"}}}}}})",
                        i, i - 1, i - 1);
  std::string props;
  for (int i = 0; i < 200; ++i)
    props += fmt::format(R"({}"p{}":{{"$ref":"#/$defs/D8"}})", i ? "," : "", i);
  auto c = with_mcp_tool(R"({"type":"object","properties":{)" + props + "}," + defs + "}}");
  size_t declared = 0, written_out = 0;
  for (auto& p : c.tools.at("demo__t").parameters) {
    declared += p.declared_schema.dump().size();
    written_out += p.declared_schema.find("properties") != nullptr;
  }
  CAF_CHECK_LESS_OR_EQUAL(declared, 96u * 1024);
  CAF_CHECK_GREATER(written_out, 0u);
  CAF_CHECK_LESS(written_out, 200u);
  // A property without references keeps its schema whatever the others took.
  auto after = with_mcp_tool(R"({"type":"object","properties":{)" + props +
                             R"(,"path":{"type":"string","enum":["a","b"]}},)" + defs + "}}");
  CAF_CHECK_EQUAL(parameter(after, "path").declared_schema.dump(), R"({"type":"string","enum":["a","b"]})");
}

CAF_TEST(what stands beside a reference is merged with what it names) {
  auto c = with_mcp_tool(R"({"type":"object","properties":{"q":{"$ref":"#/$defs/A","description":"The query",
    "properties":{"x":{"type":"string"}},"required":["x"]}},
    "$defs":{"A":{"type":"object","properties":{"y":{"type":"integer"}},"required":["y"]}}})");
  CAF_CHECK_EQUAL(parameter(c, "q").declared_schema.dump(),
                  R"({"description":"The query","properties":{"x":{"type":"string"},"y":{"type":"integer"}},)"
                  R"("required":["x","y"],"type":"object"})");
}

CAF_TEST(an optional list of models reaches openai as declared) {
  // pydantic's Optional[List[Item]]: a union with an array of references.
  auto c = with_mcp_tool(R"({"type":"object","properties":{"items":{"anyOf":[
    {"type":"array","items":{"$ref":"#/$defs/Item"}},{"type":"null"}]}},
    "$defs":{"Item":{"type":"object","properties":{"n":{"type":"integer"}}}}})");
  auto declared = *parameters_schema(c.tools.at("demo__t"), dialect::openai).find("properties")->find("items");
  CAF_CHECK_EQUAL(declared.dump(), R"({"anyOf":[{"type":"array","items":{"type":"object","properties":)"
                                   R"({"n":{"type":"integer"}}}},{"type":"null"}]})");
  CAF_CHECK_EQUAL(openai_violation(c), "");
}

CAF_TEST(a server schema whose root refers to its definition gives that definition s parameters) {
  auto c = with_mcp_tool(R"({"$ref":"#/$defs/Args","$defs":{"Args":{"type":"object",
    "properties":{"n":{"type":"integer"}},"required":["n"]}}})");
  CAF_CHECK_EQUAL(parameter(c, "n").type, "integer");
  CAF_CHECK(parameter(c, "n").required);
}

CAF_TEST(a server parameter of a union of types or of none takes what the server takes) {
  // pydantic's Union[str, dict] and Any, zod's z.union and z.unknown(), a list of types.
  auto c = with_mcp_tool(R"({"type":"object","properties":{
    "fields":{"anyOf":[{"type":"string"},{"type":"object"},{"type":"null"}]},
    "anyval":{"title":"Anyval"},
    "multi":{"type":["integer","string"]},
    "n":{"type":"integer"}}})");
  auto& tool = c.tools.at("demo__t");
  auto ok = [&](const char* args) {
    auto s = validate_arguments(tool, *Json::parse(args));
    return s ? std::string() : s.error;
  };
  CAF_CHECK_EQUAL(ok(R"({"fields":{"a":1},"anyval":"hello","multi":"abc","n":3})"), "");
  CAF_CHECK_EQUAL(ok(R"({"fields":"text","anyval":{"a":[1]},"multi":7})"), "");
  // One type declared: checked here as before.
  CAF_CHECK_EQUAL(ok(R"({"n":"three"})"), "demo__t: `n` must be an integer, got string \"three\"");
}

CAF_TEST(an array without items anywhere in a server schema gets any items) {
  // OpenAI refuses an array schema without items at any depth.
  auto c = with_mcp_tool(R"({"type":"object","properties":{"meta":{"type":"object","properties":{
    "tags":{"type":"array"},"value":{"type":["string","array"]},"kept":{"type":"array","items":{"type":"integer"}}}}}})");
  CAF_CHECK_EQUAL(parameter(c, "meta").declared_schema.dump(),
                  R"({"type":"object","properties":{"tags":{"type":"array","items":{}},)"
                  R"("value":{"type":["string","array"],"items":{}},"kept":{"type":"array","items":{"type":"integer"}}}})");
  CAF_CHECK_EQUAL(openai_violation(c), "");
}
