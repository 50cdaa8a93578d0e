// Loading scripts: what a script may say and how a bad one is named.
#define CAF_SUITE script
#include <caf/test/unit_test.hpp>

#include "config/config.hpp"
#include "tools/builtin_tools.hpp"
#include "runtime/store/script.hpp"
#include "contains.hpp"

#include <fmt/format.h>

using namespace jp;

namespace {

std::string await_step(const std::string& timeout) {
  return "[[agents]]\nname = \"a\"\n  [[agents.steps]]\n  [[agents.steps.calls]]\n  tool = \"await\"\n"
         "  arguments = { all = [\"x\"], timeout_secs = " + timeout + " }\n";
}

} // namespace

CAF_TEST(non finite numbers in arguments are refused naming the key) {
  for (auto bad : {"nan", "inf", "-inf", "+nan"}) {
    auto s = parse_script(await_step(bad), "t.toml");
    CAF_REQUIRE(!s.ok());
    CAF_CHECK_EQUAL(s.error().rfind("t.toml: agents[0].steps[0].calls[0].arguments.timeout_secs: ", 0), 0u);
    CAF_CHECK(s.error().find("a finite number of seconds >= 0") != std::string::npos);
  }
  auto nested = parse_script("[[agents]]\n  [[agents.steps]]\n  [[agents.steps.calls]]\n  tool = \"t\"\n"
                             "  arguments = { xs = [1.0, inf] }\n",
                             "t.toml");
  CAF_REQUIRE(!nested.ok());
  CAF_CHECK(nested.error().find("arguments.xs[1]: inf is not allowed") != std::string::npos);
  // An agent's answer to a question too: the tool got null, and nan was never named.
  auto answer = parse_script("[[agents]]\n[agents.questions]\nproceed = nan\n  [[agents.steps]]\n  text = \"x\"\n",
                             "t.toml");
  CAF_CHECK(!answer.ok() && testing::contains(answer.error(), "agents[0].questions.proceed: nan is not allowed"));
  auto fine = parse_script(await_step("0.5"), "t.toml");
  CAF_CHECK(fine.ok());
}

CAF_TEST(a script nesting deeper than the parser can take is refused naming the line) {
  std::string parts;
  for (int i = 0; i < 50000; ++i)
    parts += "a.";
  auto s = parse_script("[experiment]\nname = \"x\"\n" + parts + "a = 1\n", "t.toml");
  CAF_REQUIRE(!s.ok());
  CAF_CHECK_EQUAL(s.error().rfind("t.toml:3: keys, tables and arrays nest more than 512 deep", 0), 0u);
}

CAF_TEST(a name or text of the wrong type is refused naming the key) {
  auto agent = [](const std::string& name_line, const std::string& text_line) {
    return "[[agents]]\n" + name_line + "  [[agents.steps]]\n" + text_line;
  };
  auto numbered = parse_script(agent("name = 5\n", "  text = \"x\"\n"), "t.toml");
  CAF_REQUIRE(!numbered.ok());
  CAF_CHECK(numbered.error().find("t.toml: agents[0].name: expected a non-empty string of printable ASCII") !=
            std::string::npos);
  // "/" joins an agent's path to its sub-agents' in the log and the report.
  CAF_CHECK(!parse_script(agent("name = \"a/#1\"\n", "  text = \"x\"\n"), "t.toml").ok());
  CAF_CHECK(!parse_script(agent("name = \"\"\n", "  text = \"x\"\n"), "t.toml").ok());
  // One word of the transcript's "[name]" and a column of the report.
  // Nor a space, an invisible or a bidirectional character beyond ASCII (a name that
  // looks like another's, or shows itself reordered).
  for (auto* odd : {"a b", "a\\nb", "a\\u001b[31m", "a\\tb", "a\\u00a0b", "a\\u200bb", "x\\u202eyz", "a\\u2028b",
                    "caf\\u00e9"}) {
    auto refused = parse_script(agent(fmt::format("name = \"{}\"\n", odd), "  text = \"x\"\n"), "t.toml");
    CAF_CHECK(!refused.ok() && testing::contains(refused.error(), "printable ASCII without '/' or spaces"));
  }
  auto total = parse_script(agent("name = \"total\"\n", "  text = \"x\"\n"), "t.toml");
  CAF_CHECK(!total.ok() && testing::contains(total.error(), "agents[0].name: `total` is the report's row of all agents"));
  CAF_CHECK(parse_script(agent("name = \"worker-1.b_c\"\n", "  text = \"x\"\n"), "t.toml").ok());
  auto texts = parse_script(agent("name = \"a\"\n", "  text = 7\n"), "t.toml");
  CAF_REQUIRE(!texts.ok());
  CAF_CHECK(texts.error().find("t.toml: agents[0].steps[0].text: expected a string, got 7") != std::string::npos);
  auto experiment = parse_script("[experiment]\nname = 5\n" + agent("name = \"a\"\n", "  text = \"x\"\n"), "t.toml");
  CAF_REQUIRE(!experiment.ok());
  CAF_CHECK(experiment.error().find("t.toml: experiment.name: expected a string") != std::string::npos);
  // [experiment] that is not a table, or a description that is not a string, was run as if absent.
  auto flat = parse_script("experiment = \"x\"\n" + agent("name = \"a\"\n", "  text = \"x\"\n"), "t.toml");
  CAF_CHECK(!flat.ok() && testing::contains(flat.error(), "t.toml: experiment: expected a table"));
  auto described = parse_script("[experiment]\ndescription = 5\n" + agent("name = \"a\"\n", "  text = \"x\"\n"),
                                "t.toml");
  CAF_CHECK(!described.ok() &&
            testing::contains(described.error(), "t.toml: experiment.description: expected a string, got 5"));
}

