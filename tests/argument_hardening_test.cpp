// Tool arguments come from a model: a cwd stays in the workspace, a NUL byte is
// refused instead of cutting a string, a key sent twice is refused, and an error never
// echoes a huge value whole. Checked through the CLI with real processes where a
// process would have run.
#define CAF_SUITE argument_hardening
#include <caf/test/unit_test.hpp>

#include <filesystem>
#include <fstream>
#include <limits>
#include <fmt/format.h>

#include "cli_run.hpp"
#include "json_helpers.hpp"
#include "temp_dir.hpp"

#include "config/config_loader.hpp"
#include "messages/json_codec.hpp"
#include "tools/argument_validation.hpp"
#include "tools/builtin_tools.hpp"
#include "tools/launch.hpp"

using namespace jp;
using namespace jp::testing;
namespace fs = std::filesystem;

namespace {

// <root>/ws is the workspace; <root>/outside is a sibling it must not reach.
struct Workspace {
  temp_dir root;
  fs::path ws = root.path / "ws";
  fs::path outside = root.path / "outside";
  Workspace() {
    fs::create_directories(ws / "sub");
    fs::create_directories(outside);
    fs::create_directory_symlink(outside, ws / "link");
  }
  Run call(const std::string& tool, const std::string& args, const std::string& cfg = "") const {
    return cli_in(ws.string(), fmt::format("{} call {} '{}'", cfg, tool, args));
  }
};

Result<LaunchSpec> shell_spec(const Config& config, std::string_view args) {
  return make_launch_spec(config, config.tools.at("shell"), parse(args), Json::object(), false);
}

bool has(const std::string& text, std::string_view part) {
  return text.find(part) != std::string::npos;
}

std::string big(size_t n) {
  return std::string(n, 'a');
}

} // namespace

// -- cwd ---------------------------------------------------------------------------

CAF_TEST(a cwd chosen by the assistant stays inside the workspace) {
  Workspace w;
  auto config = default_config();
  config.workspace = w.ws.string();
  for (auto cwd : {"/", "/etc", "../..", "..", "../outside", "link", "sub/../../outside", "link/x"}) {
    auto spec = shell_spec(config, fmt::format(R"({{"command":"pwd","cwd":"{}"}})", cwd));
    CAF_REQUIRE(!spec.ok());
    CAF_CHECK(spec.error().starts_with(fmt::format("shell: cwd \"{}\" resolves to", cwd)));
    CAF_CHECK(has(spec.error(), "outside the workspace"));
    CAF_CHECK(has(spec.error(), "cwd_outside_workspace = true"));
  }
  // A directory that is not there (chdir would fail), or a path through one: a
  // missing part kept a link after it unresolved ("nope/../link" is ws/link, textually).
  for (auto cwd : {"new/dir", "nope/../link", "nope/../link/x"}) {
    auto spec = shell_spec(config, fmt::format(R"({{"command":"pwd","cwd":"{}"}})", cwd));
    CAF_REQUIRE(!spec.ok());
    CAF_CHECK(spec.error().starts_with(fmt::format("shell: cwd \"{}\": no such directory in the workspace", cwd)));
  }
  // A file: said so before anything starts (it started, and failed in the child).
  { std::ofstream(w.ws / "afile") << "x"; }
  auto file = shell_spec(config, R"({"command":"pwd","cwd":"afile"})");
  CAF_REQUIRE(!file.ok());
  CAF_CHECK(file.error().starts_with("shell: cwd \"afile\": not a directory"));
  for (auto [cwd, where] : {std::pair{"sub", "sub"}, {"sub/../sub", "sub"}, {".", ""}}) {
    auto spec = shell_spec(config, fmt::format(R"({{"command":"pwd","cwd":"{}"}})", cwd));
    CAF_REQUIRE(spec.ok());
    CAF_CHECK_EQUAL(fs::path(spec->cwd), fs::weakly_canonical(w.ws / where));
  }
  auto none = shell_spec(config, R"({"command":"pwd"})");
  CAF_REQUIRE(none.ok());
  CAF_CHECK_EQUAL(none->cwd, config.workspace);
}

