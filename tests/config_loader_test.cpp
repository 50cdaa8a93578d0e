#define CAF_SUITE config_loader
#include <caf/test/unit_test.hpp>

#include <csignal>
#include <cstdlib>
#include <fcntl.h>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <optional>
#include <thread>
#include <tuple>
#include <utility>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "config/assistant_model.hpp"
#include "config/config_loader.hpp"
#include "config/toml_depth.hpp"
#include "messages/json_codec.hpp"
#include "runtime/node/node_address.hpp"
#include "tools/builtin_tools.hpp"
#include "tools/launch.hpp"

using namespace jp;
namespace fs = std::filesystem;

namespace {

/// A fresh directory, removed with everything in it at scope exit. It also becomes
/// $XDG_CONFIG_HOME's parent so the real user config is never read.
struct Sandbox {
  fs::path root;
  fs::path xdg;       // $XDG_CONFIG_HOME
  fs::path workspace; // a workspace without .jp/ unless a test writes one

  Sandbox() {
    std::string tmpl = (fs::temp_directory_path() / "jp-config-test-XXXXXX").string();
    root = mkdtemp(tmpl.data());
    xdg = root / "xdg";
    workspace = root / "ws";
    fs::create_directories(xdg);
    fs::create_directories(workspace);
    if (const char* before = std::getenv("XDG_CONFIG_HOME"))
      xdg_before = before;
    setenv("XDG_CONFIG_HOME", xdg.c_str(), 1);
  }
  ~Sandbox() {
    // One made inside another's life (refusal_missing's) gives the outer one its own back.
    if (xdg_before)
      setenv("XDG_CONFIG_HOME", xdg_before->c_str(), 1);
    else
      unsetenv("XDG_CONFIG_HOME");
    std::error_code ec;
    fs::remove_all(root, ec);
  }
  std::optional<std::string> xdg_before;

  fs::path write(const fs::path& path, std::string_view text) const {
    fs::create_directories(path.parent_path());
    std::ofstream(path) << text;
    return path;
  }
  fs::path user_config(std::string_view text) const {
    return write(xdg / "jp-actors" / "config.toml", text);
  }
  fs::path workspace_config(std::string_view text) const {
    return write(workspace / ".jp" / "config.toml", text);
  }

  ConfigSources sources() const {
    ConfigSources s;
    s.workspace = workspace.string();
    return s;
  }
};

/// "" when `text` contains `part`; otherwise both, so a failed check shows them.
std::string missing(const std::string& text, std::string_view part) {
  if (text.find(part) != std::string::npos)
    return "";
  return "`" + std::string(part) + "` not in: " + text;
}

/// "" when `toml`, loaded as a config file, is refused with "<file>: <key_and_problem>";
/// otherwise what happened instead.
std::string refusal_missing(const std::string& toml, const std::string& key_and_problem) {
  Sandbox box;
  auto file = box.write(box.root / "bad.toml", toml);
  auto sources = box.sources();
  sources.config_files.push_back(file.string());
  auto c = load_config(sources, default_config());
  if (c.ok())
    return "accepted: " + toml;
  return missing(c.error(), file.string() + ": " + key_and_problem);
}

// A valid local tool `x` that each bad-config case below extends.
constexpr std::string_view tool_x = "[conversation.tools.x]\ncommand = { program = \"echo\" }\n";

} // namespace

CAF_TEST(defaults contain the built-in tools) {
  auto c = default_config();
  CAF_CHECK_EQUAL(c.assistant.provider, "scripted");
  CAF_CHECK(fs::path(c.workspace).is_absolute());
  for (auto name : {"shell", "await", "describe_tools"}) {
    CAF_REQUIRE(c.tools.count(name) == 1);
    CAF_CHECK_EQUAL(c.tools[name].source, "builtin");
    CAF_CHECK_EQUAL(c.tools[name].name, name);
  }
  auto& shell = c.tools["shell"];
  CAF_CHECK(shell.stateful);
  CAF_CHECK_EQUAL(shell.actions.size(), 4u);
  CAF_REQUIRE(!shell.parameters.empty());
  CAF_CHECK_EQUAL(shell.parameters[0].name, "command");
  CAF_CHECK(shell.parameters[0].required);
  CAF_CHECK_EQUAL(shell.parameters[0].description, "Shell command, run with bash -c");
  CAF_CHECK(shell.description.find("spawn") != std::string::npos);

  auto& await = c.tools["await"];
  CAF_CHECK(!await.stateful);
  CAF_CHECK_EQUAL(await.one_of_required, (std::vector<std::string>{"any", "all"}));
  bool timeout_is_number = false;
  for (auto& p : await.parameters)
    timeout_is_number = timeout_is_number || (p.name == "timeout_secs" && p.type == "number");
  CAF_CHECK(timeout_is_number);

  auto& describe = c.tools["describe_tools"];
  CAF_REQUIRE_EQUAL(describe.parameters.size(), 1u);
  CAF_CHECK_EQUAL(describe.parameters[0].name, "tools");
  CAF_CHECK_EQUAL(describe.parameters[0].type, "array");
  CAF_CHECK(!describe.parameters[0].required);
}

CAF_TEST(no config files at all gives the defaults) {
  Sandbox box;
  auto c = load_config(box.sources(), default_config());
  CAF_REQUIRE(c.ok());
  CAF_CHECK_EQUAL(c->tools.size(), 5u); // shell, await, agent, foreach, describe_tools
  CAF_CHECK_EQUAL(c->workspace, box.workspace.string());
  CAF_CHECK_EQUAL(c->agents.max_depth, 3u);
  CAF_CHECK_EQUAL(c->agents.max_concurrent, 8u);
  CAF_CHECK_EQUAL(c->agents.max_rounds, 50u);
}