CAF_TEST(a foreach of a scripted sub-agent keeps the element mark of its own prompt) {
  auto s = parse_script("[[agents]]\nname = \"a\"\n  [[agents.steps]]\n  text = \"x\"\n"
                        "[[subagents]]\nname = \"outer\"\n  [[subagents.steps]]\n  [[subagents.steps.calls]]\n"
                        "  tool = \"foreach\"\n  arguments = { elements = [\"x\"], prompt = \"{{prompt}}: item {{element}}\" }\n",
                        "t.toml");
  CAF_REQUIRE(s.ok());
  auto outer = scripted_subagent(*s, "outer", "sort", "");
  CAF_REQUIRE(outer.ok());
  CAF_CHECK_EQUAL(outer->steps.at(0).calls.at(0).arguments.find("prompt")->as_string(), "sort: item {{element}}");
}

CAF_TEST(end_turn is a flag of a step without calls) {
  auto step = [](const std::string& lines) { return parse_script("[[agents]]\nname = \"a\"\n  [[agents.steps]]\n" + lines, "t.toml"); };
  auto ends = step("  text = \"done\"\n  end_turn = true\n");
  CAF_REQUIRE(ends.ok());
  CAF_CHECK(ends->agents.at(0).steps.at(0).end_turn);
  auto worded = step("  end_turn = \"yes\"\n");
  CAF_REQUIRE(!worded.ok());
  CAF_CHECK(worded.error().find("t.toml: agents[0].steps[0].end_turn: expected true or false, got \"yes\"") !=
            std::string::npos);
  auto with_calls = step("  end_turn = true\n  [[agents.steps.calls]]\n  tool = \"shell\"\n");
  CAF_REQUIRE(!with_calls.ok());
  CAF_CHECK(with_calls.error().find("a step that ends the turn answers without calls") != std::string::npos);
}

CAF_TEST(a sub-agent script that names no subagents entry is refused when the script loads) {
  // It was found only when the call ran, as a call error in a run that exited 0.
  auto calling = [](const std::string& tool, const std::string& name) {
    return parse_script("[[agents]]\nname = \"a\"\n  [[agents.steps]]\n  [[agents.steps.calls]]\n  tool = \"" + tool +
                          "\"\n  arguments = { prompt = \"{{element}}\", script = \"" + name +
                          "\" }\n[[subagents]]\nname = \"worker\"\n",
                        "t.toml");
  };
  CAF_CHECK(calling("agent", "worker").ok());
  auto typo = calling("agent", "wroker");
  CAF_REQUIRE(!typo.ok());
  CAF_CHECK_EQUAL(typo.error(), "t.toml: agents[0].steps[0].calls[0].arguments.script: no [[subagents]] entry is "
                                "named `wroker` (`worker`)");
  CAF_CHECK(!calling("foreach", "wroker").ok());
  CAF_CHECK(calling("shell", "wroker").ok()); // another tool's argument of that name is its own
  // In [[agents]] nothing fills it: a foreach fills {{element}} in its prompt, and
  // only a sub-agent's own script has its {{element}} filled.
  auto unfilled = calling("foreach", "{{element}}");
  CAF_REQUIRE(!unfilled.ok());
  CAF_CHECK(unfilled.error().find("no [[subagents]] entry is named `{{element}}`") != std::string::npos);
  auto in_subagent = parse_script("[[agents]]\nname = \"a\"\n[[subagents]]\nname = \"w\"\n  [[subagents.steps]]\n"
                                  "  [[subagents.steps.calls]]\n  tool = \"foreach\"\n"
                                  "  arguments = { prompt = \"{{element}}\", script = \"{{element}}\" }\n",
                                  "t.toml");
  CAF_CHECK(in_subagent.ok());
}

