#define CAF_SUITE argument_validation
#include <caf/test/unit_test.hpp>

#include "json_helpers.hpp"

#include "config/config_loader.hpp"
#include "tools/argument_validation.hpp"
#include "tools/builtin_tools.hpp"
#include "tools/launch.hpp"

using namespace jp;
using jp::testing::parse;

namespace {


std::string error_of(const ToolConfig& t, std::string_view args) {
  return validate_arguments(t, parse(args)).error;
}

ToolConfig tool(std::string_view name) {
  return default_config().tools[std::string(name)];
}

} // namespace

CAF_TEST(valid arguments pass) {
  auto shell = tool("shell");
  CAF_CHECK_EQUAL(error_of(shell, R"({"command":"ls"})"), "");
  CAF_CHECK_EQUAL(error_of(shell, R"({"command":"ls","cwd":"src","env":{"A":"1"}})"), "");
  // null counts as absent for optional parameters
  CAF_CHECK_EQUAL(error_of(shell, R"({"command":"ls","cwd":null})"), "");
}

CAF_TEST(arguments must be an object) {
  CAF_CHECK_EQUAL(error_of(tool("shell"), R"(["ls"])"),
                  "shell: arguments must be an object, got array");
}

CAF_TEST(required parameters must be present) {
  CAF_CHECK_EQUAL(error_of(tool("shell"), "{}"), "shell: parameter `command` is required");
  CAF_CHECK_EQUAL(error_of(tool("shell"), R"({"command":null})"),
                  "shell: parameter `command` is required");
}

CAF_TEST(types are checked and named) {
  auto shell = tool("shell");
  CAF_CHECK_EQUAL(error_of(shell, R"({"command":"ls","cwd":3})"),
                  "shell: `cwd` must be a string, got integer 3");
  CAF_CHECK_EQUAL(error_of(shell, R"({"command":"ls","env":[]})"),
                  "shell: `env` must be an object, got array");
  auto await = tool("await");
  CAF_CHECK_EQUAL(error_of(await, R"({"any":["a"],"timeout_secs":"5"})"),
                  "await: `timeout_secs` must be a number, got string \"5\"");
  CAF_CHECK_EQUAL(error_of(await, R"({"any":["a"],"timeout_secs":0.5})"), "");
  CAF_CHECK_EQUAL(error_of(await, R"({"any":["a", 2]})"),
                  "await: `any[1]` must be a string, got integer 2");
  CAF_CHECK_EQUAL(error_of(await, R"({"all":"a"})"), "await: `all` must be an array, got string \"a\"");

  ToolConfig t;
  t.name = "t";
  ParameterConfig n;
  n.name = "n";
  n.type = "integer";
  t.parameters = {n};
  CAF_CHECK_EQUAL(error_of(t, R"({"n":3})"), "");
  CAF_CHECK_EQUAL(error_of(t, R"({"n":3.0})"), ""); // integral number
  CAF_CHECK_EQUAL(error_of(t, R"({"n":3.5})"), "t: `n` must be an integer, got number 3.5");
  // Integral, but past what a program reads as an integer (it reached argv as 1e+21).
  CAF_CHECK_EQUAL(error_of(t, R"({"n":1e21})"),
                  "t: `n` must be an integer from -9223372036854775808 to 9223372036854775807, got number 1e+21");
  CAF_CHECK_EQUAL(error_of(t, R"({"n":-9.3e18})").empty(), false);
  CAF_CHECK_EQUAL(error_of(t, R"({"n":9223372036854775807})"), "");
  CAF_CHECK_EQUAL(error_of(t, R"({"n":-9.2e18})"), "");
  // An array of integers' items are held to the same (1e21 reached argv as 1e+21).
  t.parameters[0].type = "array";
  t.parameters[0].items_type = "integer";
  CAF_CHECK_EQUAL(error_of(t, R"({"n":[1,2.0]})"), "");
  CAF_CHECK_EQUAL(error_of(t, R"({"n":[1,1e21]})"),
                  "t: `n[1]` must be an integer from -9223372036854775808 to 9223372036854775807, got number 1e+21");
  // As declared, an integral 2.0 is the integer 2 (a template writes `2`, not `2.0`),
  // as a lone integer's 3.0 is 3.
  CAF_CHECK_EQUAL(arguments_as_declared(*Json::parse(R"({"n":[1,2.0]})"), t.parameters).dump(), R"({"n":[1,2]})");
  t.parameters[0].type = "integer";
  CAF_CHECK_EQUAL(arguments_as_declared(*Json::parse(R"({"n":3.0})"), t.parameters).dump(), R"({"n":3})");
  t.parameters[0].type = "boolean";
  CAF_CHECK_EQUAL(error_of(t, R"({"n":"yes"})"), "t: `n` must be a boolean, got string \"yes\"");
}

