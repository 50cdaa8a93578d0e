#define CAF_SUITE argv_template
#include <caf/test/unit_test.hpp>

#include "json_helpers.hpp"

#include "tools/argv_template.hpp"

using namespace jp;
using jp::testing::parse;

namespace {

using Argv = std::vector<std::string>;


ToolConfig tool(std::string program, Argv args, bool shell = false) {
  ToolConfig t;
  t.name = "t";
  t.program = std::move(program);
  t.args = std::move(args);
  t.shell = shell;
  return t;
}

} // namespace

CAF_TEST(templates expand arguments and answers) {
  auto args = parse(R"({"name":"jp","n":3,"flag":true,"list":["a","b"],"obj":{"k":"v"}})");
  auto answers = parse(R"({"confirm":false})");
  TemplateContext ctx{args, answers};
  auto expand = [&](std::string_view t) {
    auto r = expand_template(t, ctx);
    CAF_REQUIRE(r.ok());
    return *r;
  };
  CAF_CHECK_EQUAL(expand("plain"), "plain");
  CAF_CHECK_EQUAL(expand("--package={{tool.arguments.name}}"), "--package=jp");
  CAF_CHECK_EQUAL(expand("{{ tool.arguments.n }}x{{tool.arguments.flag}}"), "3xtrue");
  CAF_CHECK_EQUAL(expand("{{tool.arguments.list}}"), R"(["a","b"])");
  CAF_CHECK_EQUAL(expand("{{tool.arguments.obj.k}}"), "v");
  CAF_CHECK_EQUAL(expand("{{tool.answers.confirm}}"), "false");
  CAF_CHECK_EQUAL(expand("[{{tool.arguments.missing}}]"), "[]");
}

CAF_TEST(bad templates are errors naming the template) {
  auto args = Json::object();
  auto answers = Json::object();
  TemplateContext ctx{args, answers};
  auto unknown = expand_template("a{{tool.env.HOME}}", ctx);
  CAF_REQUIRE(!unknown.ok());
  CAF_CHECK(unknown.error().find("`{{tool.env.HOME}}`") != std::string::npos);
  CAF_CHECK(unknown.error().find("`a{{tool.env.HOME}}`") != std::string::npos);
  auto bare = expand_template("{{tool.arguments}}", ctx);
  CAF_CHECK(!bare.ok());
  auto open = expand_template("x{{tool.arguments.a", ctx);
  CAF_REQUIRE(!open.ok());
  CAF_CHECK_EQUAL(open.error(), "unterminated `{{` in template `x{{tool.arguments.a`");
  CAF_CHECK(!expand_template("{{ tool.arguments.a", ctx).ok());
}

CAF_TEST(double braces not opening with tool are literal text) {
  // Programs have templates of their own: docker --format, gh --template, helm.
  auto args = parse(R"({"name":"jp"})");
  auto answers = Json::object();
  TemplateContext ctx{args, answers};
  auto argv = expand_argv(tool("docker", {"ps", "--format", "{{.Names}}"}), ctx);
  CAF_REQUIRE(argv.ok());
  CAF_CHECK_EQUAL(*argv, (Argv{"docker", "ps", "--format", "{{.Names}}"}));
  auto expand = [&](std::string_view t) {
    auto r = expand_template(t, ctx);
    CAF_REQUIRE(r.ok());
    return *r;
  };
  CAF_CHECK_EQUAL(expand("{{range .}}{{.title}} {{ tool.arguments.name }}{{end}}"),
                  "{{range .}}{{.title}} jp{{end}}");
  CAF_CHECK_EQUAL(expand("{{{tool.arguments.name}}}"), "{jp}");
  CAF_CHECK_EQUAL(expand("{{ .x"), "{{ .x");
  CAF_CHECK_EQUAL(expand("{{tool}}"), "{{tool}}");
}

CAF_TEST(no shell unless shell is true) {
  auto args = parse(R"({"path":"src"})");
  auto answers = Json::object();
  TemplateContext ctx{args, answers};
  auto argv = expand_argv(tool("ls", {"-l", "{{tool.arguments.path}}"}), ctx);
  CAF_REQUIRE(argv.ok());
  CAF_CHECK_EQUAL(*argv, (Argv{"ls", "-l", "src"}));

  auto shell = expand_argv(tool("ls", {"-l", "{{tool.arguments.path}}"}, true), ctx);
  CAF_REQUIRE(shell.ok());
  CAF_CHECK_EQUAL(*shell, (Argv{"bash", "-c", R"(ls -l "${1}")", "t", "src"}));
}