CAF_TEST(an object parameter sent as JSON text reaches a template as the object) {
  // The gemini dialect declares a free-form object as a string of JSON.
  auto config = apply_config_text(default_config(), R"(
[conversation.tools.t]
command = { program = "echo", args = ["{{tool.arguments.o.level}}"] }
parameters.o = { type = "object" }
)", "c.toml");
  CAF_REQUIRE(config.ok());
  for (auto o : {Json::object().set("level", "3"), Json(R"({"level":"3"})")}) {
    auto spec = make_launch_spec(*config, config->tools.at("t"), Json::object().set("o", o), Json::object(), false);
    CAF_REQUIRE(spec.ok());
    CAF_CHECK_EQUAL(spec->argv, (std::vector<std::string>{"echo", "3"}));
  }
}

CAF_TEST(a templated cwd is confined and cwd_outside_workspace lets it out) {
  Workspace w;
  auto config = apply_config_text(default_config(), R"(
[conversation.tools.where]
command = { program = "pwd" }
cwd = "{{tool.arguments.dir}}"
parameters.dir = { type = "string" }
[conversation.tools.fixed]
command = { program = "pwd" }
cwd = "/tmp"
)", "c.toml");
  CAF_REQUIRE(config.ok());
  config->workspace = w.ws.string();
  auto where = [&](std::string_view dir) {
    return make_launch_spec(*config, config->tools.at("where"), Json::object().set("dir", dir),
                            Json::object(), false);
  };
  auto out = where("../outside");
  CAF_REQUIRE(!out.ok());
  CAF_CHECK(out.error().starts_with("where: cwd \"../outside\" resolves to"));
  CAF_CHECK(where("sub").ok());
  config->tools.at("where").cwd_outside_workspace = true;
  auto allowed = where("../outside");
  CAF_REQUIRE(allowed.ok());
  CAF_CHECK_EQUAL(allowed->cwd, (w.ws / "../outside").string());
  // An absolute cwd the tool's author wrote is the author's.
  auto fixed = make_launch_spec(*config, config->tools.at("fixed"), Json::object(), Json::object(), false);
  CAF_REQUIRE(fixed.ok());
  CAF_CHECK_EQUAL(fixed->cwd, "/tmp");
}

CAF_TEST(a relative cwd the tool author wrote does not follow a workspace link out of it) {
  // Your `clean` with cwd = "build" in a repository whose `build` is a link to `..`
  // would clean there.
  Workspace w;
  auto config = apply_config_text(default_config(), R"(
[conversation.tools.clean]
command = { program = "pwd" }
cwd = "link"
[conversation.tools.inside]
command = { program = "pwd" }
cwd = "sub"
)", "c.toml");
  CAF_REQUIRE(config.ok());
  config->workspace = w.ws.string();
  auto launch = [&](const std::string& tool) {
    return make_launch_spec(*config, config->tools.at(tool), Json::object(), Json::object(), false);
  };
  auto led = launch("clean");
  CAF_REQUIRE(!led.ok());
  CAF_CHECK(led.error().starts_with("clean: cwd \"link\" resolves to"));
  CAF_CHECK(has(led.error(), "a relative one in a tool's config, must be inside the workspace"));
  auto inside = launch("inside");
  CAF_REQUIRE(inside.ok());
  CAF_CHECK_EQUAL(fs::path(inside->cwd), fs::canonical(w.ws / "sub"));
  // Where the author meant to leave it, the config says so.
  config->tools.at("clean").cwd_outside_workspace = true;
  CAF_CHECK(launch("clean").ok());
}

