// jp-actors embedded (docs/embedding.md): a function tool and a process tool run as
// handles, spawned and awaited together; then a scripted assistant's turn calls the
// function tool.
#include <cstdio>
#include <jp/jp.hpp>

int main() {
  auto config = jp::config_from_toml(R"(
    [conversation.tools.count]
    summary = "Count from 1 to n"
    command = { program = "seq", args = ["1", "{{tool.arguments.n}}"] }
    run = "unattended"
    spawn.stateful = true
    parameters.n = { type = "integer", required = true })");
  if (!config)
    return std::fprintf(stderr, "%s\n", config.error().c_str()), 1;
  jp::Runtime rt(*config);
  // `x` is required: a call without it is refused before the function runs.
  auto added = rt.add_function_tool(
    jp::function_tool_config("square", "Square a number", {{.name = "x", .type = "number", .required = true}}),
    [](const jp::Json& args, const jp::Progress&) {
      double x = args.find("x")->as_number();
      return jp::Invocation{jp::FunctionResult::ready(jp::ToolState::success(jp::Json(x * x).dump()))};
    });
  if (!added)
    return std::fprintf(stderr, "%s\n", added.error.c_str()), 1;

  auto session = rt.session();
  session.spawn("square", "sq", jp::Json::parse(R"({"x": 7})").value_or(jp::Json()));
  session.spawn("count", "seq", jp::Json::parse(R"({"n": 3})").value_or(jp::Json()));
  std::printf("await: %s\n", session.await_all({"sq", "seq"}, 30).get().content.c_str());

  auto assistant = jp::scripted_provider(R"(
    [[agents]]
    name = "demo"
    steps = [ { calls = [ { tool = "square", arguments = { x = 12 } } ] },
              { text = "12 squared is 144." } ])");
  jp::TurnHooks hooks;
  hooks.provider = *assistant;
  auto turn = rt.run_turn("What is 12 squared?", hooks);
  auto result = turn.result().get();
  std::printf("turn %s: %s\n", jp::to_string(result.outcome), result.answer.c_str());
  return result.outcome == jp::turn_outcome::completed ? 0 : 1;
}