CAF_TEST(with shell = true a value is a positional parameter and never shell text) {
  auto args = parse(R"x({"path":"x'; echo INJECTED; '","q":"$(id)"})x");
  auto answers = Json::object();
  TemplateContext ctx{args, answers};
  auto shell = expand_argv(tool(R"(printf '%s|' "<{{tool.arguments.q}}>")",
                                {"-l", "{{tool.arguments.path}}", "{{tool.arguments.none}}"}, true),
                           ctx);
  CAF_REQUIRE(shell.ok());
  CAF_CHECK_EQUAL(*shell, (Argv{"bash", "-c", R"(printf '%s|' "<${1}>" -l "${2}")", "t", "$(id)",
                                "x'; echo INJECTED; '"}));
}

CAF_TEST(a NUL byte in a value is refused naming the placeholder) {
  auto args = parse(R"({"path":"a\u0000b"})");
  auto answers = Json::object();
  TemplateContext ctx{args, answers};
  for (bool shell : {false, true}) {
    auto argv = expand_argv(tool("ls", {"{{tool.arguments.path}}"}, shell), ctx);
    CAF_REQUIRE(!argv.ok());
    CAF_CHECK(argv.error().find("`{{tool.arguments.path}}`: the value holds a NUL byte")
              != std::string::npos);
  }
  auto cwd = expand_template("d/{{tool.arguments.path}}", ctx);
  CAF_REQUIRE(!cwd.ok());
  CAF_CHECK(cwd.error().find("NUL byte") != std::string::npos);
}

CAF_TEST(a value with spaces and semicolons stays one argv element) {
  auto args = parse(R"({"pattern":"a b; rm -rf / && echo $(id) `x` | y > z"})");
  auto answers = Json::object();
  TemplateContext ctx{args, answers};
  auto argv = expand_argv(tool("grep", {"-e", "{{tool.arguments.pattern}}", "--", "."}), ctx);
  CAF_REQUIRE(argv.ok());
  CAF_CHECK_EQUAL(*argv, (Argv{"grep", "-e", "a b; rm -rf / && echo $(id) `x` | y > z", "--", "."}));
}

CAF_TEST(a value holding a placeholder is passed as it is and never expanded) {
  // Only the author's template is read for placeholders: a value naming another
  // argument must not reach it, and one with a lone "{{" is no template error.
  auto args = parse(R"({"x":"{{tool.arguments.y}}","y":"secret","open":"{{tool.arguments.y"})");
  auto answers = Json::object();
  TemplateContext ctx{args, answers};
  auto argv = expand_argv(tool("echo", {"{{tool.arguments.x}}", "-v={{tool.arguments.x}}",
                                        "{{tool.arguments.open}}"}), ctx);
  CAF_REQUIRE(argv.ok());
  CAF_CHECK_EQUAL(*argv, (Argv{"echo", "{{tool.arguments.y}}", "-v={{tool.arguments.y}}",
                               "{{tool.arguments.y"}));
  auto env = expand_template("A={{tool.arguments.x}}", ctx);
  CAF_REQUIRE(env.ok());
  CAF_CHECK_EQUAL(*env, "A={{tool.arguments.y}}");
}

CAF_TEST(an optional missing element is dropped) {
  auto args = parse(R"({"package":"jp","features":null})");
  auto answers = Json::object();
  TemplateContext ctx{args, answers};
  auto t = tool("cargo", {"check", "{{tool.arguments.features}}", "--package",
                          "{{tool.arguments.package}}", "{{ tool.arguments.target }}",
                          "--x={{tool.arguments.target}}"});
  auto argv = expand_argv(t, ctx);
  CAF_REQUIRE(argv.ok());
  // null and missing sole placeholders vanish; an embedded one becomes "".
  CAF_CHECK_EQUAL(*argv, (Argv{"cargo", "check", "--package", "jp", "--x="}));
}

CAF_TEST(argv errors name the tool) {
  auto args = Json::object();
  auto answers = Json::object();
  TemplateContext ctx{args, answers};
  auto bad = expand_argv(tool("ls", {"{{tool.nope}}"}), ctx);
  CAF_REQUIRE(!bad.ok());
  CAF_CHECK(bad.error().starts_with("t: command.args: unknown template variable `{{tool.nope}}`"));
  auto empty = expand_argv(tool("{{tool.arguments.prog}}", {}), ctx);
  CAF_REQUIRE(!empty.ok());
  CAF_CHECK(empty.error().find("expanded to an empty string") != std::string::npos);
}