CAF_TEST(a key that must hold tables names the header that makes them) {
  auto s = parse_script("[[agents]]\nname = \"a\"\nsteps = \"x\"\n", "t.toml");
  CAF_REQUIRE(!s.ok());
  CAF_CHECK_EQUAL(s.error(), "t.toml: agents[0].steps: expected an array of tables ([[agents.steps]])");
}

CAF_TEST(a call of a tool the config does not offer is refused before the run) {
  auto config = default_config();
  auto calling = [&](const std::string& table, const std::string& tool) {
    auto s = parse_script("[[agents]]\nname = \"a\"\n[[subagents]]\nname = \"w\"\n[[" + table + "]]\nname = \"x\"\n"
                          "  [[" + table + ".steps]]\n  [[" + table + ".steps.calls]]\n  tool = \"" + tool + "\"\n",
                          "t.toml");
    CAF_REQUIRE(s.ok());
    auto checked = check_script_tools(*s, config, "t.toml");
    return checked ? std::string() : checked.error;
  };
  CAF_CHECK_EQUAL(calling("agents", "shell"), "");
  CAF_CHECK_EQUAL(calling("subagents", "yield_to_parent"), "");
  CAF_CHECK(calling("agents", "shel").starts_with("t.toml: agents[1].steps[0].calls[0].tool: no tool is named "
                                                  "`shel`; the tools are agent, await,"));
  CAF_CHECK(calling("subagents", "shel").find("yield_to_parent") != std::string::npos);
  CAF_CHECK(calling("agents", "yield_to_parent").find("an agent of [[agents]] has no parent to yield to") !=
            std::string::npos);
  // An MCP server's tool is known once it started: its form is left to run time.
  config.mcp_servers["srv"] = {};
  CAF_CHECK_EQUAL(calling("agents", "srv__anything"), "");
  CAF_CHECK(!calling("agents", "other__anything").empty());
}

CAF_TEST(an answer to a question no tool routes to the assistant is refused before the run) {
  // A typo's answer was never given: the question it meant went unanswered.
  auto config = default_config();
  auto answering = [&](const std::string& table, const std::string& id) {
    auto s = parse_script("[[agents]]\nname = \"a\"\n[[subagents]]\nname = \"w\"\n[" + table + ".questions]\n" + id +
                            " = true\n",
                          "t.toml");
    CAF_REQUIRE(s.ok());
    auto checked = check_script_tools(*s, config, "t.toml");
    return checked ? std::string() : checked.error;
  };
  CAF_CHECK_EQUAL(answering("agents", "proceed"),
                  "t.toml: agents[0].questions.proceed: no tool asks the assistant a question `proceed` (a tool's "
                  "questions.proceed.target = \"assistant\" without a fixed answer does); no tool's question goes "
                  "to the assistant");
  config.tools["shell"].question_targets["proceed"] = "assistant";
  config.tools["shell"].question_targets["other"] = "user";
  CAF_CHECK_EQUAL(answering("agents", "proceed"), "");
  CAF_CHECK_EQUAL(answering("subagents", "proceed"), "");
  CAF_CHECK_EQUAL(answering("agents", "proceeed"),
                  "t.toml: agents[0].questions.proceeed: no tool asks the assistant a question `proceeed` (a tool's "
                  "questions.proceeed.target = \"assistant\" without a fixed answer does); the questions that go to "
                  "it: shell's `proceed`");
  CAF_CHECK(!answering("subagents", "other").empty()); // the user answers it
  // A fixed answer is the one given: the assistant is not asked.
  config.tools["shell"].answers["proceed"] = Json(true);
  CAF_CHECK(!answering("agents", "proceed").empty());
}