CAF_TEST(the CLI runs nothing outside the workspace unless the config allows it) {
  Workspace w;
  for (auto cwd : {"../outside", "link", "/"}) {
    auto r = w.call("shell", fmt::format(R"({{"command":"touch ran","cwd":"{}"}})", cwd));
    CAF_CHECK_NOT_EQUAL(r.status, 0);
    CAF_CHECK(has(r.out, "outside the workspace"));
  }
  CAF_CHECK(fs::is_empty(w.outside));
  auto inside = w.call("shell", R"({"command":"pwd","cwd":"link/../sub"})");
  CAF_CHECK_NOT_EQUAL(inside.status, 0); // link/.. is <root>, not the workspace
  auto sub = w.call("shell", R"({"command":"pwd","cwd":"sub"})");
  CAF_CHECK_EQUAL(sub.status, 0);
  CAF_CHECK_EQUAL(sub.out, (fs::weakly_canonical(w.ws / "sub")).string() + "\n");
  auto allowed = w.call("shell", R"({"command":"touch ran","cwd":"../outside"})",
                        "--cfg conversation.tools.shell.cwd_outside_workspace=true");
  CAF_CHECK_EQUAL(allowed.status, 0);
  CAF_CHECK(fs::exists(w.outside / "ran"));
}

// -- NUL bytes ---------------------------------------------------------------------

CAF_TEST(a NUL byte is refused naming what held it) {
  Workspace w;
  auto config = default_config();
  config.workspace = w.ws.string();
  auto command = shell_spec(config, R"({"command":"touch a\u0000b"})");
  CAF_REQUIRE(!command.ok());
  CAF_CHECK_EQUAL(command.error(), "shell: parameter `command` holds a NUL byte (\\u0000), which cannot "
                                   "be passed to a process; send it without NUL bytes");
  auto env = shell_spec(config, R"({"command":"env","env":{"A":"x\u0000y"}})");
  CAF_REQUIRE(!env.ok());
  CAF_CHECK(env.error().starts_with("shell: `env` entry \"A\" holds a NUL byte"));
  auto cwd = shell_spec(config, R"({"command":"pwd","cwd":"sub\u0000/x"})");
  CAF_REQUIRE(!cwd.ok());
  CAF_CHECK(cwd.error().starts_with("shell: cwd \"sub\\u0000/x\" holds a NUL byte"));

  // Through the CLI: nothing runs (before, `touch a` ran with the rest cut off).
  auto r = w.call("shell", R"({"command":"touch a\u0000b"})");
  CAF_CHECK_NOT_EQUAL(r.status, 0);
  CAF_CHECK(has(r.out, "NUL byte"));
  auto arg = w.call("say", R"({"text":"a\u0000b"})",
                    R"(--cfg 'conversation.tools.say.command={program="touch",args=["{{tool.arguments.text}}"]}' )"
                    R"(--cfg 'conversation.tools.say.parameters.text={type="string"}')");
  CAF_CHECK_NOT_EQUAL(arg.status, 0);
  // The tool named once after the call's own words (it was "say: say: command.args").
  CAF_CHECK(has(arg.out, "say failed: say: command.args: `{{tool.arguments.text}}`: the value holds a NUL byte"));
  CAF_CHECK(!fs::exists(w.ws / "a"));
}

// -- duplicate keys ----------------------------------------------------------------

CAF_TEST(json parse can refuse a key sent twice naming its path) {
  auto keep = Json::parse(R"({"a":1,"a":2})");
  CAF_REQUIRE(keep.ok());
  CAF_CHECK_EQUAL(keep->find("a")->as_int(), 1);
  auto error = [](std::string_view text) {
    auto j = Json::parse(text, duplicate_keys::refuse);
    return j.ok() ? std::string() : j.error();
  };
  CAF_CHECK_EQUAL(error(R"({"a":1,"b":{"a":2},"c":[{"a":1},{"b":1}]})"), "");
  CAF_CHECK_EQUAL(error(R"({"a":1,"a":2})"), "the key \"a\" appears twice; send each key once "
                                             "(JSON parsers disagree on which copy counts)");
  CAF_CHECK(error(R"({"env":{"A":"1","A":"2"}})").starts_with("the key \"env.A\" appears twice"));
  CAF_CHECK(error(R"({"x":[0,{"k":1,"k":1}]})").starts_with("the key \"x.1.k\" appears twice"));
  CAF_CHECK(error(R"([{"k":1,"k":1}])").starts_with("the key \"0.k\" appears twice"));
  // Many keys (looked up another way than a few).
  CAF_CHECK_EQUAL(error(R"({"o":{"a":0,"b":1,"c":2,"d":3,"e":4,"f":5,"g":6,"h":7,"i":8,"j":9}})"), "");
  CAF_CHECK(error(R"({"o":{"a":0,"b":1,"c":2,"d":3,"e":4,"f":5,"g":6,"h":7,"i":8,"b":9}})")
              .starts_with("the key \"o.b\" appears twice"));
}