CAF_TEST(enum values are checked) {
  ToolConfig git;
  git.name = "git";
  ParameterConfig cmd;
  cmd.name = "command";
  cmd.enum_values = {"stage", "commit"};
  git.parameters = {cmd};
  CAF_CHECK_EQUAL(error_of(git, R"({"command":"stage"})"), "");
  CAF_CHECK_EQUAL(error_of(git, R"({"command":"push"})"),
                  "git: `command` must be one of stage, commit, got \"push\"");
}

CAF_TEST(unknown keys are rejected naming the allowed ones) {
  // A one-shot call's (not the spawn-only `tty`), a spawn's with its own keys.
  CAF_CHECK_EQUAL(error_of(tool("shell"), R"({"command":"ls","cmd":"x"})"),
                  "shell: unknown parameter `cmd` (allowed: `command`, `cwd`, `env`)");
  auto spawned = validate_arguments(tool("shell"), *Json::parse(R"({"command":"ls","input":"x"})"), call_form::spawn);
  CAF_CHECK_EQUAL(spawned.error, "shell: unknown parameter `input` (allowed: `command`, `cwd`, `env`, `tty`, "
                                 "`action`, `id`, `wait_ms`, `screen`, `rows`, `cols`) (`input` is for action "
                                 "`apply`, on a handle)");
  // The protocol's own on a call without `action`: what it is for.
  CAF_CHECK_EQUAL(error_of(tool("shell"), R"({"command":"ls","wait_ms":100})"),
                  "shell: unknown parameter `wait_ms` (allowed: `command`, `cwd`, `env`) (`wait_ms` is for a "
                  "handle: give \"action\": \"spawn\" with an \"id\", or fetch it later)");
  ToolConfig none;
  none.name = "none";
  CAF_CHECK_EQUAL(error_of(none, R"({"x":1})"),
                  "none: unknown parameter `x` (the tool takes no parameters)");
  CAF_CHECK_EQUAL(error_of(none, "{}"), "");
}

CAF_TEST(one_of_required needs at least one of the names) {
  auto await = tool("await");
  CAF_CHECK_EQUAL(error_of(await, "{}"), "await: at least one of `any`, `all` is required");
  CAF_CHECK_EQUAL(error_of(await, R"({"timeout_secs":1})"),
                  "await: at least one of `any`, `all` is required");
  CAF_CHECK_EQUAL(error_of(await, R"({"all":["x"]})"), "");
  CAF_CHECK_EQUAL(error_of(await, R"({"any":["x"],"all":["y"]})"), "");
}

CAF_TEST(actions must be declared by a stateful tool) {
  auto shell = tool("shell");
  for (auto a : {action_kind::spawn, action_kind::fetch, action_kind::apply, action_kind::abort})
    CAF_CHECK_EQUAL(validate_action(shell, a).error, "");
  shell.actions = {action_kind::spawn, action_kind::fetch, action_kind::abort};
  CAF_CHECK_EQUAL(validate_action(shell, action_kind::apply).error,
                  "shell: action `apply` is not supported (actions: spawn, fetch, abort)");
  CAF_CHECK_EQUAL(validate_action(tool("describe_tools"), action_kind::spawn).error,
                  "describe_tools: not a stateful tool; call it without `action`");
}