CAF_TEST(an answer at the turn s end for a handle no call spawns is refused naming the ids there are) {
  auto with = [](const std::string& answers) {
    return parse_script("[[agents]]\nname = \"a\"\n  [agents.on_turn_end]\n" + answers +
                          "  [[agents.steps]]\n  [[agents.steps.calls]]\n  tool = \"shell\"\n"
                          "  arguments = { action = \"spawn\", id = \"a1\", command = \"sleep 9\" }\n"
                          "  [[agents.steps.calls]]\n  tool = \"shell\"\n  arguments = { action = \"spawn\", "
                          "command = \"sleep 9\" }\n",
                        "t.toml");
  };
  // The id a call gives, and one a call is given (its tool's name and a number).
  CAF_CHECK(with("  a1 = \"wait\"\n  shell-2 = \"abort\"\n").ok());
  auto typo = with("  ghost = \"wait\"\n");
  CAF_REQUIRE(!typo.ok());
  CAF_CHECK_EQUAL(typo.error(), "t.toml: agents[0].on_turn_end.ghost: no call of `a` spawns a handle of that id (the "
                                "ids its calls give: a1); an answer names a handle its calls spawn, by the id a "
                                "call gives or as one it is given (shell-1)");
  CAF_CHECK(!with("  agent-1 = \"wait\"\n").ok()); // no call of `agent`
  // An await makes no handle: no `await-1` (it was let through as a handle's name).
  auto awaiting = parse_script("[[agents]]\nname = \"a\"\n  [agents.on_turn_end]\n  await-1 = \"wait\"\n"
                               "  [[agents.steps]]\n  [[agents.steps.calls]]\n  tool = \"await\"\n"
                               "  arguments = { all = [\"x\"] }\n",
                               "t.toml");
  CAF_CHECK(!awaiting.ok());
  CAF_CHECK(!with("  shell-x = \"wait\"\n").ok());
}

CAF_TEST(an answer at the turn s end for a handle its tool does not ask about is refused before the run) {
  // The turn's end asks about a handle whose tool inquires alone: an answer for one
  // it aborts (the shell, a sub-agent) was never read, and a "wait" lost the handle.
  auto config = default_config();
  config.tools["build"] = config.tools["shell"];
  config.tools["build"].name = "build";
  config.tools["build"].lifecycle.on_turn_end = turn_end_policy::inquire;
  auto answering = [&](const std::string& table, const std::string& tool, const std::string& answers) {
    auto s = parse_script("[[agents]]\nname = \"a\"\n[[subagents]]\nname = \"w\"\n[[" + table + "]]\nname = \"x\"\n"
                          "  [" + table + ".on_turn_end]\n" + answers + "  [[" + table + ".steps]]\n  [[" + table +
                            ".steps.calls]]\n  tool = \"" + tool + "\"\n  arguments = { action = \"spawn\", id = "
                            "\"h\", command = \"sleep 9\" }\n  [[" + table + ".steps.calls]]\n  tool = \"" + tool +
                            "\"\n  arguments = { action = \"spawn\", command = \"sleep 9\" }\n",
                          "t.toml");
    CAF_REQUIRE(s.ok());
    auto checked = check_script_tools(*s, config, "t.toml");
    return checked ? std::string() : checked.error;
  };
  CAF_CHECK_EQUAL(answering("agents", "build", "  h = \"wait\"\n  build-2 = \"abort\"\n"), "");
  CAF_CHECK_EQUAL(answering("subagents", "build", "  h = \"wait\"\n"), "");
  CAF_CHECK_EQUAL(answering("agents", "shell", "  h = \"wait\"\n"),
                  "t.toml: agents[1].on_turn_end.h: `h` is a handle of `shell` (on_turn_end = \"abort\"), which the "
                  "turn's end does not ask about: only a handle whose tool's [spawn.lifecycle] on_turn_end is "
                  "\"inquire\" gets this answer; remove it, or give the tool on_turn_end = \"inquire\" in your "
                  "config");
  CAF_CHECK(answering("subagents", "shell", "  shell-2 = \"abort\"\n").starts_with("t.toml: subagents[1].on_turn_end.shell-2: "));
  config.tools["build"].lifecycle.on_turn_end = turn_end_policy::await;
  CAF_CHECK(answering("agents", "build", "  h = \"abort\"\n").find("`build` (on_turn_end = \"await\")") !=
            std::string::npos);
}