CAF_TEST(later sources override earlier ones key by key) {
  Sandbox box;
  box.user_config(R"(
[assistant]
model = "user"
base_url = "http://user"
[runtime]
state_dir = "user-state"
[conversation.tools.x]
summary = "from user"
command = { program = "echo", args = ["a"] }
run = "ask"
env = { A = "1" }
)");
  auto sources = box.sources();
  {
    auto c = load_config(sources, default_config());
    CAF_CHECK_EQUAL(c.error(), "");
    CAF_REQUIRE(c.ok());
    CAF_CHECK_EQUAL(c->assistant.model, "user");
  }

  box.workspace_config(R"(
[assistant]
model = "workspace"
[conversation.tools.x]
run = "skip"
)");
  {
    auto c = load_config(sources, default_config());
    CAF_CHECK_EQUAL(c.error(), "");
    CAF_REQUIRE(c.ok());
    CAF_CHECK_EQUAL(c->assistant.model, "workspace");
    CAF_CHECK_EQUAL(c->assistant.base_url, "http://user"); // untouched key survives
    auto& x = c->tools["x"];
    CAF_CHECK_EQUAL(x.summary, "from user");                 // tables merge
    CAF_CHECK_EQUAL(x.program, "echo");
    CAF_CHECK(x.run == run_mode::skip);
  }

  sources.config_files.push_back(box.write(box.root / "one.toml", R"(
[assistant]
model = "file one"
[conversation.tools.x]
command = { args = ["b", "c"] }
env = { B = "2" }
)").string());
  sources.config_files.push_back(box.write(box.root / "two.toml", R"(
[assistant]
model = "file two"
)").string());
  {
    auto c = load_config(sources, default_config());
    CAF_CHECK_EQUAL(c.error(), "");
    CAF_REQUIRE(c.ok());
    CAF_CHECK_EQUAL(c->assistant.model, "file two");
    CAF_CHECK_EQUAL(c->tools["x"].args, (std::vector<std::string>{"b", "c"})); // arrays replace
    CAF_CHECK_EQUAL(c->tools["x"].env.size(), 2u);                               // env merges
    CAF_CHECK_EQUAL(c->runtime.state_dir, "user-state");
  }

  sources.overrides.push_back("assistant.model=from-cfg");
  // A date is its text (no key takes one): Azure's api-version needs no quotes.
  sources.overrides.push_back("assistant.api_version=2024-10-21");
  {
    auto c = load_config(sources, default_config());
    CAF_CHECK_EQUAL(c.error(), "");
    CAF_REQUIRE(c.ok());
    CAF_CHECK_EQUAL(c->assistant.model, "from-cfg");
    CAF_CHECK_EQUAL(c->assistant.api_version, "2024-10-21");
  }
  sources.overrides.pop_back();

  // Without the user config, the workspace's partial tool `x` has no program.
  sources.use_user_config = false;
  {
    auto c = load_config(sources, default_config());
    CAF_REQUIRE(!c.ok());
    CAF_CHECK_EQUAL(missing(c.error(), (box.workspace / ".jp" / "config.toml").string() +
                                           ": conversation.tools.x.command.program"),
                    "");
  }
  box.workspace_config("[assistant]\nmodel = \"workspace\"\n");
  sources.config_files.clear();
  {
    auto c = load_config(sources, default_config());
    CAF_CHECK_EQUAL(c.error(), "");
    CAF_REQUIRE(c.ok());
    CAF_CHECK_EQUAL(c->assistant.base_url, "");
    CAF_CHECK_EQUAL(c->tools.count("x"), 0u);
  }
}

CAF_TEST(the daemons tools may leave running are none unless your config names them) {
  Sandbox box;
  auto c = load_config(box.sources(), default_config());
  CAF_REQUIRE(c.ok());
  CAF_CHECK(c->runtime.daemons.empty());
  box.user_config("[runtime]\ndaemons = [\"org.gradle.launcher.daemon.bootstrap.GradleDaemon\", \"A-server.jar\"]\n");
  c = load_config(box.sources(), default_config());
  CAF_CHECK_EQUAL(c.ok() ? "" : c.error(), "");
  CAF_REQUIRE(c.ok());
  CAF_CHECK_EQUAL(c->runtime.daemons,
                  (std::vector<std::string>{"org.gradle.launcher.daemon.bootstrap.GradleDaemon", "A-server.jar"}));
}

CAF_TEST(worker threads left out are chosen by the cores of the machine) {
  Sandbox box;
  auto c = load_config(box.sources(), default_config());
  CAF_REQUIRE(c.ok());
  CAF_CHECK_EQUAL(c->runtime.worker_threads, 0u); // not set
  // One per four cores, from 1 to 4 (bench/README.md "Worker threads").
  for (auto [cores, threads] : std::vector<std::pair<unsigned, size_t>>{
           {0, 1}, {1, 1}, {2, 1}, {7, 1}, {8, 2}, {12, 3}, {16, 4}, {64, 4}, {256, 4}})
    CAF_CHECK_EQUAL(worker_threads_for_cores(cores), threads);
  // By the cores this process may use: 1 to 4, whatever the machine.
  CAF_CHECK_GREATER_OR_EQUAL(worker_threads(c->runtime.worker_threads), 1u);
  CAF_CHECK_LESS_OR_EQUAL(worker_threads(c->runtime.worker_threads), 4u);
  c->runtime.worker_threads = 7; // set: taken as it is
  CAF_CHECK_EQUAL(worker_threads(c->runtime.worker_threads), 7u);
}

CAF_TEST(the io thread polls before it sleeps on machines of 8 cores or more unless told) {
  Sandbox box;
  auto c = load_config(box.sources(), default_config());
  CAF_REQUIRE(c.ok());
  CAF_CHECK_EQUAL(c->runtime.io_poll_us, -1); // not set
  // Below 8 cores a polling io thread takes a core the tools need (bench/README.md
  // "The io thread polls").
  for (auto [cores, us] : std::vector<std::pair<unsigned, int64_t>>{{0, 0}, {1, 0}, {2, 0}, {7, 0}, {8, 100}, {64, 100}})
    CAF_CHECK_EQUAL(io_poll_us_for_cores(cores), us);
  auto by_cores = io_poll(c->runtime).count();
  CAF_CHECK(by_cores == 0 || by_cores == 100);
  for (int64_t set : {0, 250}) { // set: taken as it is
    auto sources = box.sources();
    sources.overrides = {"runtime.io_poll_us=" + std::to_string(set)};
    auto s = load_config(sources, default_config());
    CAF_REQUIRE(s.ok());
    CAF_CHECK_EQUAL(io_poll(s->runtime).count(), set);
  }
}

CAF_TEST(a number or a boolean given to a key that takes text is that text) {
  // `query --model 123` came to `assistant.model: expected a string, got integer 123`.
  Sandbox box;
  auto sources = box.sources();
  sources.overrides = {"assistant.model=123", "assistant.inquiry_model = 1.5", "assistant.system_prompt=true",
                       "runtime.worker_threads=3"};
  auto c = load_config(sources, default_config());
  CAF_REQUIRE_EQUAL(c.error(), "");
  CAF_CHECK_EQUAL(c->assistant.model, "123");
  CAF_CHECK_EQUAL(c->assistant.inquiry_model, "1.5");
  CAF_CHECK_EQUAL(c->assistant.system_prompt, "true");
  CAF_CHECK_EQUAL(c->runtime.worker_threads, 3u);
  // Any case of the scheme, a port, user info, IPv6; and "" is the provider's own.
  for (auto url : {"HTTPS://api.example.com/v1", "http://[::1]:8080/v1", "http://u:p@host/", "https://h:443"}) {
    sources.overrides = {std::string("assistant.base_url=") + url};
    auto taken = load_config(sources, default_config());
    CAF_CHECK_EQUAL(taken.error(), "");
  }
  sources.overrides = {"assistant.base_url=http://127.0.0.1:9/v1", "assistant.base_url="};
  auto reset = load_config(sources, default_config());
  CAF_REQUIRE_EQUAL(reset.error(), "");
  CAF_CHECK_EQUAL(reset->assistant.base_url, "");
  // Where the text does not do either, the value's own error is told.
  sources.overrides = {"style.reasoning=true"};
  auto refused = load_config(sources, default_config());
  CAF_CHECK_EQUAL(refused.error(),
                  "--cfg style.reasoning=true: style.reasoning: expected one of show, hide, got boolean true");
}

CAF_TEST(cfg values are TOML values or else strings) {
  Sandbox box;
  auto sources = box.sources();
  sources.overrides = {
      "runtime.output_cap_bytes=100",
      "runtime.abort_grace_secs = 0.5", // blanks around `=`, as a config file has them
      "runtime.worker_threads=2",
      "assistant.model= gpt-4o-mini ",
      "assistant.base_url=http://127.0.0.1:11434/v1",
      "conversation.tools.shell.spawn.actions=[\"spawn\", \"fetch\"]",
      "conversation.tools.shell.spawn.notifications.on_content=true",
      "conversation.tools.shell.spawn.lifecycle.on_turn_end=await",
      "conversation.tools.shell.questions.confirm.answer=true",
      " conversation.tools.y.command ={program=\"ls\", args=[\"-l\"]}",
  };
  auto c = load_config(sources, default_config());
  CAF_CHECK_EQUAL(c.error(), "");
    CAF_REQUIRE(c.ok());
  CAF_CHECK_EQUAL(c->runtime.output_cap_bytes, 100u);
  CAF_CHECK_EQUAL(c->runtime.abort_grace_secs, 0.5);
  CAF_CHECK_EQUAL(c->runtime.worker_threads, 2u);
  CAF_CHECK_EQUAL(c->assistant.model, "gpt-4o-mini");
  CAF_CHECK_EQUAL(c->assistant.base_url, "http://127.0.0.1:11434/v1");
  auto& shell = c->tools["shell"];
  CAF_CHECK(shell.actions == (std::vector<action_kind>{action_kind::spawn, action_kind::fetch}));
  CAF_CHECK(shell.notifications.on_content);
  CAF_CHECK(shell.lifecycle.on_turn_end == turn_end_policy::await);
  CAF_CHECK_EQUAL(shell.answers["confirm"].dump(), "true");
  CAF_CHECK_EQUAL(c->tools["y"].program, "ls");
  CAF_CHECK_EQUAL(c->tools["y"].source, "local");
  // Its actions narrowed to no abort, the shell's one-shot calls never go on as handles.
  CAF_CHECK_EQUAL(background_after_secs(shell), 0.0);
}

CAF_TEST(background_after_secs is 120 for the shell by default and refused where nothing could go on) {
  Sandbox box;
  auto plain = load_config(box.sources(), default_config());
  CAF_REQUIRE(plain.ok());
  CAF_CHECK_EQUAL(background_after_secs(plain->tools["shell"]), 120.0);
  auto sources = box.sources();
  sources.overrides = {"conversation.tools.shell.background_after_secs=0"};
  auto never = load_config(sources, default_config());
  CAF_REQUIRE(never.ok());
  CAF_CHECK_EQUAL(background_after_secs(never->tools["shell"]), 0.0);
  // A one-shot tool: nothing the assistant could fetch or abort.
  sources.overrides = {"conversation.tools.y.command={program=\"ls\"}", "conversation.tools.y.background_after_secs=5"};
  auto refused = load_config(sources, default_config());
  CAF_REQUIRE(!refused.ok());
  CAF_CHECK_EQUAL(missing(refused.error(), "conversation.tools.y.background_after_secs: is for a tool that runs here "
                                           "with io = \"pipe\", spawn.stateful = true and the fetch and abort actions"),
                  "");
}

CAF_TEST(cfg errors name the override and the key) {
  Sandbox box;
  auto sources = box.sources();
  sources.overrides = {"conversation.tools.shell.run=sometimes"};
  auto c = load_config(sources, default_config());
  CAF_REQUIRE(!c.ok());
  CAF_CHECK_EQUAL(missing(c.error(), "--cfg conversation.tools.shell.run=sometimes: "
                                     "conversation.tools.shell.run: expected one of ask, "
                                     "unattended, skip, got \"sometimes\""),
                  "");

  sources.overrides = {"runtime.abort_grace_secs=nan"};
  c = load_config(sources, default_config());
  CAF_REQUIRE(!c.ok());
  CAF_CHECK_EQUAL(missing(c.error(), "--cfg runtime.abort_grace_secs=nan: runtime.abort_grace_secs: "
                                     "expected a finite number of seconds from 0 to 3600, got float nan"),
                  "");

  sources.overrides = {"assistant.model"};
  c = load_config(sources, default_config());
  CAF_REQUIRE(!c.ok());
  CAF_CHECK_EQUAL(missing(c.error(), "expected key=value"), "");

  sources.overrides = {"assistant..model=x"};
  c = load_config(sources, default_config());
  CAF_REQUIRE(!c.ok());
  CAF_CHECK_EQUAL(missing(c.error(), "dotted key"), "");
}

CAF_TEST(numbers outside their range are refused naming the key and the range) {
  struct Case {
    std::string toml;
    std::string key_and_problem;
  };
  std::vector<Case> cases = {
      // 1e300 s of grace overflowed into "no grace" when made milliseconds.
      {"[runtime]\nabort_grace_secs = 1e300\n",
       "runtime.abort_grace_secs: expected a finite number of seconds from 0 to 3600, got float 1e+300"},
      {"[runtime]\noutput_cap_bytes = 1000000000000\n",
       "runtime.output_cap_bytes: expected an integer from 64 to 16777216, got integer 1000000000000"},
      {"[runtime]\noutput_cap_bytes = 1e12\n",
       "runtime.output_cap_bytes: expected an integer from 64 to 16777216, got float 1e+12"},
      {"[runtime]\nresponse_cap_bytes = 10\n",
       "runtime.response_cap_bytes: expected an integer from 1024 to 67108864, got integer 10"},
      {"[runtime]\nspill_max_bytes = 0\n",
       "runtime.spill_max_bytes: expected an integer from 4096 to 1099511627776, got integer 0"},
      {"[runtime]\nspill_budget_bytes = 9223372036854775807\n",
       "runtime.spill_budget_bytes: expected an integer from 4096 to 1099511627776"},
      {"[runtime]\nworker_threads = 65\n",
       "runtime.worker_threads: expected an integer from 1 to 64, got integer 65"},
      {"[runtime]\nio_poll_us = 10001\n", "runtime.io_poll_us: expected an integer from 0 to 10000, got integer 10001"},
      {"[runtime]\nio_poll_us = -1\n", "runtime.io_poll_us: expected an integer from 0 to 10000, got integer -1"},
      {"[assistant.request]\nmax_backoff_secs = 1e9\n",
       "assistant.request.max_backoff_secs: expected a finite number of seconds from 0 to 3600"},
      {"[assistant.request]\nidle_timeout_secs = 86401\n",
       "assistant.request.idle_timeout_secs: expected a number of seconds from 1 to 86400, got integer 86401"},
      {"[assistant.request]\nmax_response_bytes = 0\n",
       "assistant.request.max_response_bytes: expected an integer from 1024 to 4294967296, got integer 0"},
      {"[conversation.tools.shell.spawn.lifecycle]\nawait_timeout_secs = 1e300\n",
       "conversation.tools.shell.spawn.lifecycle.await_timeout_secs: expected a finite number of "
       "seconds from 0 to 604800"},
  };
  for (auto& test : cases)
    CAF_CHECK_EQUAL(refusal_missing(test.toml, test.key_and_problem), "");
  // --cfg goes through the same readers.
  Sandbox box;
  auto sources = box.sources();
  sources.overrides = {"runtime.abort_grace_secs=1e300"};
  auto c = load_config(sources, default_config());
  CAF_REQUIRE(!c.ok());
  CAF_CHECK_EQUAL(missing(c.error(), "--cfg runtime.abort_grace_secs=1e300: runtime.abort_grace_secs: "
                                     "expected a finite number of seconds from 0 to 3600"),
                  "");
  // The limits themselves are accepted.
  sources.overrides = {"runtime.abort_grace_secs=3600", "runtime.output_cap_bytes=16777216",
                       "runtime.response_cap_bytes=2048", "runtime.spill_max_bytes=8192",
                       "runtime.spill_budget_bytes=1099511627776"};
  c = load_config(sources, default_config());
  CAF_CHECK_EQUAL(c.error(), "");
  CAF_REQUIRE(c.ok());
  CAF_CHECK_EQUAL(c->runtime.abort_grace_secs, 3600.0);
  CAF_CHECK_EQUAL(c->runtime.output_cap_bytes, 16777216u);
  CAF_CHECK_EQUAL(c->runtime.response_cap_bytes, 2048u);
  CAF_CHECK_EQUAL(c->runtime.spill_max_bytes, 8192u);
  CAF_CHECK_EQUAL(c->runtime.spill_budget_bytes, uint64_t{1} << 40);
}

CAF_TEST(every validation error names the file and the key) {
  struct Case {
    std::string toml;
    std::string key_and_problem; // expected after "<file>: "
  };
  std::string x(tool_x);
  std::vector<Case> cases = {
      {x + "run = \"sometimes\"\n",
       "conversation.tools.x.run: expected one of ask, unattended, skip, got \"sometimes\""},
      {x + "io = 3\n", "conversation.tools.x.io: expected one of pipe, pty, control, got integer 3"},
      {"[style]\nreasoning = \"dim\"\n", "style.reasoning: expected one of show, hide, got \"dim\""},
      {"[runtime]\ndaemons = [\"GradleDaemon\", \"\"]\n",
       "runtime.daemons[1]: must be a program or an argument of 1 to 256 bytes"},
      {"[runtime]\ndaemons = \"GradleDaemon\"\n", "runtime.daemons: expected an array of strings"},
      {"[style]\ncolor = true\n", "style.color: unknown key (allowed: reasoning)"},
      {x + "rnu = \"ask\"\n", "conversation.tools.x.rnu: unknown key (allowed: source, summary"},
      {"[conversation.tools.x]\nrun = \"ask\"\n",
       "conversation.tools.x.command.program: missing"},
      // A built-in's name mistyped: the built-in named.
      {"[conversation.tools.shel]\nrun = \"ask\"\n",
       "conversation.tools.shel.command.program: missing: a local tool needs command = { program = \"...\" } (or "
       "node = \"NAME\": it runs on that node); did you mean the built-in `shell`?"},
      {"[conversation.tools.x.command]\nprogram = \"echo\"\nargs = \"a b\"\n",
       "conversation.tools.x.command.args: expected an array of strings, got \"a b\""},
      {"[conversation.tools.x.command]\nprogram = \"echo\"\nargs = [\"a\", 1]\n",
       "conversation.tools.x.command.args[1]: expected a string, got integer 1"},
      {"[conversation.tools.x.command]\nprogram = \"echo\"\nshell = \"yes\"\n",
       "conversation.tools.x.command.shell: expected a boolean, got \"yes\""},
      {"[conversation.tools.x.command]\nprogram = \"echo\"\nprog = \"x\"\n",
       "conversation.tools.x.command.prog: unknown key (allowed: program, args, shell)"},
      {x + "env.HOME = 1\n", "conversation.tools.x.env.HOME: expected a string, got integer 1"},
      {x + "parameters.p.type = \"str\"\n",
       "conversation.tools.x.parameters.p.type: expected one of string, integer, number, "
       "boolean, array, object, got \"str\""},
      {x + "parameters.p.requird = true\n",
       "conversation.tools.x.parameters.p.requird: unknown key (allowed: type, description, "
       "required, enum, items, default)"},
      {x + "parameters.p = { type = \"integer\", enum = [\"a\"] }\n",
       "conversation.tools.x.parameters.p.enum: only for parameters of type string"},
      {x + "parameters.p = { type = \"string\", items = { type = \"string\" } }\n",
       "conversation.tools.x.parameters.p.items: only for parameters of type array"},
      {x + "parameters.p = { type = \"array\", items = { type = \"strin\" } }\n",
       "conversation.tools.x.parameters.p.items.type: expected one of string"},
      {x + "parameters.p = { type = \"integer\", default = \"1\" }\n",
       "conversation.tools.x.parameters.p.default: expected a value of type integer, got string"},
      {x + "parameters.p = { type = \"string\", enum = [\"a\", \"b\"], default = \"c\" }\n",
       "conversation.tools.x.parameters.p.default: string \"c\" is not one of its enum (a, b)"},
      // An empty enum read as none, allowing any value.
      {x + "parameters.p = { type = \"string\", enum = [] }\n",
       "conversation.tools.x.parameters.p.enum: an empty list allows no value; list the values allowed, or leave "
       "enum out"},
      // A value listed twice, a default a required parameter never uses, items of the wrong type.
      {x + "parameters.p = { type = \"string\", enum = [\"a\", \"b\", \"a\"] }\n",
       "conversation.tools.x.parameters.p.enum: \"a\" is listed twice; list each value once"},
      {x + "parameters.p = { type = \"string\", required = true, default = \"a\" }\n",
       "conversation.tools.x.parameters.p.default: a required parameter's default is never used (every call gives "
       "it); remove required = true, or the default"},
      {x + "parameters.p = { type = \"array\", items = { type = \"string\" }, default = [\"a\", 2] }\n",
       "conversation.tools.x.parameters.p.default: expected items of type string, got integer 2"},
      {x + "parameters.p = { type = \"string\", default = \"a\" }\nparameters.q = { type = \"string\" }\n"
           "one_of_required = [\"p\", \"q\"]\n",
       "conversation.tools.x.parameters.p.default: a parameter of one_of_required has none"},
      {x + "parameters.\"a b\" = { type = \"string\" }\n",
       "conversation.tools.x.parameters.a b: a parameter name may contain only"},
      {x + "spawn.stateful = true\nparameters.id = { type = \"string\" }\n",
       "conversation.tools.x.parameters.id: the names action, id, input, wait_ms, screen, rows and cols are reserved"},
      {x + "rows = 1\n", "conversation.tools.x.rows: expected an integer from 2 to 500, got integer 1"},
      {x + "cols = \"80\"\n", "conversation.tools.x.cols: expected an integer from 10 to 500"},
      {x + "wait_ms = 60001\n", "conversation.tools.x.wait_ms: expected an integer from 0 to 60000"},
      {x + "settle_ms = -1\n", "conversation.tools.x.settle_ms: expected an integer from 0 to 10000"},
      {x + "io = \"pty\"\nsettle_ms = 0\n",
       "conversation.tools.x.settle_ms: 0 (a wait ends at the first new output) is for tools with io = \"pipe\" or "
       "\"control\"; a terminal's waits need its output to settle: 1 or more"},
      {x + "io = \"pty\"\n",
       "conversation.tools.x.io: \"pty\" (a terminal, typed into and looked at) is for a tool that runs as a handle: "
       "set spawn.stateful = true"},
      {x + "prompt_pattern = \"(unclosed\"\n",
       "conversation.tools.x.prompt_pattern: not a valid regular expression"},
      {x + "prompt_pattern = '" + std::string(201, 'a') + "'\n",
       "conversation.tools.x.prompt_pattern: a prompt pattern may have up to 200 bytes (this one has 201)"},
      {x + "prompt_pattern = 'a{2,1001}'\n",
       "conversation.tools.x.prompt_pattern: the count `1001` is too large for a prompt pattern"},
      // libstdc++'s regex compiler overflowed on this back reference (found by fuzzing).
      {x + "prompt_pattern = '^$99e\\9999999999999999999999$'\n",
       "conversation.tools.x.prompt_pattern: the count `9999999999999999999999` is too large"},
      // ...and on this one, where `\c` takes the backslash after it (found by fuzzing).
      {x + "prompt_pattern = '\\c\\\\99777777000000000000'\n",
       "conversation.tools.x.prompt_pattern: the count `99777777000000000000` is too large"},
      {x + "spawn.actions = [\"spawn\", \"bogus\"]\n",
       "conversation.tools.x.spawn.actions[1]: expected one of spawn, fetch, apply, abort, "
       "got \"bogus\""},
      {x + "spawn.actions = [\"fetch\"]\n",
       "conversation.tools.x.spawn.actions: expected the actions to include \"spawn\""},
      {x + "spawn.stateful = 1\n",
       "conversation.tools.x.spawn.stateful: expected a boolean, got integer 1"},
      {x + "spawn.notifications.on_success = \"yes\"\n",
       "conversation.tools.x.spawn.notifications.on_success: expected a boolean, got \"yes\""},
      {x + "spawn.notifications.on_exit = true\n",
       "conversation.tools.x.spawn.notifications.on_exit: unknown key (allowed: on_success, "
       "on_failure, on_waiting, on_content)"},
      {x + "spawn.lifecycle.on_turn_end = \"later\"\n",
       "conversation.tools.x.spawn.lifecycle.on_turn_end: expected one of inquire, await, "
       "abort, got \"later\""},
      {x + "spawn.lifecycle.await_timeout_secs = -1\n",
       "conversation.tools.x.spawn.lifecycle.await_timeout_secs: expected a finite number of "
       "seconds from 0 to 604800, got integer -1"},
      {x + "spawn.persist = true\n",
       "conversation.tools.x.spawn.persist: unknown key (allowed: stateful, actions, "
       "notifications, lifecycle, permissions)"},
      {x + "spawn.permissions.fetch = \"sometimes\"\n",
       "conversation.tools.x.spawn.permissions.fetch: expected one of ask, unattended, skip, got "
       "\"sometimes\""},
      {x + "spawn.permissions.list = \"ask\"\n",
       "conversation.tools.x.spawn.permissions.list: unknown key (allowed: spawn, fetch, apply, abort)"},
      {x + "questions.confirm.anser = true\n",
       "conversation.tools.x.questions.confirm.anser: unknown key (allowed: answer, target)"},
      {x + "questions.confirm.target = \"llm\"\n",
       "conversation.tools.x.questions.confirm.target: expected one of user, assistant, got \"llm\""},
      {x + "one_of_required = [\"nope\"]\n",
       "conversation.tools.x.one_of_required: expected names of declared parameters, got "
       "\"nope\""},
      // An empty list read as none: a call could give none of them.
      {x + "one_of_required = []\n",
       "conversation.tools.x.one_of_required: an empty list names no parameter; list the parameters a call "
       "gives at least one of, or leave one_of_required out"},
      {x + "source = \"mcp\"\n",
       "conversation.tools.x.source: expected one of local, builtin, got \"mcp\""},
      {"[conversation.tools.x]\nsource = \"builtin\"\n",
       "conversation.tools.x.source: expected \"local\" (\"x\" is not a built-in tool"},
      {"[conversation.tools.shell]\ncommand = { program = \"sh\" }\n",
       "conversation.tools.shell.command: a built-in tool runs no command"},
      {"[conversation.tools.\"a b\"]\nrun = \"ask\"\n",
       "conversation.tools.a b: a tool name may contain only"},
      {"[conversation]\ntools = 5\n", "conversation.tools: expected a table, got integer 5"},
      {"[conversation.tools]\nx = \"echo\"\n", "conversation.tools.x: expected a table, got \"echo\""},
      {"[conversation]\nagents = 1\n", "conversation.agents: unknown key (allowed: tools)"},
      {"[assistant]\nprovider = \"gemini\"\n",
       "assistant.provider: expected one of scripted, openai, anthropic, got \"gemini\""},
      {"[assistant]\nmodle = \"x\"\n",
       "assistant.modle: unknown key (allowed: provider, model, base_url, api_key_env, api_version, system_prompt, inquiry_model, script, max_tokens, images, request)"},
      {"[assistant]\napi_version = \"2024-10-21&api-key=x\"\n",
       "assistant.api_version: expected an API version such as \"2024-10-21\" or \"2025-04-01-preview\" (letters, "
       "digits, '.', '-', '_'), got \"2024-10-21&api-key=x\""},
      {"[assistant]\napi_version = \"\"\n", "assistant.api_version: expected an API version"},
      {"[assistant]\napi_version = 20241021\n", "assistant.api_version: expected a string"},
      {"[assistant.request]\nmax_retries = -1\n", "assistant.request.max_retries: expected an integer from 0 to 100, got integer -1"},
      {"[assistant.request]\nidle_timeout = 5\n", "assistant.request.idle_timeout: unknown key (allowed: max_retries, base_backoff_ms, max_backoff_secs, idle_timeout_secs, max_response_bytes)"},
      {"[runtime]\noutput_cap_bytes = -5\n",
       "runtime.output_cap_bytes: expected an integer from 64 to 16777216, got integer -5"},
      {"[runtime]\nworker_threads = 0\n",
       "runtime.worker_threads: expected an integer from 1 to 64, got integer 0"},
      {"[runtime]\nabort_grace_secs = \"2s\"\n",
       "runtime.abort_grace_secs: expected a finite number of seconds from 0 to 3600, got \"2s\""},
      // NaN or an infinity would mean "never": no duration takes them.
      {"[runtime]\nabort_grace_secs = inf\n",
       "runtime.abort_grace_secs: expected a finite number of seconds from 0 to 3600, got float inf"},
      {"[runtime]\nabort_grace_secs = -1.5\n",
       "runtime.abort_grace_secs: expected a finite number of seconds from 0 to 3600, got float -1.5"},
      {"[assistant.request]\nidle_timeout_secs = nan\n",
       "assistant.request.idle_timeout_secs: expected a number of seconds from 1 to 86400, got float nan"},
      {"[conversation.tools.shell.spawn.lifecycle]\nawait_timeout_secs = -inf\n",
       "conversation.tools.shell.spawn.lifecycle.await_timeout_secs: expected a finite number of "
       "seconds from 0 to 604800, got float -inf"},
      // An address a request cannot go to is refused as it is read (a request to it
      // failed and was retried as a network that is down).
      {"[assistant]\nbase_url = \"not a url\"\n",
       "assistant.base_url: must be an http:// or https:// address with a host and no spaces, the provider's API "
       "(e.g. \"https://api.openai.com/v1\"); got \"not a url\""},
      {"[assistant]\nbase_url = \"ftp://x\"\n", "assistant.base_url: must be an http:// or https:// address"},
      {"[assistant]\nbase_url = \"http:///v1\"\n", "assistant.base_url: must be an http:// or https:// address"},
      {"[assistant]\nbase_url = \"https://:8080/v1\"\n", "assistant.base_url: must be an http:// or https:// address"},
      {"[assistant]\nbase_url = \"http://h/v 1\"\n", "assistant.base_url: must be an http:// or https:// address"},
      {"[mcp.servers.x]\nurl = \"http://\"\n", "mcp.servers.x.url: must be an http:// or https://"},
      {"[assistant]\nbase_url = \"http://u:p@/v1\"\n", "assistant.base_url: must be an http:// or https:// address"},
      {"assistant = \"openai\"\n", "assistant: expected a table, got \"openai\""},
      {"[experiment]\nname = \"x\"\n",
       "experiment: unknown key (allowed: assistant, runtime, agents, style, conversation, nodes, node, mcp)"},
      // MCP servers: over stdio or Streamable HTTP, named so that NAME__tool is a valid tool name.
      {"[mcp.servers.x]\nrun = \"unattended\"\n",
       "mcp.servers.x.command: required (or url): the server's program and its arguments"},
      {"[mcp.servers.x]\nurl = \"ftp://127.0.0.1:9/mcp\"\n", "mcp.servers.x.url: must be an http:// or https://"},
      {"[mcp.servers.x]\nurl = \"http://h/mcp\"\ncommand = [\"s\"]\n",
       "mcp.servers.x: give either command (a server over stdio) or url"},
      {"[mcp.servers.x]\nurl = \"http://h/mcp\"\nenv = {A = \"1\"}\n",
       "mcp.servers.x.env: is a started server's environment; a url server takes headers"},
      {"[mcp.servers.x]\nurl = \"http://h/mcp\"\ncwd = \"/tmp\"\n",
       "mcp.servers.x.cwd: is where a started server's process runs; a url server runs elsewhere"},
      {"[mcp.servers.x]\ncommand = [\"s\"]\nheaders = {A = \"1\"}\n",
       "mcp.servers.x.headers: are sent to a url server"},
      {"[mcp.servers.x]\nurl = \"http://h/mcp\"\nheaders = {A = 1}\n", "mcp.servers.x.headers.A: expected"},
      // Sent raw, a line break was a header of its own; a space or colon a broken one.
      {"[mcp.servers.x]\nurl = \"http://h/mcp\"\nheaders = {A = \"v\\r\\nX-Injected: 1\"}\n",
       "mcp.servers.x.headers.A: holds a line break"},
      {"[mcp.servers.x]\nurl = \"http://h/mcp\"\nheaders = {\"Bad Name:\" = \"q\"}\n",
       "mcp.servers.x.headers.Bad Name:: not a header's name"},
      {"[mcp.servers.x]\nurl = \"http://h/sse\"\ntransport = \"websocket\"\n",
       "mcp.servers.x.transport: expected one of http, sse, got \"websocket\""},
      {"[mcp.servers.x]\ncommand = [\"s\"]\ntransport = \"sse\"\n",
       "mcp.servers.x.transport: is how a url server is spoken to"},
      {"[mcp.servers.a__b]\ncommand = [\"s\"]\n", "mcp.servers.a__b: a server name may contain only"},
      {"[mcp.servers.x]\ncommand = [\"s\"]\nrun = \"always\"\n", "mcp.servers.x.run: expected one of ask"},
      {"[mcp.servers.x]\ncommand = [\"s\"]\ntimeout_secs = 0\n", "mcp.servers.x.timeout_secs: must be more than 0"},
      {"[mcp.servers.x]\ncommand = [\"s\"]\n[mcp.servers.x.tools.t]\nstateful = \"yes\"\n",
       "mcp.servers.x.tools.t.stateful: expected a boolean"},
      {"[agents]\nmax_depht = 2\n", "agents.max_depht: unknown key (allowed: max_depth, max_concurrent, max_live, max_rounds)"},
      {"[agents]\nmax_depth = 0\n", "agents.max_depth: expected"},
      {"[agents]\nmax_rounds = \"many\"\n", "agents.max_rounds: expected"},
  };
  for (auto& test : cases)
    CAF_CHECK_EQUAL(refusal_missing(test.toml, test.key_and_problem), "");
}

CAF_TEST(a relative XDG_CONFIG_HOME or HOME names no config of yours) {
  // Read from the current directory, a repository's `.cfg/jp-actors/config.toml` was
  // taken as your own config (its MCP servers started, its pass_env honoured).
  Sandbox box;
  box.user_config("[assistant]\nmodel = \"from-xdg\"\n");
  box.write(box.root / "home" / ".config" / "jp-actors" / "config.toml", "[assistant]\nmodel = \"from-home\"\n");
  auto cwd = fs::current_path();
  std::optional<std::string> home;
  if (const char* h = std::getenv("HOME"))
    home = h;
  fs::current_path(box.root);
  setenv("XDG_CONFIG_HOME", "xdg", 1);
  setenv("HOME", "home", 1);
  auto c = load_config(box.sources(), default_config());
  fs::current_path(cwd);
  if (home)
    setenv("HOME", home->c_str(), 1);
  else
    unsetenv("HOME");
  CAF_REQUIRE(c.ok());
  CAF_CHECK_NOT_EQUAL(c->assistant.model, "from-xdg");
  CAF_CHECK_NOT_EQUAL(c->assistant.model, "from-home");
  // Absolute, it is read.
  setenv("XDG_CONFIG_HOME", box.xdg.c_str(), 1);
  auto read = load_config(box.sources(), default_config());
  CAF_REQUIRE(read.ok());
  CAF_CHECK_EQUAL(read->assistant.model, "from-xdg");
}

CAF_TEST(your config that is a link to nothing or cannot be looked at is refused not skipped) {
  // Skipped, what it asks for (run = "ask") would be dropped without a word.
  Sandbox box;
  auto path = box.xdg / "jp-actors" / "config.toml";
  fs::create_directories(path.parent_path());
  fs::create_symlink(box.root / "moved.toml", path);
  auto c = load_config(box.sources(), default_config());
  CAF_REQUIRE(!c.ok());
  CAF_CHECK_EQUAL(missing(c.error(), path.string() + " is a link to " + (box.root / "moved.toml").string() +
                                       ", which does not exist: point it at your config, or remove it"),
                  "");
  // The workspace's is someone else's: a link to nothing there is no config.
  fs::remove(path);
  fs::create_directories(box.workspace / ".jp");
  fs::create_symlink(box.root / "nothing.toml", box.workspace / ".jp" / "config.toml");
  CAF_CHECK(load_config(box.sources(), default_config()).ok());
  if (::geteuid() != 0) { // root looks past permissions
    box.user_config("[assistant]\nmodel = \"m\"\n");
    fs::permissions(path.parent_path(), fs::perms::none);
    auto denied = load_config(box.sources(), default_config());
    fs::permissions(path.parent_path(), fs::perms::owner_all);
    CAF_REQUIRE(!denied.ok());
    CAF_CHECK_EQUAL(missing(denied.error(), path.string() + ": cannot be read (Permission denied)"), "");
  }
}

CAF_TEST(errors in optional locations name those files) {
  Sandbox box;
  auto user = box.user_config("[assistant]\nprovider = \"nope\"\n");
  auto c = load_config(box.sources(), default_config());
  CAF_REQUIRE(!c.ok());
  CAF_CHECK_EQUAL(missing(c.error(), user.string() + ": assistant.provider"), "");

  fs::remove(user);
  auto ws = box.workspace_config("[assistant]\nmodel = 1\n");
  c = load_config(box.sources(), default_config());
  CAF_REQUIRE(!c.ok());
  CAF_CHECK_EQUAL(missing(c.error(), ws.string() + ": assistant.model: expected a string"), "");
}

CAF_TEST(a workspace config cannot choose where jp-actors writes which secrets pass or what outlives its tools) {
  Sandbox box;
  struct Case {
    std::string toml, key;
    std::string own_extra = {}; // what your own config needs besides (the node a tool names)
  };
  std::vector<Case> cases = {
    {"[runtime]\nstate_dir = \"/home/victim\"\n", "runtime.state_dir"},
    {"[runtime]\npass_env = [\"OPENAI_API_KEY\"]\n", "runtime.pass_env"},
    {"[runtime]\ndaemons = [\"sleep\"]\n", "runtime.daemons"},
    {std::string(tool_x) + "pass_env = [\"GITHUB_TOKEN\"]\n", "conversation.tools.x.pass_env"},
    // A repository cannot send your tools, or your node token, to a machine it names.
    {"[nodes.evil]\naddress = \"127.0.0.1:9\"\n", "nodes"},
    {"[node]\nlisten = \"0.0.0.0:9\"\n", "node"},
    {std::string(tool_x) + "node = \"box\"\n", "conversation.tools.x.node", "[nodes.box]\naddress = \"127.0.0.1:9\"\n"},
    // Nor have your provider key, or any variable as the key, sent where it says.
    {"[assistant]\nbase_url = \"http://127.0.0.1:9\"\n", "assistant.base_url"},
    {"[assistant]\napi_key_env = \"AWS_SECRET_ACCESS_KEY\"\n", "assistant.api_key_env"},
    {"[assistant]\nprovider = \"anthropic\"\n", "assistant.provider"},
    {"[assistant]\nscript = \".jp/model.toml\"\n", "assistant.script"},
  };
  for (auto& test : cases) {
    auto ws = box.workspace_config(test.toml);
    auto c = load_config(box.sources(), default_config());
    CAF_REQUIRE(!c.ok());
    CAF_CHECK_EQUAL(missing(c.error(), ws.string() + ": " + test.key + ": may be set only in your own config"), "");
    // The same keys are the user's to set, in their own config.
    fs::remove(ws);
    box.user_config(test.toml + test.own_extra);
    auto own = load_config(box.sources(), default_config());
    CAF_CHECK_EQUAL(own.ok() ? "" : own.error(), "");
    fs::remove(box.xdg / "jp-actors" / "config.toml");
  }
}

CAF_TEST(a workspace config cannot change a tool your config passes secrets to) {
  // Else a repository could replace its program (or env, or run = "unattended")
  // and have your GH_TOKEN reach what it runs.
  Sandbox box;
  box.user_config("[conversation.tools.gh]\ncommand = { program = \"gh\" }\nrun = \"ask\"\n"
                  "pass_env = [\"GH_TOKEN\"]\n");
  for (auto change : {"command = { program = \"sh\", args = [\"-c\", \"echo $GH_TOKEN\"] }\n",
                      "run = \"unattended\"\n", "env = { LD_PRELOAD = \"./x.so\" }\n"}) {
    auto ws = box.workspace_config(std::string("[conversation.tools.gh]\n") + change);
    auto c = load_config(box.sources(), default_config());
    CAF_REQUIRE(!c.ok());
    CAF_CHECK_EQUAL(missing(c.error(), ws.string() + ": conversation.tools.gh: may not be changed by the "
                                                     "workspace's config: your own config passes this tool "
                                                     "secrets (pass_env: GH_TOKEN)"),
                    "");
  }
  // A tool of its own it may define, and make one of yours ask more; what
  // runtime.pass_env passes reaches yours, not its own.
  box.user_config("[runtime]\npass_env = [\"NPM_TOKEN\"]\n"
                  "[conversation.tools.gh]\ncommand = { program = \"gh\" }\npass_env = [\"GH_TOKEN\"]\n"
                  "[conversation.tools.ls]\ncommand = { program = \"ls\" }\n");
  box.workspace_config("[conversation.tools.ls]\nrun = \"skip\"\n"
                       "[conversation.tools.mine]\ncommand = { program = \"make\" }\n");
  auto c = load_config(box.sources(), default_config());
  CAF_REQUIRE_EQUAL(c.ok() ? "" : c.error(), "");
  auto passed = [&](const char* tool) {
    auto spec = make_launch_spec(*c, c->tools.at(tool), Json::object(), Json::object(), false);
    CAF_REQUIRE(spec.ok());
    return spec->env_pass;
  };
  CAF_CHECK_EQUAL(passed("gh"), (std::vector<std::string>{"NPM_TOKEN", "GH_TOKEN"}));
  CAF_CHECK_EQUAL(passed("ls"), (std::vector<std::string>{"NPM_TOKEN"}));
  CAF_CHECK(passed("mine").empty());
  // Nor does a command of yours take on the settings of the workspace's tool of that name.
  box.workspace_config("[conversation.tools.deploy]\ncommand = { program = \"true\", args = [\"x\"] }\n"
                       "run = \"unattended\"\n");
  for (auto mine : {std::string("--config"), std::string("--cfg")}) {
    auto sources = box.sources();
    if (mine == "--config")
      sources.config_files.push_back(box.write(box.root / "mine.toml", "[conversation.tools.deploy]\n"
                                                                       "command = { program = \"echo\" }\n")
                                       .string());
    else
      sources.overrides.push_back("conversation.tools.deploy.command.program=echo");
    c = load_config(sources, default_config());
    CAF_REQUIRE(!c.ok());
    CAF_CHECK_EQUAL(missing(c.error(), "conversation.tools.deploy.command: the workspace's config defines a tool "
                                       "`deploy` too"),
                    "");
  }
  box.workspace_config("[conversation.tools.ls]\nrun = \"skip\"\n"
                       "[conversation.tools.mine]\ncommand = { program = \"make\" }\n");
  // Nor does a later layer of yours pass secrets to a tool the workspace defined.
  auto sources = box.sources();
  sources.overrides.push_back("conversation.tools.mine.pass_env=[\"GH_TOKEN\"]");
  c = load_config(sources, default_config());
  CAF_REQUIRE(!c.ok());
  CAF_CHECK_EQUAL(missing(c.error(), "conversation.tools.mine.pass_env: the workspace's config defined or "
                                     "changed this tool, so it gets none of your secrets"),
                  "");
}

CAF_TEST(a workspace config may make your tools ask more but not less nor run something else) {
  Sandbox box;
  box.user_config("[conversation.tools.x]\ncommand = { program = \"echo\" }\nrun = \"ask\"\n"
                  "[conversation.tools.shell]\nrun = \"ask\"\n");
  struct Case {
    const char* toml;
    const char* error; // "" = loads
  };
  const Case cases[] = {
    {"[conversation.tools.x]\nrun = \"unattended\"\n",
     "conversation.tools.x: the workspace's config may not let a one-shot call of this tool (your own "
     "config's or built in) run with less asking than before (unattended instead of ask)"},
    {"[conversation.tools.shell]\nrun = \"unattended\"\n", "conversation.tools.shell: the workspace's config "
                                                            "may not let a one-shot call"},
    {"[conversation.tools.shell.spawn.permissions]\nspawn = \"unattended\"\n",
     "conversation.tools.shell: the workspace's config may not let `spawn` of this tool"},
    {"[conversation.tools.x]\ncommand = { program = \"sh\" }\n",
     "conversation.tools.x.command: may not be set by the workspace's config on a tool your own config or "
     "jp-actors defines"},
    {"[conversation.tools.x]\nenv = { LD_PRELOAD = \"./x.so\" }\n", "conversation.tools.x.env: may not be set"},
    {"[conversation.tools.shell.questions.q]\nanswer = true\n", "conversation.tools.shell.questions: may not be set"},
    {"[conversation.tools.shell.spawn.lifecycle]\non_turn_end = \"await\"\n",
     "conversation.tools.shell.spawn.lifecycle: may not be set"},
    {"[conversation.tools.x]\nrun = \"skip\"\nsummary = \"Echo, here\"\n", ""},
    {"[conversation.tools.shell.spawn.permissions]\napply = \"ask\"\nfetch = \"unattended\"\n", ""},
    {"[conversation.tools.mine]\ncommand = { program = \"make\" }\nrun = \"unattended\"\n", ""},
  };
  for (auto& test : cases) {
    auto ws = box.workspace_config(test.toml);
    auto c = load_config(box.sources(), default_config());
    if (!*test.error) {
      CAF_CHECK_EQUAL(c.ok() ? "" : c.error(), "");
      continue;
    }
    CAF_REQUIRE(!c.ok());
    CAF_CHECK_EQUAL(missing(c.error(), ws.string() + ": " + test.error), "");
    // Yours to set, in your own config.
    auto sources = box.sources();
    sources.config_files.push_back(box.write(box.root / "own.toml", test.toml).string());
    fs::remove(ws);
    auto own = load_config(sources, default_config());
    CAF_CHECK_EQUAL(own.ok() ? "" : own.error(), "");
  }
  // A key no tool has is named as unknown, as in your own config: not as one the
  // workspace may not set, which would read as a privilege.
  auto ws = box.workspace_config("[conversation.tools.shell]\nsumary = \"typo\"\n");
  auto typo = load_config(box.sources(), default_config());
  CAF_REQUIRE(!typo.ok());
  CAF_CHECK_EQUAL(missing(typo.error(), ws.string() + ": conversation.tools.shell.sumary: unknown key (allowed: "), "");
}

CAF_TEST(a workspace config may describe a tool your config file defines though its layer comes first) {
  // The workspace's layer is applied before --config's: a summary it gives `far` was
  // taken for a tool of its own missing its command, and jp-actors would not start.
  Sandbox box;
  box.workspace_config("[conversation.tools.far]\nsummary = \"The repository's words\"\n");
  auto sources = box.sources();
  sources.config_files.push_back(
    box.write(box.root / "own.toml", "[conversation.tools.far]\nsummary = \"Mine\"\ncommand = { program = \"echo\" }\n"
                                     "run = \"unattended\"\n")
      .string());
  auto c = load_config(sources, default_config());
  CAF_REQUIRE_EQUAL(c.ok() ? "" : c.error(), "");
  auto& far = c->tools.at("far");
  CAF_CHECK_EQUAL(far.summary, "Mine"); // later wins
  CAF_CHECK(!far.from_workspace);      // yours: it keeps what you pass it
  CAF_CHECK(far.shaped_by_workspace);  // but the repository had its say: over MCP it asks
  CAF_CHECK(!c->tools.at("shell").shaped_by_workspace);
  CAF_CHECK(far.run == run_mode::unattended);
  // It is yours as the workspace sees it too: it may not change what it runs, nor
  // let it ask less.
  for (auto* toml : {"[conversation.tools.far]\ncommand = { program = \"sh\" }\n",
                     "[conversation.tools.far]\nrun = \"unattended\"\n"}) {
    box.workspace_config(toml);
    auto refused = load_config(sources, default_config());
    CAF_CHECK(!refused.ok());
  }
  // So with --cfg defining it.
  box.workspace_config("[conversation.tools.cfgd]\nsummary = \"Theirs\"\n");
  auto by_cfg = box.sources();
  by_cfg.overrides.push_back("conversation.tools.cfgd.command={program=\"true\"}");
  auto d = load_config(by_cfg, default_config());
  CAF_CHECK_EQUAL(d.ok() ? "" : d.error(), "");
  // A tool only your file tweaks (its run) is still the workspace's to define.
  box.workspace_config("[conversation.tools.lint]\ncommand = { program = \"make\" }\n");
  auto tweak = box.sources();
  tweak.config_files.push_back(box.write(box.root / "tweak.toml", "[conversation.tools.lint]\nrun = \"skip\"\n").string());
  auto e = load_config(tweak, default_config());
  CAF_REQUIRE_EQUAL(e.ok() ? "" : e.error(), "");
  CAF_CHECK(e->tools.at("lint").from_workspace);
  CAF_CHECK(e->tools.at("lint").shaped_by_workspace);
}

CAF_TEST(a workspace config may lower the limits that bound a run but not raise them) {
  // Else a repository could make every abort of a tool ignoring SIGTERM wait an hour,
  // fill the disk with spill files or memory with responses, or run sub-agents by
  // the thousand.
  Sandbox box;
  struct Case {
    const char* toml;
    const char* key;
    const char* limit; // what the layers before it set
  };
  const Case raised[] = {
    {"[runtime]\nabort_grace_secs = 3600\n", "runtime.abort_grace_secs", "2"},
    {"[runtime]\noutput_cap_bytes = 16777216\n", "runtime.output_cap_bytes", "32768"},
    {"[runtime]\nresponse_cap_bytes = 67108864\n", "runtime.response_cap_bytes", "65536"},
    {"[runtime]\nspill_max_bytes = 1099511627776\n", "runtime.spill_max_bytes", "67108864"},
    {"[runtime]\nspill_budget_bytes = 1099511627776\n", "runtime.spill_budget_bytes", "536870912"},
    {"[agents]\nmax_concurrent = 10000\n", "agents.max_concurrent", "8"},
    {"[agents]\nmax_depth = 16\n", "agents.max_depth", "3"},
    {"[agents]\nmax_rounds = 100000\n", "agents.max_rounds", "50"},
    {"[assistant.request]\nmax_response_bytes = 4294967296\n", "assistant.request.max_response_bytes", "67108864"},
    {"[assistant.request]\nmax_retries = 100\n", "assistant.request.max_retries", "5"},
    {"[assistant.request]\nbase_backoff_ms = 600000\n", "assistant.request.base_backoff_ms", "1000"},
    {"[assistant.request]\nmax_backoff_secs = 3600\n", "assistant.request.max_backoff_secs", "60"},
    {"[assistant.request]\nidle_timeout_secs = 86400\n", "assistant.request.idle_timeout_secs", "60"},
    {"[assistant.request]\nidle_timeout_secs = 300\n", "assistant.request.idle_timeout_secs", "60"},
    // Of a built-in tool: how long a spawn waits by default (the shell's, 1000 ms).
    {"[conversation.tools.shell]\nwait_ms = 60000\n", "conversation.tools.shell.wait_ms", "1000"},
    {"[conversation.tools.shell]\nsettle_ms = 10000\n", "conversation.tools.shell.settle_ms", "100"},
  };
  for (auto& test : raised) {
    auto ws = box.workspace_config(test.toml);
    auto c = load_config(box.sources(), default_config());
    CAF_REQUIRE(!c.ok());
    CAF_CHECK_EQUAL(missing(c.error(), fmt::format("{}: {}: ", ws.string(), test.key)), "");
    CAF_CHECK_EQUAL(missing(c.error(), fmt::format("is more than the limit the layers before it set ({}, built in "
                                                   "or from your own config); a workspace's config may only lower "
                                                   "it: to raise it, set it in your own config",
                                                   test.limit)),
                    "");
    // Yours to raise, in your own config.
    fs::remove(ws);
    box.user_config(test.toml);
    auto own = load_config(box.sources(), default_config());
    CAF_CHECK_EQUAL(own.ok() ? "" : own.error(), "");
    fs::remove(box.xdg / "jp-actors" / "config.toml");
  }
  // Lowered, or kept as it was: taken.
  box.workspace_config("[runtime]\nabort_grace_secs = 1\noutput_cap_bytes = 4096\nspill_budget_bytes = 65536\n"
                       "[agents]\nmax_concurrent = 2\nmax_depth = 3\n"
                       "[assistant.request]\nmax_retries = 1\nidle_timeout_secs = 30\n"
                       "[conversation.tools.shell]\nwait_ms = 0\nsettle_ms = 50\n"
                       "[conversation.tools.mine]\ncommand = { program = \"make\" }\nwait_ms = 60000\n"
                       "limits = { file_size_mb = 8 }\n");
  auto c = load_config(box.sources(), default_config());
  CAF_REQUIRE_EQUAL(c.ok() ? "" : c.error(), "");
  CAF_CHECK_EQUAL(c->runtime.abort_grace_secs, 1.0);
  // Not past what leaves your tools their clean-up, nor a file size limit on them (a
  // write cut part-way leaves a file it rewrote cut, wherever it is).
  for (auto [toml, said] : {std::pair{"[runtime]\nabort_grace_secs = 0.5\n",
                                      "runtime.abort_grace_secs: 0.5 is below what a workspace's config may set"},
                            std::pair{"[runtime.tool_limits]\nfile_size_mb = 1\n",
                                      "runtime.tool_limits.file_size_mb: may not be set by a workspace's config"},
                            std::pair{"[conversation.tools.shell.limits]\nfile_size_mb = 1\n",
                                      "conversation.tools.shell.limits.file_size_mb: may not be set by a "
                                      "workspace's config"}}) {
    box.workspace_config(toml);
    auto refused = load_config(box.sources(), default_config());
    CAF_REQUIRE(!refused.ok());
    CAF_CHECK_EQUAL(missing(refused.error(), said), "");
  }
  CAF_CHECK_EQUAL(c->runtime.output_cap_bytes, 4096u);
  CAF_CHECK_EQUAL(c->agents.max_concurrent, 2u);
  CAF_CHECK_EQUAL(c->tools.at("shell").settle_ms, 50);
  // A workspace naming a reasoning model gets its longer silence: not a raise of its own.
  box.user_config("[assistant]\nprovider = \"openai\"\nmodel = \"gpt-4o\"\n");
  box.workspace_config("[assistant]\nmodel = \"o3\"\n");
  c = load_config(box.sources(), default_config());
  CAF_REQUIRE_EQUAL(c.ok() ? "" : c.error(), "");
  CAF_CHECK_EQUAL(idle_timeout_for(c->assistant), 300);
  fs::remove(box.xdg / "jp-actors" / "config.toml");
  // The limit is what your own config set: up to it, not past it.
  box.user_config("[runtime]\nabort_grace_secs = 10\n");
  box.workspace_config("[runtime]\nabort_grace_secs = 10\n");
  c = load_config(box.sources(), default_config());
  CAF_CHECK_EQUAL(c.ok() ? "" : c.error(), "");
  auto ws = box.workspace_config("[runtime]\nabort_grace_secs = 11\n");
  c = load_config(box.sources(), default_config());
  CAF_REQUIRE(!c.ok());
  CAF_CHECK_EQUAL(missing(c.error(), ws.string() + ": runtime.abort_grace_secs: 11 is more than the limit the "
                                                   "layers before it set (10,"),
                  "");
  // A later layer of yours raises it past the workspace's.
  auto sources = box.sources();
  box.workspace_config("[runtime]\nabort_grace_secs = 1\n");
  sources.overrides.push_back("runtime.abort_grace_secs=30");
  c = load_config(sources, default_config());
  CAF_REQUIRE_EQUAL(c.ok() ? "" : c.error(), "");
  CAF_CHECK_EQUAL(c->runtime.abort_grace_secs, 30.0);
  // A workspace that raises one stands in the way of no command whose --cfg or
  // --config sets it, as the refusal says to (both were refused at the workspace's
  // layer, before they came).
  fs::remove(box.xdg / "jp-actors" / "config.toml");
  box.workspace_config("[runtime]\nabort_grace_secs = 5\n");
  c = load_config(sources, default_config());
  CAF_REQUIRE_EQUAL(c.ok() ? "" : c.error(), "");
  CAF_CHECK_EQUAL(c->runtime.abort_grace_secs, 30.0);
  auto by_file = box.sources();
  auto own_file = box.write(box.root / "own.toml", "[runtime]\nabort_grace_secs = 10\n");
  by_file.config_files.push_back(own_file.string());
  c = load_config(by_file, default_config());
  CAF_REQUIRE_EQUAL(c.ok() ? "" : c.error(), "");
  CAF_CHECK_EQUAL(c->runtime.abort_grace_secs, 10.0);
  // A later layer that sets another key leaves the raise refused.
  auto other = box.sources();
  other.overrides.push_back("runtime.output_cap_bytes=1000");
  c = load_config(other, default_config());
  CAF_REQUIRE(!c.ok());
  CAF_CHECK_EQUAL(missing(c.error(), "runtime.abort_grace_secs: 5 is more than the limit"), "");
  // A file your --config names is read once, though applied twice (a pipe's second
  // read would be empty, and the raise it sets refused as the workspace's).
  int p[2];
  CAF_REQUIRE_EQUAL(::pipe(p), 0);
  const char raise[] = "[runtime]\nabort_grace_secs = 20\n";
  CAF_CHECK_EQUAL(::write(p[1], raise, sizeof raise - 1), static_cast<ssize_t>(sizeof raise - 1));
  ::close(p[1]);
  auto piped = box.sources();
  piped.config_files.push_back("/proc/self/fd/" + std::to_string(p[0]));
  c = load_config(piped, default_config());
  ::close(p[0]);
  CAF_REQUIRE_EQUAL(c.ok() ? "" : c.error(), "");
  CAF_CHECK_EQUAL(c->runtime.abort_grace_secs, 20.0);
}

CAF_TEST(tool limits are read with their ranges and a workspace may set or lower them but not raise them) {
  Sandbox box;
  box.user_config("[runtime.tool_limits]\nmemory_mb = 512\nprocesses = 2000\ncpu_secs = 600\n"
                  "file_size_mb = 1024\nopen_files = 1024\n");
  auto c = load_config(box.sources(), default_config());
  CAF_REQUIRE_EQUAL(c.ok() ? "" : c.error(), "");
  CAF_CHECK(c->runtime.tool_limits == (ToolLimits{512, 2000, 600, 1024, 1024}));
  CAF_CHECK(!default_config().runtime.tool_limits.any()); // none unless set
  // --cfg sets one as any other key.
  auto sources = box.sources();
  sources.overrides.push_back("runtime.tool_limits.cpu_secs=60");
  c = load_config(sources, default_config());
  CAF_REQUIRE_EQUAL(c.ok() ? "" : c.error(), "");
  CAF_CHECK_EQUAL(c->runtime.tool_limits.cpu_secs, 60u);
  // Out of range, of the wrong type or unknown: refused, naming the key and what is allowed.
  const std::pair<const char*, const char*> bad[] = {
    {"memory_mb = 8", "runtime.tool_limits.memory_mb: expected an integer from 16 to 16777216"},
    {"open_files = 2", "runtime.tool_limits.open_files: expected an integer from 8 to 1048576"},
    {"processes = 0", "runtime.tool_limits.processes: expected an integer from 1 to 4194304"},
    {"cpu_secs = 1.5", "runtime.tool_limits.cpu_secs: expected an integer from 1 to 31622400"},
    {"memory = 512", "runtime.tool_limits.memory: unknown key (allowed: "},
  };
  for (auto [toml, error] : bad)
    CAF_CHECK_EQUAL(refusal_missing(fmt::format("[runtime.tool_limits]\n{}\n", toml), error), "");
  fs::remove(box.xdg / "jp-actors" / "config.toml");
  // A workspace may set a limit you left unset, and lower one you set...
  box.workspace_config("[runtime.tool_limits]\nmemory_mb = 256\n");
  c = load_config(box.sources(), default_config());
  CAF_REQUIRE_EQUAL(c.ok() ? "" : c.error(), "");
  CAF_CHECK_EQUAL(c->runtime.tool_limits.memory_mb, 256u);
  box.user_config("[runtime.tool_limits]\nmemory_mb = 512\nopen_files = 1024\n");
  c = load_config(box.sources(), default_config());
  CAF_REQUIRE_EQUAL(c.ok() ? "" : c.error(), "");
  CAF_CHECK_EQUAL(c->runtime.tool_limits.memory_mb, 256u);
  CAF_CHECK_EQUAL(c->runtime.tool_limits.open_files, 1024u);
  // ... but not raise one.
  auto ws = box.workspace_config("[runtime.tool_limits]\nopen_files = 4096\n");
  c = load_config(box.sources(), default_config());
  CAF_REQUIRE(!c.ok());
  CAF_CHECK_EQUAL(missing(c.error(), ws.string() + ": runtime.tool_limits.open_files: 4096 is more than the limit "
                                                   "the layers before it set (1024,"),
                  "");
}

CAF_TEST(a tool s own limits apply within the runtime s and a workspace may lower those of your tools) {
  Sandbox box;
  box.user_config("[runtime.tool_limits]\nmemory_mb = 1024\ncpu_secs = 600\n"
                  "[conversation.tools.shell.limits]\nmemory_mb = 256\nopen_files = 128\n"
                  "[conversation.tools.build]\ncommand = { program = \"make\" }\nrun = \"unattended\"\n"
                  "[conversation.tools.build.limits]\nmemory_mb = 4096\n");
  auto c = load_config(box.sources(), default_config());
  CAF_REQUIRE_EQUAL(c.ok() ? "" : c.error(), "");
  CAF_CHECK(c->tools.at("shell").limits == (ToolLimits{256, 0, 0, 0, 128}));
  // The lower of the two for each: the runtime's bound every tool, a tool's own tighten it.
  auto shell = make_launch_spec(*c, c->tools.at("shell"), Json::object().set("command", "true"), Json::object(), false);
  CAF_REQUIRE(shell.ok());
  CAF_CHECK(shell->limits == (ToolLimits{256, 0, 600, 0, 128}));
  auto build = make_launch_spec(*c, c->tools.at("build"), Json::object(), Json::object(), false);
  CAF_REQUIRE(build.ok());
  CAF_CHECK(build->limits == (ToolLimits{1024, 0, 600, 0, 0}));
  // A bad one is named with its tool.
  auto ws = box.workspace_config("[conversation.tools.shell.limits]\ncpu_secs = 0\n");
  auto bad = load_config(box.sources(), default_config());
  CAF_REQUIRE(!bad.ok());
  CAF_CHECK_EQUAL(missing(bad.error(), "conversation.tools.shell.limits.cpu_secs: expected an integer from 1 to"), "");
  // A workspace may set or lower the limits of your tools (the other keys it may not
  // set there still refused), not raise them.
  box.workspace_config("[conversation.tools.shell.limits]\nmemory_mb = 64\nprocesses = 500\n");
  c = load_config(box.sources(), default_config());
  CAF_REQUIRE_EQUAL(c.ok() ? "" : c.error(), "");
  CAF_CHECK(c->tools.at("shell").limits == (ToolLimits{64, 500, 0, 0, 128}));
  ws = box.workspace_config("[conversation.tools.shell.limits]\nopen_files = 1024\n");
  bad = load_config(box.sources(), default_config());
  CAF_REQUIRE(!bad.ok());
  CAF_CHECK_EQUAL(missing(bad.error(), ws.string() + ": conversation.tools.shell.limits.open_files: 1024 is more "
                                                     "than the limit the layers before it set (128,"),
                  "");
  ws = box.workspace_config("[conversation.tools.build]\nenv = { CC = \"evil\" }\n"
                            "[conversation.tools.build.limits]\nmemory_mb = 64\n");
  bad = load_config(box.sources(), default_config());
  CAF_REQUIRE(!bad.ok());
  CAF_CHECK_EQUAL(missing(bad.error(), "conversation.tools.build.env: may not be set by the workspace's config"), "");
  fs::remove(ws);
  // Limits bind processes started here: none on a built-in that starts none, nor on
  // a node's tool (the node's own config sets its limits).
  const std::pair<const char*, const char*> nowhere[] = {
    {"[conversation.tools.await.limits]\nmemory_mb = 64\n", "conversation.tools.await.limits: `await` starts no process"},
    {"[nodes.lab]\naddress = \"127.0.0.1:7000\"\n[conversation.tools.far]\nnode = \"lab\"\n"
     "[conversation.tools.far.limits]\nmemory_mb = 64\n",
     "conversation.tools.far.limits: a tool that runs on a node gets the limits of the node's own config"},
  };
  for (auto [toml, error] : nowhere)
    CAF_CHECK_EQUAL(refusal_missing(toml, error), "");
}

CAF_TEST(a stdio MCP server s limits are read as a tool s and refused on a url server) {
  Sandbox box;
  box.user_config("[mcp.servers.s]\ncommand = [\"srv\"]\n[mcp.servers.s.limits]\nmemory_mb = 4096\ncpu_secs = 86400\n");
  auto c = load_config(box.sources(), default_config());
  CAF_REQUIRE_EQUAL(c.ok() ? "" : c.error(), "");
  CAF_CHECK(c->mcp_servers.at("s").limits == (ToolLimits{4096, 0, 86400, 0, 0}));
  const std::pair<const char*, const char*> bad[] = {
    {"[mcp.servers.s]\ncommand = [\"srv\"]\n[mcp.servers.s.limits]\ncpu_secs = 0\n",
     "mcp.servers.s.limits.cpu_secs: expected an integer from 1 to 31622400"},
    {"[mcp.servers.s]\ncommand = [\"srv\"]\n[mcp.servers.s.limits]\nmemory = 64\n",
     "mcp.servers.s.limits.memory: unknown key (allowed: memory_mb, processes, cpu_secs, file_size_mb, open_files)"},
    {"[mcp.servers.far]\nurl = \"http://127.0.0.1:9/mcp\"\n[mcp.servers.far.limits]\nmemory_mb = 64\n",
     "mcp.servers.far.limits: bind a server's process that jp-actors starts (command); a url server runs "
     "elsewhere, under its own"},
  };
  for (auto [toml, error] : bad)
    CAF_CHECK_EQUAL(refusal_missing(toml, error), "");
}

CAF_TEST(a workspace config cannot tune how this machine runs its threads) {
  // Polling spins a core; neither is a limit to lower, both are about this machine.
  Sandbox box;
  for (auto [toml, key] : {std::pair{"[runtime]\nio_poll_us = 10000\n", "runtime.io_poll_us"},
                           std::pair{"[runtime]\nio_poll_us = 0\n", "runtime.io_poll_us"},
                           std::pair{"[runtime]\nworker_threads = 64\n", "runtime.worker_threads"}}) {
    auto ws = box.workspace_config(toml);
    auto c = load_config(box.sources(), default_config());
    CAF_REQUIRE(!c.ok());
    CAF_CHECK_EQUAL(missing(c.error(), ws.string() + ": " + key + ": may be set only in your own config"), "");
    fs::remove(ws);
    box.user_config(toml);
    auto own = load_config(box.sources(), default_config());
    CAF_CHECK_EQUAL(own.ok() ? "" : own.error(), "");
    fs::remove(box.xdg / "jp-actors" / "config.toml");
  }
}

CAF_TEST(a placeholder must name a declared parameter or an answer) {
  struct Case {
    const char* toml;
    const char* error; // "" = loads
  };
  const Case cases[] = {
    {"[conversation.tools.clean]\ncommand = { program = \"rm\", args = [\"-rf\", \"build/{{tool.arguments.subdir}}\"] }\n"
     "parameters.sub = { type = \"string\" }\n",
     "conversation.tools.clean.command.args[1]: `{{tool.arguments.subdir}}` names no declared parameter "
     "(declared: sub); declare it under conversation.tools.clean.parameters"},
    // A field of a string: empty at every call (`rm -rf build/`).
    {"[conversation.tools.clean]\ncommand = { program = \"rm\", args = [\"-rf\", \"build/{{tool.arguments.dir.name}}\"] }\n"
     "parameters.dir = { type = \"string\" }\n",
     "conversation.tools.clean.command.args[1]: `{{tool.arguments.dir.name}}` names a field of parameter dir, a "
     "string, which has no fields"},
    {"[conversation.tools.t]\ncommand = { program = \"x\", args = [\"{{tool.arguments.o.name}}\"] }\n"
     "parameters.o = { type = \"object\" }\n",
     ""},
    {"[conversation.tools.t]\ncommand = { program = \"x\" }\nenv = { A = \"{{tool.oops}}\" }\n",
     "conversation.tools.t.env.A: `{{tool.oops}}` is not a placeholder (expected {{tool.arguments.NAME}} or "
     "{{tool.answers.ID}})"},
    {"[conversation.tools.t]\ncommand = { program = \"x\" }\ncwd = \"{{tool.argument.x}}\"\n",
     "conversation.tools.t.cwd: `{{tool.argument.x}}` is not a placeholder"},
    {"[conversation.tools.t]\ncommand = { program = \"x\", args = [\"{{tool.argumnts.x}}\"] }\n"
     "parameters.x = { type = \"string\" }\n",
     "conversation.tools.t.command.args[0]: `{{tool.argumnts.x}}` is not a placeholder"},
    {"[conversation.tools.t]\ncommand = { program = \"x\", args = [\"{{tool.arguments.x\"] }\n",
     "conversation.tools.t.command.args[0]: unterminated `{{`"},
    {"[conversation.tools.t]\ncommand = { program = \"x\", args = [\"{{{{ tool.arguments.x\"] }\n",
     "conversation.tools.t.command.args[0]: unterminated `{{`"},
    // One that looks like a placeholder mistyped is refused, not passed as text.
    {"[conversation.tools.t]\ncommand = { program = \"rm\", args = [\"-rf\", \"build/{{arguments.dir}}\"] }\n",
     "conversation.tools.t.command.args[1]: `{{arguments.dir}}` is not a placeholder and would be passed as it is "
     "(a placeholder is {{tool.arguments.NAME}} or {{tool.answers.ID}}; any other `{{` is literal text)"},
    {"[conversation.tools.t]\ncommand = { program = \"x\" }\nenv = { A = \"{{Tool.arguments.x}}\" }\n",
     "conversation.tools.t.env.A: `{{Tool.arguments.x}}` is not a placeholder"},
    {"[conversation.tools.t]\ncommand = { program = \"echo {{\\n tool.answers.a}}\", shell = true }\n",
     "conversation.tools.t.command.program: `{{\n tool.answers.a}}` is not a placeholder"},
    {"[conversation.tools.t]\ncommand = { program = \"x\", args = [\"{{args.a}}\", \"{{tools.arguments.a}}\"] }\n",
     "conversation.tools.t.command.args[0]: `{{args.a}}` is not a placeholder"},
    {"[conversation.tools.t]\ncommand = { program = \"x\", args = [\"{{tools.arguments.a}}\"] }\n",
     "conversation.tools.t.command.args[0]: `{{tools.arguments.a}}` is not a placeholder"},
    // A declared parameter's bare name.
    {"[conversation.tools.t]\ncommand = { program = \"x\", args = [\"{{tool.arguments.dir}}\", \"{{ dir }}\"] }\n"
     "parameters.dir = { type = \"string\" }\n",
     "conversation.tools.t.command.args[1]: `{{dir}}` is not a placeholder and would be passed as it is; parameter "
     "dir's is {{tool.arguments.dir}}"},
    // Any other {{ is the program's own template, passed as it is.
    {"[conversation.tools.t]\ncommand = { program = \"docker\", args = [\"ps\", \"--format\", \"{{.Names}}\", "
     "\"{{\"] }\nenv = { A = \"{{oops}}\" }\ncwd = \"{{ .dir }}\"\n",
     ""},
    {"[conversation.tools.t]\ncommand = { program = \"docker ps --format '{{.Names}}' {{range .}}\", "
     "shell = true }\n",
     ""},
    // A template's keyword is one even where a parameter has its name.
    {"[conversation.tools.t]\ncommand = { program = \"docker\", args = [\"ps\", \"--format\", "
     "\"{{range .}}{{.Names}}{{end}}\", \"{{tool.arguments.end}}\"] }\nparameters.end = { type = \"string\" }\n",
     ""},
    {"[conversation.tools.t]\ncommand = { program = \"{{tool.arguments.p}}\" }\n",
     "conversation.tools.t.command.program: `{{tool.arguments.p}}` names no declared parameter (none is declared)"},
    {"[conversation.tools.t]\ncommand = { program = \"x\", args = [\"{{ tool.arguments.o.level }}\", "
     "\"{{tool.answers.confirm}}\"] }\nparameters.o = { type = \"object\" }\n",
     ""},
  };
  for (auto& test : cases) {
    auto c = apply_config_text(default_config(), test.toml, "c.toml");
    if (!*test.error) {
      CAF_CHECK_EQUAL(c.ok() ? "" : c.error(), "");
      continue;
    }
    CAF_REQUIRE(!c.ok());
    CAF_CHECK_EQUAL(missing(c.error(), std::string("c.toml: ") + test.error), "");
  }
  // A later layer may declare what an earlier one names.
  Sandbox box;
  auto user = box.user_config("[conversation.tools.say]\ncommand = { program = \"echo\", args = [\"{{tool.arguments.text}}\"] }\n");
  auto sources = box.sources();
  sources.overrides.push_back("conversation.tools.say.parameters.text={type=\"string\"}");
  auto c = load_config(sources, default_config());
  CAF_CHECK_EQUAL(c.ok() ? "" : c.error(), "");
  // Else the error names the source that set the tool last.
  c = load_config(box.sources(), default_config());
  CAF_REQUIRE(!c.ok());
  CAF_CHECK_EQUAL(missing(c.error(), user.string() + ": conversation.tools.say.command.args[0]: "
                                                     "`{{tool.arguments.text}}` names no declared parameter"),
                  "");
}

CAF_TEST(a node address that cannot be reached is refused at load saying how to write it) {
  // Told at the first call of a tool there, it was found only then.
  CAF_CHECK_EQUAL(refusal_missing("[nodes.box]\naddress = \"127.0.0.1\"\n",
                                  "nodes.box.address: expected host:port (e.g. 127.0.0.1:4242, [::1]:4242), got "
                                  "\"127.0.0.1\": no port"),
                  "");
  CAF_CHECK_EQUAL(refusal_missing("[nodes.box]\naddress = \"127.0.0.1:0\"\n",
                                  "nodes.box.address: port 0 names no node"),
                  "");
  // [node] listen too, read as `jp-actors node` reads it: `tools` and `nodes ls` took it.
  CAF_CHECK_EQUAL(refusal_missing("[node]\nlisten = \"127.0.0.1:99999\"\n",
                                  "node.listen: expected host:port (e.g. 127.0.0.1:4242, [::1]:4242), got "
                                  "\"127.0.0.1:99999\": the port is not a number from 0 to 65535"),
                  "");
  CAF_CHECK_EQUAL(refusal_missing("[node]\nlisten = \"garbage\"\n", "node.listen: expected host:port"), "");
  CAF_CHECK_EQUAL(refusal_missing("[node]\nlisten = \"\"\n", "node.listen: expected host:port"), "");
  Sandbox box;
  auto sources = box.sources();
  sources.overrides.push_back("node.listen=\"4242\""); // a bare port, as the node takes it
  auto bare = load_config(sources, default_config());
  CAF_CHECK_EQUAL(bare.ok() ? "" : bare.error(), "");
}

CAF_TEST(a node without an address is said to have none when it is reached) {
  // A later config may give it: told where it is used, as missing, not as "no port".
  Sandbox box;
  auto sources = box.sources();
  sources.config_files.push_back(box.write(box.root / "own.toml", "[nodes.box]\n").string());
  auto c = load_config(sources, default_config());
  CAF_REQUIRE(c.ok());
  auto reach = node_address_to_reach(c->nodes.at("box"));
  CAF_REQUIRE(!reach.ok());
  CAF_CHECK_EQUAL(missing(reach.error(), "nodes.box.address is not set: give [nodes.box] address = \"HOST:PORT\""),
                  "");
}

CAF_TEST(a tool on a node nobody configured is refused at load naming the nodes there are) {
  Sandbox box;
  auto load = [&](const std::string& toml) {
    auto sources = box.sources();
    sources.config_files.push_back(box.write(box.root / "own.toml", toml).string());
    return load_config(sources, default_config());
  };
  auto none = load("[conversation.tools.far]\nnode = \"nosuch\"\n");
  CAF_REQUIRE(!none.ok());
  CAF_CHECK_EQUAL(missing(none.error(), "conversation.tools.far.node = \"nosuch\": no node of that name is configured "
                                        "(add [nodes.nosuch] address = \"host:port\"; configured: none)"),
                  "");
  auto other = load("[nodes.lab]\naddress = \"127.0.0.1:7000\"\n[conversation.tools.far]\nnode = \"box\"\n");
  CAF_REQUIRE(!other.ok());
  CAF_CHECK_EQUAL(missing(other.error(), "configured: lab)"), "");
  // Its node in a later layer than the tool (here, --cfg) is in by the check.
  auto sources = box.sources();
  sources.config_files.push_back(box.write(box.root / "own.toml", "[conversation.tools.far]\nnode = \"lab\"\n").string());
  sources.overrides.push_back("nodes.lab.address=\"127.0.0.1:7000\"");
  auto layered = load_config(sources, default_config());
  CAF_CHECK_EQUAL(layered.ok() ? "" : layered.error(), "");
  // A text applied alone is not refused: an embedder may add the node after it.
  auto partial = apply_config_text(default_config(), "[conversation.tools.far]\nnode = \"gpu\"\n", "c.toml");
  CAF_CHECK_EQUAL(partial.ok() ? "" : partial.error(), "");
}

CAF_TEST(node heartbeats must come before the timeout that loses a silent peer) {
  for (auto* toml : {"[node]\nheartbeat_secs = 10\n", "[node]\nheartbeat_secs = 0\n",
                     "[node]\nheartbeat_secs = 5\ntimeout_secs = 5\n",
                     "[node]\nheartbeat_secs = 0\ntimeout_secs = 0\n"}) {
    auto c = apply_config_text(default_config(), toml, "c.toml");
    CAF_REQUIRE(!c.ok());
    CAF_CHECK_EQUAL(missing(c.error(), "must be above 0 and below node.timeout_secs"), "");
  }
  for (auto* toml : {"[node]\nheartbeat_secs = 10\ntimeout_secs = 30\n", "[node]\ntimeout_secs = 1.5\n"}) {
    auto c = apply_config_text(default_config(), toml, "c.toml");
    CAF_CHECK_EQUAL(c.ok() ? "" : c.error(), "");
  }
}

CAF_TEST(a call may not choose through a tool env the code the tool runs) {
  const std::pair<const char*, const char*> cases[] = {
    {"env = { LD_PRELOAD = \"{{tool.arguments.x}}\" }\n",
     "conversation.tools.t.env.LD_PRELOAD: a placeholder here lets a call choose code run by the dynamic loader"},
    {"env = { GIT_SSH_COMMAND = \"ssh -i {{tool.arguments.x}}\" }\n",
     "conversation.tools.t.env.GIT_SSH_COMMAND: a placeholder here lets a call choose code run by git"},
    {"env = { GIT_CONFIG_VALUE_0 = \"{{tool.arguments.x}}\" }\n", "env.GIT_CONFIG_VALUE_0: a placeholder here"},
    {"env = { PYTHONPATH = \"lib:{{tool.arguments.x}}\" }\n", "code run by Python"},
    {"env = { NODE_OPTIONS = \"{{tool.arguments.x}}\" }\n", "code run by Node.js"},
    {"env = { PATH = \"{{tool.arguments.x}}/bin\" }\n", "code run by every program that looks a command up"},
    {"env = { \"BASH_FUNC_ls%%\" = \"{{tool.arguments.x}}\" }\n", "code run by bash"},
    {"env = { npm_config_script_shell = \"{{tool.arguments.x}}\" }\n", "code run by npm"},
    {"env = { CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_RUNNER = \"{{tool.arguments.x}}\" }\n", "code run by cargo"},
    {"env = { MAKEFILES = \"{{tool.arguments.x}}\" }\n", "code run by make (makefiles it reads first)"},
    {"env = { CMAKE_CXX_COMPILER_LAUNCHER = \"{{tool.arguments.x}}\" }\n", "code run by CMake"},
    {"env = { CMAKE_TOOLCHAIN_FILE = \"{{tool.arguments.x}}\" }\n", "code run by CMake (a script it runs)"},
    {"env = { LD = \"{{tool.arguments.x}}\" }\n", "code run by build systems"},
    {"env = { RUSTUP_TOOLCHAIN = \"{{tool.arguments.x}}\" }\n", "code run by rustup"},
    // A review ran --eval=$(shell ...) through GNUMAKEFLAGS, which make reads as MAKEFLAGS.
    {"env = { GNUMAKEFLAGS = \"{{tool.arguments.x}}\" }\n", "code run by make"},
    {"env = { CGO_LDFLAGS = \"{{tool.arguments.x}}\" }\n", "code run by go (cgo's linker: -wrapper)"},
    {"env = { RSYNC_RSH = \"{{tool.arguments.x}}\" }\n", "code run by rsync"},
    {"env = { UV_INDEX_URL = \"{{tool.arguments.x}}\" }\n", "code run by uv"},
    {"env = { EDITOR = \"{{tool.answers.e}}\" }\n", "env.EDITOR: a placeholder here"},
    // Values such variables take from the config, and arguments in others, load.
    {"env = { LD_PRELOAD = \"./x.so\", PATH = \"/usr/bin\" }\n", ""},
    {"env = { GIT_AUTHOR_NAME = \"{{tool.arguments.x}}\", LANG = \"{{tool.arguments.x}}\" }\n", ""},
    {"env = { CARGO_TARGET_DIR = \"{{tool.arguments.x}}\" }\n", ""},
    {"env = { CMAKE_BUILD_TYPE = \"{{tool.arguments.x}}\" }\n", ""},
    // A parameter the call is held to (a number, an enum of the config's values) chooses nothing.
    {"parameters.jobs = { type = \"integer\" }\nparameters.cc = { type = \"string\", enum = [\"gcc\", \"clang\"] }\n"
     "env = { MAKEFLAGS = \"-j{{tool.arguments.jobs}}\", CC = \"{{tool.arguments.cc}}\" }\n", ""},
    {"parameters.jobs = { type = \"integer\" }\nenv = { MAKEFLAGS = \"-j{{tool.arguments.jobs}} {{tool.arguments.x}}\" }\n",
     "env.MAKEFLAGS: a placeholder here"},
  };
  for (auto& [env, error] : cases) {
    auto toml = std::string("[conversation.tools.t]\ncommand = { program = \"git\" }\n"
                            "parameters.x = { type = \"string\" }\n") + env;
    auto c = apply_config_text(default_config(), toml, "c.toml");
    if (!*error) {
      CAF_CHECK_EQUAL(c.ok() ? "" : c.error(), "");
      continue;
    }
    CAF_REQUIRE(!c.ok());
    CAF_CHECK_EQUAL(missing(c.error(), error), "");
  }
  // A shell template's assignment is the same variable.
  for (auto* program : {"GIT_SSH_COMMAND={{tool.arguments.x}} git fetch", "export NODE_OPTIONS={{tool.arguments.x}}; node a.js",
                        "MAKEFILES={{tool.arguments.x}} make", "GNUMAKEFLAGS={{tool.arguments.x}} make -- all",
                        "PYTHONPATH=\\\"{{tool.arguments.x}}\\\" python3 -m t"}) {
    auto toml = fmt::format("[conversation.tools.t]\ncommand = {{ program = \"{}\", shell = true }}\n"
                            "parameters.x = {{ type = \"string\" }}\n", program);
    auto c = apply_config_text(default_config(), toml, "c.toml");
    CAF_REQUIRE(!c.ok());
    CAF_CHECK_EQUAL(missing(c.error(), "a variable that chooses code a program runs"), "");
  }
}

CAF_TEST(a config is refused what a built-in tool would ignore and env names that are no names) {
  const std::pair<const char*, const char*> cases[] = {
    {"[conversation.tools.shell]\nenv = { FOO = \"1\" }\n", "conversation.tools.shell.env: a built-in tool takes no env"},
    {"[conversation.tools.shell]\ncwd = \"sub\"\n", "conversation.tools.shell.cwd: a built-in tool takes no cwd"},
    {"[conversation.tools.shell]\ncommand = { shell = true, args = [\"x\"] }\n",
     "conversation.tools.shell.command: a built-in tool runs no command"},
    {"[conversation.tools.t]\ncommand = { program = \"x\" }\nenv = { \"HOME=/evil\" = \"x\" }\n",
     "conversation.tools.t.env.HOME=/evil: \"HOME=/evil\" is not a variable's name"},
    {"[conversation.tools.t]\ncommand = { program = \"x\" }\nenv = { \"FOO BAR\" = \"1\" }\n",
     "conversation.tools.t.env.FOO BAR: \"FOO BAR\" is not a variable's name"},
    {"[conversation.tools.t]\ncommand = { program = \"x\" }\nenv = { \"A\\rB\" = \"1\" }\n",
     "conversation.tools.t.env.A\rB: \"A\\rB\" is not a variable's name"},
    {"[mcp.servers.m]\ncommand = [\"x\"]\nenv = { \"\" = \"1\" }\n", "mcp.servers.m.env.: \"\" is not a variable's name"},
    // Offered as the built-in (its description, its `command` parameter), run as `ls`.
    {"[conversation.tools.shell]\nsource = \"local\"\ncommand = { program = \"ls\" }\n",
     "conversation.tools.shell.source: \"local\" with a command under `shell`, a built-in tool's name"},
    {"[conversation.tools.await]\nsource = \"local\"\ncommand = { program = \"ls\" }\n",
     "conversation.tools.await.source: \"local\" with a command under `await`"},
    // A NUL cut what ran: `echo\0rm` ran echo, an argument `a\0b` was `a`.
    {"[conversation.tools.t]\ncommand = { program = \"echo\\u0000rm\" }\n",
     "conversation.tools.t.command.program: holds a NUL byte"},
    {"[conversation.tools.t]\ncommand = { program = \"echo\", args = [\"a\\u0000b\"] }\n",
     "conversation.tools.t.command.args[0]: holds a NUL byte"},
    {"[conversation.tools.t]\ncommand = { program = \"x\" }\nenv = { A = \"x\\u0000y\" }\n",
     "conversation.tools.t.env.A: holds a NUL byte"},
    {"[runtime]\nstate_dir = \"a\\u0000b\"\n", "runtime.state_dir: holds a NUL byte"},
    {"[conversation.tools.t]\ncommand = { program = \"x\", args = [\"{{tool.arguments.d}}\"] }\n"
     "parameters.d = { type = \"string\", default = \"build\\u0000/..\" }\n",
     "conversation.tools.t.parameters.d.default: holds a NUL byte"},
    {"[conversation.tools.t]\ncommand = { program = \"x\" }\nquestions.q = { answer = \"a\\u0000b\" }\n",
     "conversation.tools.t.questions.q.answer: holds a NUL byte"},
    // 0 ended every request at once (retried, then failed), a workspace's too.
    // A glob passed nothing: whoever wrote it believed the token was passed.
    {"[runtime]\npass_env = [\"GITHUB_*\"]\n", "runtime.pass_env[0]: \"GITHUB_*\" is not a variable's name"},
    {"[conversation.tools.t]\ncommand = { program = \"x\" }\npass_env = [\"A\", \"A=B\"]\n",
     "conversation.tools.t.pass_env[1]: \"A=B\" is not a variable's name"},
    {"[assistant]\napi_key_env = \"MY KEY\"\n", "assistant.api_key_env: \"MY KEY\" is not a variable's name"},
    // [] was taken as all four actions; a fixed answer's target was never asked.
    {"[conversation.tools.t]\ncommand = { program = \"x\" }\nspawn = { stateful = true, actions = [] }\n",
     "conversation.tools.t.spawn.actions: expected the actions to include \"spawn\""},
    {"[conversation.tools.t]\ncommand = { program = \"x\" }\nquestions.q = { answer = true, target = \"user\" }\n",
     "conversation.tools.t.questions.q.target: a question with a fixed `answer` is asked of nobody"},
    // Settings of a process on a built-in that starts none.
    {"[conversation.tools.await]\nsettle_ms = 5\n", "conversation.tools.await.settle_ms: `await` starts no process"},
    {"[conversation.tools.await]\nio = \"pty\"\n", "conversation.tools.await.io: `await` starts no process"},
    {"[assistant.request]\nidle_timeout_secs = 0\n", "assistant.request.idle_timeout_secs: expected a number of "
                                                     "seconds from 1 to 86400"},
    {"[assistant.request]\nidle_timeout_secs = 0.000001\n", "assistant.request.idle_timeout_secs: expected a "
                                                            "number of seconds from 1 to 86400"},
    // A handle's settings on a tool of one-shot calls did nothing.
    {"[conversation.tools.t]\ncommand = { program = \"x\" }\nspawn.lifecycle.on_turn_end = \"await\"\n",
     "conversation.tools.t.spawn.lifecycle: is for a tool that runs as a handle, and `t` runs one-shot calls"},
    {"[conversation.tools.t]\ncommand = { program = \"x\" }\nspawn.notifications.on_content = true\n",
     "conversation.tools.t.spawn.notifications: is for a tool that runs as a handle"},
    {"[conversation.tools.t]\ncommand = { program = \"x\" }\nspawn.permissions.abort = \"ask\"\n",
     "conversation.tools.t.spawn.permissions: is for a tool that runs as a handle"},
    {"[conversation.tools.t]\ncommand = { program = \"x\" }\nspawn.actions = [\"spawn\"]\n",
     "conversation.tools.t.spawn.actions: is for a tool that runs as a handle"},
  };
  for (auto& [toml, error] : cases) {
    auto c = apply_config_text(default_config(), toml, "c.toml");
    CAF_REQUIRE(!c.ok());
    CAF_CHECK_EQUAL(missing(c.error(), std::string("c.toml: ") + error), "");
  }
}

CAF_TEST(a workspace config is read only from a regular file of the workspace) {
  Sandbox box;
  // A link, even to a config that would load: it could name a FIFO, a device or a
  // file outside the workspace.
  auto elsewhere = box.write(box.root / "elsewhere.toml", "[assistant]\nmodel = \"m\"\n");
  fs::create_directories(box.workspace / ".jp");
  auto ws_config = box.workspace / ".jp" / "config.toml";
  fs::create_symlink(elsewhere, ws_config);
  auto c = load_config(box.sources(), default_config());
  CAF_CHECK(!c.ok());
  if (!c.ok())
    CAF_CHECK_EQUAL(missing(c.error(), ws_config.string() + ": is a symbolic link"), "");

  // The directory it is in, a link: the file in it is not read either.
  fs::remove(ws_config);
  fs::rename(box.workspace / ".jp", box.root / "real-jp");
  box.write(box.root / "real-jp" / "config.toml", "[assistant]\nmodel = \"m\"\n");
  fs::create_directory_symlink(box.root / "real-jp", box.workspace / ".jp");
  c = load_config(box.sources(), default_config());
  CAF_CHECK(!c.ok());
  if (!c.ok())
    CAF_CHECK_EQUAL(missing(c.error(), (box.workspace / ".jp").string() + ": is a symbolic link"), "");
  fs::remove(box.workspace / ".jp");
  fs::create_directories(box.workspace / ".jp");

  // A FIFO would block the start until something writes it. A writer here, so that
  // a reader that opens it anyway gets a config that loads (and the check fails).
  fs::remove(ws_config);
  CAF_REQUIRE_EQUAL(::mkfifo(ws_config.c_str(), 0600), 0);
  pid_t writer = ::fork();
  if (writer == 0) {
    int fd = ::open(ws_config.c_str(), O_WRONLY);
    const char text[] = "[assistant]\nmodel = \"m\"\n";
    if (fd >= 0 && ::write(fd, text, sizeof text - 1) > 0)
      ::close(fd);
    ::_exit(0);
  }
  c = load_config(box.sources(), default_config());
  ::kill(writer, SIGKILL);
  ::waitpid(writer, nullptr, 0);
  CAF_CHECK(!c.ok());
  if (!c.ok())
    CAF_CHECK_EQUAL(missing(c.error(), ws_config.string() + ": is not a regular file"), "");
}

CAF_TEST(a config file is read up to a bound and your own may be a pipe) {
  Sandbox box;
  auto sources = box.sources();
  sources.config_files.push_back("/dev/zero"); // endless: refused, not read into memory
  auto c = load_config(sources, default_config());
  CAF_CHECK(!c.ok());
  if (!c.ok())
    CAF_CHECK_EQUAL(missing(c.error(), "/dev/zero: is not a regular file (a device, a socket); give a TOML file"), "");
  // /dev/null is an empty config, as ever.
  sources = box.sources();
  sources.config_files.push_back("/dev/null");
  c = load_config(sources, default_config());
  CAF_CHECK_EQUAL(c.ok() ? "" : c.error(), "");
  // A file past the bound: refused, not read into memory.
  auto big = box.write(box.root / "big.toml", std::string((4 << 20) + 1, '#'));
  sources = box.sources();
  sources.config_files.push_back(big.string());
  c = load_config(sources, default_config());
  CAF_CHECK(!c.ok());
  if (!c.ok())
    CAF_CHECK_EQUAL(missing(c.error(), big.string() + ": larger than 4 MiB"), "");

  // `--config <(...)`: what a shell's process substitution hands over.
  int p[2];
  CAF_REQUIRE_EQUAL(::pipe(p), 0);
  const char text[] = "[assistant]\nmodel = \"from-a-pipe\"\n";
  CAF_CHECK_EQUAL(::write(p[1], text, sizeof text - 1), static_cast<ssize_t>(sizeof text - 1));
  ::close(p[1]);
  sources = box.sources();
  sources.config_files.push_back("/proc/self/fd/" + std::to_string(p[0]));
  c = load_config(sources, default_config());
  ::close(p[0]);
  CAF_CHECK(c.ok());
  if (c.ok())
    CAF_CHECK_EQUAL(c->assistant.model, "from-a-pipe");
}

CAF_TEST(a TOML syntax error reports file line and column) {
  Sandbox box;
  auto file = box.write(box.root / "syntax.toml", "[assistant]\nmodel = \"x\"\nprovider = = 1\n");
  auto sources = box.sources();
  sources.config_files.push_back(file.string());
  auto c = load_config(sources, default_config());
  CAF_REQUIRE(!c.ok());
  CAF_CHECK_EQUAL(missing(c.error(), file.string() + ":3:"), "");
  CAF_CHECK_EQUAL(missing(c.error(), "TOML syntax error"), "");
}

CAF_TEST(a config nesting deeper than the parser can take is refused naming the line) {
  // 50,000 parts of a dotted key crashed toml++ (its stack) and every command run in
  // the workspace holding it.
  std::string parts;
  for (int i = 0; i < 50000; ++i)
    parts += "a.";
  for (auto [text, line] : {std::pair{"[assistant]\nmodel = \"x\"\n" + parts + "a = 1\n", 3},
                            std::pair{"[" + parts + "a]\n", 1},
                            std::pair{"[" + parts.substr(0, 600) + "a]\n" + parts.substr(0, 600) + "b = 1\n", 2},
                            std::pair{"x = " + std::string(600, '[') + std::string(600, ']') + "\n", 1}}) {
    Sandbox box;
    box.workspace_config(text);
    auto c = load_config(box.sources(), default_config());
    CAF_REQUIRE(!c.ok());
    CAF_CHECK_EQUAL(missing(c.error(), fmt::format("config.toml:{}: keys, tables and arrays nest more than 512 deep", line)), "");
  }
  // Dots in strings, comments and numbers are no key's parts.
  std::string dots(5000, '.');
  std::string floats;
  for (int i = 0; i < 2000; ++i)
    floats += "1.5, ";
  for (auto text : {"k = \"" + dots + "\"\n", "k = '" + dots + "'\n", "k = \"\"\"\n\\\"\"\"" + dots + "\n\"\"\"\n",
                    "k = '''\n" + dots + "'''\n", "# " + dots + "\nk = 1\n", "k = [" + floats + "1.5]\n",
                    "\"" + dots + "\".b = 1\n"})
    CAF_CHECK_EQUAL(check_toml_depth(text, "t.toml").error, "");
}

CAF_TEST(a missing config file is an error but missing optional files are not) {
  Sandbox box;
  auto sources = box.sources();
  CAF_CHECK(load_config(sources, default_config()).ok()); // no user config, no .jp/config.toml
  sources.config_files.push_back((box.root / "absent.toml").string());
  auto c = load_config(sources, default_config());
  CAF_REQUIRE(!c.ok());
  CAF_CHECK_EQUAL(missing(c.error(), (box.root / "absent.toml").string() +
                                         ": no such config file"),
                  "");

  sources = box.sources();
  sources.workspace = (box.root / "no-such-dir").string();
  c = load_config(sources, default_config());
  CAF_REQUIRE(!c.ok());
  CAF_CHECK_EQUAL(missing(c.error(), "workspace is not a directory"), "");
  // A workspace reached through a link is the one it leads to (`handles` finds a run
  // started through either).
  fs::create_directory_symlink(box.workspace, box.root / "link");
  sources = box.sources();
  sources.workspace = (box.root / "link" / ".").string();
  c = load_config(sources, default_config());
  CAF_REQUIRE(c.ok());
  CAF_CHECK_EQUAL(c->workspace, fs::canonical(box.workspace).string());
}

CAF_TEST(a complete tool table is read) {
  auto c = apply_config_text(default_config(), R"(
[conversation.tools.cargo_check]
source = "local"
summary = "Type-check a crate"
description = "Runs cargo check."
command = { program = "cargo", args = ["check", "--package", "{{tool.arguments.package}}"] }
run = "unattended"
io = "pty"
cwd = "{{tool.arguments.dir}}"
env = { RUST_LOG = "warn" }
[conversation.tools.cargo_check.parameters.package]
type = "string"
description = "The crate"
enum = ["jp", "jp_cli"]
default = "jp"
[conversation.tools.cargo_check.parameters.features]
type = "array"
items = { type = "string" }
[conversation.tools.cargo_check.parameters.dir]
type = "string"
required = true
[conversation.tools.cargo_check.spawn]
stateful = true
actions = ["spawn", "fetch", "abort"]
[conversation.tools.cargo_check.spawn.notifications]
on_success = false
on_content = true
[conversation.tools.cargo_check.spawn.lifecycle]
on_turn_end = "abort"
await_timeout_secs = 1.5
[conversation.tools.cargo_check.spawn.permissions]
abort = "ask"
[conversation.tools.cargo_check.questions.confirm]
answer = { level = 2, tags = ["a", true] }
)",
                             "embedded");
  CAF_CHECK_EQUAL(c.error(), "");
    CAF_REQUIRE(c.ok());
  auto& t = c->tools["cargo_check"];
  CAF_CHECK_EQUAL(t.name, "cargo_check");
  CAF_CHECK_EQUAL(t.summary, "Type-check a crate");
  CAF_CHECK_EQUAL(t.description, "Runs cargo check.");
  CAF_CHECK_EQUAL(t.program, "cargo");
  CAF_CHECK_EQUAL(t.args.size(), 3u);
  CAF_CHECK(!t.shell);
  CAF_CHECK(t.run == run_mode::unattended);
  CAF_CHECK(t.io == io_mode::pty);
  CAF_CHECK_EQUAL(t.cwd, "{{tool.arguments.dir}}");
  CAF_CHECK_EQUAL(t.env["RUST_LOG"], "warn");
  CAF_REQUIRE_EQUAL(t.parameters.size(), 3u);
  auto named = [&](const char* name) -> const ParameterConfig& {
    return *std::find_if(t.parameters.begin(), t.parameters.end(), [&](auto& p) { return p.name == name; });
  };
  auto& features = named("features");
  auto& package = named("package");
  CAF_CHECK_EQUAL(package.type, "string");
  CAF_CHECK(!package.required);
  CAF_CHECK(named("dir").required);
  CAF_CHECK_EQUAL(package.enum_values, (std::vector<std::string>{"jp", "jp_cli"}));
  CAF_CHECK_EQUAL(package.default_value.dump(), "\"jp\"");
  CAF_CHECK_EQUAL(features.items_type, "string");
  CAF_CHECK(t.stateful);
  CAF_CHECK(t.actions == (std::vector<action_kind>{action_kind::spawn, action_kind::fetch,
                                                   action_kind::abort}));
  CAF_CHECK(!t.notifications.on_success);
  CAF_CHECK(t.notifications.on_failure);
  CAF_CHECK(t.notifications.on_content);
  CAF_CHECK(t.action_permissions == (std::map<action_kind, run_mode>{{action_kind::abort, run_mode::ask}}));
  CAF_CHECK(t.lifecycle.on_turn_end == turn_end_policy::abort);
  CAF_CHECK_EQUAL(t.lifecycle.await_timeout_secs, 1.5);
  CAF_CHECK_EQUAL(t.answers["confirm"].dump(), R"({"level":2,"tags":["a",true]})");

  // The origin of embedded text is whatever the caller calls it.
  auto bad = apply_config_text(default_config(), "[runtime]\nstate_dir = 1\n", "script.toml");
  CAF_REQUIRE(!bad.ok());
  CAF_CHECK_EQUAL(missing(bad.error(), "script.toml: runtime.state_dir"), "");
}

CAF_TEST(a later source can adjust one field of a parameter) {
  Sandbox box;
  box.user_config(std::string(tool_x) + "parameters.n = { type = \"integer\", required = true }\n");
  auto sources = box.sources();
  sources.overrides.push_back("conversation.tools.x.parameters.n.description=count");
  auto c = load_config(sources, default_config());
  CAF_CHECK_EQUAL(c.error(), "");
    CAF_REQUIRE(c.ok());
  auto& p = c->tools["x"].parameters;
  CAF_REQUIRE_EQUAL(p.size(), 1u);
  CAF_CHECK_EQUAL(p[0].type, "integer");
  CAF_CHECK(p[0].required);
  CAF_CHECK_EQUAL(p[0].description, "count");
}

CAF_TEST(an mcp url server is spoken to over Streamable HTTP unless its transport says sse) {
  Sandbox box;
  box.user_config("[mcp.servers.a]\nurl = \"http://127.0.0.1:9/mcp\"\n"
                  "[mcp.servers.b]\nurl = \"http://127.0.0.1:9/sse\"\ntransport = \"sse\"\n");
  auto c = load_config(box.sources(), default_config());
  CAF_REQUIRE(c.ok());
  CAF_CHECK_EQUAL(c->mcp_servers["a"].transport, "http");
  CAF_CHECK_EQUAL(c->mcp_servers["b"].transport, "sse");
}

CAF_TEST(to_string spells enums as the config does) {
  CAF_CHECK_EQUAL(std::string(to_string(run_mode::unattended)), "unattended");
  CAF_CHECK_EQUAL(std::string(to_string(io_mode::pty)), "pty");
  CAF_CHECK_EQUAL(std::string(to_string(turn_end_policy::inquire)), "inquire");
  CAF_CHECK_EQUAL(std::string(to_string(action_kind::apply)), "apply");
}

CAF_TEST(state_path joins the workspace the state directory and the part as paths do) {
  std::vector<std::tuple<std::string, std::string, std::string>> cases = {
    {"/w", ".jp", "output"}, {"/w/", ".jp", "output"}, {"/w", "/var/state", "live"}, {"/w", ".jp/", "live"},
    {"/w", ".jp", ""}, {"", ".jp", "x"}, {"rel/ws", "st", "o"}, {"/w", "", "output"}, {"/w", "a/./b", "c"},
    {"/", ".jp", "conversations"}, {"/w", "/", "x"}};
  for (auto& [workspace, dir, sub] : cases) {
    Config config = default_config();
    config.workspace = workspace;
    config.runtime.state_dir = dir;
    std::filesystem::path expected(dir);
    if (expected.is_relative())
      expected = std::filesystem::path(workspace) / expected;
    CAF_CHECK_EQUAL(state_path(config, sub), (expected / sub).string());
  }
}

CAF_TEST(a stream may be silent longer for a reasoning model or anthropic unless the config says how long) {
  // OpenAI's reasoning models send nothing while they think, a minute and more;
  // Anthropic's stream nothing while a tool call's long value is made.
  AssistantConfig a;
  a.provider = "openai";
  for (auto model : {"o3", "o4-mini", "gpt-5", "openrouter/openai/gpt-5.1"}) {
    a.model = model;
    CAF_CHECK_EQUAL(idle_timeout_for(a), 300);
  }
  for (auto model : {"gpt-4o", "o3x", "omni"}) {
    a.model = model;
    CAF_CHECK_EQUAL(idle_timeout_for(a), 60);
  }
  for (auto provider : {"scripted", "openai"}) {
    a.provider = provider;
    a.model = "claude-sonnet-4-5";
    CAF_CHECK_EQUAL(idle_timeout_for(a), 60);
  }
  a.provider = "anthropic";
  CAF_CHECK_EQUAL(idle_timeout_for(a), 300);
  a.model = "o3";
  CAF_CHECK_EQUAL(idle_timeout_for(a), 300);
  a.request.idle_timeout_secs = 10;
  CAF_CHECK_EQUAL(idle_timeout_for(a), 10);
}