CAF_TEST(an object parameter may come as JSON text as the gemini dialect declares it) {
  auto shell = tool("shell");
  CAF_CHECK_EQUAL(error_of(shell, R"({"command":"ls","env":"{\"A\":\"1\"}"})"), "");
  CAF_CHECK_EQUAL(error_of(shell, R"({"command":"ls","env":"A=1"})"),
                  "shell: `env` must be an object, or a string holding one as JSON; got a string that is not a "
                  "JSON object");
  CAF_CHECK(object_argument(parse(R"("{\"A\":\"1\"}")"))->find("A") != nullptr);
  CAF_CHECK(!object_argument(parse(R"("[1]")")));
  CAF_CHECK(!object_argument(parse("3")));
}

CAF_TEST(a parameter left out gets its declared default and numbers reach argv as a program reads them) {
  auto config = apply_config_text(default_config(), R"(
[conversation.tools.git_log]
command = { program = "git", args = ["log", "-n", "{{tool.arguments.n}}", "--port={{tool.arguments.port}}", "{{tool.arguments.ratio}}"] }
parameters.n = { type = "integer", default = 5 }
parameters.port = { type = "integer" }
parameters.ratio = { type = "number" }
)", "c.toml");
  CAF_REQUIRE(config.ok());
  auto argv = [&](const char* args) {
    auto spec = make_launch_spec(*config, config->tools["git_log"], parse(args), Json::object(), false);
    CAF_REQUIRE(spec.ok());
    return spec->argv;
  };
  // The schema told the model that n left out means 5: the tool gets 5.
  CAF_CHECK_EQUAL(argv(R"({"port":8080,"ratio":0.5})"),
                  (std::vector<std::string>{"git", "log", "-n", "5", "--port=8080", "0.5"}));
  // 8080.0 for 8080 (an integer parameter takes it), 1e3 for 1000: no ".0", no exponent.
  CAF_CHECK_EQUAL(argv(R"({"n":3.0,"port":8080.0,"ratio":1e3})"),
                  (std::vector<std::string>{"git", "log", "-n", "3", "--port=8080", "1000"}));
  CAF_CHECK_EQUAL(argv(R"({"n":null,"port":1,"ratio":2.25})"),
                  (std::vector<std::string>{"git", "log", "-n", "5", "--port=1", "2.25"}));
  // Every integral double an integer parameter takes is written as an integer.
  auto large = argv(R"({"n":-9.2e18,"port":1,"ratio":1})");
  CAF_CHECK_EQUAL(large.at(3), "-9200000000000000000");
  // An MCP server's default is its own to apply (and not checked here): not sent.
  ToolConfig served;
  served.name = "srv__t";
  served.source = "mcp.srv";
  ParameterConfig flag;
  flag.name = "flag";
  flag.type = "boolean";
  flag.default_value = Json("false"); // a sloppy schema's
  flag.declared_schema = parse(R"({"type":"boolean","default":"false"})");
  served.parameters.push_back(flag);
  auto to_server = make_launch_spec(*config, served, parse("{}"), Json::object(), false);
  CAF_REQUIRE(to_server.ok());
  CAF_CHECK_EQUAL(to_server->arguments, "{}");
  // No terminal, so no editor: git takes the message it has or stops, as under the shell.
  auto spec = make_launch_spec(*config, config->tools["git_log"], parse(R"({"port":1})"), Json::object(), false);
  CAF_REQUIRE(spec.ok());
  CAF_CHECK(std::find(spec->env.begin(), spec->env.end(), "GIT_EDITOR=true") != spec->env.end());
}

CAF_TEST(shell takes env as JSON text too) {
  auto config = default_config();
  auto spec = make_launch_spec(config, config.tools["shell"], parse(R"({"command":"env","env":"{\"A\":\"1\"}"})"),
                               Json::object(), false);
  CAF_REQUIRE(spec.ok());
  CAF_CHECK(std::find(spec->env.begin(), spec->env.end(), "A=1") != spec->env.end());
}

CAF_TEST(shell env names may not be empty or hold an equals sign and null is absent) {
  // {"B=C":"x"} would set B to "C=x"; a null value came as the text "null".
  auto config = default_config();
  auto spec_of = [&](const char* args) {
    return make_launch_spec(config, config.tools["shell"], parse(args), Json::object(), false);
  };
  auto with_equals = spec_of(R"({"command":"env","env":{"B=C":"x"}})");
  CAF_REQUIRE(!with_equals.ok());
  CAF_CHECK(with_equals.error().find("`env` entry \"B=C\": a variable's name may not be empty or hold '='") !=
            std::string::npos);
  CAF_CHECK(!spec_of(R"({"command":"env","env":{"":"v"}})").ok());
  auto with_null = spec_of(R"({"command":"env","env":{"C":null,"D":"1"}})");
  CAF_REQUIRE(with_null.ok());
  CAF_CHECK(std::none_of(with_null->env.begin(), with_null->env.end(), [](auto& e) { return e.rfind("C=", 0) == 0; }));
  CAF_CHECK(std::find(with_null->env.begin(), with_null->env.end(), "D=1") != with_null->env.end());
  // A number or a boolean is its text; a structure is refused, not passed as JSON.
  auto scalars = spec_of(R"({"command":"env","env":{"PORT":8080,"DEBUG":true}})");
  CAF_REQUIRE(scalars.ok());
  CAF_CHECK(std::find(scalars->env.begin(), scalars->env.end(), "PORT=8080") != scalars->env.end());
  CAF_CHECK(std::find(scalars->env.begin(), scalars->env.end(), "DEBUG=true") != scalars->env.end());
  auto nested = spec_of(R"({"command":"env","env":{"FOO":{"x":1}}})");
  CAF_REQUIRE(!nested.ok());
  CAF_CHECK_EQUAL(nested.error(), "shell: `env` entry \"FOO\" is an object: a variable's value is a string (a number "
                                  "or a boolean is taken as its text)");
}

CAF_TEST(a foreach max_concurrent written with a fraction is taken when whole) {
  // Models write 2.0 for 2: it was ignored, and the default of 8 ran at once.
  auto config = default_config();
  CAF_REQUIRE(config.tools.count("foreach"));
  auto spec_of = [&](const char* args) {
    return make_agent_launch_spec(config, config.tools["foreach"], parse(args), 0, true);
  };
  auto spec = spec_of(R"({"elements":["a"],"prompt":"{{element}}","max_concurrent":2.0})");
  CAF_REQUIRE(spec.ok());
  CAF_CHECK_EQUAL(spec->agent.max_concurrent, 2);
  auto half = spec_of(R"({"elements":["a"],"prompt":"{{element}}","max_concurrent":2.5})");
  CAF_REQUIRE(!half.ok());
  CAF_CHECK(half.error().find("must be a whole number from 1 to 8") != std::string::npos);
}