CAF_TEST(tool call arguments with a key sent twice run nothing) {
  Workspace w;
  auto r = w.call("shell", R"({"command":"touch first","command":"touch second"})");
  CAF_CHECK_NOT_EQUAL(r.status, 0);
  CAF_CHECK(has(r.out, "the key \"command\" appears twice"));
  CAF_CHECK(!fs::exists(w.ws / "first"));
  CAF_CHECK(!fs::exists(w.ws / "second"));
}

// -- long values in errors ---------------------------------------------------------

CAF_TEST(errors cut a huge value instead of echoing it) {
  CAF_CHECK_EQUAL(cut_text("short"), "short");
  CAF_CHECK_EQUAL(cut_text(big(100)), big(64) + "…(100 bytes)");
  CAF_CHECK_EQUAL(json_quote_cut(big(100), 10), "\"" + big(10) + "\"…(100 bytes)");
  // Never inside a UTF-8 sequence: "é" is 2 bytes.
  CAF_CHECK_EQUAL(cut_text("aé" + big(10), 2), "a…(13 bytes)");

  auto id = command_from_arguments("shell", Json::object().set("action", "fetch").set("id", big(100000)));
  CAF_REQUIRE(!id.ok());
  CAF_CHECK(id.error().size() < 300);
  CAF_CHECK(has(id.error(), "…(100000 bytes)"));
  auto action = command_from_arguments("shell", Json::object().set("action", big(100000)).set("id", "x"));
  CAF_REQUIRE(!action.ok());
  CAF_CHECK(action.error().size() < 300);

  auto shell = default_config().tools.at("shell");
  auto unknown = validate_arguments(shell, Json::object().set("command", "x").set(big(100000), 1));
  CAF_CHECK(unknown.error.size() < 300);
  CAF_CHECK(has(unknown.error, "…(100000 bytes)"));
}

CAF_TEST(the CLI answers a huge id with a short error) {
  Workspace w;
  auto fetch = w.call("shell", fmt::format(R"({{"action":"fetch","id":"{}"}})", big(100000)));
  CAF_CHECK_NOT_EQUAL(fetch.status, 0);
  CAF_CHECK(fetch.out.size() < 400);
  CAF_CHECK(has(fetch.out, "…(100000 bytes)"));
  auto await = w.call("await", fmt::format(R"({{"all":["{}"]}})", big(100000)));
  CAF_CHECK_NOT_EQUAL(await.status, 0);
  CAF_CHECK(await.out.size() < 400);
  CAF_CHECK(has(await.out, "…(100000 bytes), which is no handle's id"));
}

// Found by tool_arguments_fuzz: a number far outside int64 (1e300) was cast to an
// integer before its range was checked, which is undefined behaviour.
CAF_TEST(an integer argument far out of range is refused without casting it) {
  for (double huge : {1e300, -1e300, 9.3e18, std::numeric_limits<double>::infinity()}) {
    auto r = command_from_arguments("shell", Json::object().set("action", "fetch").set("id", "x").set("wait_ms", huge));
    CAF_REQUIRE(!r.ok());
    CAF_CHECK(has(r.error(), "`wait_ms` must be"));
  }
  auto whole = command_from_arguments(
      "shell", Json::object().set("action", "fetch").set("id", "x").set("wait_ms", 1000.0));
  CAF_CHECK(whole.ok());
}
